"""How `--fix` scales with the number of findings in one file: it must stay linear.

Builds one script with N fixable findings (``.cuda()`` calls, device strings, guarded
``torch.cuda.synchronize()`` statements and memory counters in f-strings, in equal parts) and
times check mode and fix mode on it for each N. The time per finding should stay flat.

    python benchmarks/fix_scale.py                 # 1k, 10k and 40k findings
    python benchmarks/fix_scale.py --sizes 1000 5000
"""

from __future__ import annotations

import argparse
import sys
import time

from portlint.config import Settings
from portlint.engine import lint_source
from portlint.fix import FixPolicy
from portlint.model import SourceFile

LINES = (
    "x{i} = torch.ones(1).cuda()",
    'y{i} = torch.zeros(1, device="cuda")',
    "def f{i}():\n    torch.cuda.synchronize()",
    'print(f"{{torch.cuda.memory_allocated() / 1e6:.1f}} MB {i}")',
)


def program(findings: int) -> str:
    body = [LINES[i % len(LINES)].format(i=i) for i in range(findings)]
    return "import torch\n\n" + "\n".join(body) + '\n\nif __name__ == "__main__":\n    pass\n'


def measure(findings: int) -> tuple[float, float, int]:
    text = program(findings)
    settings = Settings(min_torch="2.6")
    source = SourceFile("scale.py", text)
    began = time.perf_counter()
    checked = lint_source(source, "python", settings)
    middle = time.perf_counter()
    fixed = lint_source(source, "python", settings, FixPolicy())
    done = time.perf_counter()
    assert len(checked.findings) >= findings, len(checked.findings)
    return middle - began, done - middle, len(fixed.fixes_applied)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 40000])
    args = parser.parse_args(argv)
    print(f"{'findings':>9} {'check s':>8} {'fix s':>8} {'fixed':>7} {'fix µs/finding':>15}")
    for size in args.sizes:
        check, fix, applied = measure(size)
        print(f"{size:>9} {check:>8.2f} {fix:>8.2f} {applied:>7} {fix / size * 1e6:>15.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

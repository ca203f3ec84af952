"""How long a pre-commit hook run of portlint takes on one file.

Times ``portlint FILE`` for a file with no CUDA words (the prefilter skips it: nothing is parsed)
and for one with findings, against Python's own start-up, and lists what the clean run imports
(``python -X importtime``): no libcst or tree-sitter may appear there.

    python benchmarks/hook_speed.py [--runs 20]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CLEAN = "import os\n\n\ndef main():\n    print(os.getcwd())\n"
WITH_FINDINGS = "import torch\n\nmodel = Net().cuda()\ntorch.cuda.synchronize()\n"
HEAVY_MODULES = ("libcst", "tree_sitter", "rich", "portlint.python.api_checks", "yaml")


def portlint_command() -> list[str]:
    found = shutil.which("portlint")
    return [found] if found else [sys.executable, "-m", "portlint"]


#: As a user's machine runs it: bytecode cached (some CI images set PYTHONDONTWRITEBYTECODE,
#: which makes every run compile every module from source).
ENVIRONMENT = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def wall_times(command: list[str], cwd: Path, runs: int) -> list[float]:
    def run() -> None:
        subprocess.run(
            command, cwd=cwd, env=ENVIRONMENT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )

    run()  # warm-up: writes the bytecode caches
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return times


def imported_modules(cwd: Path, name: str) -> dict[str, int]:
    """module -> cumulative import time in microseconds, for ``portlint NAME``."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "portlint", name],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=ENVIRONMENT,
    )
    modules = {}
    for line in done.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            _, cumulative, module = (part.strip() for part in line[12:].split("|"))
            if cumulative.isdigit():
                modules[module] = int(cumulative)
    return modules


def describe(label: str, times: list[float]) -> str:
    return (
        f"{label:<34} median {statistics.median(times) * 1000:7.1f} ms   "
        f"min {min(times) * 1000:7.1f} ms"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        cwd = Path(folder)
        (cwd / "clean.py").write_text(CLEAN, encoding="utf-8")
        (cwd / "findings.py").write_text(WITH_FINDINGS, encoding="utf-8")
        portlint = portlint_command()
        print(
            describe("python -c pass", wall_times([sys.executable, "-c", "pass"], cwd, args.runs))
        )
        print(describe("portlint clean.py", wall_times([*portlint, "clean.py"], cwd, args.runs)))
        print(
            describe("portlint findings.py", wall_times([*portlint, "findings.py"], cwd, args.runs))
        )
        for name in ("clean.py", "findings.py"):
            modules = imported_modules(cwd, name)
            heavy = [m for m in HEAVY_MODULES if m in modules]
            print(
                f"{name}: {len(modules)} modules imported; of {', '.join(HEAVY_MODULES)}: "
                f"{', '.join(heavy) or 'none'}"
            )
            top = sorted(modules.items(), key=lambda item: -item[1])[:5]
            print("   slowest: " + ", ".join(f"{m} {us / 1000:.1f} ms" for m, us in top))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Fuzz `--fix`: random Python programs with CUDA snippets spliced in, fixed, then checked.

Programs come from pysource-codegen (``pip install -e '.[bench]'``), one per seed. CUDA snippets
are spliced at random statement boundaries, with the indentation there, so they land in
function and class bodies, loops, ``match`` cases and ``try`` blocks; the snippets themselves
put CUDA code in f-strings, lambdas, comprehensions, decorators, default arguments, ``match``
guards, one-line compounds and class bodies. Each program is fixed with a random ``min-torch``
and fix policy, and must pass four checks:

- no crash (an exception, or an internal error reported for the file);
- the fixed text parses with the Python 3.10 grammar (when the program did);
- a second ``--fix`` changes nothing;
- every changed line of the program is a line a fix touched (inserted lines aside).

    python benchmarks/fix_fuzz.py --count 5000            # the full run
    python benchmarks/fix_fuzz.py --count 200 --write-slice fixtures/fix/fuzz_slice.json

The slice written by ``--write-slice`` is what ``tests/test_fix_fuzz.py`` replays: the test
suite needs no generator and no randomness.
"""

from __future__ import annotations

import argparse
import ast
import difflib
import json
import random
import re
import sys
import time
from pathlib import Path

from portlint.config import Settings
from portlint.engine import lint_source
from portlint.fix import FixPolicy
from portlint.model import SourceFile

SNIPPETS = (
    "x_0 = torch.ones(2).cuda()",
    'print(f"{torch.cuda.memory_allocated()/1e6:.1f} MB on {torch.cuda.get_device_name(0)}")',
    "print(f'{torch.cuda.max_memory_allocated() / 2**20:.0f} MiB')",
    'print(f"{x_0.is_cuda=}")',
    "f_0 = lambda: torch.cuda.synchronize()",
    "l_0 = [torch.cuda.synchronize() for _ in range(2)]",
    "d_0 = {k: torch.cuda.memory_reserved() for k in range(2)}",
    "@torch.cuda.amp.custom_fwd\ndef g_0(a=torch.zeros(1, device='cuda')):\n    return a",
    "def h_0(t=torch.ones(1).cuda(), n=torch.cuda.device_count()):\n    return t, n",
    "match y_0:\n    case _ if y_0.is_cuda:\n        torch.cuda.synchronize()\n"
    "    case _:\n        pass",
    "class C_0(torch.nn.Module):\n    t = torch.ones(1).cuda()\n\n"
    "    def cuda(self, device=None):\n        return super().cuda(device=device)",
    'if d_0.type == "cuda": torch.cuda.synchronize()',
    'if d_0.type == "cuda":\n    y_0 = torch.cuda.get_device_properties(0)',
    "torch.cuda.synchronize(); torch.cuda.empty_cache()",
    "assert z_0.is_cuda",
    "torch.cuda.set_device(0)",
    "torch.cuda.manual_seed_all(0)",
    "torch.cuda.set_stream = None",
    "orig_0 = torch.cuda.synchronize",
    'if torch.__version__ < "2.3":\n    torch.cuda.synchronize()',
    "if torch.cuda.is_available():\n    torch.cuda.synchronize()\nelif torch.xpu.is_available():\n"
    "    torch.xpu.synchronize()",
    "m_0 = torch.device('cuda:1')",
    "s_0 = torch.cuda.Stream()",
    "w_0 = x_0.cuda(non_blocking=True)",
    "torch.distributed.init_process_group('nccl')",
    "with torch.cuda.amp.autocast():\n    pass",
    "e_0 = torch.ones(1).to('cuda' if torch.cuda.is_available() else 'cpu')",
    "if platform_0.is_cuda():\n    pass",
)
HEADERS = (
    "import torch\n",
    "import torch\nimport torch_npu\n",
    "import sys\nsys.path.insert(0, 'x')\nimport torch\n",
    "import os\nos.environ['A'] = '1'\nimport warnings\nimport torch\n",
    "import torch.cuda as tc\n",
    "from torch.cuda import synchronize as sync\n",
    "try:\n    import torch\nexcept ImportError:\n    torch = None\n",
    "",  # no torch binding: check mode reports nothing, so nothing may change
)
CUDA_IMPORT = re.compile(r"^\s*(from\s+torch(\.cuda\S*)?\s+import|import\s+torch\.cuda)")


def base_program(seed: int) -> str | None:
    from pysource_codegen import generate

    try:
        text = generate(seed, node_limit=120, depth_limit=5)
        ast.parse(text)
    except (SyntaxError, RecursionError, ValueError):
        return None
    return text


def statement_starts(tree: ast.Module) -> list[tuple[int, int]]:
    """(line, column) of statements that start their own line, where a snippet can go."""
    starts = []
    for node in ast.walk(tree):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if not isinstance(block, list) or not block:
                continue
            first = block[0]
            if not isinstance(first, ast.stmt):
                continue
            if isinstance(node, ast.stmt) and first.lineno == node.lineno:
                continue  # a one-line compound statement
            starts.extend((s.lineno, s.col_offset) for s in block if isinstance(s, ast.stmt))
    return starts


def splice(base: str, rng: random.Random) -> str | None:
    """``base`` with a header and 1-4 snippets spliced at random statement starts."""
    try:
        tree = ast.parse(base)
    except SyntaxError:
        return None
    lines = base.splitlines(keepends=True)
    starts = [s for s in statement_starts(tree) if lines[s[0] - 1][: s[1]].strip() == ""]
    chosen = rng.sample(starts, min(len(starts), rng.randint(1, 4))) if starts else []
    for line, column in sorted(chosen, reverse=True):
        indent = lines[line - 1][:column]
        snippet = rng.choice(SNIPPETS)
        text = "".join(indent + part + "\n" for part in snippet.split("\n"))
        lines.insert(line - 1, text)
    if not chosen:
        lines.append(rng.choice(SNIPPETS) + "\n")
    program = rng.choice(HEADERS) + "".join(lines)
    try:
        ast.parse(program)
    except SyntaxError:
        return None
    return program


def make_case(seed: int) -> dict | None:
    base = base_program(seed)
    if base is None:
        return None
    rng = random.Random(seed)
    program = splice(base, rng)
    if program is None:
        return None
    return {
        "seed": seed,
        "min_torch": rng.choice(["2.1", "2.6", "2.9"]),
        "unsafe": rng.random() < 0.3,
        "script": rng.random() < 0.5,
        "program": program,
    }


def parses_with_310(text: str) -> bool:
    from portlint.python.transform import syntax_problem

    return syntax_problem(text, (3, 10)) is None


def touched_lines(result) -> set[int]:
    lines: set[int] = set()
    for finding in result.fixes_applied:
        for edit in finding.fix.edits:
            if edit.span.line != edit.span.end_line or edit.span.column != edit.span.end_column:
                lines.update(range(edit.span.line, edit.span.end_line + 1))
            elif not edit.content.endswith(("\n", "\r")):
                lines.add(edit.span.line)  # a guard: its statement is re-indented
    return lines


APPLIED: list[int] = []


def check_case(case: dict) -> list[str]:
    """The problems found with one program (empty when it passes)."""
    program = case["program"]
    if case["script"]:
        program += '\nif __name__ == "__main__":\n    pass\n'
    settings = Settings(min_torch=case["min_torch"])
    policy = FixPolicy(unsafe=case["unsafe"], targets=settings.targets)
    source = SourceFile(f"fuzz_{case['seed']}.py", program)
    try:
        result = lint_source(source, "python", settings, policy)
    except Exception as error:  # a crash is what is being counted
        return [f"crash: {type(error).__name__}: {error}"]
    if result.error:
        return [f"refused: {result.error}"]
    fixed = result.fixed_text
    if fixed is None:
        return []
    APPLIED.append(len(result.fixes_applied))
    problems = []
    if parses_with_310(program) and not parses_with_310(fixed):
        problems.append("fixed text does not parse with Python 3.10")
    again = lint_source(SourceFile(source.path, fixed), "python", settings, policy)
    if again.fixed_text is not None and again.fixed_text != fixed:
        problems.append("a second --fix changes the file")
    touched = touched_lines(result)
    before = program.splitlines()
    matcher = difflib.SequenceMatcher(a=before, b=fixed.splitlines(), autojunk=False)
    for tag, i1, i2, _, _ in matcher.get_opcodes():
        if tag in ("replace", "delete"):
            for index in range(i1, i2):
                if index + 1 not in touched and not CUDA_IMPORT.match(before[index]):
                    problems.append(f"line {index + 1} changed but no fix touched it")
                    break
    return problems


def generate_cases(start: int, count: int) -> list[dict]:
    cases, seed = [], start
    while len(cases) < count:
        case = make_case(seed)
        if case is not None:
            cases.append(case)
        seed += 1
    return cases


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=5000)
    parser.add_argument("--start", type=int, default=0, help="first seed")
    parser.add_argument("--write-slice", type=Path, help="write the generated cases as JSON")
    parser.add_argument("--show", type=int, default=5, help="failing programs to print")
    args = parser.parse_args(argv)

    began = time.perf_counter()
    cases = generate_cases(args.start, args.count)
    generated = time.perf_counter()
    if args.write_slice:
        args.write_slice.write_text(json.dumps(cases, indent=1) + "\n", encoding="utf-8")
    counts: dict[str, int] = {}
    shown = 0
    for case in cases:
        problems = check_case(case)
        for problem in problems:
            kind = problem.split(":")[0] if ":" in problem else problem
            kind = re.sub(r"line \d+", "line N", kind)
            counts[kind] = counts.get(kind, 0) + 1
        if problems and shown < args.show:
            shown += 1
            print(f"--- seed {case['seed']}: {problems}\n{case['program']}", file=sys.stderr)
    done = time.perf_counter()
    total = sum(counts.values())
    print(
        f"programs: {len(cases)} (generated in {generated - began:.1f} s, "
        f"checked in {done - generated:.1f} s)"
    )
    print(f"programs changed by --fix: {len(APPLIED)}, fixes applied: {sum(APPLIED)}")
    for kind in (
        "crash",
        "refused",
        "fixed text does not parse with Python 3.10",
        "a second --fix changes the file",
        "line N changed but no fix touched it",
    ):
        print(f"{kind}: {counts.pop(kind, 0)}")
    for kind, number in sorted(counts.items()):
        print(f"{kind}: {number}")
    return 0 if total == 0 else 1


if __name__ == "__main__":
    sys.exit(main())

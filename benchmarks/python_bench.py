"""portlint against ruff on a large real Python tree: wall time and files per second.

The tree is the source of the ``transformers`` package (about 2,900 .py files, 54 MB), taken from
its wheel on PyPI and cached under ``benchmarks/.cache/``. Both tools run side by side on the same
tree, several times each, alternating, so that a busy machine slows both alike:

    portlint --output-format json --isolated --no-respect-gitignore --no-cache TREE
    ruff check --no-cache --select E9,F --exit-zero --isolated --no-respect-gitignore TREE

``--isolated`` keeps this checkout's own configuration out of both runs and
``--no-respect-gitignore`` is needed because the cache folder is git-ignored. Output is discarded.

Run from the repository root, with portlint and ruff installed in the active environment:

    python benchmarks/python_bench.py [--runs 5]

Standard library only.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
import zipfile
from pathlib import Path

from portlint.engine import UnreadableFile, read_source

TRANSFORMERS_VERSION = "5.24.0"
CACHE = Path(__file__).resolve().parent / ".cache"
#: A typical model file without CUDA-specific code: what most files of a tree look like.
CLEAN_FILE = "transformers/models/bert/modeling_bert.py"


def fetch_tree(version: str) -> Path:
    """The unpacked ``transformers`` package folder, downloaded once."""
    root = CACHE / f"transformers-{version}"
    tree = root / "transformers"
    if tree.is_dir():
        return tree
    wheel = CACHE / f"transformers-{version}-py3-none-any.whl"
    if not wheel.exists():
        print(f"downloading transformers {version} from PyPI ...", file=sys.stderr)
        subprocess.run(
            [
                *[sys.executable, "-m", "pip", "download", "--quiet", "--no-deps"],
                *["--only-binary=:all:", f"transformers=={version}", "--dest", str(CACHE)],
            ],
            check=True,
        )
    with zipfile.ZipFile(wheel) as archive:
        members = [name for name in archive.namelist() if name.startswith("transformers/")]
        archive.extractall(root, members)
    return tree


def tool_command(name: str) -> list[str]:
    """The tool's executable next to this interpreter (the active venv), else on PATH."""
    beside = Path(sys.executable).with_name(name)
    found = str(beside) if beside.exists() else shutil.which(name)
    if found is None:
        sys.exit(f"{name} not found: install it in this environment")
    return [found]


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(command: list[str], cwd: Path) -> tuple[float, float]:
    """Wall and CPU seconds (worker processes included) of one run."""
    cpu, start = children_cpu(), time.perf_counter()
    result = subprocess.run(command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    elapsed = time.perf_counter() - start
    if result.returncode not in (0, 1):  # 1 is "findings" for portlint
        sys.exit(f"{' '.join(command)} failed ({result.returncode}):\n{result.stderr.decode()}")
    return elapsed, children_cpu() - cpu


def side_by_side(
    commands: dict[str, list[str]], cwd: Path, runs: int
) -> dict[str, list[tuple[float, float]]]:
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
    for _ in range(runs):
        for name, command in commands.items():
            times[name].append(timed(command, cwd))
    return times


def count_candidates(files: list[Path]) -> int:
    """Files that portlint's prefilter passes on to the parser."""
    from portlint.python.prefilter import is_candidate

    count = 0
    for path in files:
        with contextlib.suppress(UnreadableFile):
            count += is_candidate(read_source(path, "python").text)
    return count


def stages(tree: Path) -> dict[str, float]:
    """Where a one-process (``-j 1``) run spends its time, stage by stage, in seconds."""
    import ast
    import gc

    from portlint.catalog import load_catalog
    from portlint.config import Settings
    from portlint.discover import Walker
    from portlint.engine import lint_source
    from portlint.python import slices
    from portlint.python.backends import vendor_words
    from portlint.python.prefilter import is_candidate
    from portlint.python.relevance import Relevance
    from portlint.textindex import LineIndex

    settings, spent = Settings(), {}
    start = time.perf_counter()
    candidates = list(Walker(settings).walk([tree]))
    spent["walk (with .gitignore)"] = time.perf_counter() - start
    start = time.perf_counter()
    sources = []
    for candidate in candidates:
        with contextlib.suppress(UnreadableFile):
            sources.append(read_source(candidate.path, candidate.language))
    spent["read and decode"] = time.perf_counter() - start
    start = time.perf_counter()
    parsed = [source for source in sources if is_candidate(source.text)]
    spent["prefilter"] = time.perf_counter() - start
    gc.disable()  # as the engine runs each file
    start = time.perf_counter()
    for source in parsed:
        ast.parse(source.text)
    spent[f"whole ast.parse of {len(parsed)} files"] = time.perf_counter() - start
    # The parse portlint does: the statements the analysis reads (``portlint.python.slices``),
    # each file's index of candidate lines (``relevance``) built first and timed apart.
    words, sliced = vendor_words(load_catalog()), 0.0
    checked, complete = [0.0], slices._complete

    def timed_complete(text: str) -> bool:
        start = time.perf_counter()
        try:
            return complete(text)
        finally:
            checked[0] += time.perf_counter() - start

    slices._complete = timed_complete
    indexed = 0.0
    for source in parsed:
        start = time.perf_counter()
        relevance = Relevance(source.text, LineIndex(source.text).lines)
        indexed += time.perf_counter() - start
        start = time.perf_counter()
        with contextlib.suppress(SyntaxError, ValueError, RecursionError):
            slices.parse(source.text, source.path, relevance, words)
        sliced += time.perf_counter() - start
    slices._complete = complete
    spent[f"sliced parse of {len(parsed)} files"] = sliced
    spent["  check of slices left out"] = checked[0]
    spent["index of candidate lines"] = indexed
    start = time.perf_counter()
    for source in parsed:
        lint_source(source, "python", settings)
    spent["analysis (lint less the two above)"] = time.perf_counter() - start - sliced - indexed
    gc.enable()
    return spent


def version_of(command: list[str]) -> str:
    result = subprocess.run([*command, "--version"], capture_output=True, text=True)
    return result.stdout.strip()


def report(title: str, times: dict[str, list[tuple[float, float]]], files: int) -> None:
    print(f"\n{title}")
    print(f"  {'tool':<10}{'best s':>8}{'median s':>10}{'files/s':>9}{'cpu s':>8}   wall of runs")
    medians = {}
    for name, values in times.items():
        walls = [wall for wall, _ in values]
        best, medians[name] = min(walls), statistics.median(walls)
        cpu = statistics.median(cpu for _, cpu in values)
        runs = " ".join(f"{wall:.2f}" for wall in walls)
        rate = files / medians[name]
        print(f"  {name:<10}{best:>8.2f}{medians[name]:>10.2f}{rate:>9.0f}{cpu:>8.2f}   {runs}")
    print(f"  ratio portlint/ruff (median wall): {medians['portlint'] / medians['ruff']:.2f}")
    if "python" in medians:
        ratio = medians["portlint"] / medians["python"]
        print(f"  ratio portlint/python -c pass (median wall): {ratio:.2f}")


def one_process(
    tree: Path, baseline: Path, portlint: list[str], ruff: list[str], args: argparse.Namespace
) -> None:
    """This build and the ``baseline`` build, each with ``-j 1``, and ruff, alternating: CPU
    seconds (user + system) of each run; the two builds' JSON output must be the same."""
    before = [sys.executable, "-m", "portlint", *portlint[1:]]
    environment = {**os.environ, "PYTHONPATH": str(baseline)}
    outputs = [
        subprocess.run([*command, tree.name], cwd=tree.parent, env=env, capture_output=True)
        for command, env in ((before, environment), (portlint, None))
    ]
    for result in outputs:
        if result.returncode not in (0, 1) or result.stderr:
            sys.exit(f"{' '.join(map(str, result.args))} failed:\n{result.stderr.decode()}")
    same = "the same" if outputs[0].stdout == outputs[1].stdout else "DIFFERENT"
    cpu: dict[str, list[float]] = {"baseline": [], "portlint": [], "ruff": []}
    for _ in range(args.runs):
        for name, command, env in (
            ("baseline", before, environment),
            ("portlint", portlint, None),
            ("ruff", ruff, None),
        ):
            start = children_cpu()
            subprocess.run([*command, tree.name], cwd=tree.parent, env=env, capture_output=True)
            cpu[name].append(children_cpu() - start)
    print(f"\n-j 1, CPU seconds per run (baseline {baseline}; JSON output {same}):")
    for name, values in cpu.items():
        median = statistics.median(values)
        runs = " ".join(f"{value:.2f}" for value in values)
        ratio = median / statistics.median(cpu["ruff"])
        print(f"  {name:<10}{median:>8.2f}   {ratio:.2f}x ruff   runs: {runs}")


def main() -> int:
    # An installed portlint runs from bytecode compiled when it was installed; a run that
    # compiles every module from source (PYTHONDONTWRITEBYTECODE) would time the compiler.
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="runs of each tool (default: 5)")
    parser.add_argument("--version", default=TRANSFORMERS_VERSION, help="transformers version")
    parser.add_argument(
        "--baseline",
        type=Path,
        metavar="SRC",
        help="the src folder of another portlint checkout (rules/ beside it): also time both "
        "builds with -j 1, alternating, and check that their JSON output is the same",
    )
    args = parser.parse_args()

    tree = fetch_tree(args.version)
    files = sorted(tree.rglob("*.py"))
    size = sum(path.stat().st_size for path in files)
    portlint, ruff = tool_command("portlint"), tool_command("ruff")
    print(f"tree: transformers {args.version}: {len(files)} .py files, {size / 1e6:.1f} MB")
    print(f"machine: {os.cpu_count()} CPUs, Python {sys.version.split()[0]}")
    print(f"tools: {version_of(portlint)}, {version_of(ruff)}")
    print(f"prefilter candidates (files portlint parses): {count_candidates(files)}")

    common = ["--isolated", "--no-respect-gitignore", "--no-cache"]
    ruff_check = [*ruff, "check", "--select", "E9,F", "--exit-zero", *common]
    portlint_check = [*portlint, "--output-format", "json", *common]
    whole = side_by_side(
        {"portlint": [*portlint_check, tree.name], "ruff": [*ruff_check, tree.name]},
        tree.parent,
        args.runs,
    )
    report(f"whole tree ({len(files)} files)", whole, len(files))

    single = side_by_side(
        {
            "portlint": [*portlint_check, CLEAN_FILE],
            "ruff": [*ruff_check, CLEAN_FILE],
            "python": [sys.executable, "-c", "pass"],
        },
        tree.parent,
        args.runs,
    )
    parsed = "parsed" if count_candidates([tree.parent / CLEAN_FILE]) else "not parsed"
    report(f"one clean file ({CLEAN_FILE}, {parsed})", single, 1)
    if args.baseline is not None:
        one_process(tree, args.baseline.resolve(), [*portlint_check, "-j", "1"], ruff_check, args)
    print("\nwhere a -j 1 run spends its time (in this process, seconds):")
    for stage, seconds in stages(tree).items():
        print(f"  {stage:<36}{seconds:>6.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

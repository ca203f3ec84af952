"""How portlint scales with the size of a tree: time, files per second per core, peak memory.

The tree is the transformers source (``python_bench.py``) and a tree of ten copies of it
(29,120 files), built once under ``benchmarks/.cache/`` with hard links (no extra disk space).
Each is linted cold (``--no-cache``) with all CPUs and with ``-j 1`` (the main process alone:
its memory must not grow with the tree), next to ``ruff check --no-cache --select E9,F``.

Peak memory is the largest resident set of the run's processes (``wait4``'s ``ru_maxrss``: with
workers, the largest of the main process and its workers).

``--findings`` lints a generated tree where every file has findings instead (``FILES_PER_COPY``
Python and CUDA files of ``SITES`` findings each, and ten copies of it), in each output format
with ``-j 1``: the main process must not hold every file's findings, whatever the format.

    python benchmarks/scale_bench.py [--runs 1] [--copies 10] [--findings]

Standard library only.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from python_bench import CACHE, TRANSFORMERS_VERSION, fetch_tree, tool_command


def copies_of(tree: Path, copies: int) -> Path:
    """A folder holding ``copies`` copies of ``tree``, hard-linked where the file system can."""
    root = CACHE / f"scale-{tree.parent.name}-x{copies}"
    done = root / ".complete"
    if done.exists():
        return root
    shutil.rmtree(root, ignore_errors=True)
    for index in range(copies):
        shutil.copytree(tree, root / f"copy{index}" / tree.name, copy_function=_link)
    done.write_text("", encoding="utf-8")
    return root


def _link(source: str, target: str) -> None:
    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)


#: Files of each kind in one copy of the generated tree, and findings in each file.
FILES_PER_COPY = 200
SITES = 50
PYTHON_SITE = "torch.cuda.synchronize()\n"
CUDA_SITE = "  cudaMalloc(&p, 4);\n"
FORMATS = ("json", "concise", "text", "sarif", "junit", "github")


def findings_tree(copies: int) -> Path:
    """``copies`` copies of a tree of Python and CUDA files that are all findings."""
    root = CACHE / f"findings-x{copies}"
    done = root / ".complete"
    if done.exists():
        return root
    shutil.rmtree(root, ignore_errors=True)
    python = "import torch\n" + PYTHON_SITE * SITES
    cuda = "void f() {\n  void *p;\n" + CUDA_SITE * SITES + "}\n"
    for index in range(copies):
        folder = root / f"copy{index}"
        folder.mkdir(parents=True)
        for number in range(FILES_PER_COPY):
            (folder / f"m{number}.py").write_text(python, encoding="utf-8")
            (folder / f"k{number}.cu").write_text(cuda, encoding="utf-8")
    done.write_text("", encoding="utf-8")
    return root


def findings_main(args: argparse.Namespace) -> int:
    portlint = tool_command("portlint")
    print(f"machine: {os.cpu_count()} CPUs, Python {sys.version.split()[0]}")
    print(f"\n  {'tree':<6}{'files':>7}{'findings':>10}  {'format':<9}{'wall s':>8}{'peak MB':>9}")
    for copies in (1, args.copies):
        folder = findings_tree(copies)
        files = 2 * FILES_PER_COPY * copies
        for name in FORMATS:
            command = [*portlint, "--isolated", "--no-cache", "-j", "1", "--output-format", name]
            runs = [measure([*command, "."], folder) for _ in range(args.runs)]
            wall = statistics.median(r[0] for r in runs)
            peak = max(r[2] for r in runs)
            print(
                f"  {f'{copies}x':<6}{files:>7}{files * SITES:>10,}  {name:<9}{wall:>8.2f}{peak:>9}"
            )
    return 0


def measure(command: list[str], cwd: Path) -> tuple[float, float, int]:
    """Wall seconds, CPU seconds (workers included) and peak RSS in MB of one run."""
    start = time.perf_counter()
    process = subprocess.Popen(command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode not in (0, 1):
        error = process.stderr.read().decode() if process.stderr else ""
        sys.exit(f"{' '.join(command)} failed ({process.returncode}):\n{error}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss // 1024


def main() -> int:
    # An installed portlint runs from bytecode compiled when it was installed; a run that
    # compiles every module from source (PYTHONDONTWRITEBYTECODE) would time the compiler.
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=1, help="runs of each command (default: 1)")
    parser.add_argument("--copies", type=int, default=10, help="size of the large tree")
    parser.add_argument("--version", default=TRANSFORMERS_VERSION, help="transformers version")
    parser.add_argument(
        "--findings", action="store_true", help="a generated tree where every file has findings"
    )
    args = parser.parse_args()
    if args.findings:
        return findings_main(args)

    tree = fetch_tree(args.version)
    trees = {"1x": tree.parent, f"{args.copies}x": copies_of(tree, args.copies)}
    portlint, ruff = tool_command("portlint"), tool_command("ruff")
    common = ["--isolated", "--no-respect-gitignore"]
    commands = {
        "portlint": [*portlint, "--no-cache", "--output-format", "json", *common],
        "portlint -j 1": [*portlint, "--no-cache", "--output-format", "json", "-j", "1", *common],
        "ruff": [*ruff, "check", "--no-cache", "--select", "E9,F", "--exit-zero", *common],
    }
    cpus = os.cpu_count() or 1
    print(f"machine: {cpus} CPUs, Python {sys.version.split()[0]}")
    print(
        f"\n  {'tree':<6}{'files':>7}  {'tool':<15}{'wall s':>8}{'cpu s':>8}"
        f"{'files/s':>9}{'/cpu s':>8}{'peak MB':>9}"
    )
    for label, folder in trees.items():
        files = sum(1 for _ in folder.rglob("*.py"))
        for name, command in commands.items():
            runs = [measure([*command, "."], folder) for _ in range(args.runs)]
            wall = statistics.median(r[0] for r in runs)
            cpu = statistics.median(r[1] for r in runs)
            peak = max(r[2] for r in runs)
            print(
                f"  {label:<6}{files:>7}  {name:<15}{wall:>8.2f}{cpu:>8.2f}"
                f"{files / wall:>9.0f}{files / cpu:>8.0f}{peak:>9}"
            )
    print("\n  /cpu s: files per CPU-second (per core, workers included)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""portlint's cache against ruff's on the transformers tree: cold, warm, and one file changed.

Each round empties both caches, then times, alternating the two tools so that a busy machine
slows both alike:

- cold: the first run, which also writes the cache;
- warm: a second run over the unchanged tree;
- one file changed: a comment appended to one model file (restored afterwards).

    portlint --output-format json --isolated --no-respect-gitignore --cache-dir DIR TREE
    ruff check --select E9,F --exit-zero --isolated --no-respect-gitignore --cache-dir DIR TREE

Run from the repository root, with portlint and ruff installed in the active environment:

    python benchmarks/cache_bench.py [--runs 5]

Standard library only (the tree comes from ``python_bench.py``'s download cache).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

from python_bench import CLEAN_FILE, TRANSFORMERS_VERSION, fetch_tree, timed, tool_command

STAGES = ("cold", "warm", "one file changed")


def main() -> int:
    # An installed portlint runs from bytecode compiled when it was installed; a run that
    # compiles every module from source (PYTHONDONTWRITEBYTECODE) would time the compiler.
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="rounds (default: 5)")
    parser.add_argument("--version", default=TRANSFORMERS_VERSION, help="transformers version")
    args = parser.parse_args()

    tree = fetch_tree(args.version)
    files = len(list(tree.rglob("*.py")))
    portlint, ruff = tool_command("portlint"), tool_command("ruff")
    print(f"tree: transformers {args.version}: {files} .py files; {os.cpu_count()} CPUs")
    touched = tree.parent / CLEAN_FILE
    original = touched.read_bytes()
    common = ["--isolated", "--no-respect-gitignore"]
    times: dict[tuple[str, str], list[float]] = {}
    with tempfile.TemporaryDirectory() as scratch:
        caches = {"portlint": Path(scratch, "portlint"), "ruff": Path(scratch, "ruff")}
        commands = {
            "portlint": [*portlint, "--output-format", "json", *common],
            "ruff": [*ruff, "check", "--select", "E9,F", "--exit-zero", *common],
        }
        try:
            for round_ in range(args.runs):
                for cache in caches.values():
                    shutil.rmtree(cache, ignore_errors=True)
                for stage in STAGES:
                    if stage == "one file changed":
                        touched.write_bytes(original + f"\n# changed {round_}\n".encode())
                    for name, command in commands.items():
                        run = [*command, "--cache-dir", str(caches[name]), tree.name]
                        wall, _ = timed(run, tree.parent)
                        times.setdefault((stage, name), []).append(wall)
        finally:
            touched.write_bytes(original)

    print(f"\n  {'stage':<18}{'portlint s':>11}{'ruff s':>9}{'ratio':>7}   (median wall)")
    for stage in STAGES:
        mine = statistics.median(times[stage, "portlint"])
        theirs = statistics.median(times[stage, "ruff"])
        print(f"  {stage:<18}{mine:>11.2f}{theirs:>9.2f}{mine / theirs:>7.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

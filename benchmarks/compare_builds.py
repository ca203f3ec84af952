"""Time two portlint builds on the same inputs, alternately (a busy machine slows both alike).

    python benchmarks/compare_builds.py OLD_CHECKOUT [NEW_CHECKOUT] [--runs 5] -- ARGS...

Each build runs as ``python -m portlint ARGS`` with ``PYTHONPATH=CHECKOUT/src`` (NEW defaults to
this checkout), output discarded. Prints per build the median and best wall time and the median
CPU time (user + system, worker processes included), then the ratio NEW/OLD of the medians.
``--cwd`` runs both from another folder. ``--new-extra`` adds arguments for the new build only,
e.g. ``--no-cache`` when the old build has no cache (and no such option).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent


def run_once(checkout: Path, args: list[str], cwd: Path) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one run; CPU counts this child and its workers."""
    env = dict(os.environ, PYTHONPATH=str(checkout / "src"))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "portlint", *args],
        cwd=cwd,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=False,
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main() -> int:
    # An installed portlint runs from bytecode compiled when it was installed; a run that
    # compiles every module from source (PYTHONDONTWRITEBYTECODE) would time the compiler.
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("old", type=Path, help="checkout of the older build")
    parser.add_argument("new", type=Path, nargs="?", default=HERE, help="default: this checkout")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--cwd", type=Path, default=Path.cwd())
    parser.add_argument("--new-extra", default="", help="arguments for the new build only")
    argv = sys.argv[1:]
    split = argv.index("--") if "--" in argv else len(argv)
    options = parser.parse_args(argv[:split])
    args = argv[split + 1 :]  # portlint's arguments, after "--"
    builds = {"old": options.old.resolve(), "new": options.new.resolve()}
    extra = {"old": [], "new": options.new_extra.split()}
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in builds}
    for name, checkout in builds.items():  # one warm-up run each (file cache, .pyc)
        run_once(checkout, [*extra[name], *args], options.cwd)
    for _ in range(options.runs):
        for name, checkout in builds.items():
            times[name].append(run_once(checkout, [*extra[name], *args], options.cwd))
    print(f"portlint {' '.join(args)}  ({options.runs} alternating runs each)")
    header = f"{'median wall s':>13} {'best wall s':>11} {'median CPU s':>12}"
    print(f"  {'build':<6} {header}  checkout")
    medians = {}
    for name, runs in times.items():
        wall = statistics.median(w for w, _ in runs)
        cpu = statistics.median(c for _, c in runs)
        medians[name] = (wall, cpu)
        best = min(w for w, _ in runs)
        print(f"  {name:<6} {wall:>13.3f} {best:>11.3f} {cpu:>12.3f}  {builds[name]}")
    (old_wall, old_cpu), (new_wall, new_cpu) = medians["old"], medians["new"]
    print(f"  new/old: wall {new_wall / old_wall:.2f}, CPU {new_cpu / old_cpu:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

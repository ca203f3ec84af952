"""How long a pre-commit hook run of portlint takes on one file.

Times ``portlint FILE`` for a file with no CUDA words (the prefilter skips it: nothing is parsed)
and for one with findings, against Python's own start-up and ``ruff check`` on the same file,
and prints the ratios; then lists what the clean run imports (``python -X importtime``): no
libcst or tree-sitter may appear there. The goal for the clean file is 4x ``python -c pass``.

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


PATH = os.environ.get("PATH", "").split(os.pathsep)


def portlint_command() -> list[str]:
    found = shutil.which("portlint")
    return [found] if found else [sys.executable, "-m", "portlint"]


#: As a user's machine runs it: bytecode cached (some CI images set PYTHONDONTWRITEBYTECODE,
#: which makes every run compile every module from source).
ENVIRONMENT = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def wall_times(commands: dict[str, list[str]], cwd: Path, runs: int) -> dict[str, list[float]]:
    """Each command run ``runs`` times, in turn with the others, so that a busy machine slows
    them alike."""

    def run(command: list[str]) -> float:
        start = time.perf_counter()
        subprocess.run(
            command, cwd=cwd, env=ENVIRONMENT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        return time.perf_counter() - start

    for command in commands.values():
        run(command)  # warm-up: writes the bytecode caches
    times: dict[str, list[float]] = {label: [] for label in commands}
    for _ in range(runs):
        for label, command in commands.items():
            times[label].append(run(command))
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
        ruff = shutil.which("ruff", path=os.pathsep.join([str(Path(sys.executable).parent), *PATH]))
        commands = {"python -c pass": [sys.executable, "-c", "pass"]}
        for name in ("clean.py", "findings.py"):
            commands[f"portlint {name}"] = [*portlint, name]
            if ruff:
                ruff_check = [ruff, "check", "--no-cache", "--isolated", "--select", "E9,F", name]
                commands[f"ruff {name}"] = ruff_check
        timed = wall_times(commands, cwd, args.runs)
        bare = timed["python -c pass"]
        for label, times in timed.items():
            ratio = statistics.median(times) / statistics.median(bare)
            print(f"{describe(label, times)}   {ratio:4.1f}x python -c pass")
        if ruff:
            for name in ("clean.py", "findings.py"):
                ratio = statistics.median(timed[f"portlint {name}"]) / statistics.median(
                    timed[f"ruff {name}"]
                )
                print(f"portlint/ruff on {name}: {ratio:.1f}x")
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

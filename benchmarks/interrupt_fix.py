"""Kill ``portlint --fix`` at random moments: no file may end up half written, and the next run
must leave no temporary file behind.

    python benchmarks/interrupt_fix.py [--files 3000] [--trials 20] [--seed 1] [--jobs N]

Builds a tree of ``--files`` fixable Python files (a few templates, each in many copies, spread
over folders), finds what ``--fix`` makes of each template, then per trial: a fresh tree,
``portlint --fix`` started in its own process group and killed with SIGKILL (with its workers)
after a random delay within the time a full run takes; every file must hold either its original
bytes or its fully fixed bytes ("corrupt" otherwise). Temporary files present after the kill are
counted, then ``portlint --fix`` runs again and must leave every file fixed and no temporary file.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TEMPLATES = (
    "import torch\n\nx = torch.ones(3).cuda()\ntorch.cuda.synchronize()\n",
    'import torch\n\nmodel = torch.nn.Linear(2, 2).to("cuda")\nn = torch.cuda.device_count()\n',
    "import torch\n\n\ndef step(batch):\n    batch = batch.cuda(non_blocking=True)\n"
    "    torch.cuda.synchronize()\n    return batch\n",
    "import torch\n\nfree = torch.cuda.memory_allocated()\ntorch.cuda.empty_cache()\n"
    'y = torch.zeros(4, device="cuda")\n',
)
PER_FOLDER = 100


def build(root: Path, files: int) -> dict[Path, int]:
    """The tree; file -> template index."""
    layout = {}
    for index in range(files):
        folder = root / f"pkg{index // PER_FOLDER:03d}"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"m{index:05d}.py"
        template = index % len(TEMPLATES)
        path.write_text(TEMPLATES[template], encoding="utf-8")
        layout[path.relative_to(root)] = template
    return layout


def portlint(root: Path, jobs: int | None) -> subprocess.Popen:
    command = [sys.executable, "-m", "portlint", "--isolated", "--fix", "-q", "."]
    if jobs:
        command[3:3] = ["--jobs", str(jobs)]
    return subprocess.Popen(
        command,
        cwd=root,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # its own process group: the kill reaches the workers too
    )


def temporary_files(root: Path) -> list[Path]:
    return [p for p in root.rglob("*.tmp") if ".portlint-" in p.name]


def expected_fixes(work: Path, jobs: int | None) -> list[bytes]:
    """What --fix makes of each template."""
    sample = work / "sample"
    for index, text in enumerate(TEMPLATES):
        (sample / str(index)).mkdir(parents=True)
        (sample / str(index) / "m.py").write_text(text, encoding="utf-8")
    portlint(sample, jobs).wait()
    fixed = [(sample / str(i) / "m.py").read_bytes() for i in range(len(TEMPLATES))]
    assert all(f != t.encode() for f, t in zip(fixed, TEMPLATES, strict=True)), "nothing fixed"
    return fixed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--files", type=int, default=3000)
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=None)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    work = Path(tempfile.mkdtemp(prefix="portlint-interrupt-"))
    originals = [t.encode() for t in TEMPLATES]
    try:
        fixed = expected_fixes(work, args.jobs)
        timing = work / "timing"
        build(timing, args.files)
        start = time.perf_counter()
        portlint(timing, args.jobs).wait()
        full = time.perf_counter() - start
        print(f"{args.files} files; a full --fix run takes {full:.1f} s")
        totals = {"corrupt": 0, "temp after kill": 0, "temp after next run": 0, "unfixed": 0}
        for trial in range(args.trials):
            tree = work / f"trial{trial}"
            layout = build(tree, args.files)
            delay = rng.uniform(0.05, full)
            process = portlint(tree, args.jobs)
            time.sleep(delay)
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            states = {"original": 0, "fixed": 0, "corrupt": 0}
            for relative, template in layout.items():
                data = (tree / relative).read_bytes()
                if data == originals[template]:
                    states["original"] += 1
                elif data == fixed[template]:
                    states["fixed"] += 1
                else:
                    states["corrupt"] += 1
            left = len(temporary_files(tree))
            portlint(tree, args.jobs).wait()
            after = len(temporary_files(tree))
            unfixed = sum((tree / r).read_bytes() != fixed[t] for r, t in layout.items())
            totals["corrupt"] += states["corrupt"]
            totals["temp after kill"] += left
            totals["temp after next run"] += after
            totals["unfixed"] += unfixed
            print(
                f"trial {trial + 1:2d}: killed after {delay:5.2f} s: {states['fixed']:4d} fixed, "
                f"{states['original']:4d} untouched, {states['corrupt']} corrupt, {left} temp "
                f"files; after the next run: {after} temp files, {unfixed} unfixed"
            )
            shutil.rmtree(tree)
        print(
            f"{args.trials} trials: {totals['corrupt']} corrupt files, "
            f"{totals['temp after kill']} temp files right after the kills, "
            f"{totals['temp after next run']} after the next run, "
            f"{totals['unfixed']} files unfixed after the next run"
        )
        bad = totals["corrupt"] + totals["temp after next run"] + totals["unfixed"]
        return 1 if bad else 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())

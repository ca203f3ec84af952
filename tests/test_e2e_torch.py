"""End to end: CUDA-only PyTorch programs that fail on a CPU-only torch as written run after
--fix, and print exactly what a hand-ported CPU version of the same program prints.

``fixtures/e2e/<name>.py`` is a program; ``fixtures/e2e/<name>/`` is a program of several
modules whose entry point is ``main.py`` (a library module and the script that imports it).
``fixtures/e2e/reference/<name>.py`` is the hand-ported reference.

torch is not a dependency of portlint (it is gigabytes). These tests run where torch is
installed (`.ci/run` installs the CPU build first) and are skipped elsewhere.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from support import FIXTURES, run_cli

torch = pytest.importorskip(
    "torch", reason="torch is not installed: `pip install torch` to run the end-to-end fix tests"
)
pytestmark = pytest.mark.skipif(
    torch.cuda.is_available(), reason="needs a machine without CUDA to show the original failing"
)

E2E = FIXTURES / "e2e"
PROGRAMS = sorted(p for p in E2E.iterdir() if (p.suffix == ".py" or (p / "main.py").is_file()))
FAILURES = (
    "Torch not compiled with CUDA enabled",
    "Distributed package doesn't have NCCL built in",
    "has no attribute '_cuda_setDevice'",
    "Found no NVIDIA driver",
)


def free_port() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return str(probe.getsockname()[1])


def run_script(path: Path) -> subprocess.CompletedProcess:
    # A port of its own for the distributed example: other test runs may be using the default.
    environment = {**os.environ, "MASTER_PORT": free_port()}
    return subprocess.run(
        [sys.executable, str(path)],
        capture_output=True,
        text=True,
        cwd=path.parent,
        timeout=300,
        env=environment,
    )


def copy_program(program: Path, into: Path) -> tuple[Path, Path]:
    """(what to fix, what to run) in a copy of ``program``."""
    if program.is_dir():
        target = into / program.name
        shutil.copytree(program, target)
        return target, target / "main.py"
    target = into / program.name
    shutil.copy(program, target)
    return target, target


def test_there_are_enough_programs_each_with_a_reference():
    assert len(PROGRAMS) >= 12
    for program in PROGRAMS:
        assert (E2E / "reference" / f"{program.stem}.py").is_file(), program.name


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.stem)
def test_program_fails_as_written_and_prints_the_reference_after_fix(program, tmp_path):
    fix_target, entry = copy_program(program, tmp_path)
    before = run_script(entry)
    assert before.returncode != 0
    assert any(message in before.stderr for message in FAILURES), before.stderr[-2000:]

    status, out, err = run_cli("--isolated", "--fix", str(fix_target))
    assert status == 0, out + err  # nothing left that would stop it
    after = run_script(entry)
    assert after.returncode == 0, after.stderr[-2000:]
    reference = run_script(E2E / "reference" / f"{program.stem}.py")
    assert reference.returncode == 0, reference.stderr[-2000:]
    assert after.stdout == reference.stdout

    files = sorted(fix_target.rglob("*.py")) if fix_target.is_dir() else [fix_target]
    fixed = [f.read_text() for f in files]
    run_cli("--isolated", "--fix", str(fix_target))
    assert [f.read_text() for f in files] == fixed  # a second --fix changes nothing

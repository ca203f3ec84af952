"""End to end: real PyTorch scripts that fail on a CPU-only torch as written run after --fix.

torch is not a dependency of portlint (it is gigabytes). These tests run where torch is
installed (`.ci/run` installs the CPU build first) and are skipped elsewhere.
"""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from support import FIXTURES, run_cli

torch = pytest.importorskip(
    "torch", reason="torch is not installed: `pip install torch` to run the end-to-end fix tests"
)
pytestmark = pytest.mark.skipif(
    torch.cuda.is_available(), reason="needs a machine without CUDA to show the original failing"
)

SCRIPTS = sorted((FIXTURES / "e2e").glob("*.py"))
FAILURES = (
    "Torch not compiled with CUDA enabled",
    "Distributed package doesn't have NCCL built in",
    "has no attribute '_cuda_setDevice'",
)


def run_script(path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(path)], capture_output=True, text=True, cwd=path.parent, timeout=300
    )


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.stem)
def test_script_fails_as_written_and_runs_after_fix(script, tmp_path):
    copy = tmp_path / script.name
    shutil.copy(script, copy)
    before = run_script(copy)
    assert before.returncode != 0
    assert any(message in before.stderr for message in FAILURES), before.stderr[-2000:]

    status, out, err = run_cli("--isolated", "--fix", str(copy))
    assert status == 0, out + err  # nothing left that would stop it
    after = run_script(copy)
    assert after.returncode == 0, after.stderr[-2000:]
    assert "cuda" not in after.stdout.lower()

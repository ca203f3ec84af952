"""Both pre-commit hooks, run with ``pre-commit try-repo`` on a temporary repository.

For each ``try-repo`` run, pre-commit installs this checkout into a fresh virtual environment
(pip, from the package index); ``PRE_COMMIT_HOME`` points into pytest's temporary folder so that
the user's pre-commit cache is left alone.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from support import ROOT

CUDA_ONLY = "import torch\n\nmodel = Net().cuda()\n"
pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="pre-commit needs git")


def pre_commit_command() -> list[str]:
    return [sys.executable, "-m", "pre_commit"]


@pytest.fixture(scope="session")
def pre_commit_home(tmp_path_factory) -> Path:
    pytest.importorskip("pre_commit", reason="the test extra installs pre-commit")
    return tmp_path_factory.mktemp("pre-commit-home")


@pytest.fixture
def project(tmp_path) -> Path:
    """A repository with one staged CUDA-only Python file and one clean file."""
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "train.py").write_text(CUDA_ONLY, encoding="utf-8")
    (tmp_path / "clean.py").write_text("print('hello')\n", encoding="utf-8")
    subprocess.run(["git", "add", "."], cwd=tmp_path, check=True)
    return tmp_path


def try_repo(project: Path, home: Path, hook: str) -> subprocess.CompletedProcess:
    environment = {**os.environ, "PRE_COMMIT_HOME": str(home), "NO_COLOR": "1"}
    environment.pop("GITHUB_STEP_SUMMARY", None)
    return subprocess.run(
        [*pre_commit_command(), "try-repo", str(ROOT), hook, "--all-files", "--color", "never"],
        cwd=project,
        env=environment,
        capture_output=True,
        text=True,
        timeout=900,
    )


def test_check_hook_fails_on_cuda_only_code(project, pre_commit_home):
    done = try_repo(project, pre_commit_home, "portlint")
    output = done.stdout + done.stderr
    assert done.returncode == 1, output
    assert "portlint" in output and "Failed" in output
    assert "train.py:3:14: PRT102" in output
    assert "clean.py" not in output
    assert (project / "train.py").read_text(encoding="utf-8") == CUDA_ONLY


def test_fix_hook_rewrites_the_file(project, pre_commit_home):
    done = try_repo(project, pre_commit_home, "portlint-fix")
    output = done.stdout + done.stderr
    assert "files were modified by this hook" in output, output
    assert (project / "train.py").read_text(encoding="utf-8") == (
        "import torch\n\n\n"
        "def _portlint_device():\n"
        '    """The accelerator this machine has, else the CPU (written by portlint --fix)."""\n'
        "    return torch.accelerator.current_accelerator() if torch.accelerator.is_available()"
        ' else torch.device("cpu")\n\n'
        "model = Net().to(_portlint_device())\n"
    )
    assert (project / "clean.py").read_text(encoding="utf-8") == "print('hello')\n"

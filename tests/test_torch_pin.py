"""min-torch inferred from the project's own torch requirement when the config does not set it."""

from __future__ import annotations

import pytest

from portlint.torch_pin import infer_min_python, infer_min_torch, lower_bound
from support import run_cli

SYNC = "import torch\n\ntorch.cuda.synchronize()\n"


@pytest.mark.parametrize(
    ("requirement", "version"),
    [
        ("torch>=2.1", "2.1"),
        ("torch==2.4.1", "2.4"),
        ("torch ~= 2.3.0", "2.3"),
        ("torch>2.2,<3", "2.2"),
        ("torch[opt]>=2.7 ; python_version >= '3.10'", "2.7"),
        ("torch<3", None),
        ("torch", None),
        ("torchvision>=0.20", None),
    ],
)
def test_lower_bound(requirement, version):
    assert lower_bound(requirement) == version


def test_inferred_from_pyproject_then_requirements(tmp_path):
    assert infer_min_torch(tmp_path) is None
    (tmp_path / "requirements.txt").write_text("numpy\ntorch>=2.1  # pinned for the cluster\n")
    assert infer_min_torch(tmp_path) == ("2.1", str(tmp_path / "requirements.txt"))
    (tmp_path / "pyproject.toml").write_text('[project]\ndependencies = ["torch>=2.9"]\n')
    assert infer_min_torch(tmp_path) == ("2.9", str(tmp_path / "pyproject.toml"))


def test_fix_uses_the_inferred_version_unless_the_config_says_otherwise(tmp_path):
    (tmp_path / "requirements.txt").write_text("torch==2.1.2\n")
    (tmp_path / "a.py").write_text(SYNC)
    run_cli("--fix", "a.py", cwd=tmp_path)
    assert "def _portlint_device():" in (tmp_path / "a.py").read_text()

    (tmp_path / "b.py").write_text(SYNC)
    (tmp_path / "portlint.toml").write_text('min-torch = "2.6"\n')
    run_cli("--fix", "b.py", cwd=tmp_path)
    text = (tmp_path / "b.py").read_text()
    assert "_portlint_device" not in text and "torch.accelerator.synchronize()" in text


def test_inferred_from_setup_cfg_setup_py_and_included_requirements(tmp_path):
    setup_cfg = "[options]\ninstall_requires =\n    numpy\n    torch>=2.3\n"
    (tmp_path / "setup.cfg").write_text(setup_cfg)
    assert infer_min_torch(tmp_path) == ("2.3", str(tmp_path / "setup.cfg"))
    (tmp_path / "setup.cfg").unlink()
    (tmp_path / "setup.py").write_text(
        "from setuptools import setup\nsetup(name='x', install_requires=['torch~=2.4.0'])\n"
    )
    assert infer_min_torch(tmp_path) == ("2.4", str(tmp_path / "setup.py"))
    (tmp_path / "setup.py").unlink()
    (tmp_path / "reqs").mkdir()
    (tmp_path / "reqs" / "base.txt").write_text("-r more.txt\n")
    (tmp_path / "reqs" / "more.txt").write_text("torch==2.5.1\n-r base.txt\n")  # a cycle
    (tmp_path / "requirements.txt").write_text("numpy\n-r reqs/base.txt\n")
    assert infer_min_torch(tmp_path) == ("2.5", str(tmp_path / "requirements.txt"))


def test_requires_python_lower_bound(tmp_path):
    assert infer_min_python(tmp_path) is None
    (tmp_path / "pyproject.toml").write_text('[project]\nrequires-python = ">=3.9, <4"\n')
    assert infer_min_python(tmp_path) == "3.9"

"""The built wheel carries the rule catalogue: install it into a fresh venv, run it elsewhere.

This is the path pre-commit takes (it pip-installs the package into a clean environment), so it
is tested as such rather than from the source checkout.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import venv
import zipfile

import pytest

from support import FIXTURES, ROOT


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(ROOT)],
        check=True,
    )
    (built,) = out.glob("portlint-*.whl")
    return built


def test_wheel_contains_rules(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    rules = {n for n in names if n.startswith("portlint/rules/")}
    for path in sorted((ROOT / "rules").rglob("*.toml")):
        assert f"portlint/rules/{path.relative_to(ROOT / 'rules').as_posix()}" in rules


def test_installed_wheel_lints_from_outside_the_checkout(wheel, tmp_path):
    environment = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(environment)
    python = environment / ("Scripts" if os.name == "nt" else "bin") / "python"
    subprocess.run([str(python), "-m", "pip", "install", "-q", str(wheel)], check=True)
    work = tmp_path / "elsewhere"
    work.mkdir()
    shutil.copy(FIXTURES / "python" / "distributed.py", work / "distributed.py")
    portlint = environment / ("Scripts" if os.name == "nt" else "bin") / "portlint"
    result = subprocess.run(
        [str(portlint), "--output-format", "json", "--target", "npu", "distributed.py"],
        cwd=work,
        capture_output=True,
        text=True,
        env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
    )
    assert result.returncode == 1, result.stderr
    findings = json.loads(result.stdout)
    assert [(f["line"], f["code"], f["targets"]["npu"]["replacement"]) for f in findings] == [
        (8, "PRT401", "HCCL_DEBUG"),
        (9, "PRT301", '"hccl"'),
        (11, "PRT301", '"hccl"'),
        (12, "PRT302", '"hccl"'),
        (14, "PRT301", '"hccl"'),
        (23, "PRT301", '"hccl"'),
    ]

"""The entry point's fast path (portlint.quick): it answers only runs whose full answer it can
give exactly, and hands every other run to portlint.cli unchanged."""

from __future__ import annotations

import subprocess
import sys

import pytest

CLEAN = "import os\n\n\ndef main():\n    print(os.getcwd())\n"
FULL_RUN = "import sys; from portlint.cli import main; sys.exit(main(sys.argv[1:]))"
QUICK_RUN = "import sys; from portlint.quick import main; sys.exit(main(sys.argv[1:]))"


def run(code: str, args: list[str], cwd) -> tuple[int, str, str]:
    proc = subprocess.run(
        [sys.executable, "-c", code, *args], cwd=cwd, capture_output=True, text=True, check=False
    )
    return proc.returncode, proc.stdout, proc.stderr


def quick_answer(args: list[str], cwd) -> int | None:
    code = "import sys; from portlint.quick import clean_run; print(clean_run(sys.argv[1:]))"
    _, out, _ = run(code, args, cwd)
    return None if out.strip() == "None" else int(out)


@pytest.fixture
def project(tmp_path):
    (tmp_path / "a.py").write_text(CLEAN)
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "b.py").write_text("VALUE = 1\n")
    (tmp_path / "empty.py").write_text("")
    return tmp_path


def test_clean_files_get_the_full_runs_answer(project):
    args = ["a.py", "pkg/b.py", "empty.py"]
    assert quick_answer(args, project) == 3
    assert run(QUICK_RUN, args, project) == run(FULL_RUN, args, project)
    assert run(QUICK_RUN, args, project)[:2] == (0, "All checks passed (3 files checked).\n")


def test_the_fast_path_imports_neither_the_command_line_nor_dataclasses(project):
    code = (
        "import sys; from portlint.quick import main; main(['a.py']);"
        " print('portlint.cli' in sys.modules, 'dataclasses' in sys.modules)"
    )
    assert run(code, [], project)[1].splitlines()[-1] == "False False"


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("cuda.py", "import torch\nx = torch.ones(2).cuda()\n"),
        ("noqa.py", "import os  # noqa: PRT101\n"),
        ("ignore.py", "x = 1  # portlint: ignore[PRT201]\n"),
        ("nolint.py", "x = 1  # NOLINT(portlint-PRT701)\n"),
        ("cookie.py", "# -*- coding: latin-1 -*-\nx = 1\n"),
        ("notes.txt", "nothing here\n"),
    ],
)
def test_files_the_fast_path_leaves_to_the_full_run(project, name, text):
    (project / name).write_text(text)
    assert quick_answer(["a.py", name], project) is None
    assert run(QUICK_RUN, ["a.py", name], project) == run(FULL_RUN, ["a.py", name], project)


def test_a_backend_packages_init_gets_its_summary_whatever_its_text(project):
    """ops/cuda/ beside ops/npu/ is a backend package: its __init__.py carries the package's
    PRT105 summary though no word of the prefilter is in it."""
    for vendor in ("cuda", "npu"):
        (project / "ops" / vendor).mkdir(parents=True)
        (project / "ops" / vendor / "__init__.py").write_text("from .impl import run\n")
    args = ["ops/cuda/__init__.py"]
    assert quick_answer(args, project) is None
    status, out, _ = run(FULL_RUN, ["--output-format", "concise", *args], project)
    assert "PRT105 CUDA backend package `cuda/`: siblings npu" in out
    assert run(QUICK_RUN, args, project) == run(FULL_RUN, args, project)
    # Beside no other vendor's folder it is an ordinary clean file.
    (project / "ops" / "npu" / "__init__.py").unlink()
    (project / "ops" / "npu").rmdir()
    status, out, _ = run(FULL_RUN, args, project)
    assert (status, out) == (0, "All checks passed (1 files checked).\n")


@pytest.mark.parametrize(
    "raw",
    [b"x = 1\n\0\n", b"\xff\xfex\x00=\x001\x00", b"name = '\xe9'\n"],
    ids=["nul", "utf16", "latin1"],
)
def test_unreadable_files_are_left_to_the_full_run(project, raw):
    (project / "odd.py").write_bytes(raw)
    assert quick_answer(["odd.py"], project) is None
    assert run(QUICK_RUN, ["odd.py"], project) == run(FULL_RUN, ["odd.py"], project)


@pytest.mark.parametrize(
    "args",
    [[], ["--quiet", "a.py"], ["rule", "PRT101"], ["check", "a.py"], ["a.py", "a.py"], ["pkg"]],
    ids=["none", "option", "rule", "check", "twice", "folder"],
)
def test_command_lines_left_to_the_full_run(project, args):
    assert quick_answer(args, project) is None


@pytest.mark.parametrize(
    ("where", "name", "text"),
    [
        (".", "portlint.toml", 'select = ["PRT1"]\n'),
        ("pkg", "pyproject.toml", '[tool.portlint]\nselect = ["PRT1"]\n'),
    ],
)
def test_a_configuration_leaves_the_run_to_the_full_run(project, where, name, text):
    (project / where / name).write_text(text)
    assert quick_answer(["pkg/b.py"], project) is None
    assert run(QUICK_RUN, ["pkg/b.py"], project) == run(FULL_RUN, ["pkg/b.py"], project)


def test_a_pyproject_without_portlint_is_no_configuration(project):
    (project / "pyproject.toml").write_text('[project]\nname = "demo"\n')
    assert quick_answer(["a.py"], project) == 1

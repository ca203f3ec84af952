"""Bad configuration, files that cannot be written, special files, hostile names: for each, the
input, the exact exit status and stderr line, and the bytes of every file before and after."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from portlint.output import FORMATS
from support import run_cli

CUDA = "import torch\n\nx = torch.ones(3).cuda()\ntorch.cuda.synchronize()\n"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def snapshot(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


def codes_by_path(out: str) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for finding in json.loads(out):
        found.setdefault(finding["path"], []).append(finding["code"])
    return found


# 1. Configuration is found where the files are ------------------------------------------------


@pytest.fixture
def project(tmp_path):
    """proj/ pins torch>=2.1, excludes gen/, ignores PRT201 and checks for npu only."""
    proj = tmp_path / "proj"
    write(
        proj / "pyproject.toml",
        '[project]\nname = "p"\nrequires-python = ">=3.9"\ndependencies = ["torch>=2.1"]\n\n'
        '[tool.portlint]\nexclude = ["gen"]\nignore = ["PRT201"]\ntarget = ["npu"]\n',
    )
    write(proj / "a.py", CUDA)
    write(proj / "gen" / "b.py", CUDA)
    return tmp_path


def test_config_of_the_files_folder_applies_when_run_from_outside(project):
    status, out, err = run_cli("--output-format", "json", "proj", cwd=project)
    assert (status, err) == (1, "")
    findings = json.loads(out)
    assert [(f["path"], f["code"]) for f in findings] == [("proj/a.py", "PRT102")]
    assert set(findings[0]["targets"]) == {"npu"}


def test_torch_pin_of_the_files_project_decides_the_fix(project):
    before = snapshot(project)
    status, _, _ = run_cli("--fix", "proj", cwd=project)
    fixed = (project / "proj" / "a.py").read_text()
    assert status == 0  # PRT102 fixed, PRT201 ignored
    assert "torch.accelerator" not in fixed and "_portlint_device" in fixed
    assert snapshot(project)["proj/gen/b.py"] == before["proj/gen/b.py"]


def test_torch_pin_of_a_project_without_portlint_settings_applies_too(tmp_path):
    write(
        tmp_path / "lib" / "pyproject.toml",
        '[project]\nname = "l"\ndependencies = ["torch>=2.1"]\n',
    )
    path = write(tmp_path / "lib" / "pkg" / "a.py", CUDA)
    status, _, err = run_cli("--fix", "lib", cwd=tmp_path)
    assert (status, err) == (0, "")
    assert "_portlint_device" in path.read_text() and "torch.accelerator" not in path.read_text()


def test_nested_configuration_wins_over_the_outer_one(project):
    write(project / "proj" / "sub" / "portlint.toml", 'target = ["mps"]\n')
    write(project / "proj" / "sub" / "c.py", CUDA)
    write(project / "proj" / "sub" / "deeper" / "d.py", CUDA)  # below the nested one
    write(project / "proj" / "beside" / "e.py", CUDA)  # beside it: the outer one
    status, out, _ = run_cli("--output-format", "json", "proj", cwd=project)
    targets = {f["path"]: set(f["targets"]) for f in json.loads(out)}
    assert targets == {
        "proj/a.py": {"npu"},
        "proj/beside/e.py": {"npu"},
        "proj/sub/c.py": {"mps"},
        "proj/sub/deeper/d.py": {"mps"},
    }
    assert status == 1


def test_config_option_overrides_every_file_and_isolated_ignores_all(project):
    write(project / "other.toml", 'select = ["PRT201"]\n')
    status, out, _ = run_cli(
        "--output-format", "json", "--config", "other.toml", "proj", cwd=project
    )
    assert codes_by_path(out) == {"proj/a.py": ["PRT201"], "proj/gen/b.py": ["PRT201"]}
    status, out, _ = run_cli("--output-format", "json", "--isolated", "proj", cwd=project)
    assert codes_by_path(out) == {
        "proj/a.py": ["PRT102", "PRT201"],
        "proj/gen/b.py": ["PRT102", "PRT201"],
    }
    assert status == 1


BAD_CONFIGS = [
    (
        "pyproject.toml",
        'tool = "portlint"\n',
        "pyproject.toml: 'tool' must be a table, got a string",
    ),
    (
        "pyproject.toml",
        "[tool]\nportlint = 1\n",
        "pyproject.toml: 'tool.portlint' must be a table, got an integer",
    ),
    (
        "pyproject.toml",
        '[tool]\nportlint = ["x"]\n',
        "pyproject.toml: 'tool.portlint' must be a table, got an array",
    ),
    (
        "portlint.toml",
        'target = "rocm"\n',
        'portlint.toml: \'target\' must be an array such as ["rocm", "npu"], got a string',
    ),
    (
        "portlint.toml",
        'select = "PRT2"\n',
        "portlint.toml: 'select' must be an array such as [\"PRT2\"], got a string",
    ),
    (
        "portlint.toml",
        "target = [1]\n",
        "portlint.toml: 'target': unknown target 1; allowed: rocm, npu, mlu, xpu, mps, cpu, "
        "arm64, all",
    ),
    (
        "portlint.toml",
        '[per-file-ignores]\n"x.py" = "PRT2"\n',
        "portlint.toml: 'per-file-ignores' 'x.py' must be an array of rule codes, got a string",
    ),
    (
        "portlint.toml",
        "max-file-size = -3\n",
        "portlint.toml: 'max-file-size' must be a size such as \"20MB\" or a number of bytes",
    ),
    (
        "portlint.toml",
        "min-torch = 2.1\n",
        "portlint.toml: 'min-torch' must be a version string such as \"2.6\", got 2.1",
    ),
    (
        "portlint.toml",
        "colour = true\n",
        "portlint.toml: unknown key 'colour' in the file; allowed: target, select, ignore, "
        "extend-select, exclude, extend-exclude, per-file-ignores, min-torch, rocm-version, "
        "cache-dir, max-file-size",
    ),
    (
        "portlint.toml",
        "target = [\n",
        "portlint.toml: invalid TOML: Invalid value (at end of document)",
    ),
    (
        "pyproject.toml",
        "[tool.portlint\n",
        "pyproject.toml: invalid TOML: Expected ']' at the end of a table declaration "
        "(at line 1, column 15)",
    ),
]


@pytest.mark.parametrize(("name", "text", "message"), BAD_CONFIGS)
def test_every_shape_of_bad_config_is_one_line_and_exit_two(tmp_path, name, text, message):
    proj = tmp_path / "proj"
    write(proj / name, text)
    write(proj / "a.py", CUDA)
    before = snapshot(tmp_path)
    for cwd, argument in ((proj, "."), (tmp_path, "proj")):  # found from inside and outside
        status, out, err = run_cli("--fix", argument, cwd=cwd)
        where = str(Path(argument, name)) if argument != "." else name
        assert (status, out) == (2, "")
        assert err == f"portlint: error: {where.removeprefix('./')}: {message.split(': ', 1)[1]}\n"
    assert snapshot(tmp_path) == before


def test_config_that_is_not_utf8_is_one_line(tmp_path):
    (tmp_path / "portlint.toml").write_bytes(b'target = ["\xff"]\n')
    status, _, err = run_cli(".", cwd=tmp_path)
    assert status == 2
    assert err.startswith("portlint: error: portlint.toml: invalid TOML: 'utf-8' codec")
    assert err.count("\n") == 1


def test_broken_pyproject_without_portlint_settings_is_linted_not_fatal(tmp_path):
    write(tmp_path / "pyproject.toml", "[project\nname = 1\n")
    write(tmp_path / "a.py", CUDA)
    status, out, err = run_cli("--output-format", "concise", ".", cwd=tmp_path)
    assert status == 1 and err == ""
    assert out.startswith("a.py:3:18: PRT102")


# 2. Findings never disappear when a fix cannot be written --------------------------------------

SEED = "import torch\n\ntorch.cuda.manual_seed(0)\ntorch.cuda.synchronize()\n"
ROOT_USER = hasattr(os, "geteuid") and os.geteuid() == 0


def check_output(fmt: str, path: str, cwd: Path, *extra: str) -> tuple[int, str, str]:
    return run_cli("--isolated", "--output-format", fmt, *extra, path, cwd=cwd)


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_read_only_file_keeps_its_findings_in_every_format(tmp_path, fmt):
    path = write(tmp_path / "a.py", CUDA)
    os.chmod(path, 0o444)
    _, expected, _ = check_output(fmt, "a.py", tmp_path)
    status, out, err = check_output(fmt, "a.py", tmp_path, "--fix")
    assert status == 1
    assert err == "portlint: warning: a.py: not fixed: permission denied: the file is read-only\n"
    assert out == expected and "PRT102" in out
    assert path.read_text() == CUDA


def test_read_only_folder_keeps_findings_and_fails(tmp_path):
    path = write(tmp_path / "ro" / "a.py", CUDA)
    os.chmod(tmp_path / "ro", 0o555)
    try:
        status, out, err = check_output("json", "ro/a.py", tmp_path, "--fix")
    finally:
        os.chmod(tmp_path / "ro", 0o755)
    assert status == 1
    assert err == (
        "portlint: warning: ro/a.py: not fixed: permission denied: the folder is read-only\n"
    )
    assert [f["code"] for f in json.loads(out)] == ["PRT102", "PRT201"]
    assert path.read_text() == CUDA and os.listdir(tmp_path / "ro") == ["a.py"]


def test_exit_zero_does_not_hide_a_file_that_was_not_written(tmp_path):
    path = write(tmp_path / "a.py", CUDA)
    os.chmod(path, 0o444)
    status, _, err = check_output("concise", "a.py", tmp_path, "--fix", "--exit-zero")
    assert status == 1 and "not fixed" in err


def edit_before_write(monkeypatch, edit):
    """Run ``edit(path)`` just before ``--fix`` writes a file: a change made meanwhile."""
    import portlint.writer as writer  # what --fix imports when it first writes

    real = writer.write_source

    def racing(source, text):
        edit(Path(source.path))
        real(source, text)

    monkeypatch.setattr(writer, "write_source", racing)


def test_file_changed_since_read_is_decided_by_content_not_mtime(tmp_path, monkeypatch):
    path = write(tmp_path / "a.py", CUDA)
    edited = CUDA.replace("3", "4")

    def same_mtime_new_content(where):
        stat = where.stat()
        where.write_text(edited)
        os.utime(where, ns=(stat.st_atime_ns, stat.st_mtime_ns))

    edit_before_write(monkeypatch, same_mtime_new_content)
    status, out, err = check_output("json", "a.py", tmp_path, "--fix")
    assert status == 1
    assert err == "portlint: warning: a.py: not fixed: changed on disk since it was read\n"
    assert [f["code"] for f in json.loads(out)] == ["PRT102", "PRT201"]
    assert path.read_text() == edited


def test_touched_but_unchanged_file_is_fixed(tmp_path, monkeypatch):
    path = write(tmp_path / "a.py", CUDA)
    edit_before_write(monkeypatch, lambda where: os.utime(where, ns=(1, 10**18)))
    status, out, err = check_output("json", "a.py", tmp_path, "--fix")
    assert (status, err, json.loads(out)) == (0, "", [])
    assert "torch.accelerator" in path.read_text()


def test_symlink_is_written_through_to_its_target(tmp_path):
    target = write(tmp_path / "real" / "a.py", CUDA)
    link = tmp_path / "link.py"
    link.symlink_to(target)
    status, _, err = check_output("json", "link.py", tmp_path, "--fix")
    assert (status, err) == (0, "")
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert "torch.accelerator" in target.read_text()
    assert sorted(os.listdir(tmp_path / "real")) == ["a.py"]


def test_hard_links_stay_linked(tmp_path):
    first = write(tmp_path / "a.py", CUDA)
    second = tmp_path / "b.py"
    os.link(first, second)
    status, _, _ = check_output("json", "a.py", tmp_path, "--fix")
    assert status == 0
    assert first.stat().st_ino == second.stat().st_ino and first.stat().st_nlink == 2
    assert second.read_text() == first.read_text() != CUDA


@pytest.mark.skipif(not ROOT_USER, reason="changing a file's owner needs root")
def test_owner_and_group_are_kept(tmp_path):
    path = write(tmp_path / "a.py", CUDA)
    os.chown(path, 4321, 4322)
    status, _, _ = check_output("json", "a.py", tmp_path, "--fix")
    assert status == 0 and "torch.accelerator" in path.read_text()
    assert (path.stat().st_uid, path.stat().st_gid) == (4321, 4322)


def test_temporary_file_of_a_killed_run_is_removed_by_the_next(tmp_path):
    write(tmp_path / "a.py", CUDA)
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    leftover = write(tmp_path / f".a.py.portlint-{dead}-x1y2z3.tmp", "half written")
    alive = write(tmp_path / f".a.py.portlint-{os.getppid()}-a1b2c3.tmp", "being written")
    unrelated = write(tmp_path / ".a.py.portlint-notes.tmp", "not ours")
    status, _, _ = check_output("json", ".", tmp_path)
    assert status == 1 and leftover.exists()  # a check run changes nothing
    status, _, _ = check_output("json", ".", tmp_path, "--fix")
    assert status == 0
    assert not leftover.exists() and alive.exists() and unrelated.exists()


def test_fixable_counts_only_what_plain_fix_fixes(tmp_path):
    write(tmp_path / "s.py", SEED)
    _, out, _ = check_output("text", "s.py", tmp_path)
    assert out.endswith(
        "[*] 1 fixable with `portlint --fix` (1 hidden fix can be enabled with `--unsafe-fixes`).\n"
    )
    _, out, _ = check_output("concise", "s.py", tmp_path)
    assert [" [*] " in line for line in out.splitlines()[:2]] == [False, True]
    _, out, _ = check_output("text", "s.py", tmp_path, "--unsafe-fixes")
    assert out.endswith("[*] 2 fixable with `portlint --fix --unsafe-fixes`.\n")
    write(tmp_path / "u.py", "import torch\n\ntorch.cuda.manual_seed(0)\n")
    _, out, _ = check_output("text", "u.py", tmp_path)
    assert out.endswith("No fixes available (1 hidden fix can be enabled with `--unsafe-fixes`).\n")


# 3. Special files and big inputs ---------------------------------------------------------------


def run_subprocess(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    """portlint in its own process, under a timeout: a hang fails the test instead of the run."""
    return subprocess.run(
        [sys.executable, "-m", "portlint", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_fifos_are_skipped_before_opening(tmp_path):
    write(tmp_path / "a.py", CUDA)
    for name in ("pipe.py", "Dockerfile", "nosuffix"):
        os.mkfifo(tmp_path / name)
    walked = run_subprocess("--isolated", "--output-format", "concise", ".", cwd=tmp_path)
    assert walked.returncode == 1
    assert walked.stderr == (
        "portlint: warning: Dockerfile: not a regular file (a named pipe); skipped\n"
        "portlint: warning: pipe.py: not a regular file (a named pipe); skipped\n"
    )
    named = run_subprocess("--isolated", "pipe.py", "nosuffix", "Dockerfile", cwd=tmp_path)
    assert (named.returncode, named.stdout) == (0, "All checks passed (0 files checked).\n")
    # Files are linted, and their warnings given, in path order (the order of the report).
    assert named.stderr == (
        "portlint: warning: nosuffix: not a file type portlint checks; skipped\n"
        "portlint: warning: Dockerfile: not a regular file (a named pipe); skipped\n"
        "portlint: warning: pipe.py: not a regular file (a named pipe); skipped\n"
    )


def test_file_above_the_size_limit_gets_one_finding(tmp_path):
    big = write(tmp_path / "big.py", CUDA + "#" * 2000 + "\n")
    before = big.read_bytes()
    status, out, err = check_output("concise", "big.py", tmp_path, "--max-file-size", "1k", "--fix")
    assert (status, err.splitlines()[0]) == (
        1,
        "portlint: warning: big.py: file too large (2,065 bytes, more than max-file-size 1,024); "
        "not analysed",
    )
    assert out == (
        "big.py:1:1: PRT002 file too large (2,065 bytes, more than max-file-size 1,024); "
        "not analysed\nFound 1 finding.\n"
    )
    assert big.read_bytes() == before
    write(tmp_path / "portlint.toml", 'max-file-size = "2KB"\n')
    status, out, _ = run_cli("--output-format", "concise", "big.py", cwd=tmp_path)
    assert status == 1 and "more than max-file-size 2,048" in out


def test_default_size_limit_passes_generated_sources_of_a_few_megabytes(tmp_path):
    generated = "".join(f"TABLE_{i} = {i!r}  # generated\n" for i in range(120_000))
    path = write(tmp_path / "gen.py", CUDA + generated)
    assert 3_000_000 < path.stat().st_size < 4_000_000
    status, out, _ = check_output("concise", "gen.py", tmp_path)
    assert status == 1 and out.splitlines()[0].startswith("gen.py:3:18: PRT102")


@pytest.mark.parametrize(
    "raw",
    [
        CUDA.encode("utf-16"),  # with a byte order mark
        CUDA.encode("utf-16-le"),
        CUDA.encode("utf-16-be"),
        CUDA.encode("utf-32"),
    ],
    ids=["bom", "le", "be", "utf-32"],
)
def test_utf16_is_named(tmp_path, raw):
    (tmp_path / "w.py").write_bytes(raw)
    status, out, _ = check_output("concise", "w.py", tmp_path, "--fix")
    assert status == 1
    assert out == (
        "w.py:1:1: PRT002 UTF-16 is not supported; save the file as UTF-8\nFound 1 finding.\n"
    )
    assert (tmp_path / "w.py").read_bytes() == raw


def test_newer_python_syntax_names_the_python_that_parses_it(tmp_path):
    from portlint.python.newer_syntax import newer_python

    assert newer_python("type Vector = list[float]", (3, 11)) == (
        "Python 3.12 (a `type` alias statement)"
    )
    assert newer_python("def first[T](items: list[T]) -> T:", (3, 11)).startswith("Python 3.12")
    assert newer_python('print(f"{row["name"]}")', (3, 11)).startswith("Python 3.12 (an f-string")
    assert newer_python("except ValueError, TypeError:", (3, 13)).startswith("Python 3.14")
    assert newer_python("type Vector = list[float]", (3, 12)) is None
    if sys.version_info >= (3, 12):
        return
    write(tmp_path / "new.py", "import torch\ntorch.cuda.synchronize()\ntype X = int\n")
    status, out, _ = check_output("concise", "new.py", tmp_path)
    running = f"{sys.version_info[0]}.{sys.version_info[1]}"
    assert (status, out.splitlines()[0]) == (
        1,
        "new.py:3:6: PRT001 SyntaxError: invalid syntax; this is syntax of Python 3.12 (a `type` "
        f"alias statement), and portlint runs on Python {running}: run portlint with a Python "
        "that parses it",
    )
    # requires-python comes from the file's project, found from outside it too
    write(tmp_path / "pyproject.toml", '[project]\nname = "p"\nrequires-python = ">=3.12"\n')
    status, out, _ = run_cli("--output-format", "concise", tmp_path.name, cwd=tmp_path.parent)
    assert "3.12 (a `type` alias statement) (the project requires Python >=3.12), and" in out


# 4. Output that cannot be broken by a file name ------------------------------------------------

HOSTILE = "a|b`c\nd\x1b]0;owned\x07\x1b[31m.py"
HOSTILE_SHOWN = "a|b`c\\nd\\x1b]0;owned\\x07\\x1b[31m.py"


@pytest.fixture
def hostile(tmp_path):
    write(tmp_path / HOSTILE, CUDA)
    return tmp_path


def test_step_summary_escapes_pipes_backticks_and_newlines(hostile, monkeypatch):
    summary = hostile / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    status, _, _ = check_output("github", ".", hostile)
    assert status == 1
    rows = [line for line in summary.read_text().splitlines() if line.startswith("| ``")]
    assert rows == [
        "| ``a\\|b`c\\nd\\x1b]0;owned\\x07\\x1b[31m.py:3`` | PRT102 | `.cuda()` moves the object "
        "to a CUDA device |",
        "| ``a\\|b`c\\nd\\x1b]0;owned\\x07\\x1b[31m.py:4`` | PRT201 | `torch.cuda.synchronize` "
        "exists only on NVIDIA and ROCm builds; device-generic: `torch.accelerator.synchronize "
        "(torch &gt;= 2.6)` |",
    ]


def test_junit_is_well_formed_xml_whatever_the_name(hostile):
    import xml.etree.ElementTree as ET

    status, out, _ = check_output("junit", ".", hostile)
    assert status == 1
    suites = ET.fromstring(out)
    assert [suite.get("name") for suite in suites] == [HOSTILE_SHOWN.replace("\\n", "\n")]


@pytest.mark.parametrize("fmt", ["text", "concise", "grouped"])
def test_terminal_formats_show_control_characters_as_escapes(hostile, fmt):
    status, out, err = check_output(fmt, ".", hostile)
    assert status == 1 and err == ""
    assert "\x1b" not in out and "\x07" not in out
    assert HOSTILE_SHOWN in out


def test_undecodable_file_name_is_shown_not_fatal(tmp_path):
    name = b"caf\xe9.py"
    with open(tmp_path.as_posix().encode() + b"/" + name, "w") as handle:
        handle.write(CUDA)
    proc = run_subprocess("--isolated", "--output-format", "concise", ".", cwd=tmp_path)
    assert proc.returncode == 1 and proc.stderr == ""
    assert proc.stdout.splitlines()[0].startswith("caf\\xe9.py:3:18: PRT102")
    proc = run_subprocess("--isolated", "--output-format", "json", ".", cwd=tmp_path)
    assert proc.returncode == 1 and proc.stderr == ""
    assert json.loads(proc.stdout)[0]["path"] == "caf\udce9.py"  # as os.fsdecode reads it


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_undecodable_byte_in_a_cxx_line_is_one_column_in_every_format(tmp_path, fmt):
    (tmp_path / "k.cu").write_bytes(b"void f(float *p) {\n  /* \xe9 */ cudaFree(p);\n}\n")
    status, out, err = check_output(fmt, "k.cu", tmp_path)
    assert (status, err) == (1, "")
    if fmt == "sarif":
        region = json.loads(out)["runs"][0]["results"][0]["locations"][0]["physicalLocation"]
        assert region["region"]["startColumn"] == 11  # after 10 UTF-16 units: "  /* é */ "


# Found by benchmarks/fuzz_cli.py ----------------------------------------------------------------


def test_dockerfile_cut_off_after_and_and_is_no_internal_error(tmp_path):
    write(
        tmp_path / "Dockerfile",
        "FROM pytorch/pytorch:2.3.0-cuda12.1-cudnn8-devel\nRUN apt-get update &&",
    )
    status, out, err = check_output("concise", "Dockerfile", tmp_path)
    assert (status, err) == (1, "")
    assert out.startswith("Dockerfile:1:6: PRT901 ")

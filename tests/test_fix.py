"""--fix: fixture pairs <case>.py -> <case>.fixed.py, idempotence, and writing files safely."""

from __future__ import annotations

import ast
import os
import stat
from dataclasses import dataclass
from pathlib import Path

import pytest

from portlint.config import Settings
from portlint.engine import lint_source, read_source
from portlint.fix import FixPolicy
from portlint.model import SourceFile
from portlint.python.transform import fix_python
from portlint.toml import tomllib
from portlint.writer import FileChanged, write_source
from support import FIXTURES, check_against_expected, run_cli

FIX_DIR = FIXTURES / "fix"
CASES = tomllib.loads((FIX_DIR / "cases.toml").read_text())


@dataclass(frozen=True)
class Case:
    name: str
    input: Path

    @property
    def expected(self) -> Path:
        return FIX_DIR / f"{self.name}.fixed.py"

    def settings(self) -> tuple[Settings, FixPolicy]:
        case = CASES.get(self.name, {})
        settings = Settings(min_torch=case.get("min-torch", "2.6"))
        return settings, FixPolicy(unsafe=case.get("unsafe-fixes", False), targets=settings.targets)


INPUTS = sorted(p for p in FIX_DIR.glob("*.py") if not p.name.endswith(".fixed.py"))
FIX_CASES = [Case(p.stem, p) for p in INPUTS] + [
    Case(name, FIX_DIR / table["input"]) for name, table in CASES.items() if "input" in table
]


def fix_text(case: Case, text: str) -> tuple[str, int]:
    settings, policy = case.settings()
    result = lint_source(SourceFile(str(case.input), text), "python", settings, policy)
    return (result.fixed_text or text), len(result.fixes_applied)


@pytest.mark.parametrize("case", FIX_CASES, ids=lambda c: c.name)
def test_fixed_output_matches(case):
    fixed, count = fix_text(case, case.input.read_text(encoding="utf-8"))
    assert count > 0
    ast.parse(fixed)
    check_against_expected(fixed, case.expected)


@pytest.mark.parametrize("case", FIX_CASES, ids=lambda c: c.name)
def test_fix_is_idempotent_and_leaves_nothing_fixable(case):
    expected = case.expected.read_text(encoding="utf-8")
    again, count = fix_text(case, expected)
    assert (again, count) == (expected, 0)
    settings, policy = case.settings()
    remaining = lint_source(SourceFile(str(case.input), expected), "python", settings).findings
    assert [f for f in remaining if policy.allows(f.fix)] == []


def test_unsafe_fixes_only_on_request(tmp_path):
    path = tmp_path / "seed.py"
    path.write_text("import torch\n\ntorch.cuda.manual_seed_all(0)\n")
    run_cli("--fix", str(path))
    assert path.read_text() == "import torch\n\ntorch.cuda.manual_seed_all(0)\n"
    run_cli("--fix", "--unsafe-fixes", str(path))
    assert path.read_text() == "import torch\n\ntorch.manual_seed(0)\n"


def test_diff_prints_and_writes_nothing(tmp_path):
    path = tmp_path / "sync.py"
    original = "import torch\n\nn = torch.cuda.device_count()\n"
    path.write_text(original)
    status, out, err = run_cli("--diff", str(path))
    assert status == 1 and path.read_text() == original
    assert out == (
        f"--- a/{path}\n+++ b/{path}\n@@ -1,3 +1,3 @@\n import torch\n \n"
        "-n = torch.cuda.device_count()\n+n = torch.accelerator.device_count()\n"
    )
    assert err == "Would fix 1 finding.\n"


def test_fix_twice_changes_nothing_the_second_time(tmp_path):
    path = tmp_path / "train.py"
    path.write_text((FIX_DIR / "training_loop.py").read_text())
    run_cli("--fix", str(path))
    first = path.read_bytes()
    status, out, _ = run_cli("--fix", "--show-fixes", str(path))
    assert path.read_bytes() == first
    assert status == 0 and "Fixed" not in out


def test_show_fixes_lists_what_was_fixed(tmp_path):
    path = tmp_path / "train.py"
    path.write_text((FIX_DIR / "training_loop.py").read_text())
    status, out, _ = run_cli("--fix", "--show-fixes", str(path))
    assert status == 0
    assert f"Fixed 4 findings:\n  {path}:\n    3 × PRT101" not in out  # counted per rule
    assert "    2 × PRT102 (cuda-method-call)" in out
    assert "    1 × PRT101 (hardcoded-cuda-device)" in out
    assert "    1 × PRT201 (torch-cuda-api)" in out


@pytest.mark.parametrize(
    ("raw", "encoding"),
    [
        (b"\xef\xbb\xbfimport torch\r\nx = 1\r\nn = torch.cuda.device_count()\r\n", "utf-8"),
        (
            b"# -*- coding: latin-1 -*-\nimport torch\n# caf\xe9\nn = torch.cuda.device_count()\n",
            "iso-8859-1",
        ),
        (b"import torch\r\ny = 2\nn = torch.cuda.device_count()\r\n", "utf-8"),
    ],
    ids=["bom-crlf", "latin-1", "mixed-endings"],
)
def test_fix_keeps_encoding_bom_line_endings_and_mode(tmp_path, raw, encoding):
    path = tmp_path / "f.py"
    path.write_bytes(raw)
    os.chmod(path, 0o751)
    run_cli("--fix", str(path))
    expected = raw.replace(b"torch.cuda.device_count()", b"torch.accelerator.device_count()")
    assert path.read_bytes() == expected
    assert stat.S_IMODE(path.stat().st_mode) == 0o751
    assert [p.name for p in tmp_path.iterdir()] == ["f.py"]  # no temporary file left behind
    assert read_source(path, "python").encoding == encoding


def test_file_changed_on_disk_is_not_overwritten(tmp_path):
    path = tmp_path / "f.py"
    path.write_text("import torch\ntorch.cuda.synchronize()\n")
    source = read_source(path, "python")
    path.write_text("import torch\n# edited meanwhile\n")
    os.utime(path, ns=(10**18, 10**18))
    with pytest.raises(FileChanged):
        write_source(source, "replaced\n")
    assert path.read_text() == "import torch\n# edited meanwhile\n"


def test_a_fix_that_would_break_the_file_is_not_written(tmp_path, monkeypatch):
    import portlint.python.tidy as tidy

    monkeypatch.setattr(tidy, "tidy_after_fix", lambda original, fixed: fixed + "def (:\n")
    path = tmp_path / "f.py"
    original = "import torch\ntorch.cuda.synchronize()\n"
    path.write_text(original)
    status, _, err = run_cli("--fix", str(path))
    assert path.read_text() == original and status == 1
    assert "fixes would break the file" in err and "file left unchanged" in err


def test_source_with_no_newline_at_end(tmp_path):
    path = tmp_path / "f.py"
    path.write_text("import torch\nx = torch.ones(2).cuda()")
    run_cli("--fix", str(path))
    text = path.read_text()
    ast.parse(text)
    assert text.endswith("x = torch.ones(2).to(_portlint_device())")


def test_local_name_hiding_the_device_gets_no_fix(tmp_path):
    source = SourceFile(
        str(tmp_path / "f.py"),
        "import torch\n\ndef f(x, DEVICE):\n    return x.cuda()\n",
    )
    settings = Settings(min_torch="2.6")
    findings = lint_source(source, "python", settings).findings
    fix = findings[0].fix
    # The module's device gets another name, since a parameter hides DEVICE in f.
    assert fix is None or "DEVICE" not in fix.edits[0].content


def test_portable_code_is_left_alone():
    path = FIXTURES / "python" / "multi_vendor.py"
    text = path.read_text(encoding="utf-8")
    assert fix_text(Case("multi_vendor", path), text) == (text, 0)


def test_guarded_code_gets_the_same_generic_rewrites(tmp_path):
    path = tmp_path / "guarded.py"
    text = (
        "import torch\n\n"
        "if torch.cuda.is_available():\n"
        "    torch.cuda.synchronize()\n"
        'dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")\n'
    )
    fixed, _ = fix_text(Case(path.stem, path), text)
    # The module-level device selection is the module's device: it is kept, made generic.
    assert fixed == (
        "import torch\n\n"
        "if torch.accelerator.is_available():\n"
        "    torch.accelerator.synchronize()\n"
        "dev = torch.accelerator.current_accelerator() if torch.accelerator.is_available()"
        ' else torch.device("cpu")\n'
    )


def test_module_code_above_the_device_variable_gets_no_fix(tmp_path):
    path = tmp_path / "early.py"
    text = (
        "import torch\n\n"
        "x = torch.ones(2).cuda()\n"
        'device = torch.device("cuda" if torch.cuda.is_available() else "cpu")\n'
        "y = torch.ones(2).cuda()\n"
    )
    fixed, _ = fix_text(Case(path.stem, path), text)
    assert fixed.splitlines()[2:] == [
        "x = torch.ones(2).cuda()",
        "device = torch.accelerator.current_accelerator() if torch.accelerator.is_available()"
        ' else torch.device("cpu")',
        "y = torch.ones(2).to(device)",
    ]


def test_fstring_quote_reuse_is_a_syntax_problem_before_python_312():
    from portlint.python.transform import new_syntax_problem

    original = 'x = 1\nprint(f"{x}")\n'
    reused = 'x = 1\nprint(f"{x if x else "cpu"}")\n'
    assert new_syntax_problem(original, reused, "3.10") is not None
    assert new_syntax_problem(original, "x = 1\nprint(f\"{x or 'cpu'}\")\n", "3.10") is None


def test_fix_mode_alone_imports_libcst(tmp_path):
    import subprocess
    import sys

    path = tmp_path / "f.py"
    path.write_text("import torch\nx = torch.ones(1).cuda()\n")
    probe = (
        "import sys\nfrom portlint.cli import main\n"
        "main(sys.argv[1:])\nprint('libcst' in sys.modules)\n"
    )
    for arguments, imported in (([str(path)], "False"), (["--diff", str(path)], "True")):
        done = subprocess.run(
            [sys.executable, "-c", probe, *arguments], capture_output=True, text=True
        )
        assert done.stdout.splitlines()[-1] == imported


def test_fix_mode_resolves_names_with_scope_metadata():
    # Fix mode checks what each site means with libcst's scopes, whatever detection said: a fix
    # made for ``torch`` the module is refused where ``torch`` is a comprehension variable.
    module = "import torch\n\nrun_all = [torch.cuda.synchronize() for x in ()]\n"
    local = "import torch\n\nrun_all = [torch.cuda.synchronize() for torch in ()]\n"
    findings = lint_source(SourceFile("c.py", module), "python", Settings()).findings
    assert [f.code for f in findings if f.fix] == ["PRT201"]
    assert not lint_source(SourceFile("c.py", local), "python", Settings()).findings
    fixed, applied, problem = fix_python(module, findings, FixPolicy(unsafe=True), Settings())
    assert applied and fixed != module and problem is None
    fixed, applied, problem = fix_python(local, findings, FixPolicy(unsafe=True), Settings())
    assert (fixed, list(applied), problem) == (local, [], None)

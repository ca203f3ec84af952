"""What a pre-commit run on one file loads: the clean path imports no parser library and no rich;
the path with findings imports no libcst or tree-sitter either (Python analysis uses ``ast``).
Timings are in benchmarks/hook_speed.py."""

from __future__ import annotations

import io
import subprocess
import sys

from portlint.catalog import load_catalog
from portlint.output.report import Report
from portlint.output.text import render

HEAVY = ("rich", "libcst", "tree_sitter", "yaml", "pathspec")
PROBE = (
    "import sys\n"
    "from portlint.cli import main\n"
    "status = main([sys.argv[1]])\n"
    f"print(status, sorted({{m.split('.')[0] for m in sys.modules}} & set({HEAVY!r})))\n"
)


def run_probe(tmp_path, name: str, text: str) -> list[str]:
    (tmp_path / name).write_text(text, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-c", PROBE, name], cwd=tmp_path, capture_output=True, text=True
    )
    assert done.stderr == ""
    return done.stdout.splitlines()


def test_clean_file_imports_no_parser_and_no_rich(tmp_path):
    lines = run_probe(tmp_path, "clean.py", "import os\nprint(os.getcwd())\n")
    assert lines == ["All checks passed (1 files checked).", "0 []"]


def test_file_with_findings_imports_no_libcst_or_tree_sitter(tmp_path):
    lines = run_probe(tmp_path, "train.py", "model = Net().cuda()\n")
    assert lines[-1] == "1 ['rich']"


def test_clean_summary_without_rich_matches_rich_output():
    from rich.console import Console

    for terminal in (False, True):
        report = Report([], ("rocm",), load_catalog(), files_checked=3, terminal=terminal)
        fast = io.StringIO()
        render(report, fast)
        expected = io.StringIO()
        console = Console(
            file=expected, force_terminal=terminal, no_color=not terminal, highlight=False
        )
        console.print("All checks passed (3 files checked).", style="green")
        assert fast.getvalue() == expected.getvalue()


LAZY = ("tempfile", "shutil", "difflib", "hashlib", "portlint.baseline", "portlint.pipeline")
CATALOGUE_PROBE = (
    "import sys\n"
    "from portlint.catalog import load_catalog\n"
    "from portlint.cli import main\n"
    "status = main([sys.argv[1]])\n"
    f"print(status, sorted(set({LAZY!r}) & set(sys.modules)), load_catalog.cache_info().currsize)\n"
)


def test_clean_run_loads_no_catalogue_and_no_module_it_does_not_use(tmp_path):
    """Writing files (tempfile, shutil), diffs, baselines and OpenSSL's hashlib are for other
    runs; the rule catalogue is parsed only when a file is analysed or a finding reported."""
    (tmp_path / "clean.py").write_text("import os\nprint(os.getcwd())\n", encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-c", CATALOGUE_PROBE, "clean.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert done.stderr == ""
    assert done.stdout.splitlines()[-1] == "0 [] 0"
    # The second run is answered by the cache: still nothing of the above.
    again = subprocess.run(
        [sys.executable, "-c", CATALOGUE_PROBE, "clean.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert again.stdout.splitlines()[-1] == "0 [] 0"

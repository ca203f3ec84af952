"""Only what a pull request adds: --diff-base, --baseline/--update-baseline, --add-noqa, and the
unused-suppression rule; run in temporary git repositories."""

from __future__ import annotations

import json
import subprocess

import pytest

from portlint.gitdiff import parse_diff, unquote_path
from portlint.model import Finding, Severity, SourceFile, Span
from portlint.noqa import add_noqa
from support import run_cli

BASE = "import torch\n\nmodel = Net().cuda()\n"


def git(repo, *args):
    return subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.org", *args],
        cwd=repo,
        check=True,
        capture_output=True,
        text=True,
    ).stdout


@pytest.fixture
def repo(tmp_path):
    """A repository whose main branch holds train.py with one finding, on a feature branch."""
    git(tmp_path, "init", "-q", "-b", "main")
    (tmp_path / "train.py").write_text(BASE, encoding="utf-8")
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-q", "-m", "base")
    git(tmp_path, "checkout", "-q", "-b", "feature")
    return tmp_path


def concise(repo, *args):
    status, out, err = run_cli("--output-format", "concise", *args, cwd=repo)
    assert status in (0, 1), err
    return [line for line in out.splitlines() if not line.startswith("Found")]


# -- --diff-base -----------------------------------------------------------------------------------


def test_diff_base_reports_only_added_lines(repo):
    (repo / "train.py").write_text(
        "import torch\n\n# a comment moves the old finding down\nmodel = Net().cuda()\n"
        "batch = batch.cuda()\n",
        encoding="utf-8",
    )
    git(repo, "commit", "-q", "-am", "feature work")
    assert concise(repo, "--diff-base", "main") == [
        "train.py:5:14: PRT102 [*] `.cuda()` moves the object to a CUDA device"
    ]
    assert concise(repo, "--diff-base", "main", "--diff-mode", "file") == [
        "train.py:4:14: PRT102 [*] `.cuda()` moves the object to a CUDA device",
        "train.py:5:14: PRT102 [*] `.cuda()` moves the object to a CUDA device",
    ]


def test_diff_base_counts_uncommitted_and_untracked_files(repo):
    (repo / "train.py").write_text(BASE + "x = y.cuda()\n", encoding="utf-8")
    (repo / "new.py").write_text("z = w.cuda()\n", encoding="utf-8")
    assert concise(repo, "--diff-base", "main") == [
        "new.py:1:6: PRT102 [*] `.cuda()` moves the object to a CUDA device",
        "train.py:4:6: PRT102 [*] `.cuda()` moves the object to a CUDA device",
    ]


def test_diff_base_uses_the_merge_base_not_the_tip_of_ref(repo):
    (repo / "mine.py").write_text("a = b.cuda()\n", encoding="utf-8")
    git(repo, "add", "mine.py")
    git(repo, "commit", "-q", "-m", "feature")
    git(repo, "checkout", "-q", "main")
    (repo / "train.py").write_text(BASE + "c = d.cuda()\n", encoding="utf-8")
    git(repo, "commit", "-q", "-am", "main moves on")
    git(repo, "checkout", "-q", "feature")
    # main's new line is not on this branch, and the branch's own file is reported.
    assert concise(repo, "--diff-base", "main") == [
        "mine.py:1:6: PRT102 [*] `.cuda()` moves the object to a CUDA device"
    ]


def test_diff_mode_context_reaches_lines_near_a_change(repo):
    lines = ["import torch", "", "model = Net().cuda()", "a = 1", "b = 2", "c = 3", "d = 4"]
    (repo / "train.py").write_text("\n".join(lines) + "\n", encoding="utf-8")
    git(repo, "commit", "-q", "-am", "padding")
    git(repo, "branch", "-f", "main")
    lines[5] = "c = 30"  # line 6: three lines below the finding on line 3
    (repo / "train.py").write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert concise(repo, "--diff-base", "main") == []
    assert concise(repo, "--diff-base", "main", "--diff-mode", "context") == [
        "train.py:3:14: PRT102 [*] `.cuda()` moves the object to a CUDA device"
    ]


def test_diff_base_errors_are_one_line(repo):
    status, _, err = run_cli("--diff-base", "no-such-branch", cwd=repo)
    assert status == 2
    assert err.startswith("portlint: error: --diff-base no-such-branch: no merge base with HEAD")
    assert len(err.splitlines()) == 1
    status, _, err = run_cli("--diff-mode", "file", cwd=repo)
    assert (status, err) == (2, "portlint: error: --diff-mode needs --diff-base REF\n")


def test_parse_diff_hunks_deletions_new_files_and_quoted_paths():
    diff = "\n".join(
        [
            "diff --git a/a.py b/a.py",
            "--- a/a.py",
            "+++ b/a.py",
            "@@ -3 +3 @@",
            "@@ -10,2 +11,3 @@ def f():",
            "@@ -20,4 +22,0 @@",
            "diff --git a/new.py b/new.py",
            "new file mode 100644",
            "--- /dev/null",
            "+++ b/new.py",
            "@@ -0,0 +1,2 @@",
            "diff --git a/gone.py b/gone.py",
            "--- a/gone.py",
            "+++ /dev/null",
            "@@ -1,2 +0,0 @@",
            'diff --git "a/caf\\303\\251 x.py" "b/caf\\303\\251 x.py"',
            '--- "a/caf\\303\\251 x.py"',
            '+++ "b/caf\\303\\251 x.py"',
            "@@ -1 +1 @@",
        ]
    )
    changed = parse_diff(diff)
    assert changed.lines == {"a.py": {3, 11, 12, 13}, "new.py": {1, 2}, "café x.py": {1}}
    assert changed.deletions == {"a.py": {22, 23}}
    assert changed.new_files == {"new.py"}
    assert unquote_path('"tab\\there.py"') == "tab\there.py"


# -- --baseline ------------------------------------------------------------------------------------


def test_baseline_hides_recorded_findings_across_unrelated_edits(repo):
    status, _, err = run_cli("--baseline", "portlint-baseline.json", "--update-baseline", cwd=repo)
    assert status == 0 and "1 entries (1 new, 0 removed)" in err
    entries = json.loads((repo / "portlint-baseline.json").read_text())["entries"]
    assert [(e["code"], e["path"], e["occurrence"]) for e in entries] == [("PRT102", "train.py", 0)]
    assert "line" not in entries[0]
    # Lines above move the old finding; re-indenting it keeps its key; a copy of it is new.
    (repo / "train.py").write_text(
        "import torch\n\n\n\nif True:\n    model   =  Net().cuda()\nmodel = Net().cuda()\n",
        encoding="utf-8",
    )
    assert concise(repo, "--baseline", "portlint-baseline.json") == [
        "train.py:7:14: PRT102 [*] `.cuda()` moves the object to a CUDA device"
    ]


def test_update_baseline_prunes_fixed_findings_and_keeps_other_files(repo):
    (repo / "other.py").write_text("y = z.cuda()\n", encoding="utf-8")
    run_cli("--baseline", "b.json", "--update-baseline", cwd=repo)
    (repo / "train.py").write_text("import torch\n\nmodel = Net().to(device)\n", encoding="utf-8")
    status, _, err = run_cli("--baseline", "b.json", "--update-baseline", "train.py", cwd=repo)
    assert status == 0 and "1 entries (0 new, 1 removed)" in err
    entries = json.loads((repo / "b.json").read_text())["entries"]
    assert [e["path"] for e in entries] == ["other.py"]
    (repo / "other.py").unlink()
    run_cli("--baseline", "b.json", "--update-baseline", "train.py", cwd=repo)
    assert json.loads((repo / "b.json").read_text())["entries"] == []


def test_baseline_errors_are_one_line(repo):
    status, _, err = run_cli("--baseline", "missing.json", cwd=repo)
    assert status == 2
    assert err == (
        "portlint: error: missing.json: baseline not found; create it with --update-baseline\n"
    )
    (repo / "bad.json").write_text("{not json", encoding="utf-8")
    status, _, err = run_cli("--baseline", "bad.json", cwd=repo)
    assert status == 2 and err.startswith("portlint: error: bad.json: not a portlint baseline")
    status, _, err = run_cli("--update-baseline", cwd=repo)
    assert (status, err) == (2, "portlint: error: --update-baseline needs --baseline FILE\n")


def test_baseline_and_diff_base_together(repo):
    run_cli("--baseline", "b.json", "--update-baseline", cwd=repo)
    (repo / "train.py").write_text(BASE + "x = y.cuda()\n", encoding="utf-8")
    assert concise(repo, "--baseline", "b.json", "--diff-base", "main") == [
        "train.py:4:6: PRT102 [*] `.cuda()` moves the object to a CUDA device"
    ]


# -- --add-noqa ------------------------------------------------------------------------------------


def test_add_noqa_python_merges_and_keeps_line_endings(repo):
    source = (
        "import torch\r\n"
        "model = Net().cuda()   \r\n"
        "x = y.cuda(); ok = t.is_cuda  # noqa: E501\r\n"
        'doc = """cuda\r\n'
        'text""" if a.is_cuda else z.cuda()\r\n'
    )
    (repo / "train.py").write_bytes(b"\xef\xbb\xbf" + source.encode())
    status, _, err = run_cli("--add-noqa", "train.py", cwd=repo)
    assert status == 0
    assert "Added 3 noqa directives to 1 files (0 skipped)." in err
    assert (repo / "train.py").read_bytes() == (
        b"\xef\xbb\xbfimport torch\r\n"
        b"model = Net().cuda()  # noqa: PRT102\r\n"
        b"x = y.cuda(); ok = t.is_cuda  # noqa: E501, PRT102, PRT103\r\n"
        b'doc = """cuda\r\n'
        b'text""" if a.is_cuda else z.cuda()  # noqa: PRT102, PRT103\r\n'
    )
    status, out, _ = run_cli("--output-format", "concise", "train.py", cwd=repo)
    assert (status, out) == (0, "")


def test_add_noqa_skips_lines_that_cannot_hold_a_comment(repo):
    (repo / "train.py").write_text('x = f("""\n{y}""".cuda(), \\\n   2)\n', encoding="utf-8")
    # The finding starts inside a string and ends on a line continued by a backslash.
    source = SourceFile(str(repo / "train.py"), (repo / "train.py").read_text())
    finding = _finding(str(repo / "train.py"), Span(1, 6, 2, 13), "PRT102")
    result = add_noqa(source, [finding])
    assert (result.added, result.skipped, result.text) == (0, 1, source.text)


def _finding(path, span, code):
    return Finding(path, span, code, "name", Severity.ERROR, "message", "symbol")


def test_add_noqa_cuda_and_cpp_use_nolint(tmp_path):
    text = (
        "#include <cuda_runtime.h>\n"
        "cudaMalloc(&p, n);\n"
        "cudaFree(p); // NOLINT(portlint-PRT701)\n"
        "#define ALLOC(p) cudaMalloc(&p, 4); \\\n"
        "  cudaDeviceSynchronize()\n"
    )
    path = str(tmp_path / "kernel.cu")
    findings = [
        _finding(path, Span(1, 10, 1, 24), "PRT702"),
        _finding(path, Span(2, 0, 2, 10), "PRT701"),
        _finding(path, Span(3, 0, 3, 8), "PRT703"),
        _finding(path, Span(4, 17, 4, 27), "PRT701"),
    ]
    result = add_noqa(SourceFile(path, text), findings)
    assert result.text == (
        "#include <cuda_runtime.h>  // NOLINT(portlint-PRT702)\n"
        "cudaMalloc(&p, n);  // NOLINT(portlint-PRT701)\n"
        "cudaFree(p); // NOLINT(portlint-PRT701, portlint-PRT703)\n"
        "#define ALLOC(p) cudaMalloc(&p, 4); /* NOLINT(portlint-PRT701) */ \\\n"
        "  cudaDeviceSynchronize()\n"
    )
    assert add_noqa(SourceFile(str(tmp_path / "notes.txt"), text), findings).added == 0


def test_add_noqa_then_unused_suppression_after_the_port(repo):
    run_cli("--add-noqa", cwd=repo)
    assert (
        repo / "train.py"
    ).read_text() == "import torch\n\nmodel = Net().cuda()  # noqa: PRT102\n"
    (repo / "train.py").write_text(
        "import torch\n\nmodel = Net().to(device)  # noqa: PRT102\n", encoding="utf-8"
    )
    assert concise(repo) == [
        "train.py:3:27: PRT003 unused suppression `# noqa: PRT102`: PRT102 matches no finding "
        "on this line"
    ]


# -- unused-suppression (PRT003) -------------------------------------------------------------------


def test_unused_suppression_what_is_and_is_not_reported(tmp_path):
    (tmp_path / "a.py").write_text(
        "import torch\n"
        "m = Net().cuda()  # noqa: PRT102\n"  # used
        "n = 1  # noqa: E501, PRT101\n"  # PRT101 unused; E501 is another tool's
        "o = 2  # noqa\n"  # bare noqa: shared with other tools, never reported
        'p = "# noqa: PRT101"\n'  # inside a string: not a comment
        "q = 3  # portlint: ignore\n"  # portlint's own bare form: reported
        "r = 4  # noqa: PRT101, PRT003\n",  # PRT003 named: the rule is silenced here
        encoding="utf-8",
    )
    assert concise(tmp_path, "a.py") == [
        "a.py:3:8: PRT003 unused suppression `# noqa: E501, PRT101`: PRT101 matches no finding "
        "on this line",
        "a.py:6:10: PRT003 unused suppression `portlint: ignore`: it matches no finding "
        "on this line",
    ]


def test_unused_suppression_in_a_file_without_candidate_text(tmp_path):
    # No CUDA word: the file is never parsed, but its suppressions are still checked.
    (tmp_path / "plain.py").write_text("x = 1  # noqa: PRT201\n", encoding="utf-8")
    assert concise(tmp_path, "plain.py") == [
        "plain.py:1:8: PRT003 unused suppression `# noqa: PRT201`: PRT201 matches no finding "
        "on this line"
    ]
    # A rule the run does not enable may be used by another run: not reported.
    assert concise(tmp_path, "--select", "PRT0,PRT1", "plain.py") == []
    assert concise(tmp_path, "--ignore", "PRT003", "plain.py") == []


def test_suppression_for_another_target_is_still_used(tmp_path):
    (tmp_path / "a.py").write_text("m = Net().cuda()  # noqa: PRT102\n", encoding="utf-8")
    # .cuda() is portable on rocm: no finding for this run, but the comment serves npu runs.
    assert concise(tmp_path, "--target", "rocm", "a.py") == []

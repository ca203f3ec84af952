"""A run writes each file's findings when the file is done; the output is the same as rendering
the whole run at once, in every format.

The streamed output comes from the CLI over fixtures/ (worker processes, files finishing in any
order); the whole-run output renders every finding of the same run, shuffled, in one call. The
JSON documents and the JUnit XML are also compared with one ``json.dumps`` / one indented
``ElementTree`` of everything, as the formats were written before they streamed.
"""

from __future__ import annotations

import io
import json
import os
import random
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from portlint.catalog import load_catalog
from portlint.cli import build_parser, report_targets, resolve_configurations
from portlint.discover import Walker
from portlint.engine import lint_paths
from portlint.output import FORMATS, gitlab, junit, rdjson, render, sarif
from portlint.output.json_format import finding_to_json
from portlint.output.report import Report
from support import ROOT, run_cli

ARGS = ("--isolated", "--no-cache", "fixtures")


@pytest.fixture(scope="module")
def whole_run():
    """Every finding of a run over fixtures/ (shuffled), and what the report needs besides."""
    previous = Path.cwd()
    try:
        os.chdir(ROOT)
        configurations = resolve_configurations(build_parser().parse_args(list(ARGS)))
        candidates = list(Walker(configurations).walk([Path("fixtures")]))
        results = list(lint_paths(candidates, configurations.default, jobs=1))
    finally:
        os.chdir(previous)
    findings = [finding for result in results for finding in result.findings]
    random.Random(12).shuffle(findings)
    linted = sum(candidate.language != "unknown" for candidate in candidates)
    return findings, linted, report_targets(configurations)


def whole_report(whole_run) -> Report:
    findings, linted, targets = whole_run
    return Report(list(findings), targets, load_catalog(), files_checked=linted)


def streamed(format_name: str) -> str:
    status, out, _ = run_cli(*ARGS, "-j", "2", "--output-format", format_name, cwd=ROOT)
    assert status == 1
    return out


def rendered(format_name: str, report: Report) -> str:
    stream = io.StringIO()
    previous = Path.cwd()
    try:
        os.chdir(ROOT)
        render(format_name, report, stream)
    finally:
        os.chdir(previous)
    return stream.getvalue()


@pytest.mark.parametrize("format_name", sorted(FORMATS))
def test_streamed_output_equals_the_whole_run_rendered_at_once(
    format_name, whole_run, tmp_path, monkeypatch
):
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(tmp_path / "streamed.md"))
    out = streamed(format_name)
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(tmp_path / "whole.md"))
    report = whole_report(whole_run)
    assert len(report.findings) > 700  # many files, every severity, fixes
    assert out == rendered(format_name, report)
    if format_name == "github":
        summary = (tmp_path / "streamed.md").read_text("utf-8")
        assert summary == (tmp_path / "whole.md").read_text("utf-8")
        assert f"{len(report.findings) - 200} more not listed." in summary


def ordered(report: Report):
    return sorted(report.findings, key=lambda f: (f.path, f.span, f.code))


def keyed(report: Report):
    return [pair for findings in report.files() for pair in report.keyed(findings)]


def test_json_is_one_dump_of_every_finding(whole_run):
    report = whole_report(whole_run)
    document = [finding_to_json(f) for f in ordered(report)]
    assert streamed("json") == json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def test_sarif_rdjson_and_gitlab_are_one_dump_of_the_whole_document(whole_run):
    report = whole_report(whole_run)
    rules = sorted(report.catalog.rules.values(), key=lambda r: r.code)
    index = {rule.code: position for position, rule in enumerate(rules)}
    results = [sarif.result(f, key, index[f.code], report) for f, key in keyed(report)]
    expected = json.dumps(sarif.sarif_log(report, rules, results), indent=2, ensure_ascii=False)
    assert streamed("sarif") == expected + "\n"
    diagnostics = [rdjson.diagnostic(f, report) for f in ordered(report)]
    document = {"source": rdjson.SOURCE, "diagnostics": diagnostics}
    assert streamed("rdjson") == json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    issues = [gitlab.issue(f, key) for f, key in keyed(report)]
    assert streamed("gitlab") == json.dumps(issues, indent=2) + "\n"


def test_junit_totals_come_first_though_the_suites_are_written_file_by_file(whole_run, monkeypatch):
    monkeypatch.setattr(junit, "SPOOL_BYTES", 4096)  # the suites go to a file on disk
    report = whole_report(whole_run)
    count = str(len(report.findings))
    suites = ET.Element("testsuites", name="portlint", tests=count, failures=count)
    suites.extend(junit.test_suite(report, findings) for findings in report.files())
    ET.indent(suites)
    expected = '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, "unicode") + "\n"
    assert streamed("junit") == expected


@pytest.mark.parametrize("format_name", ["json", "sarif", "rdjson", "gitlab", "junit", "text"])
def test_a_run_without_findings(format_name, tmp_path):
    (tmp_path / "clean.py").write_text("x = 1\n", encoding="utf-8")
    status, out, _ = run_cli(
        "--isolated", "--no-cache", "--output-format", format_name, ".", cwd=tmp_path
    )
    report = Report([], ("rocm",), load_catalog(), files_checked=1, root=tmp_path)
    assert status == 0
    assert out == rendered(format_name, report)

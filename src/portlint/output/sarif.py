"""``--output-format sarif``: SARIF 2.1.0 as GitHub code scanning reads it.

Columns count UTF-16 code units (the run declares ``columnKind: utf16CodeUnits``) and are 1-based;
lines are 1-based. ``partialFingerprints.primaryLocationLineHash`` comes from the line's content,
not its number, so an alert keeps its identity when code above it moves.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TextIO

from portlint import __version__
from portlint.catalog import Rule
from portlint.fingerprint import Key
from portlint.model import Finding, Severity, Span
from portlint.output.positions import utf16_column
from portlint.output.report import ITEMS, JsonArray, Report, advice_line
from portlint.output.report import Writer as FormatWriter
from portlint.ruledoc import rule_page

SCHEMA = (
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
)
INFORMATION_URI = "https://github.com/portlint/portlint"
LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}


def rule_descriptor(rule: Rule, report: Report) -> dict[str, Any]:
    return {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": rule.what},
        "help": {
            "text": f"{rule.what}\n\n{rule.why}\n\nFix safety: {rule.fix_safety}",
            "markdown": rule_page(rule, report.catalog),
        },
        "defaultConfiguration": {"level": LEVEL[rule.severity]},
        "properties": {"tags": ["portlint", rule.family]},
    }


def region(span: Span, finding: Finding, report: Report) -> dict[str, int]:
    start_text = report.line_text(finding, span.line)
    end_text = (
        start_text if span.end_line == span.line else report.line_text(finding, span.end_line)
    )
    return {
        "startLine": span.line,
        "startColumn": utf16_column(start_text, span.column) + 1,
        "endLine": span.end_line,
        "endColumn": utf16_column(end_text, span.end_column) + 1,
    }


def artifact(finding: Finding, report: Report) -> dict[str, str]:
    return {"uri": report.relative_path(finding.path), "uriBaseId": "%SRCROOT%"}


def fixes(finding: Finding, report: Report) -> list[dict[str, Any]]:
    if finding.fix is None or not finding.fix.edits:
        return []
    replacements = [
        {
            "deletedRegion": region(edit.span, finding, report),
            "insertedContent": {"text": edit.content},
        }
        for edit in finding.fix.edits
    ]
    return [
        {
            "description": {"text": finding.fix.description or f"Fix {finding.code}"},
            "artifactChanges": [
                {"artifactLocation": artifact(finding, report), "replacements": replacements}
            ],
        }
    ]


def result(finding: Finding, key: Key, rule_index: int, report: Report) -> dict[str, Any]:
    message = finding.message
    if finding.targets:
        message += f"\n{advice_line(finding, report.targets)}"
    entry: dict[str, Any] = {
        "ruleId": finding.code,
        "ruleIndex": rule_index,
        "level": LEVEL[finding.severity],
        "message": {"text": message},
        "locations": [
            {
                "physicalLocation": {
                    "artifactLocation": artifact(finding, report),
                    "region": region(finding.span, finding, report),
                }
            }
        ],
        "partialFingerprints": {"primaryLocationLineHash": f"{key.line_hash}:{key.occurrence + 1}"},
        "properties": {
            "targets": {
                target: {"status": advice.status.value, "replacement": advice.replacement}
                for target, advice in finding.targets.items()
            }
        },
    }
    found_fixes = fixes(finding, report)
    if found_fixes:
        entry["fixes"] = found_fixes
    return entry


def sarif_log(report: Report, rules: list[Rule], results: list[Any]) -> dict[str, Any]:
    return {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "portlint",
                        "version": __version__,
                        "semanticVersion": __version__,
                        "informationUri": INFORMATION_URI,
                        "rules": [rule_descriptor(rule, report) for rule in rules],
                    }
                },
                "columnKind": "utf16CodeUnits",
                "originalUriBaseIds": {"%SRCROOT%": {"uri": _folder_uri(report)}},
                "results": results,
            }
        ],
    }


def _folder_uri(report: Report) -> str:
    uri = report.repository_root.as_uri()
    return uri if uri.endswith("/") else uri + "/"


class Writer(FormatWriter):
    """The log as one ``json.dump`` would write it: the run's tool and rules first, then each
    result as its file is done, then the closing brackets. Nothing in a SARIF run comes after
    its results, so no total is needed up front."""

    def __init__(self, report: Report, stream: TextIO) -> None:
        super().__init__(report, stream)
        self.rules = sorted(report.catalog.rules.values(), key=lambda r: r.code)
        self.index = {rule.code: position for position, rule in enumerate(self.rules)}
        self.array = JsonArray(stream, sarif_log(report, self.rules, [ITEMS]))

    def file(self, findings: Sequence[Finding]) -> None:
        for finding, key in self.report.keyed(findings):
            self.array.add(result(finding, key, self.index[finding.code], self.report))

    def finish(self) -> None:
        self.array.close()

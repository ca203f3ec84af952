"""``--output-format rdjson``: reviewdog's Diagnostic Format, one ``DiagnosticResult`` object.

Positions follow reviewdog's ``Position``: lines 1-based, columns 1-based counted in UTF-8 bytes,
ranges end-exclusive. Fix edits become ``suggestions``, which
``reviewdog -reporter=github-pr-review`` posts as suggested changes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TextIO

from portlint.model import Finding, Severity, Span
from portlint.output.positions import utf8_column
from portlint.output.report import ITEMS, JsonArray, Report, advice_line
from portlint.output.report import Writer as FormatWriter

SEVERITY = {Severity.ERROR: "ERROR", Severity.WARNING: "WARNING", Severity.INFO: "INFO"}
SOURCE = {"name": "portlint", "url": "https://github.com/portlint/portlint"}


def position(finding: Finding, report: Report, line: int, column: int) -> dict[str, int]:
    return {"line": line, "column": utf8_column(report.line_text(finding, line), column) + 1}


def byte_range(span: Span, finding: Finding, report: Report) -> dict[str, Any]:
    return {
        "start": position(finding, report, span.line, span.column),
        "end": position(finding, report, span.end_line, span.end_column),
    }


def diagnostic(finding: Finding, report: Report) -> dict[str, Any]:
    message = finding.message
    if finding.targets:
        message += f"\n{advice_line(finding, report.targets)}"
    entry: dict[str, Any] = {
        "message": message,
        "location": {
            "path": report.relative_path(finding.path),
            "range": byte_range(finding.span, finding, report),
        },
        "severity": SEVERITY[finding.severity],
        "source": SOURCE,
        "code": {"value": finding.code},
    }
    if finding.fix is not None and finding.fix.edits:
        entry["suggestions"] = [
            {"range": byte_range(edit.span, finding, report), "text": edit.content}
            for edit in finding.fix.edits
        ]
    return entry


class Writer(FormatWriter):
    """The same bytes as ``json.dump`` of the whole object, one diagnostic at a time."""

    def __init__(self, report: Report, stream: TextIO) -> None:
        super().__init__(report, stream)
        self.array = JsonArray(stream, {"source": SOURCE, "diagnostics": [ITEMS]})

    def file(self, findings: Sequence[Finding]) -> None:
        for finding in findings:
            self.array.add(diagnostic(finding, self.report))

    def finish(self) -> None:
        self.array.close()

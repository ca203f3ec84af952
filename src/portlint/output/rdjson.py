"""``--output-format rdjson``: reviewdog's Diagnostic Format, one ``DiagnosticResult`` object.

Positions follow reviewdog's ``Position``: lines 1-based, columns 1-based counted in UTF-8 bytes,
ranges end-exclusive. Fix edits become ``suggestions``, which
``reviewdog -reporter=github-pr-review`` posts as suggested changes.
"""

from __future__ import annotations

import json
from typing import Any, TextIO

from portlint.model import Finding, Severity, Span
from portlint.output.positions import utf8_column
from portlint.output.report import Report, advice_line

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


def render(report: Report, stream: TextIO) -> None:
    payload = {
        "source": SOURCE,
        "diagnostics": [diagnostic(f, report) for f in report.sorted_findings()],
    }
    json.dump(payload, stream, indent=2, ensure_ascii=False)
    stream.write("\n")

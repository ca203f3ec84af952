"""``--output-format json``: one JSON array, the stable interface documented in the README."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TextIO

from portlint.model import Advice, Finding
from portlint.output.positions import one_based
from portlint.output.report import ITEMS, JsonArray, Report
from portlint.output.report import Writer as FormatWriter


def finding_to_json(finding: Finding) -> dict[str, Any]:
    span = finding.span
    return {
        "path": finding.path,
        "line": span.line,
        "column": one_based(span.column),
        "end_line": span.end_line,
        "end_column": one_based(span.end_column),
        "code": finding.code,
        "name": finding.name,
        "severity": finding.severity.value,
        "message": finding.message,
        "symbol": finding.symbol,
        "targets": {target: advice_to_json(advice) for target, advice in finding.targets.items()},
        "fix": fix_to_json(finding),
    }


def advice_to_json(advice: Advice) -> dict[str, Any]:
    out: dict[str, Any] = {"status": advice.status.value, "replacement": advice.replacement}
    # Added fields, present only where known (C++ API sites on rocm).
    if advice.since:
        out["since"] = advice.since
    if advice.roc:
        out["roc"] = advice.roc
    return out


def fix_to_json(finding: Finding) -> dict[str, Any] | None:
    if finding.fix is None:
        return None
    return {
        "applicability": finding.fix.applicability.value,
        "message": finding.fix.description,
        "edits": [
            {
                "line": edit.span.line,
                "column": one_based(edit.span.column),
                "end_line": edit.span.end_line,
                "end_column": one_based(edit.span.end_column),
                "content": edit.content,
            }
            for edit in finding.fix.edits
        ],
    }


class Writer(FormatWriter):
    """The same bytes as ``json.dump(all, indent=2)``, written one finding at a time."""

    def __init__(self, report: Report, stream: TextIO) -> None:
        super().__init__(report, stream)
        self.array = JsonArray(stream, [ITEMS])

    def file(self, findings: Sequence[Finding]) -> None:
        for finding in findings:
            self.array.add(finding_to_json(finding))

    def finish(self) -> None:
        self.array.close()

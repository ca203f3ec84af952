"""``--output-format concise``: one line per finding, as ruff's concise format."""

from __future__ import annotations

from typing import TextIO

from portlint.output.positions import one_based
from portlint.output.report import Report, printable


def render(report: Report, stream: TextIO) -> None:
    for finding in report.sorted_findings():
        marker = " [*]" if report.fixable(finding) else ""
        stream.write(
            f"{printable(finding.path)}:{finding.span.line}:{one_based(finding.span.column)}: "
            f"{finding.code}{marker} {printable(finding.message)}\n"
        )
    count = len(report.findings)
    if count and not report.quiet:
        stream.write(f"Found {count} finding{'s' if count != 1 else ''}.\n")

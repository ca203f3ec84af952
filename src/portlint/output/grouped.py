"""``--output-format grouped``: findings under one heading per file, as ruff's grouped format."""

from __future__ import annotations

from itertools import groupby
from typing import TextIO

from portlint.output.positions import one_based
from portlint.output.report import Report, printable


def render(report: Report, stream: TextIO) -> None:
    findings = report.sorted_findings()
    for path, group in groupby(findings, key=lambda f: f.path):
        in_file = list(group)
        stream.write(f"{printable(path)}:\n")
        width = max(len(f"{f.span.line}:{one_based(f.span.column)}") for f in in_file)
        for finding in in_file:
            where = f"{finding.span.line}:{one_based(finding.span.column)}"
            marker = " [*]" if report.fixable(finding) else ""
            message = printable(finding.message)
            stream.write(f"  {where:<{width}} {finding.code}{marker} {message}\n")
        stream.write("\n")
    if findings:
        count = len(findings)
        stream.write(f"Found {count} finding{'s' if count != 1 else ''}.\n")

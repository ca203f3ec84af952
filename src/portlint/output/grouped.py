"""``--output-format grouped``: findings under one heading per file, as ruff's grouped format."""

from __future__ import annotations

from collections.abc import Sequence

from portlint.model import Finding
from portlint.output.positions import one_based
from portlint.output.report import Writer as FormatWriter
from portlint.output.report import printable


class Writer(FormatWriter):
    def file(self, findings: Sequence[Finding]) -> None:
        self.stream.write(f"{printable(findings[0].path)}:\n")
        width = max(len(f"{f.span.line}:{one_based(f.span.column)}") for f in findings)
        for finding in findings:
            where = f"{finding.span.line}:{one_based(finding.span.column)}"
            marker = " [*]" if self.report.fixable(finding) else ""
            message = printable(finding.message)
            self.stream.write(f"  {where:<{width}} {finding.code}{marker} {message}\n")
        self.stream.write("\n")

    def finish(self) -> None:
        count = self.report.totals.findings
        if count:
            self.stream.write(f"Found {count} finding{'s' if count != 1 else ''}.\n")

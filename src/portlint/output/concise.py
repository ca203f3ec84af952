"""``--output-format concise``: one line per finding, as ruff's concise format."""

from __future__ import annotations

from collections.abc import Sequence

from portlint.model import Finding
from portlint.output.positions import one_based
from portlint.output.report import Writer as FormatWriter
from portlint.output.report import printable


class Writer(FormatWriter):
    def file(self, findings: Sequence[Finding]) -> None:
        for finding in findings:
            marker = " [*]" if self.report.fixable(finding) else ""
            self.stream.write(
                f"{printable(finding.path)}:{finding.span.line}:{one_based(finding.span.column)}: "
                f"{finding.code}{marker} {printable(finding.message)}\n"
            )

    def finish(self) -> None:
        count = self.report.totals.findings
        if count and not self.report.quiet:
            self.stream.write(f"Found {count} finding{'s' if count != 1 else ''}.\n")

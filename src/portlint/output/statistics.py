"""``--statistics``: how many findings each rule produced, and nothing else, as ruff prints them."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TextIO

from portlint.model import Finding
from portlint.output.report import Report
from portlint.output.report import Writer as FormatWriter


def counts(report: Report) -> list[dict[str, object]]:
    """One row per rule, most findings first: code, name, count, fixable (by plain ``--fix``)."""
    totals = report.totals
    return [
        {
            "code": code,
            "name": report.catalog.rules[code].name,
            "count": count,
            "fixable": code in totals.fixable_codes,
        }
        for code, count in sorted(totals.per_code.items(), key=lambda item: (-item[1], item[0]))
    ]


def lines(report: Report) -> list[str]:
    return [
        f"{row['count']:>5}  {row['code']}  {'[*]' if row['fixable'] else '[ ]'} {row['name']}"
        for row in counts(report)
    ]


class Writer(FormatWriter):
    """Counts only (``Report.totals``): nothing is written until the end."""

    def __init__(self, report: Report, stream: TextIO, json_format: bool = False) -> None:
        super().__init__(report, stream)
        self.json_format = json_format

    def file(self, findings: Sequence[Finding]) -> None:
        pass

    def finish(self) -> None:
        if self.json_format:
            json.dump(counts(self.report), self.stream, indent=2)
            self.stream.write("\n")
            return
        for line in lines(self.report):
            self.stream.write(line + "\n")

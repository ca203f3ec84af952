"""``--statistics``: how many findings each rule produced, and nothing else, as ruff prints them."""

from __future__ import annotations

import json
from collections import Counter
from typing import TextIO

from portlint.output.report import Report


def counts(report: Report) -> list[dict[str, object]]:
    """One row per rule, most findings first: code, name, count, fixable (by plain ``--fix``)."""
    per_code = Counter(f.code for f in report.findings)
    fixable = {f.code for f in report.findings if report.fixable(f)}
    return [
        {
            "code": code,
            "name": report.catalog.rules[code].name,
            "count": count,
            "fixable": code in fixable,
        }
        for code, count in sorted(per_code.items(), key=lambda item: (-item[1], item[0]))
    ]


def lines(report: Report) -> list[str]:
    return [
        f"{row['count']:>5}  {row['code']}  {'[*]' if row['fixable'] else '[ ]'} {row['name']}"
        for row in counts(report)
    ]


def render(report: Report, stream: TextIO, json_format: bool = False) -> None:
    if json_format:
        json.dump(counts(report), stream, indent=2)
        stream.write("\n")
        return
    for line in lines(report):
        stream.write(line + "\n")

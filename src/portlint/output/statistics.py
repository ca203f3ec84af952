"""``--statistics``: how many findings each rule produced, as ruff prints them."""

from __future__ import annotations

from collections import Counter

from rich.console import Console

from portlint.output.report import Report


def lines(report: Report) -> list[str]:
    counts = Counter(f.code for f in report.findings)
    fixable = {f.code for f in report.findings if report.fixable(f)}
    result = []
    for code, count in sorted(counts.items(), key=lambda item: (-item[1], item[0])):
        rule = report.catalog.rules[code]
        marker = "[*]" if code in fixable else "[ ]"
        result.append(f"{count:>5}  {code}  {marker} {rule.name}")
    return result


def render_to(console: Console, report: Report) -> None:
    for line in lines(report):
        console.print(line)
    console.print()

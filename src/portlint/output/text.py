"""``--output-format text`` (the default): findings with their source line, advice and a summary.

Rendered with rich: coloured on a terminal, plain text otherwise. A run without findings, the
common case in a pre-commit hook, prints its one line without importing rich (a third of the
hook's start-up).
"""

from __future__ import annotations

import functools
from collections import Counter
from typing import TYPE_CHECKING, TextIO

from portlint.model import Finding, Severity
from portlint.output.positions import one_based
from portlint.output.report import UNPRINTABLE, Report, advice_line, fix_summary, printable

if TYPE_CHECKING:
    from rich.table import Table
    from rich.text import Text

GREEN, RESET = "\x1b[32m", "\x1b[0m"
SEVERITY_STYLE = {Severity.ERROR: "bold red", Severity.WARNING: "yellow", Severity.INFO: "cyan"}


@functools.lru_cache(maxsize=64)
def _source_lines(path: str) -> list[str]:
    try:
        with open(path, encoding="utf-8", errors="replace", newline=None) as handle:
            return handle.read().split("\n")
    except OSError:
        return []


def _finding_block(finding: Finding, report: Report) -> Text:
    from rich.text import Text

    span = finding.span
    block = Text()
    block.append(f"{printable(finding.path)}:{span.line}:{one_based(span.column)}: ", style="bold")
    block.append(finding.code, style=SEVERITY_STYLE[finding.severity])
    if report.fixable(finding):
        block.append(" [*]", style="green")
    block.append(f" {printable(finding.message)}")
    block.append(f" [{finding.severity.value}]", style="dim")
    lines = _source_lines(finding.path)
    if 0 < span.line <= len(lines):
        source = lines[span.line - 1].rstrip("\r").expandtabs(1)
        if UNPRINTABLE.search(source):  # escapes would shift the caret: show blanks instead
            source = UNPRINTABLE.sub(" ", source)
        gutter = str(span.line)
        width = (span.end_column if span.end_line == span.line else len(source)) - span.column
        block.append(f"\n {gutter} | ", style="blue")
        block.append(source)
        block.append(f"\n {' ' * len(gutter)} | ", style="blue")
        block.append(
            " " * span.column + "^" * max(width, 1), style=SEVERITY_STYLE[finding.severity]
        )
    if finding.targets:
        block.append(f"\n {' ' * len(str(span.line))} = ", style="blue")
        block.append(
            advice_line(finding, report.targets), style="dim" if not report.terminal else ""
        )
    return block


def _summary_table(report: Report) -> Table:
    from rich.table import Table

    table = Table(
        title="Per target", title_justify="left", show_edge=False, box=None, pad_edge=False
    )
    for column in ("target", "findings", "rename", "manual", "unsupported"):
        table.add_column(column, justify="left" if column == "target" else "right")
    for target, counts in report.target_summary().items():
        total = sum(counts.values())
        table.add_row(
            target,
            str(total),
            str(counts["rename"]),
            str(counts["manual"]),
            str(counts["unsupported"]),
        )
    return table


def render(report: Report, stream: TextIO) -> None:
    if not report.findings and not report.fixed:
        stream.write(_all_passed(report, colour=report.terminal))
        return
    from rich.console import Console

    console = Console(
        file=stream,
        force_terminal=report.terminal,
        no_color=not report.terminal,
        highlight=False,
        soft_wrap=True,
        width=None if report.terminal else 120,
    )
    findings = report.sorted_findings()
    for finding in findings:
        console.print(_finding_block(finding, report))
        console.print()
    if report.quiet:
        return
    if findings:
        console.print(_summary_table(report))
        console.print()
    if report.show_fixes and report.fixed:
        console.print(f"Fixed {_plural(len(report.fixed), 'finding')}:")
        for path in sorted({f.path for f in report.fixed}):
            console.print(f"  {printable(path)}:")
            counts = Counter(f.code for f in report.fixed if f.path == path)
            for code, count in sorted(counts.items()):
                console.print(f"    {count} × {code} ({report.catalog.rules[code].name})")
        console.print()
    elif report.fixed:
        console.print(f"Fixed {_plural(len(report.fixed), 'finding')}.")
    count = len(findings)
    files = len({f.path for f in findings})
    if count:
        line = f"Found {_plural(count, 'finding')} in {_plural(files, 'file')}"
        line += f" ({report.files_checked} checked)."
        fixes = fix_summary(*report.fix_counts(), report.unsafe_fixes)
        if fixes:
            line += f"\n{fixes}"
        console.print(line)
    else:
        console.print(_all_passed(report, colour=False).rstrip("\n"), style="green")


def _all_passed(report: Report, colour: bool) -> str:
    line = f"All checks passed ({report.files_checked} files checked)."
    return f"{GREEN}{line}{RESET}\n" if colour else f"{line}\n"


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'s' if count != 1 else ''}"

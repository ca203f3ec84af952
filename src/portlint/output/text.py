"""``--output-format text`` (the default): findings with their source line, advice and a summary.

Rendered with rich: coloured on a terminal, plain text otherwise. A run without findings, the
common case in a pre-commit hook, prints its one line without importing rich (a third of the
hook's start-up).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import TYPE_CHECKING, TextIO

from portlint.model import Finding, Severity
from portlint.output.positions import one_based
from portlint.output.report import (
    UNPRINTABLE,
    Report,
    advice_line,
    fix_summary,
    plural,
    printable,
    write_whole,
)
from portlint.output.report import Writer as FormatWriter

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

GREEN, RESET = "\x1b[32m", "\x1b[0m"
SEVERITY_STYLE = {Severity.ERROR: "bold red", Severity.WARNING: "yellow", Severity.INFO: "cyan"}


@functools.lru_cache(maxsize=2)  # files come one at a time: keep the one being shown
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


class Writer(FormatWriter):
    """Each file's findings as they come; the per-target table and the counts at the end."""

    _console: Console | None = None

    @property
    def console(self) -> Console:
        if self._console is None:
            from rich.console import Console

            self._console = Console(
                file=self.stream,
                force_terminal=self.report.terminal,
                no_color=not self.report.terminal,
                highlight=False,
                soft_wrap=True,
                width=None if self.report.terminal else 120,
            )
        return self._console

    def file(self, findings: Sequence[Finding]) -> None:
        for finding in findings:
            self.console.print(_finding_block(finding, self.report))
            self.console.print()

    def finish(self) -> None:
        report, totals = self.report, self.report.totals
        if not totals.findings and not totals.fixed_count:
            self.stream.write(_all_passed(report, colour=report.terminal))
            return
        if report.quiet:
            return
        console = self.console
        if totals.findings:
            console.print(_summary_table(report))
            console.print()
        if report.show_fixes and totals.fixed_count:
            console.print(f"Fixed {plural(totals.fixed_count, 'finding')}:")
            for path, counts in sorted(totals.fixed.items()):
                console.print(f"  {printable(path)}:")
                for code, count in sorted(counts.items()):
                    console.print(f"    {count} × {code} ({report.catalog.rules[code].name})")
            console.print()
        elif totals.fixed_count:
            console.print(f"Fixed {plural(totals.fixed_count, 'finding')}.")
        if totals.findings:
            line = f"Found {plural(totals.findings, 'finding')} in {plural(totals.files, 'file')}"
            line += f" ({report.files_checked} checked)."
            fixes = fix_summary(*report.fix_counts(), report.unsafe_fixes)
            if fixes:
                line += f"\n{fixes}"
            console.print(line)
        else:
            console.print(_all_passed(report, colour=False).rstrip("\n"), style="green")


def render(report: Report, stream: TextIO) -> None:
    write_whole(Writer(report, stream), report)


def _all_passed(report: Report, colour: bool) -> str:
    line = f"All checks passed ({report.files_checked} files checked)."
    return f"{GREEN}{line}{RESET}\n" if colour else f"{line}\n"

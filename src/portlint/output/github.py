"""``--output-format github``: workflow commands that GitHub Actions turns into annotations.

``::error title=portlint (PRT201),file=src/a.py,line=3,endLine=3,col=5,endColumn=27::message``.
Escaping follows the Actions toolkit: ``%``, CR and LF in the message; also ``:`` and ``,`` in
property values. ``col``/``endColumn`` are given on single-line ranges only (GitHub ignores them
otherwise). Paths are relative to the repository root, as the checkout has them.

GitHub shows at most ten annotations of each level per step, so the most severe come first, and
what does not fit is counted in one closing notice. When ``$GITHUB_STEP_SUMMARY`` names a file, a
markdown summary is appended to it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from typing import TextIO

from portlint.model import Finding, Severity
from portlint.output.positions import one_based
from portlint.output.report import Report, advice_line, plural, printable
from portlint.output.report import Writer as FormatWriter

LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}
SEVERITY_ORDER = (Severity.ERROR, Severity.WARNING, Severity.INFO)
#: GitHub's documented limit of annotations shown per level and step.
PER_LEVEL = 10
SUMMARY_ROWS = 200


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def annotation(finding: Finding, report: Report) -> str:
    span = finding.span
    properties = [
        ("title", f"portlint ({finding.code})"),
        ("file", report.relative_path(finding.path)),
        ("line", str(span.line)),
        ("endLine", str(span.end_line)),
    ]
    if span.line == span.end_line:
        properties += [("col", str(one_based(span.column)))]
        properties += [("endColumn", str(one_based(span.end_column)))]
    listed = ",".join(f"{name}={escape_property(value)}" for name, value in properties)
    message = finding.message
    if finding.targets:
        message += "\n" + advice_line(finding, report.targets)
    return f"::{LEVEL[finding.severity]} {listed}::{escape_data(message)}\n"


class Writer(FormatWriter):
    """Keeps the first findings of each level (as many as GitHub shows) and the first rows of
    the job summary, and counts the rest; everything is written at the end, most severe first."""

    def __init__(self, report: Report, stream: TextIO) -> None:
        super().__init__(report, stream)
        self.by_level: dict[Severity, list[Finding]] = {s: [] for s in SEVERITY_ORDER}
        self.overflow = False
        self.rows: list[str] = []
        self.summary = bool(os.environ.get("GITHUB_STEP_SUMMARY"))

    def file(self, findings: Sequence[Finding]) -> None:
        for finding in findings:
            kept = self.by_level[finding.severity]
            if len(kept) < PER_LEVEL:
                kept.append(finding)
            else:
                self.overflow = True
            if self.summary and len(self.rows) < SUMMARY_ROWS:
                where = f"{self.report.relative_path(finding.path)}:{finding.span.line}"
                message = _cell(finding.message)
                self.rows.append(f"| {_code_cell(where)} | {finding.code} | {message} |")

    def shown(self) -> list[Finding]:
        """The findings to annotate, most severe first."""
        # The closing "N more" line is a notice too: keep one notice slot free for it.
        room = {s: PER_LEVEL for s in SEVERITY_ORDER}
        room[Severity.INFO] -= 1 if self.overflow else 0
        return [f for s in SEVERITY_ORDER for f in self.by_level[s][: room[s]]]

    def finish(self) -> None:
        shown = self.shown()
        for finding in shown:
            self.stream.write(annotation(finding, self.report))
        hidden = self.report.totals.findings - len(shown)
        if hidden:
            note = (
                f"{hidden} more portlint finding{'s' if hidden != 1 else ''} not shown as "
                "annotations (GitHub shows 10 per level); see the SARIF upload or the job summary."
            )
            self.stream.write(f"::notice title=portlint::{escape_data(note)}\n")
        summary_file = os.environ.get("GITHUB_STEP_SUMMARY")
        if summary_file:
            with open(summary_file, "a", encoding="utf-8") as handle:
                handle.write(step_summary(self.report, self.rows))


def step_summary(report: Report, rows: list[str]) -> str:
    """Markdown for the job summary: counts per rule and per target, then the first findings
    (``rows``)."""
    totals = report.totals
    if not totals.findings:
        return f"## portlint\n\nNo findings ({report.files_checked} files checked).\n"
    lines = [
        "## portlint",
        "",
        f"{plural(totals.findings, 'finding')} in {plural(totals.files, 'file')} "
        f"({report.files_checked} checked).",
        "",
        "| rule | name | findings |",
        "|---|---|---:|",
    ]
    for code, count in sorted(totals.per_code.items(), key=lambda item: (-item[1], item[0])):
        lines.append(f"| {code} | {report.catalog.rules[code].name} | {count} |")
    lines += ["", "| target | rename | manual | unsupported |", "|---|---:|---:|---:|"]
    for target, status in report.target_summary().items():
        lines.append(
            f"| {target} | {status['rename']} | {status['manual']} | {status['unsupported']} |"
        )
    lines += ["", "| where | rule | message |", "|---|---|---|", *rows]
    if totals.findings > SUMMARY_ROWS:
        lines.append(f"\n{totals.findings - SUMMARY_ROWS} more not listed.")
    return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    """Markdown table cell text: one line, no cell break, no HTML."""
    text = printable(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return text.replace("|", "\\|")


def _code_cell(text: str) -> str:
    """``text`` as a code span in a table cell, whatever backticks, pipes or newlines it holds:
    the fence is longer than any run of backticks inside (CommonMark), and ``|`` is escaped
    (GitHub splits cells before it reads code spans)."""
    text = printable(text)
    fence = "`" * (max((len(run) for run in re.findall("`+", text)), default=0) + 1)
    padded = f" {text} " if text.startswith("`") or text.endswith("`") else text
    return f"{fence}{padded}{fence}".replace("|", "\\|")

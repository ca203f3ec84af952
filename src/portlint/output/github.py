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
from collections import Counter
from typing import TextIO

from portlint.model import Finding, Severity
from portlint.output.positions import one_based
from portlint.output.report import Report, advice_line, printable

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


def shown_and_hidden(report: Report) -> tuple[list[Finding], int]:
    """The findings to annotate, most severe first, and how many do not fit."""
    by_level = {s: [f for f in report.sorted_findings() if f.severity is s] for s in SEVERITY_ORDER}
    overflow = any(len(found) > PER_LEVEL for found in by_level.values())
    # The closing "N more" line is a notice too: keep one notice slot free for it.
    room = {s: PER_LEVEL for s in SEVERITY_ORDER}
    room[Severity.INFO] -= 1 if overflow else 0
    shown = [f for s in SEVERITY_ORDER for f in by_level[s][: room[s]]]
    return shown, len(report.findings) - len(shown)


def render(report: Report, stream: TextIO) -> None:
    shown, hidden = shown_and_hidden(report)
    for finding in shown:
        stream.write(annotation(finding, report))
    if hidden:
        note = (
            f"{hidden} more portlint finding{'s' if hidden != 1 else ''} not shown as annotations "
            "(GitHub shows 10 per level); see the SARIF upload or the job summary."
        )
        stream.write(f"::notice title=portlint::{escape_data(note)}\n")
    summary_file = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary_file:
        with open(summary_file, "a", encoding="utf-8") as handle:
            handle.write(step_summary(report))


def step_summary(report: Report) -> str:
    """Markdown for the job summary: counts per rule and per target, then the findings."""
    findings = report.sorted_findings()
    if not findings:
        return f"## portlint\n\nNo findings ({report.files_checked} files checked).\n"
    files = len({f.path for f in findings})
    lines = [
        "## portlint",
        "",
        f"{_plural(len(findings), 'finding')} in {_plural(files, 'file')} "
        f"({report.files_checked} checked).",
        "",
        "| rule | name | findings |",
        "|---|---|---:|",
    ]
    counts = Counter(f.code for f in findings)
    for code, count in sorted(counts.items(), key=lambda item: (-item[1], item[0])):
        lines.append(f"| {code} | {report.catalog.rules[code].name} | {count} |")
    lines += ["", "| target | rename | manual | unsupported |", "|---|---:|---:|---:|"]
    for target, status in report.target_summary().items():
        lines.append(
            f"| {target} | {status['rename']} | {status['manual']} | {status['unsupported']} |"
        )
    lines += ["", "| where | rule | message |", "|---|---|---|"]
    for finding in findings[:SUMMARY_ROWS]:
        where = f"{report.relative_path(finding.path)}:{finding.span.line}"
        lines.append(f"| {_code_cell(where)} | {finding.code} | {_cell(finding.message)} |")
    if len(findings) > SUMMARY_ROWS:
        lines.append(f"\n{len(findings) - SUMMARY_ROWS} more not listed.")
    return "\n".join(lines) + "\n"


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'s' if count != 1 else ''}"


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

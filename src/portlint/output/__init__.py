"""Output formats. Each module renders the same findings for one consumer.

``FORMATS`` maps a ``--output-format`` name to the module that renders it; a format module
provides a ``Writer`` (``portlint.output.report.Writer``): it is given each file's findings as the
run finishes that file, and writes its closing lines and summaries from the run's totals.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import TextIO

from portlint.model import Finding
from portlint.output.report import Report, Writer, write_whole

FORMATS = {
    "text": "portlint.output.text",
    "full": "portlint.output.text",
    "concise": "portlint.output.concise",
    "json": "portlint.output.json_format",
    "json-lines": "portlint.output.json_lines",
    "grouped": "portlint.output.grouped",
    "github": "portlint.output.github",
    "sarif": "portlint.output.sarif",
    "rdjson": "portlint.output.rdjson",
    "rdjsonl": "portlint.output.rdjsonl",
    "gitlab": "portlint.output.gitlab",
    "junit": "portlint.output.junit",
}


def writer(format_name: str, report: Report, stream: TextIO) -> Writer:
    return importlib.import_module(FORMATS[format_name]).Writer(report, stream)


def render(format_name: str, report: Report, stream: TextIO) -> None:
    """A whole run's report (``report.findings`` and ``report.fixed``)."""
    write_whole(writer(format_name, report, stream), report)


class Output:
    """A run's report in one format, written as the run goes: ``file`` once per file, in path
    order, then ``finish``. Only counts stay behind (``Report.totals``)."""

    def __init__(self, report: Report, format_writer: Writer) -> None:
        self.report = report
        self.writer = format_writer

    def file(self, findings: Sequence[Finding], fixed: Sequence[Finding] = ()) -> None:
        self.report.add_fixed(fixed)
        self.report.add(findings)
        if findings:
            self.writer.file(findings)

    def finish(self, files_checked: int) -> None:
        self.report.files_checked = files_checked
        self.writer.finish()

    @property
    def findings(self) -> int:
        return self.report.totals.findings

"""``--output-format junit``: JUnit XML, as GitLab's and Jenkins' test reports read it.

One ``<testsuite>`` per file with findings, one failed ``<testcase>`` per finding; a run without
findings is one passing test case, so the consumer still records a green result.
"""

from __future__ import annotations

import re
import shutil
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from typing import IO, TextIO

from portlint.model import Finding
from portlint.output.positions import one_based
from portlint.output.report import Report, printable
from portlint.output.report import Writer as FormatWriter

#: Suites held in memory before they go to a temporary file.
SPOOL_BYTES = 1 << 20

#: Characters XML 1.0 does not allow, even escaped (a control character in a file name).
XML_INVALID = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")


def xml_text(text: str) -> str:
    """``text`` with the characters XML cannot hold shown as escapes (``\\x1b``)."""
    return XML_INVALID.sub(lambda m: printable(m.group()), text)


class Writer(FormatWriter):
    """The same bytes as one indented ``ElementTree`` of the whole run. The root element's
    ``tests`` and ``failures`` attributes come first in the document but are known only at the
    end, and XML has no place after the suites for them; so the suites are written, as each file
    is done, to a temporary file (in memory up to ``SPOOL_BYTES``, then on disk), which is copied
    after the root's start tag once the totals are known."""

    def __init__(self, report: Report, stream: TextIO) -> None:
        super().__init__(report, stream)
        self.suites: IO[str] | None = None

    def file(self, findings: Sequence[Finding]) -> None:
        if self.suites is None:
            import tempfile  # only a run with findings needs one

            # Open across calls, closed by ``finish``.
            spool = tempfile.SpooledTemporaryFile(SPOOL_BYTES, mode="w+", encoding="utf-8")  # noqa: SIM115
            self.suites = spool
        suite = test_suite(self.report, findings)
        ET.indent(suite, level=1)
        suite.tail = None
        self.suites.write("\n  " + ET.tostring(suite, encoding="unicode"))

    def finish(self) -> None:
        count = self.report.totals.findings
        self.stream.write('<?xml version="1.0" encoding="UTF-8"?>\n')
        if self.suites is None:
            suites = ET.Element("testsuites", name="portlint", tests="1", failures="0")
            suite = ET.SubElement(suites, "testsuite", name="portlint", tests="1", failures="0")
            ET.SubElement(suite, "testcase", name="no findings", classname="portlint")
            ET.indent(suites)
            self.stream.write(ET.tostring(suites, encoding="unicode") + "\n")
            return
        self.stream.write(f'<testsuites name="portlint" tests="{count}" failures="{count}">')
        self.suites.seek(0)
        shutil.copyfileobj(self.suites, self.stream)
        self.suites.close()
        self.stream.write("\n</testsuites>\n")


def test_suite(report: Report, findings: Sequence[Finding]) -> ET.Element:
    """One file's ``<testsuite>``: a failed test case per finding."""
    shown = xml_text(report.relative_path(findings[0].path))
    count = str(len(findings))
    suite = ET.Element("testsuite", name=shown, tests=count, failures=count)
    for finding in findings:
        where = f"{finding.span.line}:{one_based(finding.span.column)}"
        case = ET.SubElement(
            suite,
            "testcase",
            name=f"{finding.code} {finding.name} at {shown}:{where}",
            classname=f"portlint.{finding.code}",
            file=shown,
            line=str(finding.span.line),
        )
        message = xml_text(finding.message)
        failure = ET.SubElement(case, "failure", message=message, type=finding.code)
        failure.text = f"{shown}:{where}: {finding.code} {message}"
    return suite

"""``--output-format junit``: JUnit XML, as GitLab's and Jenkins' test reports read it.

One ``<testsuite>`` per file with findings, one failed ``<testcase>`` per finding; a run without
findings is one passing test case, so the consumer still records a green result.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from itertools import groupby
from typing import TextIO

from portlint.output.positions import one_based
from portlint.output.report import Report, printable

#: Characters XML 1.0 does not allow, even escaped (a control character in a file name).
XML_INVALID = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")


def xml_text(text: str) -> str:
    """``text`` with the characters XML cannot hold shown as escapes (``\\x1b``)."""
    return XML_INVALID.sub(lambda m: printable(m.group()), text)


def render(report: Report, stream: TextIO) -> None:
    findings = report.sorted_findings()
    suites = ET.Element(
        "testsuites", name="portlint", tests=str(max(1, len(findings))), failures=str(len(findings))
    )
    if not findings:
        suite = ET.SubElement(suites, "testsuite", name="portlint", tests="1", failures="0")
        ET.SubElement(suite, "testcase", name="no findings", classname="portlint")
    for path, group in groupby(findings, key=lambda f: f.path):
        in_file = list(group)
        shown = xml_text(report.relative_path(path))
        suite = ET.SubElement(
            suites, "testsuite", name=shown, tests=str(len(in_file)), failures=str(len(in_file))
        )
        for finding in in_file:
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
    ET.indent(suites)
    stream.write('<?xml version="1.0" encoding="UTF-8"?>\n')
    stream.write(ET.tostring(suites, encoding="unicode"))
    stream.write("\n")

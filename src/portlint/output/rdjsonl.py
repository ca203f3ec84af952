"""``--output-format rdjsonl``: reviewdog's Diagnostic Format, one ``Diagnostic`` per line."""

from __future__ import annotations

import json
from typing import TextIO

from portlint.output.rdjson import diagnostic
from portlint.output.report import Report


def render(report: Report, stream: TextIO) -> None:
    for finding in report.sorted_findings():
        stream.write(json.dumps(diagnostic(finding, report), ensure_ascii=False) + "\n")

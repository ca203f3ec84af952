"""``--output-format json-lines``: the JSON output's objects, one per line, for streaming tools."""

from __future__ import annotations

import json
from typing import TextIO

from portlint.output.json_format import finding_to_json
from portlint.output.report import Report


def render(report: Report, stream: TextIO) -> None:
    for finding in report.sorted_findings():
        stream.write(json.dumps(finding_to_json(finding), ensure_ascii=False) + "\n")

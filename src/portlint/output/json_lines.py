"""``--output-format json-lines``: the JSON output's objects, one per line, for streaming tools."""

from __future__ import annotations

import json
from collections.abc import Sequence

from portlint.model import Finding
from portlint.output.json_format import finding_to_json
from portlint.output.report import Writer as FormatWriter


class Writer(FormatWriter):
    def file(self, findings: Sequence[Finding]) -> None:
        for finding in findings:
            self.stream.write(json.dumps(finding_to_json(finding), ensure_ascii=False) + "\n")

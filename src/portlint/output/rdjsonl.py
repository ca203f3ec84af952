"""``--output-format rdjsonl``: reviewdog's Diagnostic Format, one ``Diagnostic`` per line."""

from __future__ import annotations

import json
from collections.abc import Sequence

from portlint.model import Finding
from portlint.output.rdjson import diagnostic
from portlint.output.report import Writer as FormatWriter


class Writer(FormatWriter):
    def file(self, findings: Sequence[Finding]) -> None:
        for finding in findings:
            line = json.dumps(diagnostic(finding, self.report), ensure_ascii=False)
            self.stream.write(line + "\n")

"""``--output-format gitlab``: a GitLab Code Quality report (``artifacts:reports:codequality``).

A JSON array of issues with ``description``, ``check_name``, ``fingerprint``, ``severity`` (one of
info, minor, major, critical, blocker) and ``location`` (``path`` relative to the repository root,
``lines.begin``). GitLab keeps one issue per fingerprint, so fingerprints must be unique; they are
built from the line-number-free key, so an issue keeps its identity across unrelated edits.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any, TextIO

from portlint.fingerprint import Key
from portlint.model import Finding, Severity
from portlint.output.report import ITEMS, JsonArray, Report
from portlint.output.report import Writer as FormatWriter

SEVERITY = {Severity.ERROR: "major", Severity.WARNING: "minor", Severity.INFO: "info"}


def fingerprint(key: Key) -> str:
    text = f"{key.code}\0{key.path}\0{key.line_hash}\0{key.occurrence}"
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()[:32]


def issue(finding: Finding, key: Key) -> dict[str, Any]:
    return {
        "type": "issue",
        "description": f"{finding.code} {finding.message}",
        "check_name": f"portlint/{finding.code} {finding.name}",
        "fingerprint": fingerprint(key),
        "severity": SEVERITY[finding.severity],
        "categories": ["Compatibility"],
        "location": {
            "path": key.path,
            "lines": {"begin": finding.span.line, "end": finding.span.end_line},
        },
    }


class Writer(FormatWriter):
    """The same bytes as ``json.dump`` of the whole array, one issue at a time."""

    def __init__(self, report: Report, stream: TextIO) -> None:
        super().__init__(report, stream)
        self.array = JsonArray(stream, [ITEMS], ensure_ascii=True)

    def file(self, findings: Sequence[Finding]) -> None:
        for finding, key in self.report.keyed(findings):
            self.array.add(issue(finding, key))

    def finish(self) -> None:
        self.array.close()

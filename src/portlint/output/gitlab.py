"""``--output-format gitlab``: a GitLab Code Quality report (``artifacts:reports:codequality``).

A JSON array of issues with ``description``, ``check_name``, ``fingerprint``, ``severity`` (one of
info, minor, major, critical, blocker) and ``location`` (``path`` relative to the repository root,
``lines.begin``). GitLab keeps one issue per fingerprint, so fingerprints must be unique; they are
built from the line-number-free key, so an issue keeps its identity across unrelated edits.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, TextIO

from portlint.fingerprint import Key
from portlint.model import Finding, Severity
from portlint.output.report import Report

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


def render(report: Report, stream: TextIO) -> None:
    json.dump([issue(f, key) for f, key in report.keyed_findings()], stream, indent=2)
    stream.write("\n")

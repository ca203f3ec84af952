"""Output formats. Each module renders the same findings for one consumer.

``FORMATS`` maps a ``--output-format`` name to the module that renders it; a format module
provides ``render(report: Report, stream) -> None``.
"""

from __future__ import annotations

import importlib
from typing import TextIO

from portlint.output.report import Report

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


def render(format_name: str, report: Report, stream: TextIO) -> None:
    importlib.import_module(FORMATS[format_name]).render(report, stream)

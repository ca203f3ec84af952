"""Suppression comments.

On the line of a finding (its first or its last line):
  ``# noqa`` (everything), ``# noqa: PRT101, PRT201``, ``# portlint: ignore``,
  ``# portlint: ignore[PRT101]``, and in C/C++ also ``// NOLINT(portlint-PRT701)``.
Anywhere in the file, on a line of its own: ``# portlint: noqa`` (or ``// portlint: noqa``) skips
the whole file. Codes may be prefixes (``PRT1``), as in ``--select``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from portlint.model import Finding
from portlint.textindex import LineIndex

CODE_LIST = r"[A-Z]+[0-9]*(?:\s*,\s*[A-Z]+[0-9]*)*"
NOQA = re.compile(rf"(?:#|//)\s*noqa(?::\s*(?P<codes>{CODE_LIST}))?", re.IGNORECASE)
PORTLINT_IGNORE = re.compile(r"portlint:\s*ignore(?:\[(?P<codes>[^\]]*)\])?", re.IGNORECASE)
NOLINT = re.compile(r"NOLINT(?:NEXTLINE)?\((?P<codes>[^)]*)\)")
FILE_NOQA = re.compile(r"^[ \t]*(?:#|//)[ \t]*portlint:[ \t]*noqa[ \t]*$", re.MULTILINE)

ALL = ("",)  # the empty prefix matches every code


@dataclass(frozen=True)
class Suppression:
    line: int
    codes: tuple[str, ...]
    text: str


def file_is_suppressed(text: str) -> bool:
    return "portlint" in text and FILE_NOQA.search(text) is not None


def line_suppressions(line_number: int, line: str) -> Suppression | None:
    """The codes a line's comment suppresses, or None."""
    if "noqa" not in line.lower() and "portlint" not in line and "NOLINT" not in line:
        return None
    codes: list[str] = []
    found = None
    for pattern in (NOQA, PORTLINT_IGNORE):
        match = pattern.search(line)
        if match:
            found = match
            listed = match.group("codes")
            if listed is None:
                codes.extend(ALL)
            else:
                codes.extend(c.strip().upper() for c in listed.split(",") if c.strip())
    for match in NOLINT.finditer(line):
        for item in match.group("codes").split(","):
            item = item.strip()
            if item.startswith("portlint-"):
                found = match
                codes.append(item[len("portlint-") :].upper())
    if found is None:
        return None
    return Suppression(line_number, tuple(codes), found.group(0))


def is_suppressed(finding: Finding, suppression: Suppression | None) -> bool:
    return suppression is not None and any(finding.code.startswith(c) for c in suppression.codes)


def apply_suppressions(findings: Iterable[Finding], text: str) -> list[Finding]:
    """The findings that no comment suppresses."""
    findings = list(findings)
    if not findings:
        return findings
    if file_is_suppressed(text):
        return []
    index = LineIndex(text)
    cache: dict[int, Suppression | None] = {}

    def at(line: int) -> Suppression | None:
        if line not in cache:
            cache[line] = line_suppressions(line, index.line(line))
        return cache[line]

    return [
        f
        for f in findings
        if not (is_suppressed(f, at(f.span.line)) or is_suppressed(f, at(f.span.end_line)))
    ]

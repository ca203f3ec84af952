"""Suppression comments, and which of them are used.

On the line of a finding (its first or its last line):
  ``# noqa`` (everything), ``# noqa: PRT101, PRT201``, ``# portlint: ignore``,
  ``# portlint: ignore[PRT101]``, and in C/C++ also ``// NOLINT(portlint-PRT701)``.
Anywhere in the file, on a line of its own: ``# portlint: noqa`` (or ``// portlint: noqa``) skips
the whole file. Codes may be prefixes (``PRT1``), as in ``--select``.

``check_suppressions`` also records which (line, code) pairs matched a finding, so that the
unused-suppression rule can report the comments that match nothing.
"""

from __future__ import annotations

import io
import re
import tokenize
from collections.abc import Callable, Iterable
from typing import NamedTuple

from portlint.model import Finding
from portlint.textindex import LineIndex

CODE_LIST = r"[A-Z]+[0-9]*(?:\s*,\s*[A-Z]+[0-9]*)*"
NOQA = re.compile(rf"(?:#|//)\s*noqa(?::\s*(?P<codes>{CODE_LIST}))?", re.IGNORECASE)
PORTLINT_IGNORE = re.compile(r"portlint:\s*ignore(?:\[(?P<codes>[^\]]*)\])?", re.IGNORECASE)
NOLINT = re.compile(r"NOLINT(?:NEXTLINE)?\((?P<codes>[^)]*)\)")
FILE_NOQA = re.compile(r"^[ \t]*(?:#|//)[ \t]*portlint:[ \t]*noqa[ \t]*$", re.MULTILINE)
OWN_CODE = "PRT"
#: The unused-suppression rule's own code is never reported as unused: it would chase itself.
UNUSED_SUPPRESSION = "PRT003"

ALL = ("",)  # the empty prefix matches every code


class Suppression(NamedTuple):
    line: int
    #: What the comment suppresses; "" suppresses every code.
    codes: tuple[str, ...]
    text: str
    #: Character columns of the comment's directives on the line (start, exclusive end).
    column: int = 0
    end_column: int = 0
    #: The codes the unused-suppression rule answers for: portlint codes named explicitly, and ""
    #: for a bare "portlint: ignore". A bare "noqa" also serves other linters, so it is never
    #: reported, and neither are other tools' codes in a shared "noqa: E501, PRT101".
    owned: tuple[str, ...] = ()


class SuppressionCheck(NamedTuple):
    kept: list[Finding]
    #: (line, code as written in the comment) for every suppression that matched a finding.
    used: set[tuple[int, str]]


def file_is_suppressed(text: str) -> bool:
    return "portlint" in text and FILE_NOQA.search(text) is not None


def may_hold_suppressions(text: str) -> bool:
    """Cheap test: could the text hold a suppression the unused-suppression rule reports?"""
    return OWN_CODE in text or "portlint" in text


def _codes(listed: str | None) -> list[str]:
    if listed is None:
        return list(ALL)
    return [c.strip().upper() for c in listed.split(",") if c.strip()]


def line_suppressions(line_number: int, line: str) -> Suppression | None:
    """The codes a line's comment suppresses, or None."""
    if "noqa" not in line.lower() and "portlint" not in line and "NOLINT" not in line:
        return None
    codes: list[str] = []
    owned: list[str] = []
    matches: list[re.Match] = []
    match = NOQA.search(line)
    if match:
        matches.append(match)
        listed = _codes(match.group("codes"))
        codes.extend(listed)
        owned.extend(c for c in listed if c.startswith(OWN_CODE))
    match = PORTLINT_IGNORE.search(line)
    if match:
        matches.append(match)
        listed = _codes(match.group("codes"))
        codes.extend(listed)
        owned.extend(listed)
    for match in NOLINT.finditer(line):
        for item in match.group("codes").split(","):
            item = item.strip()
            if item.startswith("portlint-"):
                if match not in matches:
                    matches.append(match)
                code = item[len("portlint-") :].upper()
                codes.append(code)
                owned.append(code)
    if not matches:
        return None
    start = min(m.start() for m in matches)
    end = max(m.end() for m in matches)
    return Suppression(line_number, tuple(codes), line[start:end], start, end, tuple(owned))


def _matching_codes(finding: Finding, suppression: Suppression | None) -> list[str]:
    if suppression is None:
        return []
    return [c for c in suppression.codes if finding.code.startswith(c)]


def check_suppressions(findings: Iterable[Finding], text: str) -> SuppressionCheck:
    """The findings that no comment suppresses, and the suppressions that matched one."""
    findings = list(findings)
    if not findings:
        return SuppressionCheck(findings, set())
    if file_is_suppressed(text):
        return SuppressionCheck([], set())
    index = LineIndex(text)
    cache: dict[int, Suppression | None] = {}

    def at(line: int) -> Suppression | None:
        if line not in cache:
            cache[line] = line_suppressions(line, index.line(line))
        return cache[line]

    check = SuppressionCheck([], set())
    for finding in findings:
        matched = False
        for line in {finding.span.line, finding.span.end_line}:
            codes = _matching_codes(finding, at(line))
            check.used.update((line, code) for code in codes)
            matched = matched or bool(codes)
        if not matched:
            check.kept.append(finding)
    return check


def all_suppressions(text: str) -> list[Suppression]:
    if "noqa" not in text.lower() and "portlint" not in text and "NOLINT" not in text:
        return []
    index = LineIndex(text)
    found = (line_suppressions(n, line) for n, line in enumerate(index.lines, start=1))
    return [s for s in found if s is not None]


def unused_suppressions(
    text: str,
    used: set[tuple[int, str]],
    is_enabled: Callable[[str], bool],
    python: bool = False,
) -> list[tuple[Suppression, tuple[str, ...]]]:
    """Suppressions whose portlint codes matched no finding: (suppression, unused codes).

    Codes of rules that are not enabled are left alone: the comment may serve a run that
    enables them. In Python, text that only looks like a comment inside a string is skipped.
    """
    if file_is_suppressed(text):
        return []
    unused = []
    for suppression in all_suppressions(text):
        # Only an explicit PRT003 on the line silences this rule: a bare ``# portlint: ignore``
        # must not hide the report that it is itself unused.
        if UNUSED_SUPPRESSION in suppression.codes:
            continue
        codes = tuple(
            code
            for code in suppression.owned
            if (suppression.line, code) not in used
            and code != UNUSED_SUPPRESSION
            and is_enabled(code)
        )
        if codes:
            unused.append((suppression, codes))
    if unused and python:
        comments = python_comment_lines(text)
        if comments is not None:
            unused = [(s, c) for s, c in unused if s.line in comments]
    return unused


def python_comment_lines(text: str) -> set[int] | None:
    """Lines that hold a real comment token; None when the text does not tokenize."""
    lines = set()
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.COMMENT:
                lines.add(token.start[0])
    except (tokenize.TokenError, SyntaxError):
        return None
    return lines

"""The ``// CHECK:`` expectations written in fixtures/cxx files (syntax: fixtures/cxx/README.md)."""

from __future__ import annotations

import re
from collections import Counter

from portlint.model import Finding, Status
from portlint.textindex import LINE_BREAK

CHECK_LINE = re.compile(r"^[ \t]*// CHECK:(?P<body>.*)$")
EXPECTATION = re.compile(
    r"^ (?P<code>PRT\d{3}) `(?P<symbol>[^`]+)`(?: rocm=(?P<rocm>\S+))?(?P<nofix> nofix)?$"
)


class CheckSyntaxError(AssertionError):
    pass


def parse_checks(text: str) -> dict[int, Counter]:
    """Line number -> the expected findings on it, as canonical strings.

    A ``// CHECK:`` line states one finding on the next line that is not itself a CHECK line.
    """
    expected: dict[int, Counter] = {}
    pending: list[str] = []
    lines = LINE_BREAK.split(text)
    for number, line in enumerate(lines, start=1):
        match = CHECK_LINE.match(line)
        if match is None:
            if pending and not line.strip():
                raise CheckSyntaxError(f"line {number}: CHECK lines above a blank line")
            if pending:
                expected.setdefault(number, Counter()).update(pending)
                pending = []
            continue
        body = match.group("body")
        if EXPECTATION.match(body) is None:
            raise CheckSyntaxError(f"line {number}: malformed CHECK: {body.strip()!r}")
        pending.append(body.strip())
    if pending:
        raise CheckSyntaxError("CHECK lines at the end of the file check nothing")
    return expected


def canonical(finding: Finding) -> str:
    """A finding as a CHECK line states it: code, symbol, the ROCm answer of an API site, and
    ``nofix`` for a rename that carries no edit."""
    parts = [finding.code, f"`{finding.symbol}`"]
    rocm = finding.targets.get("rocm")
    if finding.code.startswith("PRT7") and rocm is not None:
        if rocm.status is Status.RENAME:
            parts.append(f"rocm={rocm.replacement}")
            if finding.fix is None:
                parts.append("nofix")
        elif rocm.replacement:
            parts.append(f"rocm={rocm.status.value}:{rocm.replacement}")
        else:
            parts.append(f"rocm={rocm.status.value}")
    return " ".join(parts)


def compare(findings: list[Finding], text: str) -> list[str]:
    """Every difference between the findings and the file's CHECK lines, one line each."""
    expected = parse_checks(text)
    actual: dict[int, Counter] = {}
    for finding in findings:
        actual.setdefault(finding.span.line, Counter())[canonical(finding)] += 1
    problems = []
    for line in sorted(set(expected) | set(actual)):
        want, got = expected.get(line, Counter()), actual.get(line, Counter())
        for item in sorted((got - want).elements()):
            problems.append(f"line {line}: unexpected {item}")
        for item in sorted((want - got).elements()):
            problems.append(f"line {line}: missing {item}")
    return problems

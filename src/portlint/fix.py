"""Applying fixes: text edits in, new text out.

Edits use portlint's position convention (1-based lines, 0-based character columns, exclusive
ends). Fixes whose edits overlap an already chosen fix wait for the next round: the caller lints the
new text again and applies what is still fixable, up to ``MAX_ROUNDS`` times.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

from portlint.model import Applicability, Edit, Finding, Fix
from portlint.textindex import LINE_BREAK

MAX_ROUNDS = 10


class FixPolicy(NamedTuple):
    """Which fixes to apply: safe ones always, unsafe ones on request, target-specific ones only
    when that target is the only one asked for (a hipified .cu file no longer builds for NVIDIA)."""

    unsafe: bool = False
    targets: tuple[str, ...] = ()

    def allows(self, fix: Fix | None) -> bool:
        if fix is None or not fix.edits:
            return False
        if fix.applicability is Applicability.UNSAFE and not self.unsafe:
            return False
        return fix.target is None or self.targets == (fix.target,)


def line_offsets(text: str) -> list[int]:
    """Character offset of the start of each line (index 0 is line 1)."""
    offsets = [0]
    offsets.extend(match.end() for match in LINE_BREAK.finditer(text))
    return offsets


def _offset(offsets: list[int], line: int, column: int) -> int:
    return offsets[min(line, len(offsets)) - 1] + column


def choose_fixes(findings: Iterable[Finding], policy: FixPolicy) -> list[Finding]:
    """Fixable findings whose edits do not overlap each other, in file order."""
    chosen: list[Finding] = []
    taken: list[tuple[tuple[int, int], tuple[int, int]]] = []
    for finding in sorted(findings, key=lambda f: (f.span, f.code)):
        if not policy.allows(finding.fix):
            continue
        ranges = [_range(edit) for edit in finding.fix.edits]
        if any(_overlaps(r, t) for r in ranges for t in taken):
            continue
        chosen.append(finding)
        taken.extend(ranges)
    return chosen


def join_fixes(first: Fix | None, second: Fix | None) -> Fix | None:
    """One fix that makes the edits of both (an edit they share once), or None where they
    cannot be one: only one of them is there, their applicability or target differs, or their
    edits overlap."""
    if first is None or second is None:
        return None
    if (first.applicability, first.target) != (second.applicability, second.target):
        return None
    edits = tuple(dict.fromkeys((*first.edits, *second.edits)))
    ranges = [_range(edit) for edit in edits]
    if any(_overlaps(a, b) for i, a in enumerate(ranges) for b in ranges[i + 1 :]):
        return None
    return first._replace(edits=edits)


def _range(edit: Edit) -> tuple[tuple[int, int], tuple[int, int]]:
    span = edit.span
    return (span.line, span.column), (span.end_line, span.end_column)


def _overlaps(a, b) -> bool:
    # Two insertions at the same point conflict too: their order would be arbitrary.
    if a[0] == a[1] and b[0] == b[1]:
        return a[0] == b[0]
    return a[0] < b[1] and b[0] < a[1]


def apply_edits(text: str, edits: Iterable[Edit]) -> str:
    """``text`` with non-overlapping ``edits`` applied."""
    offsets = line_offsets(text)
    placed = sorted(
        (
            _offset(offsets, e.span.line, e.span.column),
            _offset(offsets, e.span.end_line, e.span.end_column),
            e.content,
        )
        for e in edits
    )
    pieces, cursor = [], 0
    for start, end, content in placed:
        if start < cursor:
            raise ValueError("overlapping edits")
        pieces.append(text[cursor:start])
        pieces.append(content)
        cursor = end
    pieces.append(text[cursor:])
    return "".join(pieces)


def apply_fixes(
    text: str, findings: Iterable[Finding], policy: FixPolicy
) -> tuple[str, list[Finding]]:
    """One round: the new text and the findings whose fixes were applied."""
    chosen = choose_fixes(findings, policy)
    edits = [edit for finding in chosen for edit in finding.fix.edits]
    return apply_edits(text, edits), chosen

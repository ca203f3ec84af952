"""Where every analyser puts its findings: one interface for the Python, C++ and deployment
analysers alike.

An analyser is called as ``analyse(source, catalog, settings, sink)`` and calls ``sink.emit`` once
per finding, in the order it finds them; it returns nothing. The engine owns the sink: it hands
each analysis a ``FindingList`` and applies selection, suppressions, sorting, the cache and fix
selection to what that collected. A caller that only wants the list uses ``collect``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any, Protocol, overload

from portlint.model import Edit, Finding, Fix, Span


class FindingSink(Protocol):
    """Receives the findings of one file, one at a time."""

    def emit(self, finding: Finding) -> None: ...


class FindingList:
    """A sink that keeps what it receives, in order."""

    __slots__ = ("findings",)

    def __init__(self) -> None:
        self.findings: list[Finding] = []

    def emit(self, finding: Finding) -> None:
        self.findings.append(finding)


def collect(analyse: Callable[..., None], *args: Any) -> list[Finding]:
    """The findings ``analyse(*args, sink)`` emits, as a list."""
    sink = FindingList()
    analyse(*args, sink)
    return sink.findings


class FindingParts(Sequence[Finding]):
    """A file's findings, kept compressed a part at a time (``python.parts``): a file of a
    million findings holds a few bytes per finding until its output is written, instead of
    several hundred. Read in order as often as needed; each read rebuilds the findings of one
    part at a time."""

    __slots__ = ("_counts", "_parts")

    def __init__(self) -> None:
        self._parts: list[bytes] = []
        self._counts: list[int] = []

    def add(self, findings: list[Finding]) -> None:
        import pickle  # here: the many runs with no large file never need them
        import zlib

        if findings:
            rows = [_row(finding) for finding in findings]
            self._parts.append(zlib.compress(pickle.dumps(rows, pickle.HIGHEST_PROTOCOL), 1))
            self._counts.append(len(findings))

    def _part(self, index: int) -> list[Finding]:
        import pickle
        import zlib

        return [_finding(row) for row in pickle.loads(zlib.decompress(self._parts[index]))]

    def __len__(self) -> int:
        return sum(self._counts)

    def __iter__(self) -> Iterator[Finding]:
        for index in range(len(self._parts)):
            yield from self._part(index)

    @overload
    def __getitem__(self, index: int) -> Finding: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[Finding]: ...
    def __getitem__(self, index: int | slice) -> Finding | Sequence[Finding]:
        if isinstance(index, slice):
            return list(self)[index]
        if index < 0:
            index += len(self)
        for part, count in enumerate(self._counts):
            if index < count:
                return self._part(part)[index]
            index -= count
        raise IndexError("finding index out of range")


def _row(finding: Finding) -> tuple:
    """A finding as plain tuples, which pickle reads and writes several times faster than the
    records (their per-target advice maps are shared, and pickled once per part)."""
    fix, stored = finding.fix, None
    if fix is not None:
        edits = tuple((_span_tuple(edit.span), edit.content) for edit in fix.edits)
        stored = (fix.applicability, edits, fix.description, fix.target)
    words = (finding.code, finding.name, finding.severity, finding.message, finding.symbol)
    return finding.path, _span_tuple(finding.span), words, finding.targets, stored


def _finding(row: tuple) -> Finding:
    path, span, (code, name, severity, message, symbol), targets, fix = row
    if fix is not None:
        applicability, edits, description, target = fix
        edits = tuple(Edit(Span(*where), content) for where, content in edits)
        fix = Fix(applicability, edits, description, target)
    return Finding(path, Span(*span), code, name, severity, message, symbol, targets, fix)


def _span_tuple(span: Span) -> tuple[int, int, int, int]:
    return (span.line, span.column, span.end_line, span.end_column)

"""Naming a finding without its line number, so that the name survives unrelated edits.

A finding is identified by its rule, its file, a hash of its source line with whitespace
normalised, and its occurrence: the how-many-th finding of that rule on an identical line in that
file. The baseline stores these keys, SARIF carries them as ``primaryLocationLineHash``, and the
GitLab report derives its fingerprints from them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import NamedTuple

from portlint.model import Finding
from portlint.textindex import LineIndex


class Key(NamedTuple):
    code: str
    path: str
    line_hash: str
    occurrence: int


def normalise(line: str) -> str:
    """The line with indentation and runs of whitespace collapsed: re-indenting keeps the key."""
    return " ".join(line.split())


def line_hash(line: str) -> str:
    import hashlib  # only CI formats and baselines hash: keep it off the hook's start-up

    return hashlib.sha256(normalise(line).encode("utf-8", "surrogateescape")).hexdigest()[:16]


class SourceLines:
    """Source lines of reported files, decoded as the linter decoded them. Findings come file by
    file, so only the last file read is kept: memory follows the largest file, not the run."""

    def __init__(self) -> None:
        self._path: str | None = None
        self._index = LineIndex("")

    def line(self, path: str, number: int) -> str:
        if path != self._path:
            self._path, self._index = path, LineIndex(_read_text(path))
        return self._index.line(number)


def _read_text(path: str) -> str:
    from portlint.discover import language_of
    from portlint.engine import UnreadableFile, read_source

    try:
        return read_source(Path(path), language_of(Path(path)) or "unknown").text
    except UnreadableFile:
        return ""


def finding_keys(
    findings: list[Finding], lines: SourceLines, display_path=lambda path: path
) -> list[tuple[Finding, Key]]:
    """Each finding with its key, in file order (occurrences count in that order)."""
    ordered = sorted(findings, key=lambda f: (f.path, f.span, f.code))
    return list(keys_in_order(ordered, lines, display_path))


def keys_in_order(
    findings: Iterable[Finding], lines: SourceLines, display_path=lambda path: path
) -> Iterator[tuple[Finding, Key]]:
    """``finding_keys`` of findings already in file order, one at a time (a file analysed in
    parts: its findings are not all held at once)."""
    seen: Counter = Counter()
    for finding in findings:
        path = display_path(finding.path)
        digest = line_hash(lines.line(finding.path, finding.span.line))
        occurrence = seen[(finding.code, path, digest)]
        seen[(finding.code, path, digest)] += 1
        yield finding, Key(finding.code, path, digest, occurrence)

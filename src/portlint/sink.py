"""Where every analyser puts its findings: one interface for the Python, C++ and deployment
analysers alike.

An analyser is called as ``analyse(source, catalog, settings, sink)`` and calls ``sink.emit`` once
per finding, in the order it finds them; it returns nothing. The engine owns the sink: it hands
each analysis a ``FindingList`` and applies selection, suppressions, sorting, the cache and fix
selection to what that collected. A caller that only wants the list uses ``collect``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from portlint.model import Finding


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

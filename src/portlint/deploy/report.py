"""Reports the findings of one deployment file, with spans in portlint's convention, into the
engine's sink."""

from __future__ import annotations

from dataclasses import dataclass, field

from portlint.catalog import Catalog
from portlint.deploy.facts import Targets
from portlint.model import PORTABLE, Fix, Severity, SourceFile, Span
from portlint.sink import FindingSink
from portlint.textindex import LineIndex


@dataclass
class Reporter:
    source: SourceFile
    catalog: Catalog
    index: LineIndex
    sink: FindingSink
    #: Lines that only some targets run, with the targets that a sibling arm covers there
    #: (``shell.vendor_arms``: the ``cuda`` arm of ``case $PLATFORM in``).
    covered_lines: list[tuple[int, int, frozenset[str]]] = field(default_factory=list)
    _seen: set[tuple[Span, str]] = field(default_factory=set)

    @classmethod
    def for_source(cls, source: SourceFile, catalog: Catalog, sink: FindingSink) -> Reporter:
        return cls(source, catalog, LineIndex(source.text), sink)

    def add(
        self,
        code: str,
        span: Span,
        message: str,
        targets: Targets | None = None,
        severity: Severity | None = None,
        fix: Fix | None = None,
    ) -> None:
        """Record a finding, unless the same rule already reported the same span or the site is
        portable on every target."""
        if (span, code) in self._seen:
            return
        rule = self.catalog.rules[code]
        chosen = dict(targets if targets is not None else rule.targets)
        for first, last, covered in self.covered_lines:
            if first <= span.line <= last:
                chosen.update((target, PORTABLE) for target in covered & chosen.keys())
        if chosen and all(advice.portable for advice in chosen.values()):
            return
        self._seen.add((span, code))
        symbol = self.index.text(span.line, span.column, span.end_line, span.end_column)
        self.sink.emit(rule.finding(self.source.path, span, message, symbol, chosen, severity, fix))

    def parse_error(self, line: int, column: int, message: str) -> None:
        line = max(line, 1)
        column = min(max(column, 0), len(self.index.line(line)))
        self.add("PRT001", Span(line, column, line, column), message)

"""A command as a list of words with their positions, whatever it was written in (shell, a
Dockerfile exec form, a YAML list)."""

from __future__ import annotations

from dataclasses import dataclass

from portlint.model import Span


@dataclass(frozen=True)
class Word:
    #: The word without its quotes.
    text: str
    #: Where ``text`` is in the file, when it is on one line and written as is (else the whole
    #: written word).
    span: Span

    def part(self, start: int, end: int) -> Span:
        """The span of ``text[start:end]``, when the word maps one to one onto the file."""
        span = self.span
        if span.line == span.end_line and span.end_column - span.column == len(self.text):
            return Span(span.line, span.column + start, span.line, span.column + end)
        return span


QUOTES = ("'", '"')


def unquoted(raw: str, span: Span) -> Word:
    """A word from its written form: surrounding quotes are dropped from the text and the span."""
    if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in QUOTES:
        inner = raw[1:-1]
        if span.line == span.end_line:
            span = Span(span.line, span.column + 1, span.end_line, span.end_column - 1)
        return Word(inner, span)
    return Word(raw, span)

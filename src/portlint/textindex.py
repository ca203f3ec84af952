"""Converts parser positions (UTF-8 byte columns) to portlint's character columns and back."""

from __future__ import annotations

import functools
import re

LINE_BREAK = re.compile(r"\r\n|\r|\n")


def split_lines(text: str) -> list[str]:
    """The lines of ``text`` without their endings (``LINE_BREAK.split``, faster without "\\r")."""
    return text.split("\n") if "\r" not in text else LINE_BREAK.split(text)


class LineIndex:
    """Line texts of one file, with byte <-> character column conversion per line."""

    def __init__(self, text: str) -> None:
        # Only "\n", "\r\n" and "\r" end a line for the parsers; str.splitlines() would also
        # split on form feeds and Unicode separators and shift every line number after them.
        self.lines = split_lines(text)

    def line(self, number: int) -> str:
        """Line ``number`` (1-based) without its ending; "" past the end."""
        return self.lines[number - 1] if 0 < number <= len(self.lines) else ""

    @functools.lru_cache(maxsize=4096)  # noqa: B019 - one index per file, dropped with it
    def _encoded(self, number: int) -> bytes:
        return self.line(number).encode("utf-8", "surrogateescape")

    def char_column(self, number: int, byte_column: int) -> int:
        line = self.line(number)
        if line.isascii():
            return byte_column
        return len(self._encoded(number)[:byte_column].decode("utf-8", "replace"))

    def byte_column(self, number: int, char_column: int) -> int:
        return len(self.line(number)[:char_column].encode("utf-8", "surrogateescape"))

    def text(self, line: int, column: int, end_line: int, end_column: int) -> str:
        """The source text between two character positions."""
        if line == end_line:
            return self.line(line)[column:end_column]
        parts = [self.line(line)[column:]]
        parts.extend(self.line(n) for n in range(line + 1, end_line))
        parts.append(self.line(end_line)[:end_column])
        return "\n".join(parts)

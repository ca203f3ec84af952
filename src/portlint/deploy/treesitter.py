"""tree-sitter parsers for shell, Dockerfile and CMake text, loaded on first use.

tree-sitter reports UTF-8 byte columns; ``Parsed.span`` converts them to portlint's character
columns. A region of a file (a Dockerfile ``RUN``, a YAML ``run:`` value) is parsed as a copy of
its lines with everything outside the region blanked out, so that positions in the parse are
positions in the file.
"""

from __future__ import annotations

import functools
import importlib
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from portlint.model import Span
from portlint.textindex import LineIndex


@functools.cache
def parser(grammar: str) -> Any:
    """A parser for ``grammar`` ("bash", "dockerfile", "cmake")."""
    import tree_sitter

    module = importlib.import_module(f"tree_sitter_{grammar}")
    with warnings.catch_warnings():
        # Some grammar packages still hand the language over as an int pointer.
        warnings.simplefilter("ignore", DeprecationWarning)
        language = tree_sitter.Language(module.language())
    return tree_sitter.Parser(language)


@dataclass(frozen=True)
class Parsed:
    root: Any
    data: bytes
    index: LineIndex
    #: The file line that line 1 of the parsed text is.
    first_line: int = 1

    def text(self, node: Any) -> str:
        return self.data[node.start_byte : node.end_byte].decode("utf-8", "replace")

    def span(self, node: Any) -> Span:
        (row, column), (end_row, end_column) = node.start_point, node.end_point
        return Span(
            self.first_line + row,
            self.index.char_column(row + 1, column),
            self.first_line + end_row,
            self.index.char_column(end_row + 1, end_column),
        )


def parse(grammar: str, text: str, first_line: int = 1) -> Parsed:
    data = text.encode("utf-8", "surrogateescape")
    tree = parser(grammar).parse(data)
    return Parsed(tree.root_node, data, LineIndex(text), first_line)


def walk(node: Any) -> Iterator[Any]:
    """Every node below ``node``, in source order."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(current.children))


def region_text(index: LineIndex, span: Span) -> str:
    """Lines ``span.line``..``span.end_line`` with the text outside ``span`` turned into spaces."""
    lines = []
    for number in range(span.line, span.end_line + 1):
        line = index.line(number)
        start = span.column if number == span.line else 0
        end = span.end_column if number == span.end_line else len(line)
        lines.append(" " * start + line[start:end])
    return "\n".join(lines)

"""Column conversions from portlint's convention (0-based code points) to each consumer's."""

from __future__ import annotations


def one_based(column: int) -> int:
    """JSON, GitHub and the text output: 1-based character columns."""
    return column + 1


def utf16_column(line_text: str, column: int) -> int:
    """SARIF's default column kind counts UTF-16 code units. An undecodable byte of a C++ file
    (read as a lone surrogate) counts as one, as the character column does."""
    return len(line_text[:column].encode("utf-16-le", "surrogatepass")) // 2


def utf8_column(line_text: str, column: int) -> int:
    """reviewdog's rdjson counts UTF-8 bytes (an undecodable byte of a C++ file: one)."""
    return len(line_text[:column].encode("utf-8", "surrogateescape"))

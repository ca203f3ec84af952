"""Which newer Python a file needs, when the running interpreter cannot parse it.

``ast`` parses the grammar of the Python portlint runs on. A file written for a newer Python
(``type`` aliases and ``def f[T]`` from 3.12, PEP 701 f-strings from 3.12, unparenthesised
``except A, B`` and t-strings from 3.14) is a syntax error here; the PRT001 message then names the
Python that parses it. Sources: the "What's New in Python" pages for 3.12 and 3.14.
"""

from __future__ import annotations

import re
import sys

#: (first Python that parses it, what it is, pattern on the line of the error).
NEWER_SYNTAX: tuple[tuple[tuple[int, int], str, re.Pattern[str]], ...] = (
    ((3, 12), "a `type` alias statement", re.compile(r"^\s*type\s+\w+\s*(\[.*\])?\s*=")),
    (
        (3, 12),
        "type parameters (`def f[T]`, `class C[T]`)",
        re.compile(r"^\s*(async\s+def|def|class)\s+\w+\s*\["),
    ),
    (
        (3, 12),
        "an f-string that reuses its quote inside `{}` (PEP 701)",
        re.compile(r"\b[fF]['\"]"),
    ),
    (
        (3, 14),
        "`except` with several exceptions and no parentheses",
        re.compile(r"^\s*except\*?\s+\w[\w.]*\s*,"),
    ),
    ((3, 14), "a template string (t-string)", re.compile(r"\b[tT][rR]?['\"]")),
)


def newer_python(line: str, running: tuple[int, int] | None = None) -> str | None:
    """``"Python 3.12 (a `type` alias statement)"`` when ``line`` uses syntax newer than the
    running interpreter's, else None."""
    running = running or sys.version_info[:2]
    for version, what, pattern in NEWER_SYNTAX:
        if running < version and pattern.search(line):
            return f"Python {version[0]}.{version[1]} ({what})"
    return None


def syntax_error_note(line: str, requires_python: str | None = None) -> str:
    """What to add to a syntax error's message: which Python parses the line, if a newer one,
    and the project's own ``requires-python`` when it declares one."""
    needed = newer_python(line)
    if needed is None:
        return ""
    running = ".".join(map(str, sys.version_info[:2]))
    declared = f" (the project requires Python {requires_python})" if requires_python else ""
    return (
        f"; this is syntax of {needed}{declared}, and portlint runs on Python {running}: "
        "run portlint with a Python that parses it"
    )

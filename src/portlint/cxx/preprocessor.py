"""Preprocessor conditionals that already have a HIP/ROCm branch.

Read from the text, not the syntax tree: tree-sitter nests ``#if`` groups only where they wrap
whole declarations or statements, and ported code splits statements across branches all the time.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

DIRECTIVE = re.compile(r"^[ \t]*#[ \t]*(if|ifdef|ifndef|elif|elifdef|elifndef|else|endif)\b(.*)")
OPENERS = ("if", "ifdef", "ifndef")
CONDITIONS = ("elif", "elifdef", "elifndef")


def hip_guarded_lines(lines: list[str], hip_macros: Iterable[str]) -> list[tuple[int, int]]:
    """Line ranges (1-based, inclusive) of every ``#if ... #endif`` group one of whose conditions
    names a HIP macro: the whole group, CUDA ``#else`` branch included, is already ported."""
    mentions_hip = re.compile(r"\b(?:" + "|".join(map(re.escape, hip_macros)) + r")\b")
    regions: list[tuple[int, int]] = []
    # Each open group: [first line, whether a condition of it names a HIP macro].
    open_groups: list[list] = []
    for number, line in enumerate(lines, start=1):
        if "#" not in line:
            continue
        match = DIRECTIVE.match(line)
        if match is None:
            continue
        keyword, rest = match.groups()
        if keyword in OPENERS:
            open_groups.append([number, bool(mentions_hip.search(rest))])
        elif keyword in CONDITIONS and open_groups:
            open_groups[-1][1] |= bool(mentions_hip.search(rest))
        elif keyword == "endif" and open_groups:
            first, hip = open_groups.pop()
            if hip:
                regions.append((first, number))
    for first, hip in open_groups:  # unterminated at end of file
        if hip:
            regions.append((first, len(lines)))
    return sorted(regions)


def in_regions(line: int, regions: list[tuple[int, int]]) -> bool:
    return any(first <= line <= last for first, last in regions)

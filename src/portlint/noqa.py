"""``--add-noqa``: a suppression comment on the line of every current finding.

Python gets ``# noqa: CODE`` (merged into an existing ``# noqa: ...`` list), C and C++ get
``// NOLINT(portlint-CODE)`` (merged into an existing ``NOLINT(...)``). The comment goes on the
finding's first line, or its last when the first cannot hold one (it continues a string or ends
in a backslash); findings where neither can are skipped and counted.
"""

from __future__ import annotations

import io
import tokenize
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from portlint.fix import apply_edits
from portlint.languages import language_by_suffix
from portlint.model import Edit, Finding, SourceFile, Span
from portlint.suppress import NOLINT, NOQA
from portlint.textindex import LineIndex

#: Findings about portlint's input or its comments: a noqa would only hide a problem to fix.
NOT_SUPPRESSED = frozenset({"PRT001", "PRT002", "PRT003"})


@dataclass(frozen=True)
class NoqaResult:
    text: str
    added: int
    skipped: int


def comment_style(path: str) -> str | None:
    """``"python"`` (``# noqa``), ``"c"`` (``// NOLINT``), or None: no directive for this file."""
    language = language_by_suffix(Path(path).suffix)
    if language is None:
        return None
    return "python" if language.comment == "#" else "c"


def python_uncommentable_lines(text: str) -> set[int]:
    """Lines a comment cannot be appended to: inside a multi-line token, or continued by ``\\``."""
    blocked: set[int] = set()
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.start[0] < token.end[0] and token.type not in (tokenize.NEWLINE, tokenize.NL):
                blocked.update(range(token.start[0], token.end[0]))
    except (tokenize.TokenError, SyntaxError):
        pass
    return blocked


def _codes_by_line(
    findings: Iterable[Finding], can_comment: Callable[[int], bool]
) -> tuple[dict[int, set[str]], int]:
    wanted: dict[int, set[str]] = {}
    skipped = 0
    for finding in findings:
        if finding.code in NOT_SUPPRESSED:
            continue
        for line in (finding.span.line, finding.span.end_line):
            if can_comment(line):
                wanted.setdefault(line, set()).add(finding.code)
                break
        else:
            skipped += 1
    return wanted, skipped


def python_comment_edit(number: int, line: str, codes: set[str]) -> Edit:
    existing = NOQA.search(line)
    if existing and existing.group("codes"):
        listed = [c.strip().upper() for c in existing.group("codes").split(",")]
        merged = listed + sorted(codes - set(listed))
        span = Span(number, existing.start(), number, existing.end())
        return Edit(span, f"# noqa: {', '.join(merged)}")
    end = len(line.rstrip())
    return Edit(Span(number, end, number, len(line)), f"  # noqa: {', '.join(sorted(codes))}")


def c_comment_edit(number: int, line: str, codes: set[str]) -> Edit:
    names = [f"portlint-{code}" for code in sorted(codes)]
    existing = next((m for m in NOLINT.finditer(line) if "portlint-" in m.group("codes")), None)
    if existing:
        inner = existing.start("codes"), existing.end("codes")
        listed = [item.strip() for item in existing.group("codes").split(",") if item.strip()]
        merged = listed + [n for n in names if n not in listed]
        return Edit(Span(number, inner[0], number, inner[1]), ", ".join(merged))
    stripped = line.rstrip()
    if stripped.endswith("\\"):  # a macro continues: a // comment would swallow the backslash
        at = len(stripped) - 1
        return Edit(Span(number, at, number, at), f"/* NOLINT({', '.join(names)}) */ ")
    end = len(stripped)
    return Edit(Span(number, end, number, len(line)), f"  // NOLINT({', '.join(names)})")


def add_noqa(source: SourceFile, findings: Iterable[Finding]) -> NoqaResult:
    style = comment_style(source.path)
    if style is None:
        return NoqaResult(source.text, 0, 0)
    index = LineIndex(source.text)
    if style == "python":
        blocked = python_uncommentable_lines(source.text)

        def can_comment(line: int) -> bool:
            return line not in blocked and not index.line(line).rstrip().endswith("\\")

        make = python_comment_edit
    else:  # C and C++ take a block comment before a macro's trailing backslash
        can_comment, make = (lambda line: True), c_comment_edit
    wanted, skipped = _codes_by_line(findings, can_comment)
    edits = [make(line, index.line(line), codes) for line, codes in sorted(wanted.items())]
    return NoqaResult(apply_edits(source.text, edits), len(edits), skipped)

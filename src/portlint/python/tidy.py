"""After fixes: drop the torch.cuda imports the fixes made unused, and check the result parses."""

from __future__ import annotations

import ast
import re

from portlint.textindex import LINE_BREAK

CUDA_MODULES = re.compile(r"^torch\.cuda(\.|$)")


def syntax_error(text: str) -> str | None:
    """None when ``text`` parses, else the parser's complaint."""
    try:
        ast.parse(text)
    except SyntaxError as error:
        return f"line {error.lineno}: {error.msg}"
    return None


def _cuda_import_aliases(tree: ast.Module) -> dict[str, ast.ImportFrom]:
    """Local names bound by ``from torch.cuda... import X`` or ``from torch import cuda``."""
    found = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                if CUDA_MODULES.match(node.module) or (
                    node.module == "torch" and alias.name == "cuda"
                ):
                    found[alias.asname or alias.name] = node
    return found


def _used_names(tree: ast.Module) -> set[str]:
    return {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}


def tidy_after_fix(original: str, fixed: str) -> str:
    """Remove torch.cuda imports that the original used and the fixed text no longer does."""
    try:
        before, after = ast.parse(original), ast.parse(fixed)
    except SyntaxError:
        return fixed
    used_before, used_after = _used_names(before), _used_names(after)
    unused: dict[ast.ImportFrom, set[str]] = {}
    for name, statement in _cuda_import_aliases(after).items():
        if name in used_before and name not in used_after:
            unused.setdefault(statement, set()).add(name)
    if not unused:
        return fixed
    lines = LINE_BREAK.split(fixed)
    endings = [m.group(0) for m in LINE_BREAK.finditer(fixed)] + [""]
    # Bottom-up, so earlier line numbers stay valid.
    for statement in sorted(unused, key=lambda s: s.lineno, reverse=True):
        _drop_aliases(statement, unused[statement], lines, endings)
    return "".join(line + ending for line, ending in zip(lines, endings, strict=True))


def _drop_aliases(statement: ast.ImportFrom, names: set[str], lines, endings) -> None:
    first, last = statement.lineno - 1, (statement.end_lineno or statement.lineno) - 1
    prefix = lines[first][: statement.col_offset]
    suffix = lines[last][statement.end_col_offset :]
    if prefix.strip() or suffix.strip():
        return  # shares its line with other code: leave it
    kept = [a for a in statement.names if (a.asname or a.name) not in names]
    if not kept:
        del lines[first : last + 1]
        del endings[first : last + 1]
        return
    if first != last:
        return  # a parenthesised multi-line import: rewriting it could lose comments
    rendered = ", ".join(a.name + (f" as {a.asname}" if a.asname else "") for a in kept)
    lines[first] = f"{prefix}from {statement.module} import {rendered}"

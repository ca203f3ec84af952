"""Parsing only the statements of a module that the analysis can look at.

Most of a file that mentions CUDA is functions, classes and methods that do not: the walk skips
them (``relevance``), but ``ast.parse`` builds them, and the fix builder's map of parents walks
them. Here the module's text is cut into top-level statements without a parse (a line at
column 0 that starts a statement; decorators go with the definition after them), and the body
of each class that is kept into its members the same way. Only what the analysis can read is
parsed, in one ``ast.parse`` of the text with the rest blanked out (a member left out leaves a
``pass``), so that every line and column stays where it is.

A definition that is not parsed becomes a stand-in: a definition of the same kind and name,
with no body, on the same lines. Whole-module facts read it as they read the real one
(``module_functions``, the fix builder's names and insertion point, backend detection), and the
walk skips it as it would skip the real one. What decides that a definition may stay unparsed:

- none of its lines holds a candidate word (nor an import line);
- it is no class named for a vendor, and no decorator in it holds a string whose value is a
  vendor word: backend detection reads those (``backends.find_backends``);
- if the walk reaches a stand-in after all (its lines name a device value found earlier in the
  file: a flow name), the definition is parsed then and the stand-in becomes it (``fill``).

Nothing else changes a finding, and a file parses sliced only when that is sure:

- every slice left out must end where a statement can start (``_complete``: its strings and
  brackets close, and it ends with no backslash), read by one regular expression for strings
  and comments and by counting brackets; a definition that expression may misread (a string
  it cannot close, a PEP 701 f-string) is parsed, not left out. The slices parsed are checked
  by the parser itself: a cut inside a string, inside brackets or after a backslash leaves a
  statement that does not parse or does not end in its slice, and the file parses whole;
- each parsed statement must lie within its slice;
- an ``if`` or ``while`` (in the module or a class body) that could make the analysis read
  the statements around it (an early ``raise``, a ``not`` in its test, ``if name is None:``)
  falls back too;
- facts that walk the whole tree (``whole``) parse the whole text when asked.

Syntax errors are reported where the analysis reads: a slice that is parsed and does not
parse makes the file parse whole, which reports it (PRT001) as it always did; an error in a
definition left out, which holds no candidate word, is not looked for, as in a file with no
candidate word at all, which is never parsed.

What it saves, measured on the transformers tree (``benchmarks/README.md``): the nodes of the
definitions left out (about 70% of the lines) are not built, mapped or freed, and checking a
slice left out costs about a seventh of what the compiler's front end (``symtable``) did.
"""

from __future__ import annotations

import ast
import itertools
import re
from collections.abc import Mapping, Set
from dataclasses import dataclass

from portlint.python.backends import vendor_of
from portlint.python.relevance import Relevance
from portlint.python.tree import TERMINATORS

#: First characters of a line at column 0 that cannot start a top-level statement (blank lines,
#: comments, indented lines, closing brackets, a continued line).
NOT_A_START = frozenset(" \t\f\v#)]}\\")
#: Clauses that continue the statement above them.
CONTINUATION = re.compile(r"(?:else|elif|except|finally)\b")
#: The first line of a function or class definition, with an ASCII name (the parser normalises
#: other names, so the text would not say the name the tree holds).
HEADER = re.compile(r"(?:(async)[ \t]+)?(def|class)[ \t]+([A-Za-z_][A-Za-z0-9_]*)[ \t]*[(:\[]")
#: The keyword of a definition, and what may stand before it on its line.
DEFINITION_WORD = re.compile(r"(?:def|class)\b")
BEFORE_DEFINITION = re.compile(r"[ \t]*(?:async[ \t]+)?")


@dataclass(frozen=True)
class Slice:
    """Lines ``first``..``last`` (1-based) of a module: one or more whole top-level statements,
    with the comments and blank lines after them."""

    first: int
    last: int
    #: ``def``, ``async def`` or ``class`` when the slice is one definition, else "".
    kind: str = ""
    name: str = ""
    #: The last line of the definition itself (the slice less trailing comments).
    end: int = 0
    #: The line of its ``def`` or ``class`` keyword (after the decorators).
    header: int = 0


def split(lines: list[str]) -> list[Slice]:
    """The top-level statements of a module's lines (``LINE_BREAK.split`` of its text).

    A cut goes before a line at column 0 that can start a statement, unless it is in doubt: the
    text since the last cut has unbalanced brackets or an odd count of triple quotes, or the
    line before ends with a backslash. Lines before the first statement are a slice of their
    own. A cut in doubt is not made: the slices around it stay one."""
    starts = [
        number
        for number, line in enumerate(lines, 1)
        if line
        and line[0] not in NOT_A_START
        and not (line[0] in "ef" and CONTINUATION.match(line))
    ]
    if not starts or starts[0] != 1:
        starts.insert(0, 1)
    starts.append(len(lines) + 1)
    found: list[Slice] = []
    first = header = 0
    parts: list[str] = []
    doubted = decorated = continued = False
    for start, following in itertools.pairwise(starts):
        line = lines[start - 1]
        if not parts:
            first, header, doubted, decorated = start, start, False, line.startswith("@")
        elif decorated and not continued and not line.startswith("@"):
            header, decorated = start, False  # the definition the decorators belong to
        parts.append("\n".join(lines[start - 1 : following - 1]))
        if "\n\f" in parts[-1]:
            doubted = True  # after a form feed, a line is at column 0: another statement?
        continued = False
        if following <= len(lines):
            if lines[following - 2].endswith("\\") or not _closed(parts):
                doubted = continued = True  # the cut before ``following`` is in doubt
                continue
            if decorated:
                continue
        found.append(_slice(lines, first, following - 1, 0 if doubted else header))
        parts = []
    return found


#: Strings and comments, whose brackets do not count, as the tokenizer reads them from a
#: statement boundary: a backslash escapes what follows it (in a raw string too), three quotes
#: always open a triple-quoted string (never an empty string and a quote), and a string in one
#: quote ends on its line unless a backslash continues it. Any prefix: its letters are read as
#: a name before the string.
STRING_OR_COMMENT = re.compile(
    r'''"""[^"\\]*(?:(?:\\[\s\S]|"(?!""))[^"\\]*)*"""'''
    r"""|'''[^'\\]*(?:(?:\\[\s\S]|'(?!''))[^'\\]*)*'''"""
    r'''|"(?!"")[^"\\\n]*(?:\\[\s\S][^"\\\n]*)*"'''
    r"""|'(?!'')[^'\\\n]*(?:\\[\s\S][^'\\\n]*)*'"""
    r"|#[^\n]*"
)


def _closed(parts: list[str]) -> bool:
    """The text ends outside brackets and triple-quoted strings, as far as counting tells."""
    text = parts[0] if len(parts) == 1 else "\n".join(parts)
    if text.count('"""') % 2 or text.count("'''") % 2:
        return False
    if _balance(text) == 0:
        return True
    return _balance(STRING_OR_COMMENT.sub("", text)) == 0


def _balance(text: str) -> int:
    opened = text.count("(") + text.count("[") + text.count("{")
    return opened - text.count(")") - text.count("]") - text.count("}")


def _slice(lines: list[str], first: int, last: int, header: int) -> Slice:
    """Lines ``first``..``last``; a definition when line ``header`` starts one (0: not one)."""
    match = HEADER.match(lines[header - 1]) if header else None
    if match is None:
        return Slice(first, last)
    kind = "async def" if match.group(1) else match.group(2)
    end = last
    # Trailing comments and blank lines are not part of the definition. A comment line with a
    # quote could end a string: it stays.
    while end > header and _is_comment_or_blank(lines[end - 1]):
        end -= 1
    return Slice(first, last, kind, match.group(3), end, header)


def _is_comment_or_blank(line: str) -> bool:
    stripped = line.lstrip(" \t\f")
    if not stripped:
        return True
    return stripped.startswith("#") and '"' not in stripped and "'" not in stripped


def parse(
    text: str, path: str, relevance: Relevance, words: Mapping[str, str], sliced: bool = True
) -> tuple[ast.Module, list[ast.stmt]]:
    """The module, and the stand-ins of the definitions left unparsed (none when it was parsed
    whole). Raises what ``ast.parse`` raises for the whole text.

    ``relevance``: the file's candidate lines; ``words``: vendor words
    (``backends.vendor_words``); ``sliced``: False to parse the whole text (from the same
    depth of calls, so that the limit on nesting is the same)."""
    if not sliced or "barry_as_FLUFL" in text:  # a future import that changes the grammar
        return _whole(text, path), []
    lines = relevance.lines

    def may_leave_out(piece: Slice) -> bool:
        return (
            bool(piece.kind)
            and not relevance.has_candidate(piece.first, piece.last)
            and not (piece.kind == "class" and vendor_of(piece.name, words) is not None)
            and not _may_register(lines, piece, words)
            and _complete(_text(lines, piece))  # else it is parsed, which checks it
        )

    pieces = split(lines)
    left_out = {piece.first for piece in pieces if may_leave_out(piece)}
    classes = {}
    for piece in pieces:
        if piece.kind == "class" and piece.first not in left_out:
            members = _members(lines, piece)
            if members is not None:
                out = {member.first for member in members.pieces if may_leave_out(member)}
                if out:
                    classes[piece.first] = Members(members.indent, members.pieces, out)
    if not left_out and not classes:
        return _whole(text, path), []
    sliced_tree = _sliced(text, path, lines, Members("", pieces, left_out), classes)
    if sliced_tree is None:
        return _whole(text, path), []
    return sliced_tree


def _whole(text: str, path: str) -> ast.Module:
    return ast.parse(text, filename=path)


def whole(tree: ast.Module) -> ast.Module:
    """The module with every statement parsed: ``tree`` itself, or a parse of the whole text
    when ``tree`` was parsed in slices (for a fact that walks every node, asked rarely)."""
    text = getattr(tree, "portlint_text", None)
    return tree if text is None else ast.parse(text)


def _text(lines: list[str], piece: Slice) -> str:
    return "\n".join(lines[piece.first - 1 : piece.last])


def _may_register(lines: list[str], piece: Slice, words: Mapping[str, str]) -> bool:
    """A decorator in the definition could register it for a device type
    (``@register("cuda")``): it holds a string, or strings written one after the other, whose
    value is a vendor word. A decorator with a backslash or a comment is in doubt."""
    text = _text(lines, piece)
    if "@" not in text:
        return False
    for decorator in _decorators(text):
        if '"' not in decorator and "'" not in decorator:
            continue
        if "\\" in decorator or "#" in decorator:
            return True
        for run in STRING_RUN.finditer(decorator):
            pieces = [_value(match) for match in STRING_PIECE.finditer(run.group())]
            values = ["".join(pieces), *pieces]
            if any(value.lower() in words for value in values):
                return True
    return False


def _decorators(text: str) -> list[str]:
    """Each decorator in ``text``: from an ``@`` that starts a line to the definition after
    it (or the end). Found from literal text: a line-start expression would be tried at every
    position."""
    found = []
    at = text.find("@")
    while at >= 0:
        if not text[text.rfind("\n", 0, at) + 1 : at].strip(" \t"):
            found.append(text[at : _next_definition(text, at)])
        at = text.find("@", at + 1)
    return found


def _next_definition(text: str, start: int) -> int | None:
    """Where the first ``def`` or ``class`` keyword after ``start`` that begins a line's code
    (after an ``async``) is; None if there is none. A decorator's definition is nearly always
    on the next line, so this reads only that far."""
    for match in DEFINITION_WORD.finditer(text, start):
        line_start = text.rfind("\n", 0, match.start()) + 1
        if BEFORE_DEFINITION.fullmatch(text, line_start, match.start()):
            return match.start()
    return None


#: The text of a string literal, without prefix or quotes.
STRING_PIECE = re.compile(
    r'''[A-Za-z]{0,2}(?:"""([\s\S]*?)"""|\'\'\'([\s\S]*?)\'\'\'|"([^"\n]*)"|'([^'\n]*)')'''
)


def _value(piece: re.Match[str]) -> str:
    return next(text for text in piece.groups() if text is not None)


#: String literals written one after the other (one value).
STRING_RUN = re.compile(rf"(?:(?:{STRING_PIECE.pattern})\s*)+")


@dataclass(frozen=True)
class Members:
    """The statements of a module, or of a class body (lines indented by ``indent``), and the
    first lines of those left out."""

    indent: str
    pieces: list[Slice]
    left_out: Set[int] = frozenset()


def _members(lines: list[str], piece: Slice) -> Members | None:
    """The statements of a class's body, cut as ``split`` cuts a module; None where the body
    does not start on the line after the ``class ...:`` header (``_header_end``)."""
    end = _header_end(lines, piece.header, piece.last)
    if end is None:
        return None
    body = lines[end : piece.last]
    indent = ""
    for line in body:
        code = line.lstrip(" \t")
        if code and not code.startswith(("#", "\f")):
            indent = line[: len(line) - len(code)]
            break
    if not indent:
        return None
    dedented = [
        line[len(indent) :] if line.startswith(indent) else (" " + line if line.strip() else "")
        for line in body
    ]
    shift = end
    return Members(
        indent,
        [
            Slice(
                inner.first + shift,
                inner.last + shift,
                inner.kind,
                inner.name,
                inner.end + shift if inner.kind else 0,
                inner.header + shift if inner.kind else 0,
            )
            for inner in split(dedented)
        ],
    )


def _header_end(lines: list[str], header: int, last: int) -> int | None:
    """The line on which the class header that starts on line ``header`` ends, with its ``:``
    last on the line: the first line where the brackets opened on the ``class`` line close
    (``):``). None when that is in doubt: a comment in the header, or, in a header of several
    lines, a string or a backslash (the brackets counted might not be the ones the tokenizer
    reads)."""
    text = lines[header - 1]
    balance = _balance(text)
    if balance > 0 and not any(mark in text for mark in "#\"'\\"):
        for end in range(header + 1, last + 1):
            line = lines[end - 1]
            if any(mark in line for mark in "#\"'\\"):
                return None
            balance += _balance(line)
            if balance <= 0:
                text = line
                header = end
                break
    if "#" in text or balance or not text.rstrip().endswith(":"):
        return None
    return header


def _sliced(
    text: str, path: str, lines: list[str], module: Members, classes: dict[int, Members]
) -> tuple[ast.Module, list[ast.stmt]] | None:
    """The module parsed in slices and its stand-ins, or None where that is not sure to give
    the same tree."""
    parts = []
    for piece in module.pieces:
        if piece.first in module.left_out:
            parts.append("\n" * (piece.last - piece.first))
        elif piece.first in classes:
            parts.append(_masked_class(lines, piece, classes[piece.first]))
        else:
            parts.append(_text(lines, piece))
    try:
        parsed = ast.parse("\n".join(parts), filename=path)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None  # the whole parse says what is wrong
    stubs: list[ast.stmt] = []
    body = _with_stubs(parsed.body, lines, module, stubs, classes)
    if body is None:
        return None
    parsed.body = body
    parsed.portlint_text = text
    return parsed, stubs


def _masked_class(lines: list[str], piece: Slice, members: Members) -> str:
    """The class's text with each member left out replaced by ``pass`` on its first line (the
    body must keep a statement) and blank lines."""
    out = lines[piece.first - 1 : piece.last]
    for member in members.pieces:
        if member.first in members.left_out:
            out[member.first - piece.first] = members.indent + "pass"
            for number in range(member.first + 1, member.last + 1):
                out[number - piece.first] = ""
    return "\n".join(out)


def _complete(text: str) -> bool:
    """``text``, read from a statement boundary, ends at one: every string literal and bracket
    in it closes, and its last line of code does not end with a backslash. The text is read as
    the tokenizer reads it, in one pass of a regular expression: strings (any prefix, one or
    three quotes of either kind) and comments are blanked out, then brackets are counted. What
    the expression does not read as the tokenizer would is refused: a quote left over (a string
    that does not close on its line or at all), and an f-string or t-string with the quote that
    opened it inside a replacement field (PEP 701), whose end the expression would misplace.

    A syntax error is not looked for: a definition left out with one is not reported
    (``tests/test_python_slices.py``)."""
    code = STRING_OR_COMMENT.sub("_", text)
    if '"' in code or "'" in code or code.rstrip().endswith("\\"):
        return False
    if code.count("(") != code.count(")") or code.count("[") != code.count("]"):
        return False
    if code.count("{") != code.count("}"):
        return False
    if "{" not in text:
        return True  # no replacement field
    folded = text.lower()
    return not any(expression.search(folded) for expression in NESTED_QUOTE)


#: An f-string or t-string (any prefix, in lower case) whose replacement field holds the quote
#: that opened it: Python 3.12's tokenizer reads it as one string (PEP 701), the expression
#: above as two. Matched loosely, from such a prefix to a ``{`` and the same quote before a
#: ``}`` on the line: what they find by mistake only makes the file parse whole. Each starts
#: with a letter, which the engine finds fast.
NESTED_QUOTE = [
    re.compile(rf"""{prefix}(["'])[^\n]*?\{{[^}}\n]*?\1""")
    for prefix in ("f", r"t(?<![^\Wr]t)", "r(?<=[ft]r)")
]


def _with_stubs(
    parsed: list[ast.stmt],
    lines: list[str],
    members: Members,
    stubs: list[ast.stmt],
    classes: dict[int, Members] | None = None,
) -> list[ast.stmt] | None:
    """The parsed statements of a module or class body with a stand-in for each definition
    left out, in line order (in a class body, in place of its ``pass``); None when a statement
    does not lie within its slice, or reads the statements around it."""
    body: list[ast.stmt] = []
    position = 0
    for piece in members.pieces:
        if piece.first in members.left_out:
            if members.indent:
                if position == len(parsed) or not _is_pass_at(parsed[position], piece.first):
                    return None
                position += 1
            stub = _stub(lines, piece, members.indent)
            stubs.append(stub)
            body.append(stub)
            continue
        inside = []
        while position < len(parsed) and first_line(parsed[position]) <= piece.last:
            statement = parsed[position]
            if (statement.end_lineno or statement.lineno) > piece.last:
                return None
            if _reads_neighbours(statement):
                return None
            inside.append(statement)
            position += 1
        starts_here = bool(inside) and first_line(inside[0]) == piece.first
        if not starts_here and (inside or piece is not members.pieces[0]):
            return None  # a cut that is not where a statement starts
        if classes and piece.first in classes:
            if len(inside) != 1 or not isinstance(inside[0], ast.ClassDef):
                return None
            inner = _with_stubs(inside[0].body, lines, classes[piece.first], stubs)
            if inner is None:
                return None
            inside[0].body = inner
        body += inside
    return body if position == len(parsed) else None


def _is_pass_at(statement: ast.stmt, line: int) -> bool:
    return isinstance(statement, ast.Pass) and statement.lineno == statement.end_lineno == line


def first_line(statement: ast.stmt) -> int:
    decorators = getattr(statement, "decorator_list", None)
    if decorators:
        return min(statement.lineno, *(d.lineno for d in decorators))
    return statement.lineno


def _reads_neighbours(statement: ast.stmt) -> bool:
    """An ``if`` or ``while`` whose analysis reads other statements of its block: an early exit
    (what follows it is its other branch), ``if name is None:`` (what sets ``name`` before it),
    or a negated test (the fix builder reads what follows it)."""
    if not isinstance(statement, ast.If | ast.While):
        return False
    negated = (
        isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not)
        for node in ast.walk(statement.test)
    )
    if any(negated):
        return True
    if not isinstance(statement, ast.If) or statement.orelse:
        return False
    test = statement.test
    unset = (
        isinstance(test, ast.Compare)
        and isinstance(test.left, ast.Name)
        and isinstance(test.ops[0], ast.Is)
    )
    return unset or isinstance(statement.body[-1], TERMINATORS)


EMPTY_ARGUMENTS = dict(
    posonlyargs=[], args=[], vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[]
)


def _stub(lines: list[str], piece: Slice, indent: str) -> ast.stmt:
    """A definition of the slice's kind and name, with nothing in it, on the slice's lines."""
    if piece.kind == "class":
        node: ast.stmt = ast.ClassDef(
            name=piece.name, bases=[], keywords=[], body=[], decorator_list=[]
        )
    else:
        kind = ast.AsyncFunctionDef if piece.kind == "async def" else ast.FunctionDef
        node = kind(
            name=piece.name,
            args=ast.arguments(**EMPTY_ARGUMENTS),
            body=[],
            decorator_list=[],
            returns=None,
            type_comment=None,
        )
    node.lineno, node.col_offset = piece.first, len(indent)
    node.end_lineno, node.end_col_offset = piece.end, len(indent)
    node.portlint_stub = (lines, piece, indent)
    return node


def is_stub(node: ast.AST) -> bool:
    """``node`` stands in for a definition that is not parsed (yet)."""
    return hasattr(node, "portlint_stub")


def fill(stub: ast.stmt) -> bool:
    """Parse the definition ``stub`` stands in for, and make ``stub`` that definition (same
    object, every field of the parsed one), for a walk that reaches it after all. False if the
    slice does not parse as that one definition."""
    lines, piece, indent = stub.portlint_stub
    # blank lines keep the line numbers; a member of a class is parsed in a class
    wrapper = "\n" * (piece.first - 2) + "class _:\n" if indent else "\n" * (piece.first - 1)
    try:
        parsed = ast.parse(wrapper + _text(lines, piece)).body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    if indent:
        parsed = parsed[0].body
    if len(parsed) != 1 or type(parsed[0]) is not type(stub):
        return False
    if parsed[0].name != stub.name:
        return False
    del stub.portlint_stub
    vars(stub).update(vars(parsed[0]))
    return True

"""Modules that refuse some targets when they load.

A module whose top level raises on a target cannot be imported there, and neither can any module
that loads it (convention 10 of the precision benchmark's labelling guide: a code path a project
refuses at import time is no site beyond the refusal). Two unindented forms are read:

- an ``if`` chain whose last arm is an ``else`` that raises (``if torch.version.cuda: ... elif
  torch.version.hip: ... else: raise RuntimeError("Unsupported platform")``): every target that
  no earlier arm's test can hold on is refused;
- an ``if`` with no other arm whose body raises, or an ``assert`` (``if not
  torch.cuda.is_available(): raise ...``, ``assert torch.cuda.is_available()``): the targets on
  which the test surely holds (fails, for an ``assert``) are refused.

A call that raises without CUDA at the top level (``if torch.cuda.get_device_capability(0) ==
(8, 9):``) is no refusal: it is the first site of a module whose other sites are ported with it,
not a choice of the targets the project runs on.

A test is read only when every part of it is known (rules/device.toml
``[backend.import_refusals]``): a name of a target's own API (``torch.xpu.is_available()``; the
``markers`` of rules/targets.toml), a test that holds on no target (``torch.version.cuda``), a
predicate named for a vendor (``is_hip()``, ``is_npu_available()``), and ``not``, ``and``,
``or``, ``is None`` and ``is not None`` of those. A predicate named for CUDA may hold on ROCm,
whose PyTorch answers CUDA's questions: it is read as holding there, which refuses ROCm nowhere.
Anything else (a flag, ``hasattr``, a version compare) leaves the statement unread: nothing is
refused.

The refusing module's own sites stay where they are (the refusal is one of them); the modules
that load it are ``package_loads.unloadable`` for the refused targets. Like the rest of the
facts of a file this is read from its text: only a statement that starts a line is unindented,
and only a chain with an indented ``raise`` is parsed.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, NamedTuple

from portlint.python.backend_packages import catalogue_words
from portlint.python.backends import WORD
from portlint.python.package_loads import inside_spans, long_strings, top_imports

if TYPE_CHECKING:
    from portlint.catalog import Catalog

#: The first bytes of a line that goes on an unindented statement (indented, a comment, an empty
#: line, a closing bracket).
CONTINUING = frozenset({b" ", b"\t", b"#", b"\n", b"\r", b")", b"]", b"}", b""})
#: The start of an arm of an unindented ``if`` chain.
CHAIN_HEAD = re.compile(rb"(?:if|elif)\b|else[ \t]*:")
#: An indented ``raise`` statement.
INDENTED_RAISE = re.compile(rb"^[ \t]+raise\b", re.MULTILINE)
#: An unindented statement that may refuse (an ``if`` chain or an ``assert``), after the newline
#: before it (the text is searched with one put before its first line).
STATEMENT_HEAD = re.compile(rb"\n(if|assert)\b")
#: How many lines an unindented ``assert`` may span.
ASSERT_LINES = 8
#: Words of a function's name that make it a predicate (``is_hip``, ``npu_available``).
PREDICATE_WORDS = frozenset({"is", "has", "available"})


class Tests(NamedTuple):
    """What the catalogue says of the tests a refusal is read from."""

    #: Target -> the dotted names whose use in a test holds exactly on that target (its
    #: ``markers``: ``torch.xpu``, ``torch.cuda.is_available`` for ROCm).
    markers: Mapping[str, tuple[str, ...]]
    #: Dotted names of tests that hold on no target (``torch.version.cuda``).
    nowhere: tuple[str, ...]
    #: Lower-case word -> the vendor it names (``[backend.vendors]``: ``hip`` -> rocm).
    words: Mapping[str, str]
    #: Every target.
    targets: frozenset[str]


def catalogue_tests(catalog: Catalog, targets: Iterable[str]) -> Tests:
    """The ``Tests`` of the catalogue, for ``targets``."""
    table = catalog.table("device").get("backend", {}).get("import_refusals", {})
    markers = {
        target: tuple(row.get("markers", ())) for target, row in catalog.target_facts().items()
    }
    nowhere = tuple(table.get("nowhere", ()))
    return Tests(markers, nowhere, catalogue_words(), frozenset(targets))


def refused_targets(raw: bytes, tests: Tests) -> list[str]:
    """The targets the module's top level refuses when it loads (sorted), or none."""
    return refusal_facts(raw, tests)[0]


def refusal_facts(raw: bytes, tests: Tests) -> list[list[str]]:
    """[the targets the module's top level refuses when it loads (sorted), the modules its
    unindented imports before the first refusing statement may load
    (``package_loads.top_imports``)]: what those load is reached before the refusal."""
    if b"raise" not in raw and b"assert" not in raw:
        return [[], []]
    refused: set[str] = set()
    first: int | None = None
    for start, statement in _candidates(raw):
        found = _refused(statement, tests)
        if found and first is None:
            first = start
        refused |= found
    if first is None:
        return [[], []]
    return [sorted(refused), top_imports(raw[:first])]


def _candidates(raw: bytes) -> Iterable[tuple[int, ast.stmt]]:
    """The unindented ``if`` chains that hold an indented ``raise`` and the unindented
    ``assert`` statements, parsed one by one (a part that does not parse is left out), each
    with the offset of its first line."""
    starts = [match.start(1) - 1 for match in STATEMENT_HEAD.finditer(b"\n" + raw)]
    if not starts:
        return
    strings = long_strings(raw) if b'"""' in raw or b"'''" in raw else []
    for start in starts:
        if strings and inside_spans(start, strings):
            continue  # an example in a docstring
        lines = _lines_from(raw, start)
        if raw.startswith(b"assert", start):
            for end in range(1, min(ASSERT_LINES, len(lines)) + 1):
                statement = _parsed(b"".join(lines[:end]))
                if statement is not None:
                    yield start, statement
                    break
            continue
        end = 1
        while end < len(lines):
            following = lines[end]
            indented = following[:1] in (b" ", b"\t")
            blank = not following.strip() or following.lstrip().startswith(b"#")
            if not (indented or blank or CHAIN_HEAD.match(following)) or following.startswith(
                b"if"
            ):
                break
            end += 1
        text = b"".join(lines[:end])
        if INDENTED_RAISE.search(text):
            statement = _parsed(text)
            if statement is not None:
                yield start, statement


def _lines_from(raw: bytes, start: int) -> list[bytes]:
    """The lines of ``raw`` from ``start`` up to the next unindented line that starts no arm of
    an ``if`` chain (a chain's arms, or an ``assert``'s continuation, are among them)."""
    lines: list[bytes] = []
    position = start
    while position < len(raw):
        newline = raw.find(b"\n", position)
        end = len(raw) if newline < 0 else newline + 1
        line = raw[position:end]
        position = end
        lines.append(line)
        if len(lines) > 1 and line[:1] not in CONTINUING and _ends_chain(line):
            break  # the line that ends it is kept, for the caller's loop to stop at
    return lines


def _ends_chain(line: bytes) -> bool:
    return not CHAIN_HEAD.match(line) or line.startswith(b"if")


def _parsed(text: bytes) -> ast.stmt | None:
    try:
        body = ast.parse(text).body
    except (SyntaxError, ValueError):
        return None
    return body[0] if len(body) == 1 and isinstance(body[0], ast.If | ast.Assert) else None


def _refused(statement: ast.stmt, tests: Tests) -> set[str]:
    if isinstance(statement, ast.Assert):
        holds = _holds(statement.test, tests)
        return set() if holds is None else set(tests.targets - holds)
    assert isinstance(statement, ast.If)
    arms: list[tuple[ast.expr | None, list[ast.stmt]]] = []
    current: ast.If | None = statement
    while current is not None:
        arms.append((current.test, current.body))
        rest = current.orelse
        if len(rest) == 1 and isinstance(rest[0], ast.If):
            current = rest[0]
        else:
            if rest:
                arms.append((None, rest))
            current = None
    raising = [i for i, (_, body) in enumerate(arms) if isinstance(body[-1], ast.Raise)]
    if len(arms) == 1 and raising == [0]:  # ``if not torch.cuda.is_available(): raise``
        holds = _holds(arms[0][0], tests)
        return set() if holds is None else set(holds)
    if raising != [len(arms) - 1] or arms[-1][0] is not None:
        return set()  # only a chain whose final ``else`` alone raises
    taken: set[str] = set()
    for test, _ in arms[:-1]:
        holds = _holds(test, tests)
        if holds is None:
            return set()
        taken |= holds
    return set(tests.targets) - taken


def _holds(test: ast.expr | None, tests: Tests) -> frozenset[str] | None:
    """The targets on which ``test`` holds, or None where a part of it is not known."""
    if test is None:
        return None
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = _holds(test.operand, tests)
        return None if inner is None else tests.targets - inner
    if isinstance(test, ast.BoolOp):
        parts = [_holds(value, tests) for value in test.values]
        if any(part is None for part in parts):
            return None
        known = [part for part in parts if part is not None]
        if isinstance(test.op, ast.And):
            return frozenset.intersection(*known)
        return frozenset.union(*known)
    if (
        isinstance(test, ast.Compare)
        and len(test.ops) == 1
        and isinstance(test.ops[0], ast.Is | ast.IsNot)
        and isinstance(test.comparators[0], ast.Constant)
        and test.comparators[0].value is None
    ):
        inner = _holds(test.left, tests)
        if inner is None:
            return None
        return inner if isinstance(test.ops[0], ast.IsNot) else tests.targets - inner
    if isinstance(test, ast.Call) and not test.args and not test.keywords:
        return _named(test.func, tests, call=True)
    if isinstance(test, ast.Attribute):
        return _named(test, tests, call=False)
    return None


def _named(node: ast.expr, tests: Tests, call: bool) -> frozenset[str] | None:
    name = _dotted(node)
    if name is None:
        return None
    if name in tests.nowhere:
        return frozenset()
    marked = frozenset(
        target
        for target, markers in tests.markers.items()
        if any(name == marker or name.startswith(marker + ".") for marker in markers)
    )
    if marked:
        return marked & tests.targets
    if not call:
        return None
    words = [word.lower() for word in WORD.findall(name.rpartition(".")[2])]
    if not PREDICATE_WORDS.intersection(words):
        return None
    vendors = {tests.words[word] for word in words if word in tests.words}
    if len(vendors) != 1:
        return None
    vendor = vendors.pop()
    if vendor == "cuda":
        return frozenset({"rocm"})  # may hold on ROCm, whose PyTorch answers as CUDA
    return frozenset({vendor}) & tests.targets


def _dotted(node: ast.expr) -> str | None:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))

"""Analysing a large C++/CUDA file one part at a time, so that memory follows the part.

Parsed whole, a CUDA file costs about a hundred bytes of tree-sitter tree per byte of text, and
its findings a few hundred bytes each until the file is done. In check mode, a file of more
than a million characters (``part_threshold`` in ``engine.ANALYSERS``) is instead cut into parts
of about ``part_size`` characters, each analysed as a file of its own together with what the
checks read across declarations (its *context*), and its findings are selected, suppressed and
sorted as a file's are, moved back to the file's lines, and kept compressed until the file is
done (``sink.FindingParts``).

A cut goes only at the start of a line where the code before it is complete:

- outside comments, strings, raw strings and preprocessor lines (with their ``\\``
  continuations), outside parentheses, and after a ``;`` or a ``}`` (not one that a ``;`` on
  the next line still continues: ``struct``, ``class``, ``union``, ``enum`` and initialiser
  braces wait for their ``;``), or at the start of a ``namespace`` or ``extern "C"`` block;
- at brace depth 0, inside ``namespace`` and ``extern "C"`` blocks, or directly inside the body
  of a host function: the part is analysed inside the same blocks, opened again before it (a
  function by its head: return type, name, parameters, up to and with its ``{``) and closed
  after it;
- inside a function, only before code that does not continue the statement before it (an
  ``else``, the ``while`` of a ``do``, a ``catch``, an operator), and only in a function whose
  head is surely a host function's (a return type, no CUDA or compiler qualifiers, no
  preprocessor line, no brackets) and whose body holds nothing the checks read across its
  statements (``WHOLE_FUNCTION``: launches, whose block sizes the launch checks look up among
  the function's declarations; compute capabilities, and the variables set from them that the
  arch checks follow through the function) nor device code (``__device__`` lambdas,
  ``__shared__``). Kernels and device functions are never cut: the checks of device code read
  the function whole. What else a check reads of a function is its head (parameters,
  qualifiers), which every part of it gets, or one statement; a local declaration such as
  ``void *p;`` is read by no other statement's check; the lane-mask constants, local ones too,
  are in the context (below);
- inside ``#if`` groups too, which are opened again before the part (the opening directive and
  the branch the cut is in) and closed after it; but never inside a group one of whose
  conditions names a HIP macro (``preprocessor.hip_guarded_lines``: the whole group is already
  ported, whatever part of it a line is in), and never inside the text of a match of a pattern
  the checks search the whole file for.

The context of a part, from the rest of the file, in file order:

- every ``#define`` name (``api_sites.defined_here``: a file that defines a CUDA name itself),
  with its value where it is an integer or a full lane mask (the launch checks' constants,
  ``hazards.INTEGER_CONSTANT``; the lane masks, ``hazards.MASK_CONSTANT``);
- ``const``/``constexpr`` integer constants outside functions, and full lane masks;
- aliases of the ``cooperative_groups`` namespace (``hazards.CG_ALIAS``);
- a declaration of every kernel, with ``__launch_bounds__`` where it has them (the launch
  checks ask whether the launched kernel is declared here, and bounded).

Each of these is about one name, and a part gets those whose name it holds (the checks read
them only for a name they meet). The kernels and the constants outside functions need a
parse: when the file launches kernels or reads a compute capability, each part is parsed once
on its own before the parts are analysed.

What the checks ask of the whole file's text (``Unit.contains``: does the file mention warps,
launches, ``asm``?) is asked of the whole file. The file is analysed whole, the same findings
as any file gets, when parts cannot be sure to hold what the whole parse would: a part
tree-sitter cannot parse without an error (on the whole file, its error recovery may go on past
the cut, over declarations that parse in their own part, and give them other nodes and no
fixes), a brace, parenthesis or ``#if`` group opened in one branch of an ``#if`` and closed in
another (or not at all), a function body cut into whose braces do not pair up outside the
preprocessor lines, a raw string not closed, a conditional directive inside a comment, a
lone carriage return, a variable set from a compute capability that is not local to one
function, or set in two parts (the arch checks follow such a name through the whole file),
fewer than two parts, or a context longer than ``CONTEXT_PARTS`` parts for some part.
``benchmarks/part_equivalence.py --cxx`` compares the two analyses on real files and fixtures
cut into tiny parts.
"""

from __future__ import annotations

import bisect
import functools
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from portlint.catalog import Catalog
from portlint.config import Settings
from portlint.cxx import hazards
from portlint.cxx.arch_arms import arch_tests
from portlint.cxx.preprocessor import (
    CONDITIONS,
    DIRECTIVE,
    OPENERS,
    Branches,
    in_regions,
    read_branches,
)
from portlint.cxx.unit import Unit
from portlint.model import Finding, SourceFile, Span
from portlint.sink import FindingList, FindingParts
from portlint.suppress import file_is_suppressed
from portlint.textindex import split_lines

#: A file is cut into about this many parts, each at least ``SMALLEST_PART`` characters.
PARTS_PER_FILE = 512
SMALLEST_PART = 4096
#: The context of a part may be at most this many parts long; beyond, the file is analysed whole.
CONTEXT_PARTS = 2

#: What the scan of the text stops at: line breaks, comments, strings (raw strings by their
#: opening), character literals (not digit separators), preprocessor lines, braces, parentheses
#: and semicolons. What hides code:
HIDING = r"""(?P<comment>//(?:\\\r?\n|[^\n])*|/\*.*?(?:\*/|\Z))
    |(?P<raw>(?<!\w)(?:u8|[uUL])?R"(?P<delimiter>[^()\\\s"]{0,16})\()
    |(?P<string>"(?:[^"\\\n]|\\.)*")
    |(?P<char>(?<!\w)(?:u8|[uUL])?'(?:[^'\\\n]|\\.)*')
    |(?P<directive>^[ \t]*\#[ \t]*(?P<keyword>\w*))"""
#: (Each pattern first looks ahead for a character a token can start with: the regular
#: expression engine then skips the rest of the text fast.)
TOKEN = re.compile(
    r"""(?=[/"'{}();\nuULR]|^[ \t]*\#)(?:(?P<newline>\n)|""" + HIDING + r"|(?P<code>[{}();]))",
    re.VERBOSE | re.MULTILINE | re.DOTALL,
)
#: Inside a block no cut can go, and only braces count (and what hides them).
BLOCK_TOKEN = re.compile(
    r"""(?=[/"'{}uULR]|^[ \t]*\#)(?:""" + HIDING + r"|(?P<code>[{}]))", TOKEN.flags
)
#: The text before a brace that opens a block a part can be inside of.
SCOPE = re.compile(r'\s*(?:(inline\s+)?namespace(?:\s+([\w:]+))?|extern\s*"(C|C\+\+)")\s*')
#: The text before a brace whose closing brace a ``;`` or a declarator may follow.
TYPE_HEAD = re.compile(r"\b(?:struct|class|union|enum)\b|=\s*$")
#: The text before the brace of a host function's body a part can be inside of: a return type,
#: a name, parameters (no brackets, strings or braces), ``const``/``noexcept``/``override``.
FUNCTION_HEAD = re.compile(
    r"(?:template\s*<[^;{}]*>\s*)?[\w:<>,*& ]*[\w>*&][ *&]+~?[A-Za-z_][\w:~]*\s*"
    r"\([^;{}\[\]\"'#]*\)(?:\s*(?:const|noexcept|override|final)\b)*"
)
#: Words that keep a head from being a host function's (statements, CUDA and compiler
#: qualifiers, types that are not functions, operators).
NOT_FUNCTION = re.compile(
    r"\b(?:if|for|while|switch|catch|return|else|do|case|try|new|delete|sizeof|decltype|"
    r"struct|class|union|enum|namespace|extern|typedef|using|operator|throw|__\w+__)\b"
)
#: What a function body a part is inside of may not hold: what the checks read across its
#: statements (launches and the constants of their block sizes, compute capabilities and the
#: variables set from them) or what makes its code device code.
WHOLE_FUNCTION = re.compile(
    r"<<<|major|minor|ComputeCapability|__global__|__device__|__host__|__shared__|"
    r"__launch_bounds__|__CUDA_ARCH__"
)
#: Code that continues the statement before it (an ``else``, the ``while`` of a ``do``, a
#: ``catch``, or an operator after a lambda's ``}``): no cut goes before it.
CONTINUING = re.compile(r"\s*(?:(?:else|while|catch)\b|[,.?)\]=]|->|:(?!:))")


def _ascii(pattern: re.Pattern[bytes]) -> re.Pattern[str]:
    """A pattern the checks run on the file's bytes, for its text (ASCII classes, as there)."""
    return re.compile(pattern.pattern.decode(), pattern.flags | re.ASCII)


DEFINE = re.compile(r"#[ \t]*define[ \t]+([A-Za-z_]\w*)", re.ASCII)
INTEGER_CONSTANT = _ascii(hazards.INTEGER_CONSTANT)
MASK_CONSTANT = _ascii(hazards.MASK_CONSTANT)
CG_ALIAS = _ascii(hazards.CG_ALIAS)
NAME = re.compile(r"\w+")


def part_size(length: int) -> int:
    return max(SMALLEST_PART, length // PARTS_PER_FILE)


class Unsure(Exception):
    """The file cannot be cut where the cut is sure to keep its findings."""


@dataclass(frozen=True)
class Part:
    """Characters ``start:end`` of the file, from line ``first``, analysed after ``opening``
    (what opens the blocks and ``#if`` groups open at its start, each a text with its first
    line) and before ``closing`` (what closes those open at its end)."""

    start: int
    end: int
    first: int
    opening: tuple[tuple[int, str], ...]
    closing: str
    #: Whether it starts inside a function's body.
    in_function: bool = False


@dataclass(frozen=True)
class Piece:
    """A context line: the text, the line of the file it stands for, and the name it is about
    (a part needs it only when the part holds the name: the checks read it for that name)."""

    line: int
    text: str
    name: str


@dataclass
class _Open:
    """A block or an ``#if`` group open at some place of the scan."""

    kind: str  # "scope", "function", "block" or "if"
    #: To open it again: the text, and its first line; for a group, the branch too.
    text: str = ""
    line: int = 0
    branch: tuple[int, str] | None = None
    #: A block whose closing brace a ``;`` may follow.
    typed: bool = False
    #: A function body: where its brace is, and whether a cut may go inside it (None: not
    #: known yet) and where it ends then.
    brace: int = 0
    cuttable: bool | None = None
    end: int = 0


@dataclass
class _Scan:
    """The state of the scan of a file for its cuts."""

    text: str
    size: int
    forbidden: list[tuple[int, int]]
    opened: list[_Open] = field(default_factory=list)
    parts: list[Part] = field(default_factory=list)
    parens: int = 0
    #: The last code before here: "start", ";", "}", "{" (of a scope) or "other".
    last: str = "start"
    head: int = 0  # where the text before the next brace starts
    start: int = 0  # of the part being scanned
    line: int = 1  # the first line of that part
    directives: int = 0  # conditional directives seen
    blocks: int = 0  # blocks open (no cut inside)
    previous: int = 0  # where the last token ended
    #: What opens around the part being scanned, where it starts.
    opening: tuple[tuple[int, str], ...] = ()
    inside: bool = False  # whether it starts inside a function
    _counted: tuple[int, int] = (0, 1)  # a place and its line

    def around(self) -> tuple[tuple[tuple[int, str], ...], str]:
        """What opens the blocks and groups open here, and what closes them."""
        opening = []
        for block in self.opened:
            opening.append((block.line, block.text))
            if block.branch is not None:
                opening.append(block.branch)
        closing = "".join("#endif\n" if b.kind == "if" else "}\n" for b in reversed(self.opened))
        return tuple(opening), closing

    def cut(self, at: int, around: tuple[tuple[tuple[int, str], ...], str]) -> None:
        """A cut at ``at``, with ``around`` what opens and closes there."""
        self.parts.append(Part(self.start, at, self.line, self.opening, around[1], self.inside))
        self.line += self.text.count("\n", self.start, at)
        self.start = at
        self.opening = around[0]
        self.inside = self.in_function()

    def may_cut(self, at: int) -> bool:
        if at - self.start < self.size or at >= len(self.text) or self.parens:
            return False
        if self.last not in ("start", ";", "}", "{"):
            return False
        if self.blocks:
            return False
        if not self._function_cuttable():
            return False
        index = bisect.bisect_right(self.forbidden, (at, len(self.text))) - 1
        return index < 0 or not self.forbidden[index][0] < at < self.forbidden[index][1]

    def in_function(self) -> bool:
        return any(block.kind == "function" for block in self.opened)

    def _function_cuttable(self) -> bool:
        """Whether a cut may go in the function body open here (True outside functions)."""
        function = next((b for b in self.opened if b.kind == "function"), None)
        if function is None:
            return True
        if function.cuttable is None:
            end = _block_end(self.text, function.brace)
            function.cuttable = end is not None and not WHOLE_FUNCTION.search(
                self.text, function.brace, end
            )
            function.end = end or 0
        return function.cuttable

    def line_of(self, at: int) -> int:
        """The line of a place at or after the last place asked about."""
        counted, line = self._counted
        line += self.text.count("\n", counted, at)
        self._counted = (at, line)
        return line


def cut(
    text: str, size: int, hip_macros: tuple[str, ...], version_macros: tuple[str, ...] = ()
) -> list[Part]:
    """The file's parts (one part: no place to cut it), or ``Unsure``."""
    scan = _Scan(text, size, _forbidden(text, hip_macros, version_macros))
    # A cut after a ``}``, which the next code may still continue (with what opens around it).
    pending: tuple[int, tuple] | None = None
    position = 0
    while True:
        match = (BLOCK_TOKEN if scan.blocks else TOKEN).search(text, position)
        if match is None:
            break
        kind, at, position = match.lastgroup, match.start(), _token_end(text, match)
        if kind == "directive":
            _directive(scan, match["keyword"], at, text[at:position])
            kind, at = "newline", position - 1
        if scan.blocks:
            scan.previous = position
            if kind == "code":
                _code(scan, match.group(), at)
            continue
        start = match.start()
        code_before = start > scan.previous and not text[scan.previous : start].isspace()
        if pending is not None and (code_before or kind in ("raw", "string", "char", "code")):
            continuing = code_before and CONTINUING.match(text, scan.previous, start)
            if not continuing and (code_before or match.group() != ";"):
                scan.cut(*pending)
            pending = None
        scan.previous = position
        if code_before:
            scan.last = "other"
        if kind == "newline":
            if pending is None and scan.may_cut(at + 1):
                if scan.last == "}" or scan.in_function():
                    pending = (at + 1, scan.around())
                else:
                    scan.cut(at + 1, scan.around())
        elif kind == "code":
            _code(scan, match.group(), at)
        elif kind != "comment":
            scan.last = "other"
    if scan.opened or scan.parens:
        raise Unsure
    if scan.directives != sum(1 for _ in _conditionals(text)):
        raise Unsure  # a directive in a comment, which the HIP guards count
    scan.parts.append(Part(scan.start, len(text), scan.line, scan.opening, "", scan.inside))
    return scan.parts


def _token_end(text: str, match: re.Match[str]) -> int:
    """Where a token ends: a raw string after its closing delimiter, a preprocessor line after
    its line break."""
    if match.lastgroup == "raw":
        closing = text.find(")" + match["delimiter"] + '"', match.end())
        if closing < 0:
            raise Unsure
        return closing + len(match["delimiter"]) + 2
    if match.lastgroup == "directive":
        return _directive_end(text, match.start())
    return match.end()


def _directive_end(text: str, at: int) -> int:
    """Where the preprocessor line that starts at ``at`` ends (after its line break), with its
    ``\\`` continuations. Unsure when a block comment in it goes on past its last line."""
    position = at
    while True:
        newline = text.find("\n", position)
        if newline < 0:
            end = len(text)
            break
        position = newline + 1
        if not (text.endswith("\\", at, newline) or text.endswith("\\\r", at, newline)):
            end = position
            break
    if "/*" in text[at:end]:
        for comment in re.finditer(r"//[^\n]*|/\*.*?(?:\*/|\Z)", text[at:end], re.DOTALL):
            if comment.group().startswith("/*") and not comment.group().endswith("*/"):
                raise Unsure
    return end


def _code(scan: _Scan, token: str, at: int) -> None:
    text = scan.text
    if token == "(":
        scan.parens += 1
        scan.last = "other"
    elif token == ")":
        scan.parens -= 1
        if scan.parens < 0:
            raise Unsure
        scan.last = "other"
    elif token == ";":
        scan.last = ";"
        scan.head = at + 1
    elif token == "{":
        head = _without_comments(text[scan.head : at])
        nested = scan.parens or scan.blocks or scan.in_function()
        function = None if nested else _function_head(_without_comments(text[scan.head : at], 0))
        if scan.parens == 0 and not scan.in_function() and SCOPE.fullmatch(head):
            reopen = " ".join(head.split()) + " {\n"
            scan.opened.append(_Open("scope", reopen, scan.line_of(at)))
            scan.last = "{"
        elif function is not None:
            reopen = function + " {\n"
            scan.opened.append(_Open("function", reopen, scan.line_of(at), brace=at))
            scan.last = "{"
        else:
            scan.opened.append(_Open("block", typed=bool(TYPE_HEAD.search(head))))
            scan.blocks += 1
            scan.last = "other"
        scan.head = at + 1
    else:  # "}"
        if not scan.opened or scan.opened[-1].kind == "if":
            raise Unsure
        block = scan.opened.pop()
        if block.kind == "function" and block.cuttable and block.end != at:
            raise Unsure  # its end was found elsewhere (braces in ``#if`` branches)
        scan.blocks -= block.kind == "block"
        scan.last = "other" if block.typed else "}"
        scan.head = at + 1


def _function_head(head: str) -> str | None:
    """The head of a host function's definition without the preprocessor lines before it, or
    None (a head with a preprocessor line inside it, or not surely a function's)."""
    lines = head.split("\n")
    while lines and (not lines[0].strip() or lines[0].lstrip().startswith("#")):
        continued = lines[0].rstrip().endswith("\\")
        lines.pop(0)
        while continued and lines:
            continued = lines.pop(0).rstrip().endswith("\\")
    head = " ".join(" ".join(lines).split())
    if "#" in head or len(head) > 1000 or NOT_FUNCTION.search(head):
        return None
    return head if FUNCTION_HEAD.fullmatch(head) else None


def _block_end(text: str, brace: int) -> int | None:
    """Where the block whose ``{`` is at ``brace`` ends (its ``}``), skipping comments,
    strings and preprocessor lines; None where it never does."""
    depth, position = 0, brace
    while True:
        match = BLOCK_TOKEN.search(text, position)
        if match is None:
            return None
        position = _token_end(text, match)
        if match.lastgroup == "code":
            depth += 1 if match.group() == "{" else -1
            if depth == 0:
                return match.start()


def _without_comments(head: str, directives: bool = True) -> str:
    """The text before a brace without its comments (and preprocessor lines)."""
    if "/" in head:
        head = re.sub(r"//[^\n]*|/\*.*?\*/", " ", head, flags=re.DOTALL)
    if directives and "#" in head:
        return re.sub(r"^[ \t]*#.*$", " ", head, flags=re.MULTILINE)
    return head


def _directive(scan: _Scan, keyword: str, at: int, text: str) -> None:
    if keyword not in (*OPENERS, *CONDITIONS, "else", "endif"):
        return
    scan.directives += 1
    line = scan.line_of(at)
    text = text if text.endswith("\n") else text + "\n"
    if keyword in OPENERS:
        scan.opened.append(_Open("if", text, line))
        return
    if not scan.opened or scan.opened[-1].kind != "if":
        raise Unsure
    if keyword == "endif":
        scan.opened.pop()
    else:
        scan.opened[-1].branch = (line, text)


def _conditionals(text: str):
    pattern = re.compile(DIRECTIVE.pattern, re.MULTILINE)
    return pattern.finditer(text)


def _forbidden(
    text: str, hip_macros: tuple[str, ...], version_macros: tuple[str, ...] = ()
) -> list[tuple[int, int]]:
    """Where no cut may go: ``#if`` groups a condition of which names a HIP macro, or a CUDA
    version macro in a group with an ``#else`` or ``#elif`` (``api_sites`` reads the group whole:
    ROCm takes its other branch), and the text of the matches, over more than one line, of the
    patterns the checks search the whole file for. Sorted (start, end) character ranges."""
    mentions_hip = _mentions(hip_macros)
    mentions_version = _mentions(version_macros)
    ranges: list[tuple[int, int]] = []
    # Each open group: [start, names a HIP macro, names a version macro, has another branch].
    open_groups: list[list] = []
    for match in _conditionals(text):
        keyword, rest = match.groups()
        if keyword in OPENERS:
            open_groups.append(
                [match.start(), _names(mentions_hip, rest), _names(mentions_version, rest), False]
            )
        elif keyword in (*CONDITIONS, "else") and open_groups:
            group = open_groups[-1]
            group[1] |= _names(mentions_hip, rest)
            group[2] |= _names(mentions_version, rest)
            group[3] = True
        elif keyword == "endif" and open_groups:
            first, hip, version, other = open_groups.pop()
            if hip or (version and other):
                ranges.append((first, match.end()))
    ranges.extend((first, len(text)) for first, hip, _, _ in open_groups if hip)
    for pattern in (DEFINE, INTEGER_CONSTANT, MASK_CONSTANT, CG_ALIAS):
        ranges.extend(m.span() for m in pattern.finditer(text) if "\n" in m.group())
    merged: list[tuple[int, int]] = []
    for first, last in sorted(ranges):
        if merged and first <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(last, merged[-1][1]))
        else:
            merged.append((first, last))
    return merged


def _mentions(macros: tuple[str, ...]) -> re.Pattern[str] | None:
    if not macros:
        return None
    return re.compile(r"\b(?:" + "|".join(map(re.escape, macros)) + r")\b")


def _names(pattern: re.Pattern[str] | None, text: str) -> bool:
    return pattern is not None and pattern.search(text) is not None


def text_context(text: str) -> list[Piece]:
    """The context lines found in the text: ``#define`` names and values, lane-mask constants,
    ``cooperative_groups`` aliases (wherever the checks' patterns find them, comments too)."""
    found: list[tuple[int, str, str]] = []
    for match in DEFINE.finditer(text):
        found.append((match.start(), f"#define {match[1]}\n", match[1]))
    for match in INTEGER_CONSTANT.finditer(text):
        if match[1] is not None:
            found.append((match.start(), f"#define {match[1]} {match[2]}\n", match[1]))
    for match in MASK_CONSTANT.finditer(text):
        if match[1] is not None:
            found.append((match.start(), f"#define {match[1]} {match[2]}\n", match[1]))
        else:
            found.append((match.start(), f"const unsigned {match[3]} = {match[4]};\n", match[3]))
    for match in CG_ALIAS.finditer(text):
        alias = f"namespace {match[1]} = cooperative_groups;\n"
        found.append((match.start(), alias, match[1]))
    found.sort(key=lambda item: item[0])  # stable: the order above at one place
    pieces = []
    line, position = 1, 0
    for at, piece, name in found:
        line += text.count("\n", position, at)
        position = at
        pieces.append(Piece(line, piece, name))
    return pieces


def _needed(
    text: str, part: Part, by_name: dict[str, list[tuple[int, Piece]]]
) -> tuple[list[Piece], list[Piece]]:
    """The context pieces a part needs, before it and after it in the file."""
    last = _last_line(text, part)
    names = set(NAME.findall(text, part.start, part.end))
    chosen = sorted(
        (item for name in names & by_name.keys() for item in by_name[name]),
        key=lambda item: (item[1].line, item[0]),
    )
    before = [piece for _, piece in chosen if piece.line < part.first]
    after = [piece for _, piece in chosen if piece.line > last]
    return before, after


@dataclass
class WholeText:
    """The text of the whole file, which a part's checks ask what it contains (once per
    literal: the answer is the same for every part)."""

    text: str
    #: The macros only NVIDIA's compiler defines (rules/cxx.toml ``[guards] nvcc_macros``).
    nvcc_macros: tuple[str, ...] = ()
    #: The macros only an editor's code model defines (rules/cxx.toml ``[guards] ide_macros``).
    ide_macros: tuple[str, ...] = ()
    #: What makes a statement a refusal (rules/cxx_hazards.toml ``[arch_tests]``).
    refusal_words: tuple[str, ...] = ()
    _found: dict[tuple[bytes, bool], bool] = field(default_factory=dict)
    _facts: dict[str, object] = field(default_factory=dict)

    def fact(self, name: str, compute: Callable[[bytes], object]) -> object:
        """What ``compute`` reads in the file's text, once for all its parts."""
        if name not in self._facts:
            self._facts[name] = compute(self.text.encode("utf-8", "surrogateescape"))
        return self._facts[name]

    def contains(self, literal: bytes, folded: bool) -> bool:
        key = (literal, folded)
        if key not in self._found:
            word = literal.decode("utf-8", "surrogateescape")
            if folded:
                found = re.search(re.escape(word), self.text, re.IGNORECASE | re.ASCII)
                self._found[key] = found is not None
            else:
                self._found[key] = word in self.text
        return self._found[key]

    @functools.cached_property
    def branches(self) -> Branches:
        """What the preprocessor leaves out of the file (``preprocessor.Branches``), which only
        the whole file decides."""
        return read_branches(
            split_lines(self.text), self.nvcc_macros, self.ide_macros, self.refusal_words
        )


@dataclass
class PartUnit(Unit):
    """A part's unit: what the file contains is asked of the whole file."""

    whole: WholeText | None = None
    module: Module | None = None  # the part's text, and where its lines are in the file

    def is_inactive(self, line: int) -> bool:
        return self._in_file(line, lambda branches: branches.inactive)

    def is_hip_skipped(self, line: int) -> bool:
        return self._in_file(line, lambda branches: branches.hip_skipped)

    def _in_file(self, line: int, regions: Callable[[Branches], list[tuple[int, int]]]) -> bool:
        """Whether the part's ``line`` is the file's own and in the file's ``regions``."""
        assert self.whole is not None and self.module is not None
        return self.module.owns(line) and in_regions(
            self.module.file_line(line), regions(self.whole.branches)
        )

    def file_fact(self, name: str, compute: Callable[[bytes], object]) -> object:
        assert self.whole is not None
        return self.whole.fact(name, compute)

    def file_line(self, line: int) -> int | None:
        assert self.module is not None
        return self.module.file_line(line) if self.module.owns(line) else None

    def contains(self, *literals: bytes) -> bool:
        assert self.whole is not None
        return any(self.whole.contains(literal, False) for literal in literals)

    def contains_folded(self, *literals: bytes) -> bool:
        assert self.whole is not None
        return any(self.whole.contains(literal, True) for literal in literals)


def lint_in_parts(source: SourceFile, settings: Settings, catalog: Catalog) -> FindingParts | None:
    """The file's selected findings, part by part (as ``engine.select_findings`` gives them for
    the whole file), or None where the file must be analysed whole."""
    text = source.text
    if file_is_suppressed(text):
        return FindingParts()  # as for a whole file: nothing reported
    if "\r" in text.replace("\r\n", ""):
        return None
    guards = catalog.table("cxx").get("guards", {})
    hip_macros = tuple(guards.get("hip_macros", ()))
    version_macros = tuple(guards.get("version_macros", ()))
    try:
        parts = cut(text, part_size(len(text)), hip_macros, version_macros)
        if len(parts) < 2:
            return None
        context = text_context(text) + _declared_context(source, parts, catalog)
    except Unsure:
        return None
    by_name: dict[str, list[tuple[int, Piece]]] = {}
    for index, piece in enumerate(sorted(context, key=lambda piece: piece.line)):
        by_name.setdefault(piece.name, []).append((index, piece))
    del context
    whole = WholeText(
        text,
        tuple(guards.get("nvcc_macros", ())),
        tuple(guards.get("ide_macros", ())),
        arch_tests(catalog).refusal_words,
    )
    found = FindingParts()
    limit = CONTEXT_PARTS * part_size(len(text))
    try:
        for part in parts:
            before, after = _needed(text, part, by_name)
            if sum(len(piece.text) for piece in (*before, *after)) > limit:
                return None
            found.add(_part_findings(source, part, before, after, whole, settings, catalog))
    except Unsure:
        return None
    return found


def _last_line(text: str, part: Part) -> int:
    ended = text.endswith("\n", 0, part.end) and part.end > part.start
    return part.first + text.count("\n", part.start, part.end) - ended


@dataclass(frozen=True)
class Module:
    """The text a part is analysed as, and where its pieces come from: (line in the module,
    line in the file, count of lines) per piece; ``own`` is the part's."""

    source: SourceFile
    segments: list[tuple[int, int, int]]
    own: int

    @functools.cached_property
    def starts(self) -> list[int]:
        return [segment[0] for segment in self.segments]

    def file_line(self, line: int) -> int:
        at, first, _ = self.segments[max(0, bisect.bisect_right(self.starts, line) - 1)]
        return first + line - at

    def owns(self, line: int) -> bool:
        at, _, count = self.segments[self.own]
        return at <= line < at + count


def _module(source: SourceFile, part: Part, before=(), after=()) -> Module:
    pieces: list[tuple[int, str]] = [(piece.line, piece.text) for piece in before]
    pieces.extend(part.opening)
    own = len(pieces)
    body = source.text[part.start : part.end]
    pieces.append((part.first, body if body.endswith("\n") else body + "\n"))
    if part.closing:
        pieces.append((part.first + body.count("\n"), part.closing))
    pieces.extend((piece.line, piece.text) for piece in after)
    segments = []
    at = 1
    for line, piece in pieces:
        count = piece.count("\n")
        segments.append((at, line, count))
        at += count
    text = "".join(piece for _, piece in pieces)
    return Module(source._replace(text=text), segments, own)


def _declared_context(source: SourceFile, parts: list[Part], catalog: Catalog) -> list[Piece]:
    """What each part's parse says the other parts need: a declaration of each kernel, and the
    integer constants outside functions. Each part is parsed on its own here, once, when the
    file launches kernels or reads a compute capability.

    Unsure when a variable set from a compute capability is not local to one function, or the
    same name is set so in two parts: the arch checks follow such a name through the whole file
    (the last function that sets it), which a part cannot see."""
    from portlint.cxx.analyser import make_unit
    from portlint.cxx.kernels import find_kernels

    text = source.text
    launches = "<<<" in text
    capabilities = any(word in text for word in ("major", "minor", "ComputeCapability"))
    if not (launches or capabilities):
        return []
    pieces: list[Piece] = []
    derived: set[str] = set()
    for part in parts:
        module = _module(source, part)
        unit = make_unit(module.source, catalog, FindingList())
        _check_parsed(unit)
        if capabilities:
            fields = hazards.capability_fields(unit)
            names = hazards.derived_capability_names(unit, fields)
            if None in names.values() or derived & names.keys():
                raise Unsure
            derived.update(names)
        if not launches:
            continue

        def own(offset: int, unit: Unit = unit, module: Module = module) -> int | None:
            line = unit.point(offset)[0]
            return module.file_line(line) if module.owns(line) else None

        for kernel in find_kernels(unit):
            line = own(kernel.start)
            if line is not None:
                bounds = "__launch_bounds__(1) " if kernel.launch_bounds else ""
                declaration = f"__global__ void {bounds}{kernel.name}();\n"
                pieces.append(Piece(line, declaration, kernel.name))
        for match in unit.finditer(hazards.INTEGER_CONSTANT):
            line = own(match.start())
            if match[3] is None or line is None:
                continue
            if unit.enclosing_function(unit.node_at(match.start(), match.end())) is None:
                name = match[3].decode()
                pieces.append(Piece(line, f"constexpr int {name} = {match[4].decode()};\n", name))
    return pieces


def _check_parsed(unit: Unit) -> None:
    """Unsure when tree-sitter could not parse all of a part: on the whole file, its error
    recovery may have gone on past the cut, over declarations that parse in their own part
    (and then the whole analysis gives them no fixes, or other nodes)."""
    if unit.tree.root_node.has_error:
        raise Unsure


def _part_findings(
    source: SourceFile,
    part: Part,
    before: list[Piece],
    after: list[Piece],
    whole: WholeText,
    settings: Settings,
    catalog: Catalog,
) -> list[Finding]:
    """The part's selected findings on the file's lines."""
    from portlint.cxx.analyser import analyse_unit, make_unit
    from portlint.engine import select_findings

    module = _module(source, part, before, after)
    sink = FindingList()
    unit_type = functools.partial(PartUnit, whole=whole, module=module)
    unit = make_unit(module.source, catalog, sink, unit_type, settings.torch_built)
    _check_parsed(unit)
    analyse_unit(unit, settings)
    findings = select_findings(sink.findings, module.source, settings)

    def place(span: Span) -> Span:
        start, end = module.file_line(span.line), module.file_line(span.end_line)
        return Span(start, span.column, end, span.end_column)

    return [finding.moved(place) for finding in findings if module.owns(finding.span.line)]

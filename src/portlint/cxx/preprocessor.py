"""Preprocessor conditionals that already have a HIP/ROCm branch.

Read from the text, not the syntax tree: tree-sitter nests ``#if`` groups only where they wrap
whole declarations or statements, and ported code splits statements across branches all the time.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import NamedTuple

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


def spell_qualifiers(data: bytes, macros: dict[str, str]) -> bytes:
    """The source with each library macro that stands for CUDA function qualifiers
    (``CUTLASS_GLOBAL``, ``[qualifier_macros]`` of rules/cxx.toml) written as those qualifiers,
    padded with spaces to the macro's length so that every offset stays where it was; the
    ``#define`` and ``#undef`` lines keep their text. A kernel declared ``CUTLASS_GLOBAL void
    gemm(...)`` is then a ``__global__`` kernel to the parser and every check."""
    if not macros:
        return data
    words = re.compile(rb"\b(" + b"|".join(re.escape(name.encode()) for name in macros) + rb")\b")

    def spelled(match: re.Match[bytes]) -> bytes:
        line_start = data.rfind(b"\n", 0, match.start()) + 1
        if data[line_start : match.start()].lstrip().startswith(b"#"):
            return match.group()
        name = match.group().decode()
        return macros[name].encode().ljust(len(name))

    return words.sub(spelled, data)


#: A ``#define`` or ``#undef`` line: the macro's name, whether it takes parameters, the rest.
DEFINITION = re.compile(r"^[ \t]*#[ \t]*(define|undef)[ \t]+(\w+)(\()?(.*)")
#: A macro value that is a number: ``0``, ``(1)``, ``1u``.
NUMBER = re.compile(r"\(*[ \t]*(\d+)[uUlL]*[ \t]*\)*")
#: A token of a condition ``_decided`` reads: ``defined``, logic, comparisons, parentheses, words.
TOKEN = re.compile(r"[ \t]*(\|\||&&|[<>=!]=|<<|>>|[()!<>*/%+-]|\w+)")
COMMENT = re.compile(r"/\*.*?\*/|//.*")
#: C++'s alternative spellings of the operators a condition reads ([lex.digraph]): DeepGEMM writes
#: ``#if (defined(__CUDA_ARCH__) and (__CUDA_ARCH__ >= 900)) or defined(__CLION_IDE__)``.
ALTERNATIVE_TOKENS = {"and": "&&", "or": "||", "not": "!", "not_eq": "!="}
#: What a macro is where a condition reads it: defined or not, and its number (None: unknown).
Macro = tuple[bool | None, int | None]
UNKNOWN: Macro = (None, None)


@dataclass
class _Group:
    """An open ``#if`` group as ``_dead_lines`` reads it."""

    dead: bool  # the branch the reading is in is never compiled
    taken: bool  # an earlier or this branch is certainly compiled


class Branches(NamedTuple):
    """What the preprocessor leaves out of a file, as line ranges (1-based, inclusive).

    ``inactive``: lines no compiler sees, the branches of ``#if`` groups that the file itself
    decides against (``#if 0``; ``#if NO_FUSION`` after ``#define NO_FUSION 0``; the ``#else``
    of ``#if 1``; ``#ifdef __CLION_IDE__``, which only an editor defines), with every line inside
    them: no finding there.

    ``hip_skipped``: lines hip-clang does not compile although NVIDIA's compiler may, the
    branches that need one of the macros only nvcc defines (rules/cxx.toml ``[guards]
    nvcc_macros``: ``#if __CUDA_ARCH__ >= 800``, ``#if defined(__CUDA_ARCH__) && ...``, the
    ``#else`` of ``#ifndef __CUDA_ARCH__``, ``#if __CUDACC_VER_MAJOR__ >= 11``): no ROCm site
    there; the test itself is one (PRT804). So are the branches that need a macro the file
    defines only in such lines (``#if __CUDACC_VER_MAJOR__ >= 11`` / ``#define MMA_ENABLED``,
    then ``#ifdef MMA_ENABLED``): hip-clang never defines it, and the test of the nvcc macro is
    where the choice is made. Where hip-clang then compiles nothing in the branch's place but
    a refusal (``#else RUNTIME_ASSERT("Unsupported architecture")``), the branch is AMD's to
    port: it stays.

    A macro of the file counts only where the file defines it once, to a number or to nothing,
    before the condition and outside any ``#if`` but its include guard, and never undefines it:
    a value set inside a branch, one the build may give (``#ifndef X`` / ``#define X 0``) or one
    an include gives is the build's to decide. A condition that reads anything else (another
    macro, an operator other than ``!``, ``&&``, ``||`` (or their C++ spellings ``not``, ``and``,
    ``or``), comparisons and ``+ - * / %``) is undecided where its
    answer depends on it, and so is every later branch of its group. Nothing is left out of a
    file whose ``#if`` groups do not balance (a directive inside a comment)."""

    inactive: list[tuple[int, int]]
    hip_skipped: list[tuple[int, int]]


NO_BRANCHES = Branches([], [])


def read_branches(
    lines: list[str],
    nvcc_macros: Iterable[str],
    ide_macros: Iterable[str] = (),
    refusal_words: Iterable[str] = (),
) -> Branches:
    """The file's ``Branches``, its macros read once for both. ``ide_macros`` are defined only
    by an editor's code model, never by a compiler (rules/cxx.toml ``[guards] ide_macros``):
    undefined for both. ``refusal_words`` make a statement a refusal (rules/cxx_hazards.toml
    ``[arch_tests]``): the ``#else`` of a branch that needs a macro defined only for nvcc is
    no fallback where it only refuses."""
    defined = _file_macros(lines)
    never: dict[str, Macro] = {name: (False, None) for name in ide_macros}
    undefined: dict[str, Macro] = {name: (False, None) for name in never.keys() | set(nvcc_macros)}
    nvcc_dead = hip_dead = _dead_lines(lines, defined, undefined)
    for _ in range(DERIVED_ROUNDS if True in hip_dead else 0):
        # ``#if __CUDACC_VER_MAJOR__ >= 11`` / ``#define MMA_ENABLED`` / ``#endif``, then
        # ``#ifdef MMA_ENABLED``: a macro the file defines only where hip-clang does not look is
        # undefined there too
        derived = _defined_only_in(lines, hip_dead) - undefined.keys()
        if not derived:
            break
        undefined |= {name: (False, None) for name in derived}
        hip_dead = _dead_lines(lines, defined, undefined)
    if hip_dead is not nvcc_dead:
        hip_dead = _with_fallbacks(lines, nvcc_dead, hip_dead, tuple(refusal_words))
    return Branches(_regions(_dead_lines(lines, defined, never)), _regions(hip_dead))


def _with_fallbacks(
    lines: list[str], nvcc_dead: list[bool], hip_dead: list[bool], refusal_words: tuple[str, ...]
) -> list[bool]:
    """``hip_dead`` without the branches that only a macro defined for nvcc alone leaves out
    (``nvcc_dead`` does not), where hip-clang compiles nothing in their place: no ``#else``
    (or ``#elif``) follows, or what follows has no code or refuses (``RUNTIME_ASSERT("...")``,
    ``__trap()``). AMD GPUs need code of their own there, and the branch stays a ROCm site."""
    kept = list(hip_dead)
    number = 0
    while number < len(lines):
        if not hip_dead[number] or nvcc_dead[number]:
            number += 1
            continue
        end = number
        while end < len(lines) and hip_dead[end] and not nvcc_dead[end]:
            end += 1
        if not _falls_back(lines, end, refusal_words):
            kept[number:end] = [False] * (end - number)
        number = end
    return kept


def _falls_back(lines: list[str], at: int, refusal_words: tuple[str, ...]) -> bool:
    """Whether the directive at ``at`` opens an ``#else``/``#elif`` arm that holds code and no
    refusal, up to its group's ``#endif``."""
    match = DIRECTIVE.match(lines[at]) if at < len(lines) else None
    if match is None or match.group(1) not in ("else", *CONDITIONS):
        return False
    depth = 1
    code: list[str] = []
    for line in lines[at + 1 :]:
        directive = DIRECTIVE.match(line) if "#" in line else None
        keyword = directive.group(1) if directive else None
        if keyword in OPENERS:
            depth += 1
        elif keyword == "endif":
            depth -= 1
            if depth == 0:
                break
        text = COMMENT.sub("", line).strip()
        if keyword is None and text:
            code.append(text.lower())
    joined = " ".join(code)
    return bool(code) and not any(word in joined for word in refusal_words)


#: How many times a macro defined only in hip-clang's skipped lines may lead to another
#: (``#ifdef A`` / ``#define B``): enough for the chains real headers have.
DERIVED_ROUNDS = 3


def _defined_only_in(lines: list[str], dead: list[bool]) -> set[str]:
    """The macros every ``#define`` of which sits on a ``dead`` line, that no live line defines
    or undefines."""
    inside: set[str] = set()
    outside: set[str] = set()
    for number, line in enumerate(lines):
        if "#" not in line or "def" not in line:
            continue
        definition = DEFINITION.match(line)
        if definition is None:
            continue
        kind, name = definition.group(1), definition.group(2)
        (inside if kind == "define" and dead[number] else outside).add(name)
    return inside - outside


def _regions(dead: list[bool]) -> list[tuple[int, int]]:
    """The runs of true values of ``dead`` as 1-based, inclusive line ranges."""
    regions: list[tuple[int, int]] = []
    for number, is_dead in enumerate(dead, start=1):
        if not is_dead:
            continue
        if regions and regions[-1][1] == number - 1:
            regions[-1] = (regions[-1][0], number)
        else:
            regions.append((number, number))
    return regions


def _dead_lines(
    lines: list[str], defined: dict[str, tuple[int, int | None]], fixed: dict[str, Macro]
) -> list[bool]:
    """Per line, whether it is in a branch that the macros the file ``defined`` (name -> its
    line and number) and the ``fixed`` ones decide against; all false where the groups do not
    balance."""
    groups: list[_Group] = []
    dead: list[bool] = []

    def macro_at(at: int) -> Callable[[str], Macro]:
        def macro(name: str) -> Macro:
            if name in fixed:
                return fixed[name]
            place = defined.get(name)
            return (True, place[1]) if place is not None and place[0] < at else UNKNOWN

        return macro

    for number, line, continued in _logical_lines(lines):
        match = DIRECTIVE.match(line) if "#" in line else None
        keyword = match.group(1) if match else None
        before = len(dead)
        if keyword in OPENERS:
            dead.append(any(group.dead for group in groups))
            value = _decided(keyword, match.group(2), macro_at(number))
            groups.append(_Group(value is False, value is True))
        elif keyword is None:
            dead.append(any(group.dead for group in groups))
        elif not groups:
            return [False] * len(lines)  # an #else or #endif without its #if
        else:
            dead.append(any(group.dead for group in groups[:-1]))
            group = groups[-1]
            if keyword == "endif":
                groups.pop()
            elif group.taken:
                group.dead = True  # an earlier branch is certainly compiled
            elif keyword == "else":
                group.dead = False
            else:
                value = _decided(keyword, match.group(2), macro_at(number))
                group.dead, group.taken = value is False, value is True
        dead += dead[before:] * continued  # a directive's continuation lines are the directive
    return [False] * len(lines) if groups else dead  # an #if without its #endif


def _logical_lines(lines: list[str]) -> Iterator[tuple[int, str, int]]:
    """(line number, text, how many lines continue it): a directive that ends with a backslash
    goes on in the next line (``#if !defined(X) && \\`` / ``(__CUDA_ARCH__ >= 900)``), read as one
    line; any other line is itself."""
    number = 0
    while number < len(lines):
        line = lines[number]
        continued = 0
        if "#" in line and DIRECTIVE.match(line):
            while line.rstrip(" \t").endswith("\\") and number + continued + 1 < len(lines):
                continued += 1
                line = line.rstrip(" \t")[:-1] + " " + lines[number + continued]
        yield number + 1, line, continued
        number += continued + 1


def directive_holds(directive: str, macros: dict[str, Macro]) -> bool | None:
    """Whether one ``#if``/``#elif``/``#ifdef`` directive (its continuation lines joined) holds
    where ``macros`` are as given and every other macro is unknown; None where the answer depends
    on an unknown macro, or where the line is no such directive."""
    match = DIRECTIVE.match(directive)
    if match is None or match.group(1) in ("else", "endif"):
        return None
    return _decided(match.group(1), match.group(2), lambda name: macros.get(name, UNKNOWN))


def _decided(keyword: str, condition: str, macro: Callable[[str], Macro]) -> bool | None:
    """Whether a directive's condition holds, where the macros it reads decide it."""
    text = COMMENT.sub("", condition).strip()
    if keyword.endswith("def"):  # ifdef, ifndef, elifdef, elifndef
        text = ("!" if keyword.endswith("ndef") else "") + f"defined({text})"
    tokens: list[str] = []
    position = 0
    while position < len(text):
        token = TOKEN.match(text, position)
        if token is None:
            return None  # a character literal: not read
        tokens.append(ALTERNATIVE_TOKENS.get(token.group(1), token.group(1)))
        position = token.end()
        while position < len(text) and text[position] in " \t":
            position += 1
    reading = _Reading(tokens, macro)
    try:
        value = reading.either()
    except ValueError:
        return None
    if reading.at != len(tokens):
        return None
    return None if value is None else value != 0


@dataclass
class _Reading:
    """A condition's tokens read with three answers: a number, or None where it is unknown."""

    tokens: list[str]
    macro: Callable[[str], Macro]
    at: int = 0

    def next(self) -> str:
        if self.at >= len(self.tokens):
            raise ValueError("the condition ends early")
        self.at += 1
        return self.tokens[self.at - 1]

    def peek(self) -> str | None:
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def either(self) -> int | None:
        value = self.both()
        while self.peek() == "||":
            self.next()
            other = self.both()
            truths = {value and 1, other and 1}  # 0, 1 or None each
            value = 1 if 1 in truths else None if None in truths else 0
        return value

    def both(self) -> int | None:
        value = self.compared()
        while self.peek() == "&&":
            self.next()
            other = self.compared()
            truths = {value and 1, other and 1}
            value = 0 if 0 in truths else None if None in truths else 1
        return value

    def compared(self) -> int | None:
        value = self.summed()
        operator = self.peek()
        if operator in ("<", ">", "<=", ">=", "==", "!="):
            self.next()
            other = self.summed()
            if value is None or other is None:
                return None
            answers = {
                "<": value < other,
                ">": value > other,
                "<=": value <= other,
                ">=": value >= other,
                "==": value == other,
                "!=": value != other,
            }
            return int(answers[operator])
        return value

    def summed(self) -> int | None:
        """``a + b - c`` (``__CUDACC_VER_MAJOR__ * 10000 + __CUDACC_VER_MINOR__ * 100``)."""
        value = self.multiplied()
        while self.peek() in ("+", "-"):
            operator = self.next()
            other = self.multiplied()
            if value is None or other is None:
                value = None
            else:
                value = value + other if operator == "+" else value - other
        return value

    def multiplied(self) -> int | None:
        value = self.single()
        while self.peek() in ("*", "/", "%"):
            operator = self.next()
            other = self.single()
            if value is None or other is None or (operator != "*" and other == 0):
                value = None
            elif operator == "*":
                value = value * other
            else:  # C divides towards zero
                quotient = abs(value) // abs(other) * (1 if (value < 0) == (other < 0) else -1)
                value = quotient if operator == "/" else value - quotient * other
        return value

    def single(self) -> int | None:
        token = self.next()
        if token == "!":
            value = self.single()
            return None if value is None else int(value == 0)
        if token == "(":
            value = self.either()
            if self.next() != ")":
                raise ValueError("unbalanced")
            return value
        if token == "defined":
            parenthesised = self.peek() == "("
            if parenthesised:
                self.next()
            defined, _ = self.macro(self.next())
            if parenthesised and self.next() != ")":
                raise ValueError("unbalanced")
            return None if defined is None else int(defined)
        number = NUMBER.fullmatch(token)
        if number is not None:
            return int(number.group(1))
        if not token.isidentifier():
            raise ValueError(f"not read: {token}")
        if self.peek() == "(":
            raise ValueError("a function-like macro")
        defined, value = self.macro(token)
        return 0 if defined is False else value if defined else None


def _file_macros(lines: list[str]) -> dict[str, tuple[int, int | None]]:
    """Macro -> (the line of its one definition, its number or None where it has no value) for
    the macros the file defines as ``Branches`` asks."""
    found: dict[str, tuple[int, int | None]] = {}
    spoilt: set[str] = set()
    opened: list[str | None] = []  # per open group: the macro an #ifndef tests, else None
    guard: str | None = None  # the include guard: the first directive, #ifndef G, then #define G
    directives = 0
    for number, line in enumerate(lines, start=1):
        if "#" not in line:
            continue
        definition = DEFINITION.match(line)
        directive = None if definition else DIRECTIVE.match(line)
        directives += bool(definition or directive)
        if definition is not None:
            kind, name, parameters, rest = definition.groups()
            if directives == 2 and kind == "define" and opened == [name]:
                guard = name
            value = COMMENT.sub("", rest).strip()
            number_match = NUMBER.fullmatch(value)
            in_branch = any(tested is None or tested != guard for tested in opened)
            if kind == "undef" or parameters or name in found or in_branch or name in opened:
                spoilt.add(name)
            elif value and number_match is None:
                spoilt.add(name)  # a value of another kind
            found.setdefault(name, (number, int(number_match[1]) if number_match else None))
        elif directive is not None and directive.group(1) in OPENERS:
            words = COMMENT.sub("", directive.group(2)).split()
            opened.append(words[0] if directive.group(1) == "ifndef" and words else None)
        elif directive is not None and directive.group(1) == "endif" and opened:
            opened.pop()
    return {name: place for name, place in found.items() if name not in spoilt}

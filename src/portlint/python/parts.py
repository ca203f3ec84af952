"""Analysing a large Python file one part at a time, so that memory follows the part, not the file.

Parsed whole, a file costs about 80 bytes of syntax tree per byte of text, and the walk's state
and the findings as much again: a generated file of a few MB with a finding on every line takes
hundreds of MB. In check mode, a file of more than a million characters (``WHOLE_UP_TO``), or of
more than 100 kB (``part_threshold`` in ``engine.ANALYSERS``) with more than ``DENSE`` candidate
words (a generated file of CUDA calls: no hand-written module of several real trees has more than
200), is instead cut between top-level statements into parts of about ``part_size`` characters,
and each part is analysed as a module of its own, together with the module-level statements from
elsewhere in the file that the analysis reads across statements (its *context*):

- imports (they bind the names every line resolves through);
- assignments, and ``if``/``try``/``with``/``for``/``while``/``match`` blocks, whose lines hold
  a candidate word (an ``if`` that names NVIDIA too: ``if IS_NVIDIA: softplus = softplus_nv``),
  and assignments whose lines name another vendor (device values and vendor flags that later
  lines use), also as the one statement of a ``try`` (a flag with a fallback);
  and every other assignment to a name those assignments bind (a flag given once stands for
  its check, one given again does not);
- definitions whose lines hold a candidate word, classes named for a vendor, and definitions
  a decorator may register for a device type (backend detection reads them), in full;
- a definition that calls a private function the context holds whole (a check of a helper reads
  its callers), or, in a file with a ``__main__`` block, any function it holds whole (a script's
  public function is checked against its callers too);
- stand-ins of one line for what the fixes read of the module as a whole (where the leading
  imports end, whether it is a script, a name a fix would define).

Bare expression statements elsewhere in the file (a module-level call) are left out: they bind
nothing, and they are the bulk of such generated files. The one exception is the device-generic
TF32 call (``torch.set_float32_matmul_precision("high")``), which the check of a TF32 switch
beside it reads. Each part's findings are selected,
suppressed and sorted as a file's are, moved back to the file's lines, and kept compressed until
the file is done (``sink.FindingParts``). So the memory of a run is the file's text, its
findings compressed (a few bytes each), and one part's analysis. A part after the first that no
check can report on (no candidate word, vendor word, suppression comment or name of the
context) is not analysed at all.

The file is analysed whole (the same findings as any file gets) when parts cannot be sure to
hold what the whole parse would:

- a part does not parse on its own (a syntax error, or a cut that was not between statements):
  the whole parse reports it;
- the context is larger than ``CONTEXT_PARTS`` parts (a file whose module level is mostly
  assignments and blocks about CUDA): each part would carry most of the file;
- the text has a line break other than ``\\n`` and ``\\r\\n``, or a future import that changes
  the grammar.

An option declared at module level with a CUDA default (``parser.add_argument("--device",
default="cuda")``) is context too, and so is a later statement that reads an attribute the
context sets (``torch.device(args.device)``, ``dist.init_process_group(backend=
args.dist_backend)`` after ``args.dist_backend = "nccl"``): the check of the value reports it
only where it is used.

What a part cannot see: a value that flows from one part into another through another
module-level expression statement (``config.update(device="cuda")``), through an assignment
with no candidate word (``y = dev``, where ``dev = "cuda"``), or into an attribute read before
the statement that sets it. ``benchmarks/part_equivalence.py`` compares the two
analyses on real files and fixtures cut into parts of any size: at the real size, no difference
on the precision checkouts.
"""

from __future__ import annotations

import ast
import bisect
import itertools
import re
from collections.abc import Iterator
from dataclasses import dataclass

from portlint.catalog import Catalog, load_catalog
from portlint.config import Settings
from portlint.model import Finding, SourceFile, Span
from portlint.python import slices
from portlint.python.analyser import argument_destination
from portlint.python.backends import vendor_of, vendor_words
from portlint.python.fixes import is_main_block
from portlint.python.prefilter import is_candidate
from portlint.python.relevance import CANDIDATE_WORDS, VENDOR_TEXT, WORD
from portlint.sink import FindingParts
from portlint.suppress import file_is_suppressed, may_hold_suppressions

#: The device-generic TF32 call (rules/capability.toml ``[generic_matmul_precision]``), by the
#: last part of its name: a module-level call of it is context.
GENERIC_PRECISION = (
    load_catalog().table("capability")["generic_matmul_precision"]["call"].rsplit(".", 1)[-1]
)
#: An ``if`` that names NVIDIA picks NVIDIA's implementations (``triton_checks``): context.
NVIDIA_TEXT = re.compile(r"(?i:nvidia)")
#: Files up to this many characters are analysed whole unless they hold more than ``DENSE``
#: candidate words.
WHOLE_UP_TO = 1_000_000
DENSE = 1000
#: A file is cut into about this many parts, each at least ``SMALLEST_PART`` characters.
PARTS_PER_FILE = 512
SMALLEST_PART = 4096
#: The context of a part may be at most this many parts long; beyond, the file is analysed whole.
CONTEXT_PARTS = 2
#: A part that does not parse is tried with the next ones, up to this many parts' length: a cut
#: in the wrong place parses then, a syntax error does not (and re-parsing the rest of the file
#: each time would be quadratic).
MERGED_PARTS = 8
#: Places in doubt tried one after the other before the search for a cut leaps ahead.
DOUBTS_BEFORE_LEAPS = 8
#: Statements of the context when their lines hold a candidate word (or, for assignments, name
#: another vendor).
BLOCKS = (ast.If, ast.Try, ast.TryStar, ast.With, ast.For, ast.While, ast.Match)
#: The start of a module.
TOP = Span(1, 0, 1, 0)
#: A call of a private function: ``_device_id()``.
PRIVATE_CALL = re.compile(r"\b(_\w+)\(")
#: A call of a function by its plain name: ``train_one_epoch(...)``, not ``self.step(...)``.
PLAIN_CALL = re.compile(r"(?<![\w.])([A-Za-z]\w*)\(")
ASSIGNMENTS = (ast.Assign, ast.AnnAssign, ast.AugAssign)
DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def part_size(length: int) -> int:
    return max(SMALLEST_PART, length // PARTS_PER_FILE)


@dataclass(frozen=True)
class Part:
    """Lines ``first``.. of the file: its text (whole lines, ending with a line break)."""

    first: int
    text: str

    @property
    def count(self) -> int:
        return self.text.count("\n")


@dataclass(frozen=True)
class Segment:
    """Lines of the file copied into the module a part is analysed as: ``count`` lines that
    start at line ``first`` of the file and at line ``at`` of the module."""

    at: int
    first: int
    count: int


def lint_in_parts(source: SourceFile, settings: Settings, catalog: Catalog) -> FindingParts | None:
    """The file's selected findings, part by part (as ``engine.select_findings`` gives them for
    the whole file), or None where the file must be analysed whole."""
    text = source.text
    if len(text) <= WHOLE_UP_TO and not _dense(text):
        return None
    if file_is_suppressed(text):
        return FindingParts()  # as for a whole file: nothing reported
    if "\r" in text.replace("\r\n", "") or "barry_as_FLUFL" in text:
        return None
    parts = _parsed_parts(text, part_size(len(text)), source.path)
    if parts is None:
        return None
    pieces, context, assigned = parts
    limit = CONTEXT_PARTS * part_size(len(text))
    if sum(len(piece.text) for piece in context) > limit:
        return None
    found = FindingParts()
    names = _words(assigned)
    for part in pieces:
        if part.first > 1 and _nothing_to_report(part.text, names):
            continue  # the first part stays: a finding about the whole file goes on its line 1
        findings = _part_findings(source, part, context, settings, catalog)
        if findings is None:
            return None
        found.add(findings)
    return found


def _dense(text: str) -> bool:
    """More than ``DENSE`` candidate words: a file whose findings, and their syntax, would cost
    far more than its size if it were analysed whole."""
    searches = CANDIDATE_WORDS.searches
    found = itertools.chain.from_iterable(search.finditer(text) for search in searches)
    return next(itertools.islice(found, DENSE, None), None) is not None


def _nothing_to_report(text: str, names: re.Pattern[str] | None) -> bool:
    """A part that no check can report on: no candidate word (the file prefilter's), no name
    the context assigns (a device value that flows in), no vendor word (a backend class), and
    no suppression comment (which would be reported unused)."""
    if is_candidate(text) or VENDOR_TEXT.search(text) or may_hold_suppressions(text):
        return False
    return names is None or names.search(text) is None


def _words(names: set[str]) -> re.Pattern[str] | None:
    if not names:
        return None
    return re.compile(rf"\b(?:{'|'.join(sorted(map(re.escape, names)))})\b")


def _parsed_parts(
    text: str, size: int, path: str
) -> tuple[list[Part], list[Part], set[str]] | None:
    """The file's parts, its context statements (each a ``Part`` of its own lines) and the names
    they assign; None when a part does not parse."""
    pieces: list[Part] = []
    context = Context(vendor_words(load_catalog()), reserved_names(load_catalog()))
    if text.startswith("#!"):
        context.add(1, text[: text.find("\n") + 1])  # a script (``fixes.is_script``)
    pending = ""
    line = 1
    for chunk in _chunks(text, size):
        chunk = pending + chunk
        try:
            tree = ast.parse(chunk, filename=path)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            if len(chunk) > MERGED_PARTS * size:
                return None  # a syntax error, not a cut: the whole parse reports it
            pending = chunk  # a cut in the wrong place? try it with the next chunk
            continue
        pending = ""
        part = Part(line, chunk if chunk.endswith("\n") else chunk + "\n")
        lines = part.text.split("\n")
        for statement in tree.body:
            context.statement(statement, line - 1, lines)
        pieces.append(part)
        line += part.count
        del tree
    if pending:
        return None
    return pieces, context.finish(), context.names


class Context:
    """The context statements of a file, gathered from its parts in file order."""

    def __init__(self, words: dict[str, str], reserved: frozenset[str]) -> None:
        self.words = words
        self.reserved = reserved
        self.parts: list[Part] = []
        #: Names the context's statements assign.
        self.names: set[str] = set()
        #: Private functions the context holds whole; definitions left out that call private
        #: functions: (first line, text, the names called).
        self.private: set[str] = set()
        #: Public functions the context holds whole, and whether the file has a ``__main__``
        #: block: a script's public function is checked against its callers too (a default
        #: every call overrides), so in a script a caller of one joins the context as well.
        self.public: set[str] = set()
        self.main_block = False
        #: Attributes the context sets to a candidate value (``args.dist_backend = "nccl"``,
        #: ``parser.add_argument("--device", default="cuda")``): a statement elsewhere that
        #: reads one is where the value is used, and the check of the value looks for it.
        self.options: set[str] = set()
        self.callers: list[tuple[int, str, frozenset[str]]] = []
        #: Names the context's assignments bind, and the assignments left out, with the names
        #: they bind: a flag given once at module level stands for its check
        #: (``Analyser._record_assignment``), so another assignment to it (``use_cuda = use_cuda
        #: and not debug``) joins the context wherever it is.
        self.bound: set[str] = set()
        self.rebinds: list[tuple[int, str, frozenset[str]]] = []
        #: The leading docstring and imports, where the fixes insert a module-level device
        #: (``fixes.insertion_point``), have ended; a statement that makes the file a script
        #: (``fixes.is_script``) has been seen; a statement has been seen at all.
        self.leading_ended = self.script_seen = self.started = False

    def add(self, first: int, text: str) -> None:
        self.parts.append(Part(first, text))

    def statement(self, statement: ast.stmt, offset: int, lines: list[str]) -> None:
        """Add what ``statement`` (a top-level statement of a part, whose lines are ``lines``,
        ``offset`` lines into the file) gives the context of other parts."""
        first, last = slices.first_line(statement) + offset, (statement.end_lineno or 0) + offset
        kept = self._text(statement, lines)
        if kept is None and self._reads_option(statement, lines):
            kept = _lines(statement, lines)
        if kept is not None:
            self.add(first, kept)
            self.names.update(_names(statement))
            self.options.update(_options_set(statement))
        if isinstance(statement, ASSIGNMENTS):
            bound = _bound_names(statement)
            if kept is not None:
                self.bound |= bound
            elif bound:
                self.rebinds.append((first, _lines(statement, lines), bound))
        if isinstance(statement, DEFINITIONS):
            self._definition(statement, first, kept, _lines(statement, lines))
        self.main_block = self.main_block or is_main_block(statement)
        leading = isinstance(statement, ast.Import | ast.ImportFrom) or _imports_in(statement)
        if not self.started and _is_docstring(statement):
            self.add(last, '""\n')  # the end of the leading docstring
        elif not self.leading_ended and not leading:
            self.leading_ended = True
            if kept is None:
                self.add(first, _stand_in(statement))
        elif not self.script_seen and kept is None and _makes_script(statement):
            self.add(first, _stand_in(statement))
        self.script_seen = self.script_seen or (
            _makes_script(statement) and not (not self.started and _is_docstring(statement))
        )
        self.started = True

    def _definition(self, statement: ast.stmt, first: int, kept: str | None, whole: str) -> None:
        """Remember a private function the context holds whole, and a definition left out that
        calls a private function: a check of the function reads its callers (a helper whose
        answer is only formatted into text), so a caller of one the context holds joins it
        (``finish``)."""
        assert isinstance(statement, DEFINITIONS)
        if kept == whole and statement.name.startswith("_"):
            self.private.add(statement.name)
        elif kept == whole and isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef):
            self.public.add(statement.name)
        elif kept is None:
            calls = frozenset(PRIVATE_CALL.findall(whole)) | frozenset(PLAIN_CALL.findall(whole))
            if calls:
                self.callers.append((first, whole, calls))

    def _reads_option(self, statement: ast.stmt, lines: list[str]) -> bool:
        """``torch.device(args.device)`` after the option was declared in another part."""
        if not self.options or self.options.isdisjoint(WORD.findall(_lines(statement, lines))):
            return False
        return any(
            isinstance(node, ast.Attribute) and node.attr in self.options
            for node in ast.walk(statement)
        )

    def finish(self) -> list[Part]:
        """The context's statements in file order."""
        wanted = self.private | self.public if self.main_block else self.private
        for first, text, calls in self.callers:
            if calls & wanted:
                self.add(first, text)
        for first, text, bound in self.rebinds:
            if bound & self.bound:
                self.add(first, text)
        return sorted(self.parts, key=lambda piece: piece.first)

    def _text(self, statement: ast.stmt, lines: list[str]) -> str | None:
        """The text ``statement`` adds to the context, or None."""
        if isinstance(statement, ast.Import | ast.ImportFrom):
            return _lines(statement, lines)
        whole = _lines(statement, lines)
        if isinstance(statement, ASSIGNMENTS):
            if _has_candidate(whole) or VENDOR_TEXT.search(whole):
                return whole
            names = {n.id for n in ast.walk(statement) if isinstance(n, ast.Name)}
            return whole if names & self.reserved else None
        if isinstance(statement, BLOCKS):
            if _has_candidate(whole) or _imports_in(statement):
                return whole
            if isinstance(statement, ast.If) and NVIDIA_TEXT.search(whole):
                return whole  # ``if IS_NVIDIA: softplus = softplus_nv`` (``triton_checks``)
            if _guarded_flag(statement) and VENDOR_TEXT.search(whole):
                return whole  # ``try: HAS_MPS = torch.backends.mps.is_available() except ...``
            if is_main_block(statement):
                return 'if __name__ == "__main__": pass\n'
            return None
        if isinstance(statement, DEFINITIONS):
            if _has_candidate(whole) or vendor_of(statement.name, self.words) is not None:
                return whole
            if statement.name in self.reserved:
                return _stand_in(statement)
            if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef):
                piece = slices.Slice(1, whole.count("\n"), "def", statement.name)
                if slices._may_register(whole.split("\n"), piece, self.words):
                    return whole
            return None
        # ``parser.add_argument("--device", default="cuda")``: ``args.device`` holds "cuda"
        # wherever it is read (``Analyser._record_attribute``)
        if _adds_argument(statement) and _has_candidate(whole):
            return whole
        # ``torch.set_float32_matmul_precision("high")``: the TF32 switch beside it ports
        # nothing (``api_checks._generic_precision_beside`` reads the module's statements)
        if isinstance(statement, ast.Expr) and GENERIC_PRECISION in whole:
            return whole
        # a walrus in a bare expression binds a name
        if (
            isinstance(statement, ast.Expr)
            and ":=" in whole
            and any(isinstance(node, ast.NamedExpr) for node in ast.walk(statement))
        ):
            return whole
        return None


def _bound_names(statement: ast.stmt) -> frozenset[str]:
    """The plain names an assignment binds (``a = b = ...``, ``a: int = ...``, ``a += ...``)."""
    if isinstance(statement, ast.Assign):
        targets = statement.targets
    elif isinstance(statement, ast.AnnAssign | ast.AugAssign):
        targets = [statement.target]
    else:
        return frozenset()
    return frozenset(t.id for t in targets if isinstance(t, ast.Name))


def _options_set(statement: ast.stmt) -> Iterator[str]:
    """The attributes a context statement gives a value: assigned ones, and argparse options."""
    for node in ast.walk(statement):
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            yield node.attr
    if _adds_argument(statement):
        assert isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call)
        destination = argument_destination(statement.value)
        if destination:
            yield destination


def _adds_argument(statement: ast.stmt) -> bool:
    """``parser.add_argument(...)`` as a statement of its own."""
    if not (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call)):
        return False
    func = statement.value.func
    return isinstance(func, ast.Attribute) and func.attr == "add_argument"


def _names(statement: ast.stmt) -> Iterator[str]:
    """The names a statement binds or reads, its definitions' names too: a part that names
    none of them cannot be reached by a value from it."""
    for node in ast.walk(statement):
        if isinstance(node, ast.Name):
            yield node.id
        elif isinstance(node, ast.arg):
            yield node.arg
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            yield node.name
        elif isinstance(node, ast.alias):  # ``from torch.cuda import amp``: ``amp``
            yield node.asname or node.name.partition(".")[0]


def reserved_names(catalog: Catalog) -> frozenset[str]:
    """Names the fixes define, and so look for at module level (``rules/fixes.toml``)."""
    device = catalog.table("fixes")["device"]
    return frozenset([*device["names"], device["helper_name"]])


def _is_docstring(statement: ast.stmt) -> bool:
    return (
        isinstance(statement, ast.Expr)
        and isinstance(statement.value, ast.Constant)
        and isinstance(statement.value.value, str)
    )


def _guarded_flag(statement: ast.stmt) -> bool:
    """A ``try`` whose body is one assignment: a flag with a fallback, which a run of vendor
    flags reads beside the CUDA one (``Analyser._flag_run``)."""
    return (
        isinstance(statement, ast.Try)
        and len(statement.body) == 1
        and isinstance(statement.body[0], ast.Assign)
    )


def _imports_in(statement: ast.stmt) -> bool:
    """A ``try`` or ``if`` block with an import in it (``fixes._import_statements``)."""
    return isinstance(statement, ast.Try | ast.If) and any(
        isinstance(node, ast.Import | ast.ImportFrom) for node in ast.walk(statement)
    )


def _makes_script(statement: ast.stmt) -> bool:
    """Top-level work (``fixes.is_script``): a loop, a ``with`` block, a bare expression."""
    return isinstance(statement, ast.For | ast.While | ast.With | ast.AsyncWith | ast.Expr)


def _stand_in(statement: ast.stmt) -> str:
    """One line that is the same kind of statement to the fixes: a definition of the same name,
    a call for top-level work, else an assignment to ``_``."""
    if isinstance(statement, ast.ClassDef):
        return f"class {statement.name}: pass\n"
    if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef):
        kind = "async def" if isinstance(statement, ast.AsyncFunctionDef) else "def"
        return f"{kind} {statement.name}(): pass\n"
    if _makes_script(statement):
        return "_portlint_part()\n"
    return "_ = ...\n"


def _chunks(text: str, size: int) -> Iterator[str]:
    """``text`` in pieces of about ``size`` characters, cut before a line at column 0 that can
    start a statement, where every string and bracket before it closes (``slices._complete``)."""
    start = 0
    while len(text) - start > size:
        cut = _next_cut(text, start, start + size)
        if cut is None:
            break
        yield text[start:cut]
        start = cut
    yield text[start:]


def _next_cut(text: str, start: int, at: int) -> int | None:
    """The first place at or after ``at`` to cut. The text since ``start`` is checked whole at
    each place tried: after a few places in doubt (a long string or bracket), the search steps
    ahead twice as far each time, so that a file of one huge statement is read a few times,
    not once per line."""
    doubts = 0
    while True:
        newline = text.find("\n", at)
        while newline >= 0 and not _starts_statement(text, newline + 1):
            newline = text.find("\n", newline + 1)
        if newline < 0 or newline + 1 >= len(text):
            return None
        cut = newline + 1
        if slices._complete(text[start:cut]):
            return cut
        doubts += 1
        at = cut if doubts < DOUBTS_BEFORE_LEAPS else cut + (cut - start)


def _starts_statement(text: str, position: int) -> bool:
    if position >= len(text):
        return False
    first = text[position]
    if first in slices.NOT_A_START or first in "\r\n":
        return False
    if first in "ef" and slices.CONTINUATION.match(text, position):
        return False
    # a definition right after a decorator line would lose its decorators
    previous = text.rfind("\n", 0, position - 1) + 1
    return not text.startswith("@", previous)


def _lines(statement: ast.stmt, lines: list[str]) -> str:
    end = statement.end_lineno or statement.lineno
    return "\n".join(lines[slices.first_line(statement) - 1 : end]) + "\n"


def _has_candidate(text: str) -> bool:
    return CANDIDATE_WORDS.holds_any(text)


def _part_findings(
    source: SourceFile, part: Part, context: list[Part], settings: Settings, catalog: Catalog
) -> list[Finding] | None:
    """The part's selected findings on the file's lines; None when the module built for it does
    not parse (the file is then analysed whole)."""
    from portlint.engine import analyse_source, select_findings

    last = part.first + part.count - 1
    before = [piece for piece in context if piece.first < part.first]
    after = [piece for piece in context if piece.first > last]
    segments: list[Segment] = []
    texts: list[str] = []
    at = 1
    for piece in [*before, part, *after]:
        # A blank line after each context statement: an insertion after it (the fixes' device
        # definition after the imports) lands on that line, which is the line after the
        # statement in the file too, not on the first line of what follows it here.
        filler = "\n" if piece is not part else ""
        segments.append(Segment(at, piece.first, piece.count + len(filler)))
        texts.append(piece.text + filler)
        at += piece.count + len(filler)
    module = source._replace(text="".join(texts))
    own = segments[len(before)]
    findings = select_findings(
        analyse_source(module, "python", catalog, settings), module, settings
    )
    if any(finding.code == "PRT001" for finding in findings):
        return None
    starts = [segment.at for segment in segments]

    def moved(line: int) -> int:
        segment = segments[max(0, bisect.bisect_right(starts, line) - 1)]
        return segment.first + line - segment.at

    def place(span: Span) -> Span:
        if span == TOP:
            return TOP  # an insertion before every statement: the file's too (no imports)
        return Span(moved(span.line), span.column, moved(span.end_line), span.end_column)

    # A finding about the whole file (at TOP: a backend summary) comes from the first part only:
    # a later part with no context before it starts at line 1 of its module too.
    return [
        finding.moved(place)
        for finding in findings
        if own.at <= finding.span.line < own.at + own.count
        and (finding.span != TOP or part.first == 1)
    ]

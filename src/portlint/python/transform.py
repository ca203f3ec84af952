"""Fix mode for Python: the chosen fixes applied as libcst node changes, in one pass.

Detection runs on ``ast`` and describes each fix as text edits at ``ast`` positions
(``portlint.python.fixes``). Here every edit is mapped to the concrete-syntax node at the same
position (``PositionProvider``: the same 1-based lines and code-point columns, parentheses left
out, as portlint's own spans) and becomes a change of that node:

- a replacement edit replaces the expression node; when its text quotes a sub-expression that
  another fix changed, the changed node is put in its place (fixes nest without rounds);
- a tail edit (``.cuda()`` after an object) replaces the call, keeping the object as changed;
- a guard edit puts the statement line under ``if COND:``, indented as the file indents;
- module insertions become statements between the module's top-level statements.

Generated strings never reuse the quote of an f-string they land in (a syntax error before
Python 3.12), and the result must parse with the oldest Python the project supports. libcst is
imported only by this module, which only fix mode loads.
"""

from __future__ import annotations

import ast
import functools
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field

import libcst as cst
from libcst.metadata import (
    Assignment,
    ImportAssignment,
    MetadataWrapper,
    PositionProvider,
    QualifiedNameProvider,
    QualifiedNameSource,
    ScopeProvider,
)

from portlint.fix import FixPolicy
from portlint.model import Edit, Finding, Span

Range = tuple[int, int, int, int]


class Unmappable(Exception):
    """An edit that matches no node: its fix is left out."""


@dataclass
class Plan:
    """What one pass changes, keyed by the id of original nodes."""

    replacements: dict[int, str] = field(default_factory=dict)
    guards: dict[int, str] = field(default_factory=dict)
    #: line -> statements text to insert before the top-level statement starting there.
    insertions: dict[int, list[str]] = field(default_factory=dict)


def _range(span: Span) -> Range:
    return span.line, span.column, span.end_line, span.end_column


class NodeIndex:
    """Nodes by position, outermost first, and each node's parent."""

    def __init__(self, wrapper: MetadataWrapper) -> None:
        self.module = wrapper.module
        positions = wrapper.resolve(PositionProvider)
        self.by_range: dict[Range, list[cst.CSTNode]] = {}
        self.by_end: dict[tuple[int, int], list[cst.CSTNode]] = {}
        self.lines_by_start: dict[tuple[int, int], cst.SimpleStatementLine] = {}
        self.ranges: dict[int, Range] = {}
        for node, where in positions.items():
            key = (where.start.line, where.start.column, where.end.line, where.end.column)
            self.ranges[id(node)] = key
        for node in _preorder(self.module):
            key = self.ranges.get(id(node))
            if key is None:
                continue
            self.by_range.setdefault(key, []).append(node)
            self.by_end.setdefault(key[2:], []).append(node)
            if isinstance(node, cst.SimpleStatementLine):
                self.lines_by_start.setdefault(key[:2], node)

    def expression_at(self, span: Span) -> cst.BaseExpression | None:
        for node in self.by_range.get(_range(span), ()):
            if isinstance(node, cst.BaseExpression):
                return node
        return None

    def tail_owner(self, span: Span) -> tuple[cst.CSTNode, cst.CSTNode] | None:
        """The call or attribute whose object ends where ``span`` starts and which ends with it."""
        for node in self.by_end.get((span.end_line, span.end_column), ()):
            base = None
            if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
                base = node.func.value
            elif isinstance(node, cst.Attribute):
                base = node.value
            if base is not None and self.ranges.get(id(base), ())[2:] == (span.line, span.column):
                return node, base
        return None

    def statement_line_at(self, line: int, column: int) -> cst.SimpleStatementLine | None:
        return self.lines_by_start.get((line, column))


def _preorder(node: cst.CSTNode) -> Iterable[cst.CSTNode]:
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(current.children))


TORCH_NAME = re.compile(r"(?<![\w.])torch\b(?!\s*=[^=])")


class Bindings:
    """What names mean at each fixed site, from libcst's scope and qualified-name metadata: the
    one binding model of fix mode. A fix is applied only where the names it rests on mean torch:

    - a site written through an import (``torch.cuda.x``, ``tc.x`` after ``import torch.cuda as
      tc``, ``sync`` after ``from torch.cuda import synchronize as sync``) must resolve to
      ``torch``; a parameter or local of the same name does not;
    - generated code that names ``torch`` needs ``torch`` bound to the torch module where it
      lands (an optional ``try: import torch`` / ``except ImportError: torch = None`` counts and
      stays optional), or an ``import torch`` that the fix itself adds at module level.
    """

    def __init__(self, wrapper: MetadataWrapper, index: NodeIndex) -> None:
        self.index = index
        self.scopes = wrapper.resolve(ScopeProvider)
        self.qualified = wrapper.resolve(QualifiedNameProvider)

    def resolves(self, finding: Finding) -> bool:
        assert finding.fix is not None
        site = self.index.expression_at(finding.span)
        if site is not None and not self._site_means_torch(site):
            return False
        adds_import = any(
            _is_insertion(e) and e.content.startswith("import torch") for e in finding.fix.edits
        )
        for edit in finding.fix.edits:
            if _is_insertion(edit) or not TORCH_NAME.search(edit.content):
                continue
            node = self._node_of(edit)
            if node is not None and not self._torch_bound_at(node, adds_import):
                return False
        return True

    def _node_of(self, edit: Edit) -> cst.CSTNode | None:
        if _is_guard(edit):
            return self.index.statement_line_at(edit.span.line, edit.span.column)
        node = self.index.expression_at(edit.span)
        if node is None:
            owner = self.index.tail_owner(edit.span)
            node = owner[0] if owner else None
        return node

    def _site_means_torch(self, site: cst.CSTNode) -> bool:
        """A name or dotted name bound by an import must resolve to torch."""
        if not isinstance(site, cst.Name | cst.Attribute):
            return True
        value = self.qualified.get(site)
        names = value() if callable(value) else value or set()  # computed lazily
        imported = [q for q in names if q.source is QualifiedNameSource.IMPORT]
        if not imported:
            # ``torch.x`` with ``torch`` a local or parameter is not torch.
            return not _leftmost_is_bound_locally(site, self.scopes)
        return any(q.name == "torch" or q.name.startswith("torch.") for q in imported)

    def _torch_bound_at(self, node: cst.CSTNode, adds_import: bool) -> bool:
        scope = self.scopes.get(node)
        if scope is None:
            return True
        assignments = list(scope["torch"])
        if not assignments:
            return adds_import
        return any(_imports_torch(a) for a in assignments)


def _leftmost_is_bound_locally(site: cst.BaseExpression, scopes) -> bool:
    while isinstance(site, cst.Attribute):
        site = site.value
    if not isinstance(site, cst.Name) or site.value != "torch":
        return False
    scope = scopes.get(site)
    if scope is None:
        return False
    return any(
        isinstance(a, Assignment) and not isinstance(a, ImportAssignment) for a in scope[site.value]
    )


def _imports_torch(assignment) -> bool:
    """An import that binds its name to the torch package (``import torch``, ``import
    torch.cuda``, ``import torch as torch``)."""
    if not isinstance(assignment, ImportAssignment):
        return False
    statement = assignment.node
    if not isinstance(statement, cst.Import):
        return False
    for alias in statement.names:
        name, asname = alias.evaluated_name, alias.evaluated_alias
        if asname is None and (name == "torch" or name.startswith("torch.")):
            return True
        if asname == "torch" and name == "torch":
            return True
    return False


def _is_insertion(edit: Edit) -> bool:
    zero = edit.span.line == edit.span.end_line and edit.span.column == edit.span.end_column
    return zero and edit.content.endswith(("\n", "\r"))


def _is_guard(edit: Edit) -> bool:
    zero = edit.span.line == edit.span.end_line and edit.span.column == edit.span.end_column
    return zero and edit.content.startswith("if ") and not _is_insertion(edit)


def _guard_condition(edit: Edit) -> str:
    header = edit.content.splitlines()[0].rstrip()
    return header[len("if ") : -1]


class Planner:
    """Maps the edits of the chosen fixes to nodes, fix by fix; a fix that cannot be mapped
    whole, or that would undo another, is left out."""

    def __init__(self, index: NodeIndex, source: str) -> None:
        self.index = index
        self.source = source
        self.plan = Plan()
        self.lines = source.splitlines(keepends=True)
        #: line -> the changes taken so far that cover it (a change spans few lines, so
        #: checking a new one against them keeps planning linear in the number of fixes).
        self.taken: dict[int, list[tuple[Range, str]]] = {}

    def add(self, finding: Finding) -> bool:
        replacements: dict[int, str] = {}
        guards: dict[int, str] = {}
        insertions: list[tuple[int, str]] = []
        claimed: list[tuple[Range, str]] = []
        for edit in finding.fix.edits:
            if _is_insertion(edit):
                insertions.append((edit.span.line, edit.content))
                continue
            if _is_guard(edit):
                line = self.index.statement_line_at(edit.span.line, edit.span.column)
                if line is None:
                    return False
                guards[id(line)] = _guard_condition(edit)
                continue
            node = self.index.expression_at(edit.span)
            content = edit.content
            if node is None:
                owner = self.index.tail_owner(edit.span)
                if owner is None:
                    return False
                node, base = owner
                content = self.index.module.code_for_node(base) + content
            key = self.index.ranges[id(node)]
            if id(node) in self.plan.replacements and self.plan.replacements[id(node)] != content:
                return False
            claimed.append((key, content))
            replacements[id(node)] = content
        if not all(self._compatible(key, content) for key, content in claimed):
            return False
        self.plan.replacements.update(replacements)
        self.plan.guards.update(guards)
        for line, text in insertions:
            texts = self.plan.insertions.setdefault(line, [])
            if text not in texts:
                # Imports first: the definitions after them use what they bind.
                texts.insert(0 if text.startswith("import ") else len(texts), text)
        for key, content in claimed:
            for line in range(key[0], key[2] + 1):
                self.taken.setdefault(line, []).append((key, content))
        return True

    def _compatible(self, key: Range, content: str) -> bool:
        """Disjoint from every change taken so far, or nested in one whose text quotes it."""
        nearby = {taken for line in range(key[0], key[2] + 1) for taken in self.taken.get(line, ())}
        for other, other_content in nearby:
            if key == other:
                if content != other_content:
                    return False
            elif _inside(key, other):
                if self._text(key) not in other_content:
                    return False
            elif _inside(other, key):
                if self._text(other) not in content:
                    return False
            elif _overlap(key, other):
                return False
        return True

    def _text(self, key: Range) -> str:
        lines = self.lines
        if key[0] == key[2]:
            return lines[key[0] - 1][key[1] : key[3]]
        parts = [lines[key[0] - 1][key[1] :], *lines[key[0] : key[2] - 1]]
        parts.append(lines[key[2] - 1][: key[3]])
        return "".join(parts)


def _inside(inner: Range, outer: Range) -> bool:
    return outer[:2] <= inner[:2] and inner[2:] <= outer[2:]


def _overlap(a: Range, b: Range) -> bool:
    return a[:2] < b[2:] and b[:2] < a[2:]


@functools.lru_cache(maxsize=4096)
def _parse_expression(content: str) -> cst.BaseExpression | None:
    """Replacement texts repeat (``DEVICE``, the same guarded call): parse each once. CST nodes
    are immutable, so one parsed node can stand in several places."""
    try:
        return cst.parse_expression(content)
    except cst.ParserSyntaxError:
        return None


class Requote(cst.CSTTransformer):
    """Strings in generated code that would end the f-string around them take the other quote."""

    def __init__(self, forbidden: str) -> None:
        self.forbidden = forbidden
        self.impossible = False

    def leave_SimpleString(self, original, updated):
        prefix_length = len(updated.value) - len(updated.value.lstrip("rRbBuU"))
        prefix, body = updated.value[:prefix_length], updated.value[prefix_length:]
        if not body.startswith(self.forbidden):
            return updated
        inner = body[1:-1]
        other = "'" if self.forbidden == '"' else '"'
        if body[:3] in ('"""', "'''") or other in inner or "\\" in inner:
            self.impossible = True
            return updated
        return updated.with_changes(value=f"{prefix}{other}{inner}{other}")

    def leave_FormattedString(self, original, updated):
        if updated.end != self.forbidden:
            if updated.end.startswith(self.forbidden):
                self.impossible = True
            return updated
        other = "'" if self.forbidden == '"' else '"'
        return updated.with_changes(start=updated.start[:-1] + other, end=other)


class Substitute(cst.CSTTransformer):
    """In a freshly parsed replacement, the quoted sub-expressions that other fixes changed."""

    def __init__(self, changed: list[tuple[cst.CSTNode, cst.CSTNode]]) -> None:
        self.changed = changed
        self.used: set[int] = set()

    def on_leave(self, original, updated):
        for position, (before, after) in enumerate(self.changed):
            if position not in self.used and original.deep_equals(before):
                self.used.add(position)
                return after
        return updated


class Apply(cst.CSTTransformer):
    def __init__(self, plan: Plan, index: NodeIndex) -> None:
        self.plan = plan
        self.index = index
        self.quotes: list[str] = []
        #: (original node, its new form) for each replacement made, innermost first.
        self.changed: list[tuple[cst.CSTNode, cst.CSTNode]] = []
        self.failed: set[int] = set()
        self.self_documenting: list[bool] = []
        #: id(node) -> how many changes had been made when the walk entered it.
        self.marks: dict[int, int] = {}

    def on_visit(self, node) -> bool:
        if id(node) in self.plan.replacements:
            self.marks[id(node)] = len(self.changed)
        return super().on_visit(node)

    def visit_FormattedString(self, node) -> bool:
        self.quotes.append(node.end)
        return True

    def leave_FormattedString(self, original, updated):
        self.quotes.pop()
        return updated

    def visit_FormattedStringExpression(self, node) -> bool:
        # f"{x.is_cuda=}" prints its own source text: a rewrite would change the output.
        self.self_documenting.append(node.equal is not None)
        return True

    def leave_FormattedStringExpression(self, original, updated):
        self.self_documenting.pop()
        return updated

    def on_leave(self, original, updated):
        result = super().on_leave(original, updated)
        content = self.plan.replacements.get(id(original))
        if content is not None:
            return self._replace(original, result, content)
        condition = self.plan.guards.get(id(original))
        if condition is not None and isinstance(result, cst.SimpleStatementLine):
            return self._guard(result, condition)
        return result

    def _replace(self, original, updated, content: str):
        if any(self.self_documenting):
            self.failed.add(id(original))
            return updated
        new = _parse_expression(content)
        if new is None:
            self.failed.add(id(original))
            return updated
        inside = self.changed[self.marks.get(id(original), len(self.changed)) :]
        if inside:
            substitute = Substitute(inside)
            new = new.visit(substitute)
            if len(substitute.used) != len(inside):
                self.failed.add(id(original))
                return updated
        if any(len(quote) == 1 for quote in self.quotes):
            for quote in {q for q in self.quotes if len(q) == 1}:
                requote = Requote(quote)
                new = new.visit(requote)
                if requote.impossible:
                    self.failed.add(id(original))
                    return updated
        if getattr(updated, "lpar", None) and hasattr(new, "lpar"):
            # The parentheses around the original stay; ones the new text brings are kept too.
            new = new.with_changes(lpar=[*updated.lpar, *new.lpar], rpar=[*new.rpar, *updated.rpar])
        self.changed.append((original, new))
        return new

    def _guard(self, line: cst.SimpleStatementLine, condition: str) -> cst.If:
        return cst.If(
            test=cst.parse_expression(condition),
            body=cst.IndentedBlock(body=[line.with_changes(leading_lines=[])]),
            leading_lines=line.leading_lines,
        )

    def leave_Module(self, original, updated):
        if not self.plan.insertions:
            return updated
        body: list[cst.BaseStatement] = []
        pending = sorted(self.plan.insertions.items())
        for before, after in zip(original.body, updated.body, strict=True):
            start = self.index.ranges[id(before)][0]
            while pending and pending[0][0] <= start:
                statements, footer = _statements(pending.pop(0)[1], updated)
                body.extend(statements)
                if len(after.leading_lines) < len(footer):
                    after = after.with_changes(leading_lines=[*footer, *after.leading_lines])
            body.append(after)
        for _, texts in pending:
            body.extend(_statements(texts, updated)[0])
        return updated.with_changes(body=body)


def _statements(
    texts: list[str], module: cst.Module
) -> tuple[list[cst.BaseStatement], list[cst.EmptyLine]]:
    """Inserted lines as statements, and the blank lines that should follow them."""
    parsed = cst.parse_module(
        "".join(texts), config=cst.PartialParserConfig(default_indent=module.default_indent)
    )
    statements = list(parsed.body)
    if statements and parsed.header:
        first = statements[0]
        statements[0] = first.with_changes(leading_lines=[*parsed.header, *first.leading_lines])
    footer = [line for line in parsed.footer if line.comment is None]
    return statements, footer


def apply_python_fixes(
    text: str, findings: Iterable[Finding], policy: FixPolicy
) -> tuple[str, list[Finding]]:
    """The text with every compatible allowed fix applied in one pass, and those findings."""
    try:
        wrapper = MetadataWrapper(cst.parse_module(text), unsafe_skip_copy=True)
        index = NodeIndex(wrapper)
    except (cst.ParserSyntaxError, RecursionError):
        return text, []
    planner = Planner(index, text)
    candidates = [f for f in findings if policy.allows(f.fix)]
    if candidates:
        bindings = Bindings(wrapper, index)
        candidates = [f for f in candidates if bindings.resolves(f)]
    # Outer sites before the sites inside them, so nesting is judged from the outside.
    candidates.sort(
        key=lambda f: (f.span.line, f.span.column, -f.span.end_line, -f.span.end_column)
    )
    chosen = [f for f in candidates if planner.add(f)]
    if not chosen:
        return text, []
    applier = Apply(planner.plan, index)
    fixed = index.module.visit(applier)
    if applier.failed:
        # Some change could not be made as planned: leave out the fixes that needed it.
        failed_ranges = [index.ranges[node] for node in applier.failed]
        kept = [f for f in chosen if not _touches(f, failed_ranges)]
        if len(kept) < len(chosen):
            return apply_python_fixes(text, kept, policy)
    return fixed.code, chosen


def _touches(finding: Finding, ranges: list[Range]) -> bool:
    for edit in finding.fix.edits:
        key = _range(edit.span)
        if any(_inside(key, r) or _inside(r, key) or _overlap(key, r) for r in ranges):
            return True
    return False


def new_syntax_problem(original: str, fixed: str, min_python: str = "3.10") -> str | None:
    """A complaint when ``fixed`` does not parse with the project's oldest Python although the
    original did; None otherwise."""
    version = tuple(int(part) for part in min_python.split(".")[:2])
    after = syntax_problem(fixed, version)
    if after is None:
        return None
    if syntax_problem(original, version) is None:
        return after
    return syntax_problem(fixed, None)  # the original needs a newer Python itself


def syntax_problem(text: str, version: tuple[int, ...] | None) -> str | None:
    try:
        if version is None:
            ast.parse(text)
            return None
        ast.parse(text, feature_version=version)
    except SyntaxError as error:
        return f"line {error.lineno}: {error.msg}"
    # Before 3.12 the interpreter's own parser already refuses a reused quote in an f-string.
    if version < (3, 12) and sys.version_info >= (3, 12) and ("f'" in text or 'f"' in text):
        return _fstring_quote_problem(text)
    return None


def _fstring_quote_problem(text: str) -> str | None:
    """Before Python 3.12 an f-string's expressions cannot hold its own quote or a backslash."""
    try:
        module = cst.parse_module(text)
    except cst.ParserSyntaxError as error:
        return str(error).splitlines()[0]
    finder = _FStringCheck()
    module.visit(finder)
    return finder.problem


class _FStringCheck(cst.CSTVisitor):
    def __init__(self) -> None:
        self.quotes: list[str] = []
        self.problem: str | None = None

    def visit_FormattedString(self, node) -> bool:
        if node.end in self.quotes or any(node.end.startswith(q) for q in self.quotes):
            self.problem = "an f-string reuses the quote of the f-string around it"
        self.quotes.append(node.end)
        return True

    def leave_FormattedString(self, node) -> None:
        self.quotes.pop()

    def visit_SimpleString(self, node) -> bool:
        body = node.value.lstrip("rRbBuU")
        if any(len(q) == 1 and body.startswith(q) for q in self.quotes):
            self.problem = "a string reuses the quote of the f-string around it"
        return False


def fix_python(
    text: str, findings: Iterable[Finding], policy: FixPolicy, settings
) -> tuple[str, list[Finding], str | None]:
    """Fix mode's entry point: one transform pass, unused torch.cuda imports dropped, and the
    result checked against the project's oldest Python (``requires-python``, else 3.10)."""
    from portlint.python.tidy import tidy_after_fix

    fixed, chosen = apply_python_fixes(text, findings, policy)
    if not chosen:
        return text, [], None
    fixed = tidy_after_fix(text, fixed)
    problem = new_syntax_problem(text, fixed, getattr(settings, "min_python", "3.10"))
    return fixed, chosen, problem

"""Resolving names through imports: which local names mean ``torch``, ``torch.cuda``, ...

A deliberately small model of Python scoping: the module scope and one scope per function. A name
that a function binds (parameter, assignment, loop variable, ...) hides the module's binding in the
whole function, as in Python. At module level an import wins over other bindings, because
``try: import torch`` / ``except ImportError: torch = None`` is the common shape.
"""

from __future__ import annotations

import ast
import functools
import re

from portlint.python.tree import child_nodes

#: Bound in a scope, but not to a module or object we know.
UNKNOWN = None
#: What ``dict.get`` gives for a name a scope does not bind.
_ABSENT = object()


class Scope:
    """The names bound in one scope. A function's or class's names are found when first asked
    for (``bindings``): a function the walk enters may never look a name up."""

    def __init__(
        self,
        kind: str = "function",
        body: list[ast.AST] | None = None,
        span: tuple[int, int] = (0, 0),
    ) -> None:
        #: "module", "function" (a def or lambda: its body runs later), "class" (its names are
        #: seen by its own body only, not by its methods) or "comprehension".
        self.kind = kind
        #: name -> expressions assigned to it in this scope, for device-string and backend flows.
        self.assigned_values: dict[str, list[ast.expr]] = {}
        self._bindings: dict[str, str | None] = {}
        #: The statements whose names are still to be bound into ``_bindings``, and the first
        #: and last lines of the definition they are the body of.
        self._body, self._span = body, span
        #: The file's lines (``NameResolver.lines``), to find the names faster: None, walk
        #: every node of the body.
        self.lines: list[str] | None = None

    @functools.cached_property
    def bindings(self) -> dict[str, str | None]:
        if self._body is not None:
            body, self._body = self._body, None
            lines, (first, last) = self.lines, self._span
            if lines is not None and ":=" in "\n".join(lines[first - 1 : last]):
                lines = None  # ``:=`` binds names in expressions: walk them all
            _bind_statements(self._bindings, body, lines)
        return self._bindings


def import_bindings(node: ast.Import | ast.ImportFrom) -> dict[str, str]:
    """Local name -> qualified name for one import statement."""
    bindings = {}
    if isinstance(node, ast.Import):
        for alias in node.names:
            if alias.asname:
                bindings[alias.asname] = alias.name
            else:
                top = alias.name.split(".")[0]
                bindings[top] = top
    elif node.level == 0 and node.module:
        for alias in node.names:
            if alias.name != "*":
                bindings[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return bindings


#: The node types that can bind a name in a function.
BINDING_NODES = (
    ast.Name,
    ast.Import,
    ast.ImportFrom,
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.ClassDef,
    ast.ExceptHandler,
    ast.Global,
    ast.Nonlocal,
)


def function_locals(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> Scope:
    """The names a function binds, with qualified names for the ones it imports."""
    body = node.body if isinstance(node.body, list) else [node.body]
    scope = Scope(body=body, span=(node.lineno, node.end_lineno or node.lineno))
    arguments = node.args
    for arg in (
        *arguments.posonlyargs,
        *arguments.args,
        *arguments.kwonlyargs,
        arguments.vararg,
        arguments.kwarg,
    ):
        if arg is not None:
            scope._bindings[arg.arg] = UNKNOWN
    return scope


def class_locals(node: ast.ClassDef) -> Scope:
    """The names a class body binds (``torch = None`` as a class attribute)."""
    return Scope(kind="class", body=node.body, span=(node.lineno, node.end_lineno or node.lineno))


#: The keyword ``for`` as the tokenizer can read it: not inside a name (a number may end right
#: before it, ``1jfor``). Matches every ``for`` of a comprehension, and a few more.
#: (Written to start with the literal, which the search skips ahead to.)
FOR_WORD = re.compile(r"for(?![A-Za-z0-9_])(?:(?<![A-Za-z_]for)|(?<=[0-9][jJ]for))")


def _may_bind(node: ast.AST, lines: list[str]) -> bool:
    """An expression can bind a name in the scope it runs in only through ``:=`` or through a
    comprehension the walk enters (one that is the first iterable of another, or a default):
    with no ``:=`` in the file, only when its lines hold the word ``for``."""
    first = getattr(node, "lineno", None)
    if first is None:
        return False  # an operator: no name in it
    last = node.end_lineno or first
    if first == last:
        line = lines[first - 1]
        return "for" in line and FOR_WORD.search(line) is not None
    return any("for" in line and FOR_WORD.search(line) for line in lines[first - 1 : last])


def _binding_children(node: ast.AST, lines: list[str]) -> list[ast.AST]:
    """``child_nodes(node)`` less the expressions that cannot bind a name: names read,
    constants, and the other expressions that are no target (``_may_bind``)."""
    kept = []
    for child in child_nodes(node):
        kind = type(child)
        if kind is ast.Name:
            if not isinstance(child.ctx, ast.Load):
                kept.append(child)
        elif kind is not ast.Constant and (
            not isinstance(child, ast.expr)
            or isinstance(getattr(child, "ctx", None), ast.Store | ast.Del)
            or _may_bind(child, lines)
        ):
            kept.append(child)
    return kept


def _bind_statements(
    bindings: dict[str, str | None], body: list[ast.AST], lines: list[str] | None = None
) -> None:
    """Record in ``bindings`` the names that ``body`` binds in its scope. ``lines``: the file's
    lines, when it holds no ``:=``: then the expressions that cannot bind a name are not
    walked (``_binding_children``; the same bindings in the same order, at about half the
    cost)."""
    for statement in body:
        # A walk that does not enter nested functions, lambdas, classes or comprehensions
        # (their own scopes), except for what runs in this scope: decorators, defaults, a
        # comprehension's first iterable, and ``:=`` targets in a comprehension (which bind
        # here). One loop, no generator; names and constants (half the nodes) have no children
        # to ask for. The order of the walk decides between an import and an assignment of one
        # name: whichever comes first.
        if isinstance(statement, NEW_SCOPES):  # a nested definition binds its name only
            _bind(bindings, statement)
            stack = runs_here(statement, lines)
        else:
            stack = [statement]
        while stack:
            current = stack.pop()
            kind = type(current)
            if kind is ast.Name:
                if isinstance(current.ctx, ast.Store | ast.Del):
                    bindings.setdefault(current.id, UNKNOWN)
                continue
            if kind is ast.Constant:
                continue
            if kind in BINDING_KINDS:
                _bind(bindings, current)
            children = child_nodes(current) if lines is None else _binding_children(current, lines)
            for child in children:
                if isinstance(child, NEW_SCOPES):
                    _bind(bindings, child)  # the definition binds its name here
                    stack.extend(runs_here(child, lines))
                elif isinstance(child, ast.Lambda):
                    stack.extend(child.args.defaults)
                elif isinstance(child, COMPREHENSIONS):
                    stack.append(child.generators[0].iter)
                    if lines is None:  # else the file holds no ``:=``
                        stack.extend(
                            n.target for n in ast.walk(child) if isinstance(n, ast.NamedExpr)
                        )
                else:
                    stack.append(child)


def runs_here(
    node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef, lines: list[str] | None = None
) -> list[ast.AST]:
    """What of a definition runs in the scope around it: decorators, and a function's default
    values or a class's bases and keywords (``def f(x=(n := 1))`` binds ``n`` there); with
    ``lines`` (``_bind_statements``), only what of it can bind a name."""
    if isinstance(node, ast.ClassDef):
        found = [*node.decorator_list, *node.bases, *node.keywords]
    else:
        defaults = [d for d in node.args.kw_defaults if d is not None]
        found = [*node.decorator_list, *node.args.defaults, *defaults]
    return found if lines is None else [part for part in found if _may_bind(part, lines)]


#: The node types other than names that can bind a name.
BINDING_KINDS = frozenset(BINDING_NODES) - {ast.Name}


def _bind(bindings: dict[str, str | None], node: ast.AST) -> None:
    if isinstance(node, ast.Import | ast.ImportFrom):
        bindings.update(import_bindings(node))
    elif _binds_own_name(node):
        bindings[node.name] = UNKNOWN
    elif isinstance(node, ast.Global | ast.Nonlocal):
        for name in node.names:
            bindings.pop(name, None)


def _binds_own_name(node: ast.AST) -> bool:
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return True
    return isinstance(node, ast.ExceptHandler) and node.name is not None


#: Statements whose blocks run later or elsewhere, not as part of the block they sit in.
NEW_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def comprehension_locals(node: ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp):
    """The names a comprehension's ``for`` targets bind: they hide outer names inside it only."""
    scope = Scope(kind="comprehension")
    for generator in node.generators:
        for child in ast.walk(generator.target):
            if isinstance(child, ast.Name):
                scope.bindings[child.id] = UNKNOWN
    return scope


class NameResolver:
    def __init__(self) -> None:
        self.scopes: list[Scope] = [Scope(kind="module")]
        #: The file's lines, given to the scopes pushed (``Scope.lines``).
        self.lines: list[str] | None = None

    @property
    def module(self) -> Scope:
        return self.scopes[0]

    @property
    def current(self) -> Scope:
        return self.scopes[-1]

    def bind_import(self, node: ast.Import | ast.ImportFrom) -> None:
        self.current.bindings.update(import_bindings(node))

    def bind_module_assignment(self, name: str) -> None:
        """A module-level assignment hides a name unless an import already binds it."""
        if self.module.bindings.get(name) is UNKNOWN:
            self.module.bindings[name] = UNKNOWN

    def push(self, scope: Scope) -> None:
        scope.lines = self.lines
        self.scopes.append(scope)

    def pop(self) -> None:
        self.scopes.pop()

    def visible(self) -> list[Scope]:
        """The scopes a name here is looked up in, innermost first: as in Python, a class body's
        names are seen by the body itself, not by the functions defined in it."""
        current = self.current
        return [s for s in reversed(self.scopes) if s.kind != "class" or s is current]

    def runs_at_import(self) -> bool:
        """Code here runs when the module is imported: no function scope encloses it."""
        return all(scope.kind != "function" for scope in self.scopes)

    def lookup(self, name: str) -> str | None:
        current = self.scopes[-1]
        for scope in reversed(self.scopes):  # as ``visible``, without building its list
            if scope.kind == "class" and scope is not current:
                continue
            found = scope.bindings.get(name, _ABSENT)
            if found is not _ABSENT:
                return found
        return None

    def qualified_name(self, node: ast.expr) -> str | None:
        """``torch.cuda.synchronize`` for ``t.cuda.synchronize`` after ``import torch as t``."""
        parts = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name):
            return None
        base = self.lookup(node.id)
        if base is None:
            return None
        return ".".join([base, *reversed(parts)])

    def record_value(self, name: str, value: ast.expr) -> None:
        self.current.assigned_values.setdefault(name, []).append(value)

    def values_of(self, name: str) -> list[ast.expr]:
        for scope in self.visible():
            if name in scope.assigned_values:
                return scope.assigned_values[name]
            if scope is not self.module and name in scope.bindings:
                return []
        return []

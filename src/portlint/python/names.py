"""Resolving names through imports: which local names mean ``torch``, ``torch.cuda``, ...

A deliberately small model of Python scoping: the module scope and one scope per function. A name
that a function binds (parameter, assignment, loop variable, ...) hides the module's binding in the
whole function, as in Python. At module level an import wins over other bindings, because
``try: import torch`` / ``except ImportError: torch = None`` is the common shape.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from portlint.python.tree import child_nodes

#: Bound in a scope, but not to a module or object we know.
UNKNOWN = None


@dataclass
class Scope:
    bindings: dict[str, str | None] = field(default_factory=dict)
    #: name -> expressions assigned to it in this scope, for device-string and backend flows.
    assigned_values: dict[str, list[ast.expr]] = field(default_factory=dict)
    #: "module", "function" (a def or lambda: its body runs later), "class" (its names are
    #: seen by its own body only, not by its methods) or "comprehension".
    kind: str = "function"


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
    scope = Scope()
    arguments = node.args
    for arg in (
        *arguments.posonlyargs,
        *arguments.args,
        *arguments.kwonlyargs,
        arguments.vararg,
        arguments.kwarg,
    ):
        if arg is not None:
            scope.bindings[arg.arg] = UNKNOWN
    body = node.body if isinstance(node.body, list) else [node.body]
    _bind_statements(scope, body)
    return scope


def class_locals(node: ast.ClassDef) -> Scope:
    """The names a class body binds (``torch = None`` as a class attribute)."""
    scope = Scope(kind="class")
    _bind_statements(scope, node.body)
    return scope


def _bind_statements(scope: Scope, body: list[ast.AST]) -> None:
    for statement in body:
        # A walk that does not enter nested functions, lambdas, classes or comprehensions
        # (their own scopes), except for what runs in this scope: decorators, defaults, a
        # comprehension's first iterable, and ``:=`` targets in a comprehension (which bind
        # here). One loop, no generator; names and constants (half the nodes) have no children
        # to ask for. The order of the walk decides between an import and an assignment of one
        # name: whichever comes first.
        if isinstance(statement, NEW_SCOPES):  # a nested definition binds its name only
            _bind(scope, statement)
            stack = runs_here(statement)
        else:
            stack = [statement]
        while stack:
            current = stack.pop()
            kind = type(current)
            if kind is ast.Name:
                if isinstance(current.ctx, ast.Store | ast.Del):
                    scope.bindings.setdefault(current.id, UNKNOWN)
                continue
            if kind is ast.Constant:
                continue
            if kind in BINDING_KINDS:
                _bind(scope, current)
            for child in child_nodes(current):
                if isinstance(child, NEW_SCOPES):
                    _bind(scope, child)  # the definition binds its name here
                    stack.extend(runs_here(child))
                elif isinstance(child, ast.Lambda):
                    stack.extend(child.args.defaults)
                elif isinstance(child, COMPREHENSIONS):
                    stack.append(child.generators[0].iter)
                    stack.extend(n.target for n in ast.walk(child) if isinstance(n, ast.NamedExpr))
                else:
                    stack.append(child)


def runs_here(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> list[ast.AST]:
    """What of a definition runs in the scope around it: decorators, and a function's default
    values or a class's bases and keywords (``def f(x=(n := 1))`` binds ``n`` there)."""
    if isinstance(node, ast.ClassDef):
        return [*node.decorator_list, *node.bases, *node.keywords]
    defaults = [d for d in node.args.kw_defaults if d is not None]
    return [*node.decorator_list, *node.args.defaults, *defaults]


#: The node types other than names that can bind a name.
BINDING_KINDS = frozenset(BINDING_NODES) - {ast.Name}


def _bind(scope: Scope, node: ast.AST) -> None:
    if isinstance(node, ast.Import | ast.ImportFrom):
        scope.bindings.update(import_bindings(node))
    elif _binds_own_name(node):
        scope.bindings[node.name] = UNKNOWN
    elif isinstance(node, ast.Global | ast.Nonlocal):
        for name in node.names:
            scope.bindings.pop(name, None)


def _binds_own_name(node: ast.AST) -> bool:
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return True
    return isinstance(node, ast.ExceptHandler) and node.name is not None


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
        for scope in self.visible():
            if name in scope.bindings:
                return scope.bindings[name]
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
            if name in scope.bindings and scope is not self.module:
                return []
        return []

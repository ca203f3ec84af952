"""Names that only a CUDA arm binds, read after it: the other targets fail there.

``if torch.cuda.is_available(): n_gpu = torch.cuda.device_count()`` then ``total / n_gpu``: a
target that skips the arm never binds ``n_gpu``, so the read raises (``NameError``,
``UnboundLocalError``). The test does not silently fall back to the CPU there, it fails, on a
CPU-only machine too.

The rule is kept narrow, so that what it finds is certain: the chain is in a function (the
analyser does not ask at module level, whose reads a large file's parts do not each hold); the
name is bound in the arm and nowhere else in the function outside the chain (no earlier default,
no parameter, no ``global``); the chain's final ``else`` neither binds it nor leaves; and a
statement that runs after the chain whenever the chain runs reads it: not in the arm of another
test, in a ``try`` with handlers, after the first operand of an ``and``/``or``, or in a nested
function. A function that asks ``locals()`` or ``globals()`` is left alone.
"""

from __future__ import annotations

import ast
import itertools
from collections.abc import Iterator

from portlint.python.names import COMPREHENSIONS, NEW_SCOPES
from portlint.python.tree import TERMINATORS, child_nodes, walk

#: Definitions that open a scope of their own: what they bind or read is not the scope's.
NESTED_SCOPES = (*NEW_SCOPES, ast.Lambda, *COMPREHENSIONS)

#: Calls that read a scope's names by string: a name may be tested for before it is read.
SCOPE_READERS = frozenset({"locals", "globals", "vars", "dir"})

#: ``try`` statements (``try``/``except*`` is Python 3.11+).
TRIES: tuple[type[ast.stmt], ...] = (ast.Try, *((ast.TryStar,) if hasattr(ast, "TryStar") else ()))


def unbound_read(
    path: list[ast.AST],
    arm: list[ast.stmt],
    fallthrough: list[ast.stmt] | None,
) -> str | None:
    """The first name that ``arm`` (a CUDA arm of an ``if`` chain) binds, that a target
    skipping it leaves unbound, and that is read after the chain; or None. ``path``: the
    function that holds the chain, then each statement down to the chain.
    ``fallthrough``: the chain's final ``else`` block, if it has one."""
    scope, chain = path[0], path[-1]
    if not arm or isinstance(arm[-1], TERMINATORS):
        return None  # what the arm binds never reaches what follows
    if fallthrough and isinstance(fallthrough[-1], TERMINATORS):
        return None  # the other targets leave before the read
    bound = _bound(arm)
    if fallthrough:
        bound -= _bound(fallthrough)
    if not bound:
        return None
    inside = {id(node) for node in walk(chain)}
    elsewhere = set(_parameters(scope))
    for node in _scope_nodes(scope):
        if id(node) in inside:
            continue
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) in SCOPE_READERS:
            return None
        elsewhere |= _bound_by(node)
    bound -= elsewhere
    for statement in _statements_after(path):
        for node in _straight_nodes(statement):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in bound:
                return node.id
    return None


def _statements_after(path: list[ast.AST]) -> Iterator[ast.stmt]:
    """The statements that run after the chain on the way out of its scope, in order: those
    after it in its block, then those after the statement holding that block, and so on."""
    for holder, held in reversed(list(itertools.pairwise(path))):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(holder, field, None)
            if isinstance(block, list) and held in block:
                yield from block[block.index(held) + 1 :]
                break


def _straight_nodes(statement: ast.stmt) -> Iterator[ast.AST]:
    """The nodes of a statement that run whenever it runs, in source order: not those in the
    arms of a test, in a ``try`` with handlers, after the first operand of an ``and``/``or``, or
    in a nested definition."""
    if isinstance(statement, ast.If | ast.While):
        yield from _expression_nodes(statement.test)
        return
    if isinstance(statement, TRIES):
        return  # a handler may catch the failing read
    if isinstance(statement, ast.For | ast.AsyncFor):
        yield from _expression_nodes(statement.iter)
        for inner in statement.body:
            yield from _straight_nodes(inner)
        return
    if isinstance(statement, ast.With | ast.AsyncWith):
        for item in statement.items:
            yield from _expression_nodes(item.context_expr)
        for inner in statement.body:
            yield from _straight_nodes(inner)
        return
    if isinstance(statement, (ast.Match, *NESTED_SCOPES)):
        return
    yield from _expression_nodes(statement)


def _expression_nodes(node: ast.AST) -> Iterator[ast.AST]:
    """The nodes under ``node`` that always run with it, in source order (reads before the
    stores of an assignment)."""
    if isinstance(node, NESTED_SCOPES):
        return
    if isinstance(node, ast.IfExp):
        yield from _expression_nodes(node.test)
        return
    if isinstance(node, ast.BoolOp):
        yield from _expression_nodes(node.values[0])
        return
    if isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign):
        if node.value is not None:
            yield from _expression_nodes(node.value)
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        for target in targets:
            yield from _expression_nodes(target)
        return
    yield node
    for child in child_nodes(node):
        yield from _expression_nodes(child)


def _bound(block: list[ast.stmt]) -> set[str]:
    """The names a block binds in its own scope."""
    names: set[str] = set()
    for statement in block:
        names |= _bound_by(statement)
        for node in _scope_nodes(statement):
            names |= _bound_by(node)
    return names


def _bound_by(node: ast.AST) -> set[str]:
    """The names one node binds (or declares bound elsewhere) in the scope it sits in."""
    if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
        return {node.id}
    if isinstance(node, ast.Import | ast.ImportFrom):
        return {(alias.asname or alias.name).split(".")[0] for alias in node.names}
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return {node.name}
    if isinstance(node, ast.Global | ast.Nonlocal):
        return set(node.names)
    if isinstance(node, ast.ExceptHandler) and node.name:
        return {node.name}
    if isinstance(node, ast.MatchAs | ast.MatchStar) and node.name:
        return {node.name}
    if isinstance(node, ast.MatchMapping) and node.rest:
        return {node.rest}
    return set()


def _parameters(scope: ast.AST) -> Iterator[str]:
    if isinstance(scope, ast.FunctionDef | ast.AsyncFunctionDef):
        args = scope.args
        for arg in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg):
            if arg is not None:
                yield arg.arg


def _scope_nodes(scope: ast.AST) -> Iterator[ast.AST]:
    """The nodes of a scope's own code: a nested definition's name, defaults and decorators,
    not its body."""
    todo: list[ast.AST] = child_nodes(scope)
    while todo:
        node = todo.pop()
        yield node
        if isinstance(node, NESTED_SCOPES):
            todo += _defaults(node)
        else:
            todo += child_nodes(node)


def _defaults(node: ast.AST) -> list[ast.AST]:
    """What a nested definition evaluates where it is defined: its defaults and decorators."""
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
        args = node.args
        found: list[ast.AST] = [*args.defaults, *(d for d in args.kw_defaults if d is not None)]
        if not isinstance(node, ast.Lambda):
            found += node.decorator_list
        return found
    if isinstance(node, ast.ClassDef):
        return [*node.bases, *node.decorator_list]
    return []

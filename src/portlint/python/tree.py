"""Traversal of ``ast`` trees, faster than the standard library's helpers.

``ast.iter_child_nodes`` and ``ast.walk`` are generators over the generator ``ast.iter_fields``;
on a large model file they take most of the analysis time. These return the same nodes in the
same order, except the ``ctx`` marker of names and attributes, which no check reads.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

#: Fields that never hold a node (names, numbers, flags, and the ``ctx`` marker of names and
#: attributes, which no check reads): left out of every walk here.
SCALAR_FIELDS = frozenset(
    {"ctx", "id", "attr", "name", "asname", "arg", "module", "level", "kind", "type_comment"}
    | {"is_async", "conversion", "simple", "tag"}
)
#: Node type -> the fields of it that can hold nodes. Names and constants, half the nodes of a
#: tree, have none, so they cost one look-up.
NODE_FIELDS: dict[type, tuple[str, ...]] = {ast.Constant: (), ast.Global: (), ast.Nonlocal: ()}


#: Node types without children: half the nodes of a tree.
LEAVES = frozenset({ast.Name, ast.Constant, ast.Load, ast.Store, ast.Del})

#: Statements that end a block early.
TERMINATORS = (ast.Return, ast.Raise, ast.Continue, ast.Break)
#: Calls that end the program by raising SystemExit, as ``raise SystemExit`` does.
EXIT_CALLS = frozenset({"sys.exit", "exit", "quit", "os._exit"})


def exits(statement: ast.AST) -> bool:
    """``sys.exit(1)`` (or ``exit()``, ``quit()``, ``os._exit(1)``) as a statement: the program
    ends there, as after a ``raise``."""
    if not (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call)):
        return False
    func = statement.value.func
    if isinstance(func, ast.Name):
        return func.id in EXIT_CALLS
    return (
        isinstance(func, ast.Attribute)
        and isinstance(func.value, ast.Name)
        and f"{func.value.id}.{func.attr}" in EXIT_CALLS
    )


def node_fields(kind: type) -> tuple[str, ...]:
    """The fields of node type ``kind`` that can hold nodes, in field order."""
    fields = NODE_FIELDS.get(kind)
    if fields is None:
        fields = NODE_FIELDS[kind] = tuple(f for f in kind._fields if f not in SCALAR_FIELDS)
    return fields


def child_nodes(node: ast.AST) -> list[ast.AST]:
    """The direct children of ``node`` in field order, as ``ast.iter_child_nodes``, less ``ctx``."""
    fields = NODE_FIELDS.get(type(node))
    if fields is None:
        fields = node_fields(type(node))
    if not fields:
        return []
    children: list[ast.AST] = []
    append, AST = children.append, ast.AST
    for name in fields:
        value = getattr(node, name, None)
        if type(value) is list:
            for item in value:  # a loop: a comprehension is a call of its own
                if isinstance(item, AST):
                    append(item)
        elif isinstance(value, AST):
            append(value)
    return children


def walk(node: ast.AST) -> Iterator[ast.AST]:
    """``node`` and everything below it, breadth first (as ``ast.walk``, less ``ctx``)."""
    queue, leaves = [node], LEAVES
    for current in queue:  # the list grows while it is read: a queue without popping
        yield current
        if type(current) not in leaves:
            queue.extend(child_nodes(current))


#: The nodes that statements sit below: statements, ``except`` handlers and ``case`` arms.
STATEMENT_HOLDERS = (ast.stmt, ast.excepthandler, ast.match_case)


def parameter_names(function: ast.AST) -> set[str]:
    """The names of a function's parameters (none for anything else): names its callers give."""
    if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
        return set()
    return {argument.arg for argument in walk(function.args) if isinstance(argument, ast.arg)}


def statement_blocks(node: ast.AST) -> list[list[ast.stmt]]:
    """The statement lists ``node`` holds directly: a body, an ``else``, a ``finally``, the
    bodies of a ``try``'s handlers and of a ``match``'s arms (empty ones included)."""
    if isinstance(node, ast.If | ast.For | ast.AsyncFor | ast.While):
        return [node.body, node.orelse]
    if isinstance(node, ast.Try):
        return [node.body, node.orelse, node.finalbody, *(h.body for h in node.handlers)]
    if isinstance(node, ast.Match):
        return [case.body for case in node.cases]
    body = getattr(node, "body", None)  # a module, a definition, a ``with``, a handler, a case
    return [body] if isinstance(body, list) else []


def statements_walk(node: ast.AST) -> Iterator[ast.AST]:
    """``node`` and the statements, ``except`` handlers and ``case`` arms below it, in the order
    ``walk`` gives them: no statement is ever below an expression, so expressions are not
    entered (most of a tree's nodes)."""
    queue, holders = [node], STATEMENT_HOLDERS
    for current in queue:  # the list grows while it is read: a queue without popping
        yield current
        for name in node_fields(type(current)):
            value = getattr(current, name, None)
            if type(value) is list:
                queue.extend(item for item in value if isinstance(item, holders))


def parent_map(tree: ast.AST) -> dict[int, ast.AST]:
    """``id(child) -> parent`` for every node below ``tree``: the map ``ast.walk`` with
    ``ast.iter_child_nodes`` gives, in the same breadth-first order (so the shared operator
    nodes end with the same parent), less the ``ctx`` markers, which no one asks about.
    About twice as fast as building it with ``ast.walk``."""
    found: dict[int, ast.AST] = {}
    queue = [tree]
    append, AST, known = queue.append, ast.AST, NODE_FIELDS
    for node in queue:  # the list grows while it is read: a queue without popping
        fields = known.get(type(node))
        if fields is None:
            fields = node_fields(type(node))
        for name in fields:
            value = getattr(node, name, None)
            if type(value) is list:
                for item in value:
                    if isinstance(item, AST):
                        found[id(item)] = node
                        append(item)
            elif isinstance(value, AST):
                found[id(value)] = node
                append(value)
    return found


class LazyParents:
    """``id(node) -> parent`` as ``parent_map(tree)`` gives it, built only as far as asked.

    Answers from maps of the statements on the walk's ``stack`` (the nodes from the module down
    to where the walk is), innermost first, each built on first need, and last from the map of
    the whole ``tree``. A fix judged at one site asks about nodes near it (a string inside a
    call, the statements of its branch), so an inner statement's map nearly always answers, and
    a large module is not mapped whole for a few fixes. (The parents the walk records are not
    used: the walk visits some nodes from a node above their own parent, an ``elif`` test from
    its ``if``.)"""

    def __init__(self, stack: list[ast.AST], tree: ast.AST) -> None:
        self.stack = stack  # the walk's own list: it changes as the walk goes
        self.tree = tree
        self.maps: dict[int, dict[int, ast.AST]] = {}
        self.added: dict[int, ast.AST] = {}
        #: id(node on the stack) -> ids of its direct children, built on first need: a module
        #: of many statements with a fix at each is not scanned once per fix.
        self.children: dict[int, frozenset[int]] = {}

    def get(self, key: int, default: ast.AST | None = None) -> ast.AST | None:
        found = self.added.get(key)
        if found is not None or key == id(self.tree):
            return found if found is not None else default
        roots = [node for node in reversed(self.stack) if isinstance(node, ast.stmt)]
        for root in roots:
            if key == id(root):  # a statement on the walk's way: its parent is further up
                found = self._parent_on_stack(root)
                if found is not None:
                    self.added[key] = found
                    return found
                continue  # its parent is off the stack (an ``elif``): in a map further up
            built = self.maps.get(id(root))
            if built is None:
                built = self.maps[id(root)] = parent_map(root)
            found = built.get(key)
            if found is not None:
                return found
        built = self.maps.get(id(self.tree))
        if built is None:
            built = self.maps[id(self.tree)] = parent_map(self.tree)
        return built.get(key, default)

    def _parent_on_stack(self, node: ast.AST) -> ast.AST | None:
        """The node further up the walk's stack that holds ``node`` as a direct child."""
        above = self.stack[: next(i for i, n in enumerate(self.stack) if n is node)]
        for candidate in reversed(above):
            children = self.children.get(id(candidate))
            if children is None:
                children = frozenset(map(id, child_nodes(candidate)))
                self.children[id(candidate)] = children
            if id(node) in children:
                return candidate
        return None

    def update(self, parents: dict[int, ast.AST]) -> None:
        """Parents of nodes added to the tree after the maps were built (a stand-in parsed)."""
        self.added.update(parents)


def mapping_default(node: ast.AST) -> ast.expr | None:
    """``kwargs.get("backend", "nccl")``, ``os.environ.get("DEVICE", default="cuda")``: the value
    a mapping's ``get`` gives when the key is missing, or None for anything else."""
    if not (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "get"
        and node.args
    ):
        return None
    if len(node.args) == 2 and not node.keywords:
        return node.args[1]
    keyword = [k.value for k in node.keywords if k.arg == "default"]
    return keyword[0] if len(node.args) == 1 and len(keyword) == 1 else None

"""Traversal of ``ast`` trees, faster than the standard library's helpers.

``ast.iter_child_nodes`` and ``ast.walk`` are generators over the generator ``ast.iter_fields``;
on a large model file they take most of the analysis time. These return the same nodes in the
same order.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator


def child_nodes(node: ast.AST) -> list[ast.AST]:
    """The direct children of ``node``, in field order (as ``ast.iter_child_nodes``)."""
    children: list[ast.AST] = []
    for name in node._fields:
        value = getattr(node, name, None)
        if isinstance(value, ast.AST):
            children.append(value)
        elif isinstance(value, list):
            children.extend(item for item in value if isinstance(item, ast.AST))
    return children


def walk(node: ast.AST) -> Iterator[ast.AST]:
    """``node`` and everything below it, breadth first (as ``ast.walk``)."""
    queue = [node]
    for current in queue:  # the list grows while it is read: a queue without popping
        yield current
        queue.extend(child_nodes(current))

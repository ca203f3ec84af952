"""portlint.python.tree's fast traversals give what the standard library's helpers give."""

import ast
from pathlib import Path

from portlint.python.tree import child_nodes, parent_map

SOURCE = """
import torch as t
from . import a as b

@decorator(x=1)
async def f(x: int = 1, *args, y=t.cuda, **kw) -> "T":
    global g
    async with a as (b, c):
        yield [i async for i in x if i], {k: v for k, v in kw.items()}, f"{x!r:>{y}}"
    match x:
        case Point(x=0, y=[1, *rest]) | {"k": _, **others} if rest:
            pass
        case str() as name:
            del name
    try:
        lambda q, /, r=2: (q := r)
    except (ValueError, TypeError) as error:
        raise error from None
    else:
        x[1:2, ...] += -(~3 if y else not 4) ** 2
"""


def reference_parents(tree: ast.AST) -> dict[int, ast.AST]:
    found = {}
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            found[id(child)] = node
    return found


def test_parent_map_matches_ast_walk_except_ctx_markers():
    for text in (SOURCE, Path(ast.__file__).read_text()):
        tree = ast.parse(text)
        expected, found = reference_parents(tree), parent_map(tree)
        nodes = {id(node): node for node in ast.walk(tree)}
        differing = {key for key in expected if found.get(key) is not expected[key]}
        assert {type(nodes[key]) for key in differing} <= {ast.Load, ast.Store, ast.Del}
        assert set(found) <= set(expected)


def test_child_nodes_match_iter_child_nodes_except_ctx_markers():
    for node in ast.walk(ast.parse(SOURCE)):
        expected = [c for c in ast.iter_child_nodes(node) if not isinstance(c, ast.expr_context)]
        assert child_nodes(node) == expected

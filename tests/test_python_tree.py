"""portlint.python.tree's fast traversals give what the standard library's helpers give."""

import ast
from pathlib import Path

from portlint.python.tree import (
    STATEMENT_HOLDERS,
    LazyParents,
    child_nodes,
    parent_map,
    statements_walk,
)

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


def test_statements_walk_gives_the_statements_of_ast_walk_in_its_order():
    for text in (SOURCE, Path(ast.__file__).read_text()):
        tree = ast.parse(text)
        expected = [node for node in ast.walk(tree) if isinstance(node, STATEMENT_HOLDERS)]
        assert list(statements_walk(tree)) == [tree, *expected]
    function = ast.parse(SOURCE).body[-1]
    inner = [node for node in ast.walk(function) if isinstance(node, STATEMENT_HOLDERS)]
    assert list(statements_walk(function)) == inner
    assert len(inner) > 10  # the try, the match and their arms are entered


LAZY_SOURCE = """
import torch

class Trainer:
    def step(self, x):
        if x.device.type == "cpu":
            pass
        elif x.device.type == "cuda":
            torch.cuda.synchronize()
        else:
            y = [torch.zeros(1).to(x.device) for _ in range(2)]
        return x

def other():
    return 1
"""


def test_lazy_parents_answer_as_the_whole_map():
    tree = ast.parse(LAZY_SOURCE)
    whole = parent_map(tree)
    call = next(n for n in ast.walk(tree) if isinstance(n, ast.Call))  # torch.cuda.synchronize()
    chain = [call]
    while id(chain[-1]) in whole:
        chain.append(whole[id(chain[-1])])
    path = list(reversed(chain))  # module ... call
    elif_if = next(n for n in path if isinstance(n, ast.If) and n.lineno == 8)
    # the walk's stack, with and without the ``elif`` (visited from its ``if``)
    for stack in (path, [n for n in path if n is not elif_if]):
        lazy = LazyParents(stack, tree)
        for node in ast.walk(tree):
            if not isinstance(node, ast.expr_context | ast.operator | ast.cmpop):
                assert lazy.get(id(node)) is whole.get(id(node))
        # no map of the whole module was needed for the nodes inside ``Trainer``
        lazy = LazyParents(stack, tree)
        inside = [n for n in ast.walk(tree.body[1]) if not isinstance(n, ast.expr_context)]
        for node in inside:
            if not isinstance(node, ast.operator | ast.cmpop):
                assert lazy.get(id(node)) is whole.get(id(node))
        assert id(tree) not in lazy.maps

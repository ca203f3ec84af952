"""portlint.python.names: the names a function or class binds, in the order its walk records
them (an import and an assignment of one name: whichever comes first decides)."""

import ast
from pathlib import Path

from portlint.python.names import (
    UNKNOWN,
    class_locals,
    function_locals,
    import_bindings,
    runs_here,
)

SOURCE = """
import torch as t

def f(a, /, b=1, *args, c, d=t.cuda, **kw):
    import torch.cuda as tc
    tc = 1
    x = y = 2
    for i, (j, k) in enumerate(a):
        del i
    with open(a) as handle, open(b) as (p, q):
        pass
    try:
        pass
    except ValueError as error:
        pass
    global g
    g = 3
    [z for w in a if (v := w) for z in w]
    lambda m, n=(o := 1): m
    @decorate(r := 1)
    def inner(s=(u := 2)):
        hidden = 1
    from torch import cuda as tc

class C(Base):
    torch = None
    def method(self):
        inside = 1
    values = {key: 1 for key in range(3)}
"""

COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def reference(body: list[ast.AST], bindings: dict) -> list:
    """The walk written plainly: a stack; nested functions, lambdas, classes and
    comprehensions not entered, except their decorators, defaults, first iterable and
    ``:=`` targets; bindings recorded as nodes come off the walk."""

    def record(node):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
            bindings.setdefault(node.id, UNKNOWN)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            bindings.update(import_bindings(node))
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) or (
            isinstance(node, ast.ExceptHandler) and node.name is not None
        ):
            bindings[node.name] = UNKNOWN
        elif isinstance(node, ast.Global | ast.Nonlocal):
            for name in node.names:
                bindings.pop(name, None)

    for statement in body:
        if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            record(statement)  # a definition in the body binds its name, not its locals
            stack = runs_here(statement)
        else:
            stack = [statement]
        while stack:
            current = stack.pop()
            record(current)
            for child in ast.iter_child_nodes(current):
                if isinstance(child, ast.expr_context):
                    continue
                if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                    record(child)
                    stack.extend(runs_here(child))
                elif isinstance(child, ast.Lambda):
                    stack.extend(child.args.defaults)
                elif isinstance(child, COMPREHENSIONS):
                    stack.append(child.generators[0].iter)
                    stack.extend(n.target for n in ast.walk(child) if isinstance(n, ast.NamedExpr))
                else:
                    stack.append(child)
    return list(bindings.items())


def arguments_of(node) -> dict:
    arguments = node.args
    every = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]
    every += [a for a in (arguments.vararg, arguments.kwarg) if a is not None]
    return {arg.arg: UNKNOWN for arg in every}


def test_function_and_class_locals_are_the_plain_walk():
    for text in (SOURCE, Path(ast.__file__).read_text(), Path(__file__).read_text()):
        checked = 0
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                body = node.body if isinstance(node.body, list) else [node.body]
                expected = reference(body, arguments_of(node))
                assert list(function_locals(node).bindings.items()) == expected
                checked += 1
            elif isinstance(node, ast.ClassDef):
                assert list(class_locals(node).bindings.items()) == reference(node.body, {})
                checked += 1
        assert checked


def test_an_import_then_an_assignment_of_one_name():
    function = ast.parse(SOURCE).body[1]
    bindings = function_locals(function).bindings
    assert bindings["tc"] == "torch.cuda"  # the later ``from torch import cuda as tc`` too
    assert "w" not in bindings and "z" not in bindings  # the comprehension's own
    assert {"v", "o", "r", "u"} <= bindings.keys()  # ``:=`` binds where it runs
    assert "inner" in bindings and "hidden" not in bindings  # the nested function's own


def test_a_class_binds_its_methods_names_not_their_locals():
    bindings = class_locals(ast.parse(SOURCE).body[2]).bindings
    assert list(bindings) == ["torch", "method", "values"]


#: Shapes where the plain walk binds names inside expressions without ``:=``: it enters a
#: comprehension that is another's first iterable, a lambda's default or a decorator.
ENTERED = """
def f(r, b, d):
    values = [p for p in [q for q in r]]
    g = lambda x=[a for a in b]: x
    d[[c for c in d][0]] = 1
    @decorate([e for e in d])
    def inner(s=[t for t in r]):
        pass
    return [(h)for h in [(k)for k in r]]

def with_walrus(r):
    total = [y := 1 for _ in [z := 2 for _ in r]]
    return total
"""


def test_the_walk_that_leaves_out_expressions_binds_the_same_names():
    """With the file's lines, a function with no ``:=`` in it skips the expressions whose
    lines hold no ``for``: the names and their order are the plain walk's."""
    for text in (SOURCE, ENTERED, Path(ast.__file__).read_text(), Path(__file__).read_text()):
        lines = text.split("\n")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                body = node.body if isinstance(node.body, list) else [node.body]
                expected = reference(body, arguments_of(node))
                scope = function_locals(node)
            elif isinstance(node, ast.ClassDef):
                expected, scope = reference(node.body, {}), class_locals(node)
            else:
                continue
            scope.lines = lines
            assert list(scope.bindings.items()) == expected


def test_names_the_plain_walk_binds_inside_expressions():
    tree = ast.parse(ENTERED)
    scope = function_locals(tree.body[0])
    scope.lines = ENTERED.split("\n")
    assert {"q", "a", "t", "k"} <= scope.bindings.keys()
    assert not {"p", "h", "x", "s", "c", "e"} & scope.bindings.keys()
    walrus = function_locals(tree.body[1])
    walrus.lines = ENTERED.split("\n")
    assert {"y", "z"} <= walrus.bindings.keys()

"""portlint.python.names.function_locals: the names a function binds, in the order its walk
records them (an import and an assignment of one name: whichever comes first decides)."""

import ast
from pathlib import Path

from portlint.python.names import UNKNOWN, function_locals, import_bindings

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
    except TypeError:
        pass
    global g
    g = 3
    [z := w for w in a if (v := w)]
    lambda m, n=(o := 1): m
    @decorate(r := 1)
    def inner(s=(u := 2)):
        hidden = 1
    class Local(Base):
        member = 1
    from torch import cuda as tc
    if (nonlocal_like := 1):
        nonlocal_like = 2
    match a:
        case [first, *rest]:
            pass
"""


def reference(node):
    """The same walk written plainly: a stack, nested scopes not entered (their names and
    decorators are), lambdas' defaults entered, bindings recorded as nodes come off the walk."""
    bindings = {}
    arguments = node.args
    for arg in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]:
        bindings[arg.arg] = UNKNOWN
    for arg in (arguments.vararg, arguments.kwarg):
        if arg is not None:
            bindings[arg.arg] = UNKNOWN

    def record(child):
        if isinstance(child, ast.Name) and isinstance(child.ctx, ast.Store | ast.Del):
            bindings.setdefault(child.id, UNKNOWN)
        elif isinstance(child, ast.Import | ast.ImportFrom):
            bindings.update(import_bindings(child))
        elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) or (
            isinstance(child, ast.ExceptHandler) and child.name is not None
        ):
            bindings[child.name] = UNKNOWN
        elif isinstance(child, ast.Global | ast.Nonlocal):
            for name in child.names:
                bindings.pop(name, None)

    body = node.body if isinstance(node.body, list) else [node.body]
    for statement in body:
        stack = [statement]
        while stack:
            current = stack.pop()
            record(current)
            for child in ast.iter_child_nodes(current):
                if isinstance(child, ast.expr_context):
                    continue
                if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                    record(child)
                    stack.extend(child.decorator_list)
                elif isinstance(child, ast.Lambda):
                    stack.extend(child.args.defaults)
                else:
                    stack.append(child)
    return list(bindings.items())


def test_function_locals_is_the_plain_walk():
    for text in (SOURCE, Path(ast.__file__).read_text(), Path(__file__).read_text()):
        functions = [
            node
            for node in ast.walk(ast.parse(text))
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
        ]
        assert functions
        for function in functions:
            assert list(function_locals(function).bindings.items()) == reference(function)


def test_function_locals_of_a_tricky_function():
    function = ast.parse(SOURCE).body[1]
    assert list(function_locals(function).bindings.items()) == [
        *[("a", None), ("b", None), ("c", None), ("d", None), ("args", None), ("kw", None)],
        ("tc", "torch.cuda"),  # the import comes first; a later import of the name wins
        *[("y", None), ("x", None), ("i", None), ("k", None), ("j", None), ("q", None)],
        *[("p", None), ("handle", None), ("error", None)],
        ("g", None),  # assigned after ``global g``: the walk records the assignment last
        *[("v", None), ("w", None), ("z", None), ("o", None)],
        *[("inner", None), ("r", None)],
        ("hidden", None),  # a definition that is a statement of the body is walked into
        *[("u", None), ("Local", None), ("member", None), ("nonlocal_like", None)],
    ]

"""PRT803 in Python: inline assembly in a Triton kernel (``tl.inline_asm_elementwise``), PTX on
NVIDIA's Triton backend, which the other targets' Triton backends do not assemble
(rules/cxx_hazards.toml ``[triton_inline_asm]``).

A kernel defined in the arm of a test that names NVIDIA (``if IS_NVIDIA_BLACKWELL:`` beside a
portable ``else``), or a function the module picks in such an arm (``if IS_NVIDIA: softplus =
softplus_nv``), is NVIDIA's implementation and runs on NVIDIA alone: no site; the test is
NVIDIA's own choice."""

from __future__ import annotations

import ast
import functools

from portlint.catalog import Catalog, parse_advice
from portlint.model import Advice
from portlint.python.backends import names_nvidia
from portlint.python.context import Context
from portlint.python.tree import walk


@functools.cache
def inline_asm_calls(catalog: Catalog) -> tuple[frozenset[str], dict[str, Advice]]:
    """The calls that take inline assembly, and their advice per target."""
    table = catalog.table("cxx_hazards")["triton_inline_asm"]
    return frozenset(table["calls"]), {t: parse_advice(a) for t, a in table["targets"].items()}


def check_inline_asm(node: ast.Call, ctx: Context) -> None:
    calls, targets = inline_asm_calls(ctx.catalog)
    func = node.func
    called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    if not any(call.endswith(f".{called}") for call in calls):
        return  # most calls: not resolved at all
    name = ctx.qualified_name(func)
    if name not in calls or _nvidia_only(node, ctx):
        return
    short = name.rsplit(".", 1)[-1]
    message = (
        f"`{short}` puts inline assembly (PTX on NVIDIA's backend) in a Triton kernel: the "
        "other targets' Triton backends do not assemble it"
    )
    ctx.report(node.func, "PRT803", message, targets=targets)


def _names_nvidia(test: ast.expr) -> bool:
    """The test reads a name that says NVIDIA (``IS_NVIDIA``, ``is_nvidia_blackwell()``)."""
    for inner in walk(test):
        name = inner.id if isinstance(inner, ast.Name) else getattr(inner, "attr", "")
        if isinstance(name, str) and names_nvidia(name):
            return True
    return False


def _in_nvidia_arm(node: ast.AST, ctx: Context) -> bool:
    """``node`` is in the body (not the ``else``) of an ``if`` whose test names NVIDIA."""
    child, parent = node, ctx.parents.get(id(node))
    while parent is not None:
        if isinstance(parent, ast.If) and child in parent.body and _names_nvidia(parent.test):
            return True
        child, parent = parent, ctx.parents.get(id(parent))
    return False


def _nvidia_only(node: ast.Call, ctx: Context) -> bool:
    if _in_nvidia_arm(node, ctx):
        return True
    function = ctx.function_scope()
    if function is None:
        return False
    return any(
        isinstance(statement, ast.If)
        and _names_nvidia(statement.test)
        and any(
            isinstance(s, ast.Assign)
            and isinstance(s.value, ast.Name)
            and s.value.id == function.name
            for s in statement.body
        )
        for statement in walk(ctx.walk_stack[0])
    )

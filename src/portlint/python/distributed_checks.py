"""PRT3xx: the NCCL backend, named in calls or compared against."""

from __future__ import annotations

import ast

from portlint.python.context import Context

#: Function name -> does its first positional argument take the backend?
BACKEND_CALLS = {
    "init_process_group": True,
    "new_group": False,
    "new_subgroups": False,
    "init_distributed": True,  # DeepSpeed
    "Backend": True,
}
BACKEND_KEYWORDS = frozenset({"backend", "dist_backend"})
FLOW_DEPTH = 3


def _is_nccl(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and "nccl" in node.value.lower()
    )


def nccl_literals(expr: ast.expr, ctx: Context, depth: int = 0) -> list[tuple[ast.Constant, bool]]:
    if _is_nccl(expr):
        return [(expr, depth > 0)]
    if isinstance(expr, ast.IfExp):
        return nccl_literals(expr.body, ctx, depth) + nccl_literals(expr.orelse, ctx, depth)
    if isinstance(expr, ast.Name) and depth < FLOW_DEPTH:
        return [
            hit
            for value in ctx.resolver.values_of(expr.id)
            for hit in nccl_literals(value, ctx, depth + 1)
        ]
    return []


def _function_name(node: ast.Call) -> str | None:
    if isinstance(node.func, ast.Attribute):
        return node.func.attr
    if isinstance(node.func, ast.Name):
        return node.func.id
    return None


def check_backend_call(node: ast.Call, ctx: Context) -> None:
    name = _function_name(node)
    if name not in BACKEND_CALLS:
        return
    arguments = [kw.value for kw in node.keywords if kw.arg in BACKEND_KEYWORDS]
    if BACKEND_CALLS[name] and node.args:
        arguments.append(node.args[0])
    for argument in arguments:
        for literal, via_variable in nccl_literals(argument, ctx):
            flow = " (through a variable)" if via_variable else ""
            fix = ctx.fixes.backend(literal, via_variable) if ctx.fixes else None
            ctx.report(literal, "PRT301", f"NCCL backend hard-coded{flow}", fix=fix)


def check_backend_attribute(node: ast.Attribute, name: str, ctx: Context) -> None:
    if name == "torch.distributed.Backend.NCCL":
        ctx.report(node, "PRT301", "NCCL backend hard-coded")


def check_backend_comparison(node: ast.Compare, ctx: Context) -> None:
    for operand in (node.left, *node.comparators):
        elements = (
            operand.elts if isinstance(operand, ast.Tuple | ast.List | ast.Set) else [operand]
        )
        for element in elements:
            if _is_nccl(element):
                ctx.report(element, "PRT302", 'Backend compared with `"nccl"`')

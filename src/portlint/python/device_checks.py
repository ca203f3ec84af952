"""PRT1xx: CUDA devices named in code — device strings, ``.cuda()``, ``.is_cuda``, comparisons."""

from __future__ import annotations

import ast
import re

from portlint.model import Span
from portlint.python.context import Context

CUDA_DEVICE = re.compile(r"^cuda(:\d+)?$")
CUDA_PREFIX = re.compile(r"^cuda(:|$)")
#: Calls whose first positional argument is a device (or device type).
DEVICE_FIRST_ARGUMENT = frozenset(
    {
        "torch.device",
        "torch.set_default_device",
        "torch.autocast",
        "torch.amp.autocast",
        "torch.amp.GradScaler",
        "torch.get_device_module",
        "torch.Generator",
        "torch.Stream",
        "torch.Event",
    }
)
#: Keyword arguments that take a device, a device type or a list of devices.
DEVICE_KEYWORDS = frozenset(
    {"device", "device_type", "map_location", "device_ids", "output_device", "devices"}
)
#: How many assignments deep a device string is followed through variables.
FLOW_DEPTH = 3


def device_literals(expr: ast.expr, ctx: Context, depth: int = 0) -> list[tuple[ast.expr, bool]]:
    """CUDA device strings ``expr`` can evaluate to, each with whether it came via a variable."""
    if isinstance(expr, ast.Constant):
        if isinstance(expr.value, str) and CUDA_DEVICE.match(expr.value):
            return [(expr, depth > 0)]
        return []
    if isinstance(expr, ast.JoinedStr):
        first = expr.values[0] if expr.values else None
        if isinstance(first, ast.Constant) and CUDA_PREFIX.match(str(first.value)):
            return [(expr, depth > 0)]
        return []
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add | ast.Mod):
        left = expr.left
        if isinstance(left, ast.Constant) and CUDA_PREFIX.match(str(left.value)):
            return [(expr, depth > 0)]
        return []
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute):
        base = expr.func.value
        if (
            expr.func.attr == "format"
            and isinstance(base, ast.Constant)
            and CUDA_PREFIX.match(str(base.value))
        ):
            return [(expr, depth > 0)]
        return []
    if isinstance(expr, ast.IfExp):
        return device_literals(expr.body, ctx, depth) + device_literals(expr.orelse, ctx, depth)
    if isinstance(expr, ast.BoolOp):
        return [hit for value in expr.values for hit in device_literals(value, ctx, depth)]
    if isinstance(expr, ast.List | ast.Tuple):
        return [hit for element in expr.elts for hit in device_literals(element, ctx, depth)]
    if isinstance(expr, ast.Name) and depth < FLOW_DEPTH:
        return [
            hit
            for value in ctx.resolver.values_of(expr.id)
            for hit in device_literals(value, ctx, depth + 1)
        ]
    return []


def device_arguments(node: ast.Call, ctx: Context) -> list[ast.expr]:
    """The arguments of a call that sit in a device position."""
    found = []
    name = ctx.qualified_name(node.func)
    is_to = isinstance(node.func, ast.Attribute) and node.func.attr == "to"
    if node.args and (name in DEVICE_FIRST_ARGUMENT or is_to):
        found.append(node.args[0])
    found.extend(kw.value for kw in node.keywords if kw.arg in DEVICE_KEYWORDS)
    return found


def check_device_strings(node: ast.Call, ctx: Context) -> None:
    for argument in device_arguments(node, ctx):
        for literal, via_variable in device_literals(argument, ctx):
            where = "through a variable into a device position" if via_variable else ""
            message = "Hard-coded CUDA device `{}`{}".format(
                ctx.source(literal), f" flows {where}" if where else ""
            )
            ctx.report(literal, "PRT101", message)


def attribute_tail_span(node: ast.Attribute | ast.Call, ctx: Context) -> Span:
    """From the end of the object to the end of the node: the ``.cuda()`` of ``x.cuda()``."""
    attribute = node.func if isinstance(node, ast.Call) else node
    whole = ctx.span(node)
    base = ctx.span(attribute.value)
    return Span(base.end_line, base.end_column, whole.end_line, whole.end_column)


def check_cuda_method(node: ast.Call, ctx: Context) -> None:
    func = node.func
    if not isinstance(func, ast.Attribute) or func.attr != "cuda":
        return
    if ctx.qualified_name(func) is not None:
        return  # a module attribute such as torch.cuda, not a method call
    message = "`.cuda()` moves the object to a CUDA device"
    ctx.report(node, "PRT102", message, span=attribute_tail_span(node, ctx))


def check_is_cuda(node: ast.Attribute, ctx: Context) -> None:
    if node.attr != "is_cuda" or not isinstance(node.ctx, ast.Load):
        return
    message = "`.is_cuda` is False on every accelerator but NVIDIA and ROCm"
    ctx.report(node, "PRT103", message, span=attribute_tail_span(node, ctx))


def _is_device_expression(node: ast.expr) -> bool:
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "str":
        return bool(node.args) and _is_device_expression(node.args[0])
    if isinstance(node, ast.Attribute):
        return node.attr == "type" or "device" in node.attr
    if isinstance(node, ast.Name):
        return "device" in node.id
    return False


def check_device_type_comparison(node: ast.Compare, ctx: Context) -> None:
    operands = [node.left, *node.comparators]
    if not any(_is_device_expression(operand) for operand in operands):
        return
    for operand in operands:
        elements = (
            operand.elts if isinstance(operand, ast.Tuple | ast.List | ast.Set) else [operand]
        )
        for element in elements:
            if isinstance(element, ast.Constant) and element.value == "cuda":
                ctx.report(element, "PRT104", 'Device type compared with `"cuda"`')

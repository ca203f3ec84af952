"""PRT3xx: the NCCL backend, named in calls or compared against."""

from __future__ import annotations

import ast
import re

from portlint.config import version_tuple
from portlint.model import PORTABLE, Advice, Edit, Fix
from portlint.python.context import Context
from portlint.python.device_checks import flowing_values
from portlint.python.fixes import FixBase
from portlint.python.guards import cuda_polarity
from portlint.python.tree import mapping_default, walk

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


#: ``"nccl"``, ``"cuda:nccl,cpu:gloo"``: a backend string, split into its parts.
BACKEND_PARTS = re.compile(r"[:,\s]+")


def _is_nccl(node: ast.AST) -> bool:
    """A backend string naming NCCL; not ``"NCCL_P2P_DISABLE"`` or ``"ncclAllReduce"``."""
    return (
        isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and "nccl" in BACKEND_PARTS.split(node.value.strip().lower())
    )


def _names_backend(node: ast.AST) -> bool:
    """``backend``, ``args.dist_backend``, ``dist.get_backend()``, ``Backend.NCCL``."""
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Attribute):
        return "backend" in node.attr.lower() or node.attr == "NCCL" or _names_backend(node.value)
    return isinstance(node, ast.Name) and "backend" in node.id.lower()


def _refused(node: ast.AST, ctx: Context) -> bool:
    """Inside ``assert ...``: code that refuses NCCL (``assert backend != Backend.NCCL``) or
    checks for it, not a place that chooses it."""
    current = ctx.parents.get(id(node))
    while current is not None and not isinstance(current, ast.stmt):
        current = ctx.parents.get(id(current))
    return isinstance(current, ast.Assert)


def nccl_literals(expr: ast.expr, ctx: Context, depth: int = 0) -> list[tuple[ast.Constant, bool]]:
    if _is_nccl(expr):
        return [(expr, depth > 0)]
    if isinstance(expr, ast.IfExp):
        return nccl_literals(expr.body, ctx, depth) + nccl_literals(expr.orelse, ctx, depth)
    default = mapping_default(expr)
    if default is not None and depth < FLOW_DEPTH:
        # ``backend=kwargs.get("backend", "nccl")``: the default, where the key is missing. (A
        # device default of the same shape, ``kwargs.get("device", "cuda")``, is mostly one that
        # internal code always fills in: not followed, precision first.)
        return nccl_literals(default, ctx, depth + 1)
    if isinstance(expr, ast.Name | ast.Attribute) and depth < FLOW_DEPTH:
        return [
            hit
            for value in flowing_values(expr, ctx)
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
    arguments = []
    if name in BACKEND_CALLS:
        arguments = [kw.value for kw in node.keywords if kw.arg in BACKEND_KEYWORDS]
        if BACKEND_CALLS[name] and node.args:
            arguments.append(node.args[0])
    elif ctx.positions is not None:
        # ``_build_group(ranks, ccl_backend)`` where the module's private ``_build_group``
        # passes ``ccl_backend`` to ``new_group(backend=...)``
        arguments = ctx.positions.arguments(node, "backend")
    for argument in arguments:
        for literal, via_variable in nccl_literals(argument, ctx):
            flow = " (through a variable)" if via_variable else ""
            fix = ctx.fixes.backend(literal, via_variable) if ctx.fixes else None
            # ``if torch.cuda.is_available(): backend = "nccl"``: chosen only on the CUDA path,
            # whose reported test is the other targets' site
            # (a literal written in the call is not walked yet: the call's guard is its own)
            guard = ctx.guards.get(id(literal)) or ctx.guards.get(id(node))
            behind = ctx.behind_cuda_test(literal, guard) or _chosen_by_cuda_test(
                argument, literal, ctx
            )
            message = f"NCCL backend hard-coded{flow}"
            ctx.report(literal, "PRT301", message, fix=fix, behind=behind)


def check_backend_return(node: ast.Return, ctx: Context) -> None:
    """``def get_torch_distributed_backend(): ... return "nccl"``: what a function named for the
    backend returns is the backend its callers start the process group with. Only a literal
    written in the return: a name returned (``backend = "nccl"`` then ``backend =
    default_device_backend_map.get(device_type)``) is often the generic lookup's fallback."""
    scope = ctx.function_scope()
    if node.value is None or scope is None or "backend" not in scope.name.lower().split("_"):
        return
    for literal, via_variable in nccl_literals(node.value, ctx):
        if via_variable:
            continue
        guard = ctx.guards.get(id(literal)) or ctx.guards.get(id(node))
        behind = ctx.behind_cuda_test(literal, guard) or _chosen_by_cuda_test(
            node.value, literal, ctx
        )
        message = f"NCCL backend returned by `{scope.name}`"
        ctx.report(literal, "PRT301", message, behind=behind)


def _chosen_by_cuda_test(argument: ast.expr, literal: ast.AST, ctx: Context) -> ast.expr | None:
    """``backend="nccl" if has_gpu else "gloo"`` written in the call (not walked yet, so with no
    guard of its own): the CUDA test of the conditional expression that picks the literal."""
    for node in walk(argument):
        if isinstance(node, ast.IfExp) and ctx.names_cuda(node.test):
            polarity = cuda_polarity(node.test, ctx.qualified_name, ctx.cuda_flags)
            arm = node.body if polarity == 1 else node.orelse if polarity == -1 else None
            if arm is not None and any(inner is literal for inner in walk(arm)):
                return node.test
    return None


def check_backend_attribute(node: ast.Attribute, name: str, ctx: Context) -> None:
    if name == "torch.distributed.Backend.NCCL" and not _refused(node, ctx):
        parent = ctx.parents.get(id(node))
        code = "PRT302" if isinstance(parent, ast.Compare) else "PRT301"
        if code == "PRT302":
            targets = _left_to_compare(node, ctx)
            behind = ctx.behind_cuda_test(node, ctx.guards.get(id(parent)))
            message = "Backend compared with `Backend.NCCL`"
            ctx.report(node, code, message, targets=targets, behind=behind)
        else:
            behind = ctx.behind_cuda_test(node, ctx.guards.get(id(node)))
            ctx.report(node, code, "NCCL backend hard-coded", behind=behind)


def check_backend_comparison(node: ast.Compare, ctx: Context) -> None:
    """``backend == "nccl"``, ``dist.get_backend() in ("nccl", ...)``: only a comparison with
    something that names a backend (not ``"NCCL" in key``)."""
    operands = [node.left, *node.comparators]
    if not any(_names_backend(operand) for operand in operands) or _refused(node, ctx):
        return
    if _selects_a_number(node, ctx):
        return  # ``1800 if backend != "nccl" else 600``: a timeout, not a device choice
    for operand in operands:
        elements = (
            operand.elts if isinstance(operand, ast.Tuple | ast.List | ast.Set) else [operand]
        )
        for element in elements:
            if _is_nccl(element):
                targets = _left_to_compare(element, ctx)
                # in the arm of a reported CUDA test the comparison never runs elsewhere
                behind = ctx.behind_cuda_test(element, ctx.guards.get(id(node)))
                message = 'Backend compared with `"nccl"`'
                ctx.report(element, "PRT302", message, targets=targets, behind=behind)


def _left_to_compare(node: ast.AST, ctx: Context) -> dict[str, Advice]:
    """PRT302's targets, less those whose backend the function handles itself: a target whose
    backend it compares with (``elif backend == "hccl":`` picks the npu device), and the targets
    on Gloo (mps, cpu), which take the arm that is not NCCL's: the one written for Gloo, the
    backend NCCL is told from."""
    targets = dict(ctx.catalog.rules["PRT302"].targets)
    facts = ctx.catalog.target_facts()
    handled: set[str] = {"gloo"}
    scope = ctx.function_scope()
    for inner in walk(scope) if scope is not None else ():
        if isinstance(inner, ast.Compare) and any(
            _names_backend(operand) for operand in (inner.left, *inner.comparators)
        ):
            named = {
                str(c.value).lower()
                for operand in (inner.left, *inner.comparators)
                for c in walk(operand)
                if isinstance(c, ast.Constant) and isinstance(c.value, str)
            }
            handled |= named - {"nccl"}
    return {
        t: PORTABLE if facts.get(t, {}).get("backend") in handled else advice
        for t, advice in targets.items()
    }


def _selects_a_number(node: ast.Compare, ctx: Context) -> bool:
    parent = ctx.parents.get(id(node))
    if not isinstance(parent, ast.IfExp) or parent.test is not node:
        return False
    return all(
        isinstance(arm, ast.Constant) and isinstance(arm.value, int | float)
        for arm in (parent.body, parent.orelse)
    )


# -- fixes ---------------------------------------------------------------------------------------
# Beside the checks above and apart from them: how --fix rewrites what they report.


class BackendFixes(FixBase):
    """Fixes of PRT301: a hard-coded NCCL backend becomes the device's default backend."""

    def backend(self, literal: ast.Constant, via_variable: bool) -> Fix | None:
        """``"nccl"`` -> the default backend of the module's device."""
        if literal.value != "nccl" or self.left_alone(literal):
            return None  # "cpu:gloo,cuda:nccl" and other mixes: no automatic answer
        table = self.table["backend"]
        if self.min_torch >= version_tuple(table["api_since"]):
            distributed = self.layout.distributed_name or f"{self.torch}.distributed"
            replacement = table["api_expression"].format(
                distributed=distributed, device=self.device
            )
        else:
            replacement = table["mapping_expression"].format(device=self.device)
        edit = Edit(self.ctx.span(literal), replacement)
        return self._fix([edit], "use the device's default backend", unsafe=via_variable)

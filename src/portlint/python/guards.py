"""Vendor branches: is a site on a CUDA-only path, and which targets do its sibling branches cover?

``if torch.cuda.is_available(): model.cuda()`` is a CUDA-only path: on an Ascend machine the branch
is skipped and the model stays on the CPU. An ``elif torch.npu.is_available():`` sibling covers
Ascend, so the CUDA branch needs nothing for that target. Every path that the guard skips runs the
CPU code, so a guarded site is never a problem for the ``cpu`` target.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass

from portlint.python.tree import walk

#: Qualified names whose truth means "an NVIDIA (or ROCm) GPU is here".
CUDA_CHECKS = frozenset(
    {
        "torch.cuda.is_available",
        "torch.cuda.device_count",
        "torch.cuda.is_initialized",
        "torch.version.cuda",
        "torch.backends.cudnn.is_available",
    }
)
#: Everything a device-generic API covers.
GENERIC_MARKERS = ("torch.accelerator", "torch.get_device_module")


@dataclass(frozen=True)
class Guard:
    """Where a node sits: under a CUDA check, and which targets other branches handle."""

    cuda_only: bool = False
    covered: frozenset[str] = frozenset()

    def inside(self, cuda_only: bool, covered: frozenset[str]) -> Guard:
        return Guard(self.cuda_only or cuda_only, self.covered | covered)


NO_GUARD = Guard()


@dataclass(frozen=True)
class Branch:
    test: ast.expr | None  # None for the final else
    body: list[ast.AST]


def if_chain(node: ast.If) -> list[Branch]:
    """``if``/``elif``/``else`` as a flat list of branches."""
    branches = []
    current: ast.If | None = node
    while current is not None:
        branches.append(Branch(current.test, list(current.body)))
        orelse = current.orelse
        if len(orelse) == 1 and isinstance(orelse[0], ast.If):
            current = orelse[0]
        else:
            if orelse:
                branches.append(Branch(None, list(orelse)))
            current = None
    return branches


def ifexp_chain(node: ast.IfExp) -> list[Branch]:
    """``a if t1 else b if t2 else c`` as a flat list of branches."""
    branches = []
    current: ast.expr = node
    while isinstance(current, ast.IfExp):
        branches.append(Branch(current.test, [current.body]))
        current = current.orelse
    branches.append(Branch(None, [current]))
    return branches


Resolve = Callable[[ast.expr], "str | None"]


def cuda_polarity(test: ast.expr, resolve: Resolve, cuda_flags: set[str]) -> int:
    """+1 if the test is true on a CUDA machine, -1 if it is the negation of such a test, else 0."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return -cuda_polarity(test.operand, resolve, cuda_flags)
    if isinstance(test, ast.BoolOp):
        polarities = {cuda_polarity(value, resolve, cuda_flags) for value in test.values}
        return 1 if 1 in polarities and isinstance(test.op, ast.And) else 0
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        return _compare_polarity(test, resolve)
    if isinstance(test, ast.Name) and test.id in cuda_flags:
        return 1
    return 1 if _is_cuda_check(test, resolve) else 0


def _is_cuda_check(expr: ast.expr, resolve: Resolve) -> bool:
    target = expr.func if isinstance(expr, ast.Call) else expr
    if isinstance(target, ast.Attribute) and target.attr == "is_cuda":
        return True
    return resolve(target) in CUDA_CHECKS


def _compare_polarity(test: ast.Compare, resolve: Resolve) -> int:
    left, op, right = test.left, test.ops[0], test.comparators[0]
    if _is_cuda_string(right) or _is_cuda_string(left):
        if isinstance(op, ast.Eq | ast.In):
            return 1
        if isinstance(op, ast.NotEq | ast.NotIn):
            return -1
    if isinstance(op, ast.Gt | ast.GtE | ast.NotEq) and _is_cuda_check(left, resolve):
        return 1  # torch.cuda.device_count() > 0
    if isinstance(op, ast.IsNot) and _is_cuda_check(left, resolve):
        return 1  # torch.version.cuda is not None
    if isinstance(op, ast.Is | ast.Eq) and _is_cuda_check(left, resolve):
        return -1
    return 0


def _is_cuda_string(node: ast.expr) -> bool:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value == "cuda" or node.value.startswith("cuda:")
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return any(_is_cuda_string(element) for element in node.elts)
    return False


def handled_targets(
    expr: ast.AST, resolve: Resolve, markers: dict[str, tuple[str, ...]]
) -> frozenset[str]:
    """Targets that a branch test, or a fallback value, takes care of."""
    handled: set[str] = set()
    for node in walk(expr):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            device = node.value.split(":")[0]
            if device in markers:
                handled.add(device)
        elif isinstance(node, ast.Attribute | ast.Name):
            name = resolve(node)
            if name is None:
                continue
            if name.startswith(GENERIC_MARKERS):
                handled.update(markers)
            for target, names in markers.items():
                if any(name == m or name.startswith(m + ".") for m in names):
                    handled.add(target)
    return frozenset(handled)

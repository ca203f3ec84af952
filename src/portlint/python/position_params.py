"""Parameters of a module's private functions that reach a device or a backend position.

``def _build_group(ranks, ccl_backend): return dist.new_group(ranks, backend=ccl_backend)``: what
a caller in the same module passes as ``ccl_backend`` is a backend, as if it were written at
``backend=`` itself. So ``def build(ccl_backend="nccl"): _build_group(ranks, ccl_backend)`` has
its NCCL default reported where it is chosen, and the private function's own defaults that every
call overrides are no site (``Analyser._always_given``).

Only private functions (``_name``, module level or methods called through ``self``/``cls``) are
followed: another module may call a public one with anything. Only functions whose lines hold a
candidate word are read, so a module parsed in slices and one parsed whole agree.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from portlint.python.tree import walk

DEVICE = "device"
BACKEND = "backend"

Function = ast.FunctionDef | ast.AsyncFunctionDef


class Positions:
    """The keywords and calls that make a device or a backend position."""

    def __init__(
        self,
        device_keywords: frozenset[str],
        backend_keywords: frozenset[str],
        backend_first: frozenset[str],
    ) -> None:
        self.device_keywords = device_keywords
        self.backend_keywords = backend_keywords
        self.backend_first = backend_first


class Summary:
    """Private function name -> its parameters (positional, without ``self``/``cls``) and the
    kind of position each one reaches."""

    def __init__(self) -> None:
        self.positional: dict[str, list[str]] = {}
        self.kinds: dict[str, dict[str, str]] = {}

    def arguments(self, call: ast.Call, kind: str) -> list[ast.expr]:
        """The arguments of ``call`` that land on a parameter of that kind."""
        name = callee_name(call)
        kinds = self.kinds.get(name or "")
        if not kinds:
            return []
        positional = self.positional[name or ""]
        found = [
            arg
            for arg, param in zip(call.args, positional, strict=False)
            if not isinstance(arg, ast.Starred) and kinds.get(param) == kind
        ]
        found += [kw.value for kw in call.keywords if kw.arg and kinds.get(kw.arg) == kind]
        return found


def callee_name(call: ast.Call) -> str | None:
    """``_f`` of ``_f(...)``, ``self._f(...)`` and ``cls._f(...)``."""
    func = call.func
    if isinstance(func, ast.Name):
        return func.id
    is_method = isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)
    if is_method and func.value.id in ("self", "cls"):
        return func.attr
    return None


def summarise(
    module: ast.Module, has_candidate: Callable[[int, int], bool], positions: Positions
) -> Summary:
    summary = Summary()
    functions: dict[str, Function] = {}
    repeated: set[str] = set()
    scopes = [module, *(n for n in module.body if isinstance(n, ast.ClassDef))]
    for scope in scopes:
        for node in scope.body:
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            if not node.name.startswith("_") or node.name.startswith("__"):
                continue
            if not has_candidate(node.lineno, node.end_lineno or node.lineno):
                continue
            if node.name in functions:
                repeated.add(node.name)
            functions[node.name] = node
    for name in repeated:
        del functions[name]
    for name, node in functions.items():
        params = [*node.args.posonlyargs, *node.args.args]
        if params and params[0].arg in ("self", "cls"):
            params = params[1:]
        summary.positional[name] = [p.arg for p in params]
        summary.kinds[name] = _direct(node, positions)
    # the calls each function makes to the others, found once
    calls = {
        name: [n for n in walk(node) if isinstance(n, ast.Call) and callee_name(n) in functions]
        for name, node in functions.items()
    }
    changed = True
    while changed:  # a parameter handed to another's position parameter is one too
        changed = False
        for name, node in functions.items():
            kinds = summary.kinds[name]
            for call in calls[name]:
                for kind in (DEVICE, BACKEND):
                    for arg in summary.arguments(call, kind):
                        name_of = arg.id if isinstance(arg, ast.Name) else ""
                        if _is_parameter(node, name_of) and kinds.get(name_of) is None:
                            kinds[name_of] = kind
                            changed = True
    return summary


def _is_parameter(node: Function, name: str) -> bool:
    arguments = node.args
    return any(
        a.arg == name for a in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]
    )


def _direct(node: Function, positions: Positions) -> dict[str, str]:
    """The parameters of ``node`` written straight into a device or backend position, outside
    any branch: a position in one arm (``else: init_process_group(backend=backend)`` after
    arms for npu and mlu with their own backends) is reached only by some targets, which the
    caller cannot tell."""
    kinds: dict[str, str] = {}
    branched = {
        id(inner)
        for branch in walk(node)
        if isinstance(branch, ast.If | ast.IfExp | ast.Match)
        for inner in walk(branch)
    }
    calls = [n for n in walk(node) if isinstance(n, ast.Call) and id(n) not in branched]
    for call in calls:
        for kw in call.keywords:
            if isinstance(kw.value, ast.Name) and _is_parameter(node, kw.value.id):
                if kw.arg in positions.device_keywords:
                    kinds.setdefault(kw.value.id, DEVICE)
                elif kw.arg in positions.backend_keywords:
                    kinds.setdefault(kw.value.id, BACKEND)
        func = call.func
        first = call.args[0] if call.args else None
        if not (isinstance(first, ast.Name) and _is_parameter(node, first.id)):
            continue
        attribute = func.attr if isinstance(func, ast.Attribute) else None
        if attribute == "to":
            kinds.setdefault(first.id, DEVICE)
        elif (attribute or getattr(func, "id", None)) in positions.backend_first:
            kinds.setdefault(first.id, BACKEND)
    return kinds

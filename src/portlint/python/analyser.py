"""Python analysis: one walk over the syntax tree, dispatching each node to the checks for its type.

The walk keeps three pieces of state the checks need: names resolved through imports
(``names.NameResolver``), the vendor branch a node sits in (``guards``), and values assigned to
local names (so a ``"cuda"`` assigned to ``dev`` and used in ``.to(dev)`` is found).

Analysis uses the standard library's ``ast``: it is about ten times faster to parse than a
concrete syntax tree, and every finding only needs positions. Fixes are text edits at those
positions, so comments and formatting outside the edits are kept byte for byte.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from portlint.catalog import Catalog
from portlint.config import Settings
from portlint.model import Finding, SourceFile, Span
from portlint.python import (
    api_checks,
    device_checks,
    distributed_checks,
    environment_checks,
    package_checks,
)
from portlint.python.backends import backend_finding, find_backends
from portlint.python.context import Context
from portlint.python.fixes import FixBuilder
from portlint.python.guards import (
    Branch,
    Guard,
    cuda_polarity,
    handled_targets,
    if_chain,
    ifexp_chain,
)
from portlint.python.names import function_locals, import_bindings
from portlint.python.relevance import CANDIDATE_TEXT, Relevance
from portlint.python.tree import child_nodes, walk
from portlint.textindex import LineIndex

Check = Callable[[ast.AST, Context], None]

#: Node type -> checks run on every node of that type.
CHECKS: dict[type, tuple[Check, ...]] = {
    ast.Call: (
        device_checks.check_device_strings,
        device_checks.check_cuda_method,
        distributed_checks.check_backend_call,
        environment_checks.check_environ_call,
        environment_checks.check_tool_call,
        package_checks.check_extension_call,
    ),
    ast.Attribute: (device_checks.check_is_cuda, api_checks.check_capability_attribute),
    ast.Compare: (
        device_checks.check_device_type_comparison,
        distributed_checks.check_backend_comparison,
        environment_checks.check_environ_membership,
        api_checks.check_sm_comparison,
    ),
    ast.Subscript: (environment_checks.check_environ_subscript,),
    ast.Import: (package_checks.check_import,),
    ast.ImportFrom: (package_checks.check_import,),
}

IMPORT_ERRORS = frozenset({"ImportError", "ModuleNotFoundError", "Exception", "BaseException"})

#: Node type -> the Analyser method that walks it.
VISITORS: dict[type, Callable[[Analyser, ast.AST], None]] = {}


class Analyser(ast.NodeVisitor):
    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.guard = Guard()
        self.stack: list[ast.AST] = []
        self.relevance = Relevance(ctx.text)
        self.markers = {
            target: tuple(facts.get("markers", ()))
            for target, facts in ctx.catalog.target_facts().items()
        }

    # -- the walk --------------------------------------------------------------------------------

    def visit(self, node: ast.AST) -> None:
        if isinstance(node, ast.stmt) and not self.relevance.may_report(node):
            return  # no line of it can lead to a finding
        self.ctx.guards[id(node)] = self.guard
        if self.stack:
            self.ctx.parents[id(node)] = self.stack[-1]
        self.stack.append(node)
        kind = type(node)
        for check in CHECKS.get(kind, ()):
            check(node, self.ctx)
        visitor = VISITORS.get(kind)
        if visitor is None:  # looked up once per node type, not once per node
            visitor = getattr(Analyser, "visit_" + kind.__name__, Analyser.generic_visit)
            VISITORS[kind] = visitor
        visitor(self, node)
        self.stack.pop()

    def generic_visit(self, node: ast.AST) -> None:
        for child in child_nodes(node):
            self.visit(child)

    # ast.NodeVisitor's visit_Constant only looks for the visit_Num/visit_Str of old Pythons.
    visit_Constant = generic_visit

    def visit_many(self, nodes: list[ast.AST]) -> None:
        for node in nodes:
            self.visit(node)

    # -- names -----------------------------------------------------------------------------------

    def visit_Import(self, node: ast.Import | ast.ImportFrom) -> None:
        self.ctx.resolver.bind_import(node)
        # ``from torch.cuda import synchronize as sync``: lines that say ``sync()`` matter too.
        for local, qualified in import_bindings(node).items():
            if CANDIDATE_TEXT.search(qualified) and not CANDIDATE_TEXT.search(local):
                self.relevance.add_flow_name(local)

    visit_ImportFrom = visit_Import

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        # kw_defaults holds None for a keyword-only argument without a default.
        defaults = [d for d in node.args.kw_defaults if d is not None]
        self.visit_many([*node.decorator_list, *node.args.defaults, *defaults])
        if node.returns:
            self.visit(node.returns)
        self.ctx.resolver.push(function_locals(node))
        self.visit_many(node.body)
        self.ctx.resolver.pop()

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Lambda(self, node: ast.Lambda) -> None:
        self.ctx.resolver.push(function_locals(node))
        self.visit(node.body)
        self.ctx.resolver.pop()

    def visit_Assign(self, node: ast.Assign) -> None:
        self.visit(node.value)
        self._record_assignment(node.targets, node.value)
        self.visit_many(node.targets)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:
            self.visit(node.value)
            self._record_assignment([node.target], node.value)
        self.visit(node.target)

    def _record_assignment(self, targets: list[ast.expr], value: ast.expr) -> None:
        resolver = self.ctx.resolver
        flows = self.relevance.has_candidate(value.lineno, value.end_lineno or value.lineno)
        for target in targets:
            if isinstance(target, ast.Name):
                resolver.record_value(target.id, value)
                if flows:  # later uses of the name may carry a device string or backend
                    self.relevance.add_flow_name(target.id)
                if resolver.current is resolver.module:
                    resolver.bind_module_assignment(target.id)
                if cuda_polarity(value, self.ctx.qualified_name, self.ctx.cuda_flags) == 1:
                    self.ctx.cuda_flags.add(target.id)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        name = self.ctx.qualified_name(node)
        if name is None:
            self.generic_visit(node)
            return
        # A resolved chain is only names and attributes: report its outermost name once.
        self._check_qualified(node, name)

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, ast.Load):
            name = self.ctx.resolver.lookup(node.id)
            if name is not None and name != node.id:
                self._check_qualified(node, name)

    def _check_qualified(self, node: ast.Attribute | ast.Name, name: str) -> None:
        if name.startswith("torch."):
            api_checks.check_torch_name(node, name, self.ctx)
            if isinstance(node, ast.Attribute):
                distributed_checks.check_backend_attribute(node, name, self.ctx)

    # -- vendor branches ---------------------------------------------------------------------------

    def visit_If(self, node: ast.If) -> None:
        self._visit_branches(if_chain(node), statement=True)

    def visit_IfExp(self, node: ast.IfExp) -> None:
        self._visit_branches(ifexp_chain(node), statement=False)

    def _visit_branches(self, branches: list[Branch], statement: bool) -> None:
        resolve, flags = self.ctx.qualified_name, self.ctx.cuda_flags
        # A branch handles a target when its test or its body names that target's API or device.
        handled = [
            frozenset().union(
                *(handled_targets(n, resolve, self.markers) for n in [b.test, *b.body] if n)
            )
            for b in branches
        ]
        polarity = [
            cuda_polarity(b.test, resolve, flags) if b.test is not None else 0 for b in branches
        ]
        outer = self.guard
        for position, branch in enumerate(branches):
            covered = frozenset().union(*(h for i, h in enumerate(handled) if i != position))
            # A negated CUDA test (``if not torch.cuda.is_available()``) puts the next branch on
            # the CUDA path.
            cuda_only = polarity[position] == 1 or (position > 0 and polarity[position - 1] == -1)
            if branch.test is not None:
                # The CUDA check itself is CUDA-only detection: False on every other vendor.
                self.guard = outer.inside(cuda_only or polarity[position] != 0, covered)
                self.visit(branch.test)
            self.guard = outer.inside(cuda_only, covered)
            self.visit_many(branch.body)
        self.guard = outer

    def visit_Try(self, node: ast.Try) -> None:
        catches_import = any(_catches_import_error(handler) for handler in node.handlers)
        if catches_import:
            for child in node.body:
                for inner in walk(child):
                    if isinstance(inner, ast.Import | ast.ImportFrom):
                        self.ctx.import_fallbacks.add(id(inner))
        self.generic_visit(node)

    visit_TryStar = visit_Try


def _catches_import_error(handler: ast.ExceptHandler) -> bool:
    if handler.type is None:
        return True
    names = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return any(isinstance(n, ast.Name) and n.id in IMPORT_ERRORS for n in names)


def analyse_python(
    source: SourceFile, catalog: Catalog, settings: Settings | None = None
) -> list[Finding]:
    """Findings in one Python file, with their fixes. A syntax error gives one PRT001 finding."""
    index = LineIndex(source.text)
    try:
        tree = ast.parse(source.text, filename=source.path)
    except SyntaxError as error:
        return [parse_error_finding(source.path, error, index, catalog)]
    except (ValueError, RecursionError) as error:  # null bytes; absurdly deep nesting
        return [_finding_at_start(source.path, f"cannot parse: {error}", catalog)]
    backends = find_backends(tree, source.path, source.text.count("\n") + 1, catalog)
    summaries = [
        backend_finding(backend, source.path, catalog) for backend in backends if backend.summarised
    ]
    if any(backend.kind == "module" for backend in backends):
        return summaries  # the whole file is the backend: nothing in it is reported
    ctx = Context(path=source.path, text=source.text, catalog=catalog, index=index)
    ctx.backend_lines = [(backend.first_line, backend.last_line) for backend in backends]
    min_torch = (settings or Settings()).min_torch
    ctx.fixes = FixBuilder(ctx, tree, min_torch, source.newline)
    Analyser(ctx).visit(tree)
    return summaries + ctx.findings()


def parse_error_finding(
    path: str, error: SyntaxError, index: LineIndex, catalog: Catalog
) -> Finding:
    line = error.lineno or 1
    # SyntaxError.offset is 1-based and counts characters.
    column = max((error.offset or 1) - 1, 0)
    column = min(column, len(index.line(line)))
    span = Span(line, column, line, column)
    return catalog.rules["PRT001"].finding(path, span, f"SyntaxError: {error.msg}")


def _finding_at_start(path: str, message: str, catalog: Catalog) -> Finding:
    return catalog.rules["PRT001"].finding(path, Span(1, 0, 1, 0), message)

"""What a check sees of the file it runs on, and how it reports."""

from __future__ import annotations

import ast
import bisect
import itertools
import os
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from portlint.catalog import Catalog, Rule, parse_advice
from portlint.model import (
    PORTABLE,
    Advice,
    Applicability,
    Finding,
    Fix,
    Severity,
    Span,
    Status,
    says_all,
)
from portlint.python.guards import (
    CUDA_CHECKS,
    NO_GUARD,
    Guard,
    asks_availability,
    availability_before,
    flag_name,
    names_switch,
    negated,
    same_for_one_device,
)
from portlint.python.layers import Layer
from portlint.python.names import NEW_SCOPES, NameResolver
from portlint.python.tree import parameter_names, walk
from portlint.textindex import LineIndex

#: The rules of a hard-coded device string and of a ``torch.cuda`` use.
DEVICE_STRING_RULE = "PRT101"
#: NVIDIA's programs run by name (``nvidia-smi``, ``nvcc``).
TOOL_RULE = "PRT402"
TORCH_CUDA_RULE = "PRT201"


GUARDED_NOTE = "only on the CUDA path: {targets} skip it and silently run on the CPU"
#: The same behind a test of a device's type (``if x.device.type == "cuda":``, ``x.is_cuda``): the
#: other targets skip the arm on their own device, they do not fall back to the CPU.
SKIPPED_NOTE = "only on the CUDA path: {targets} skip it"
#: The same where the test guards a lone arm for machines without CUDA (``if not x.is_cuda:``):
#: the other targets take that arm.
TAKEN_GUARDED_NOTE = "{targets} take the arm for machines without CUDA and silently run on the CPU"
TAKEN_NOTE = "{targets} take the arm for machines without CUDA"
#: Why skipping a CUDA arm that moves a tensor fails: it stays on the CPU beside one on the device.
STRANDED_NOTE = "only on the CUDA path: {targets} skip it and leave `{what}` on the CPU"
#: The rules whose sites are tests of a device's type.
DEVICE_TYPE_TESTS = frozenset({"PRT103", "PRT104"})
#: Compute-capability questions (rules/capability.toml): measured to raise off CUDA, they answer
#: on ROCm.
CAPABILITY_RULE = "PRT602"
#: Rules of a device named in the code: a hard-coded device string, and ``.cuda()``.
DEVICE_STRINGS = frozenset({"PRT101", "PRT102"})
UNSUPPORTED = Advice(Status.UNSUPPORTED)
MANUAL = Advice(Status.MANUAL)
#: A CUDA arm that alone binds a name read after it (``bindings.unbound_read``).
UNBOUND_NOTE = (
    "only on the CUDA path: {targets} skip it, never set `{name}`, and fail where it is read"
)
#: What a CUDA test says when its arm picks ONNX Runtime's CUDA provider (``_provider_tests``).
PROVIDER_NOTE = "its arm picks ONNX Runtime's CUDA provider: each target needs its own"
#: Calls that print or log: ``print``, ``logger.info``, ``sys.stderr.write``.
LOG_CALL = re.compile(r"(?:print|debug|info|warning|warn|log|write)$")


def is_call_of(statement: ast.AST, pattern: re.Pattern[str]) -> bool:
    """The statement is a call whose function name matches ``pattern``."""
    if not (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call)):
        return False
    func = statement.value.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    return bool(pattern.search(name))


def is_log_statement(statement: ast.AST) -> bool:
    """The statement is a print or log call (``print(...)``, ``logger.info(...)``)."""
    return is_call_of(statement, LOG_CALL)


@dataclass
class Report:
    node: ast.AST
    rule: Rule
    message: str
    targets: Mapping[str, Advice]
    severity: Severity | None
    fix: Fix | None
    span: Span | None = None
    #: Not shown, but its severity counts for the arm's test (``_quiet_tests``): a site that
    #: the test stands for.
    hidden: bool = False
    #: The CUDA availability test the node sits behind (``Context.behind_cuda_test``).
    behind: ast.expr | None = None
    #: What the other targets leave behind on the CPU by skipping the CUDA arm, where that
    #: fails (``if x.is_cuda: mask = mask.cuda()``: "mask"): an error, not a silent fallback.
    strands: str | None = None


T = TypeVar("T")


@dataclass
class Context:
    path: str
    text: str
    catalog: Catalog
    index: LineIndex
    resolver: NameResolver = field(default_factory=NameResolver)
    #: id(node) -> the guard in force where the node is; recorded while walking.
    guards: dict[int, Guard] = field(default_factory=dict)
    #: Local names (and ``self.x`` attributes) that hold the result of a CUDA check
    #: (``use_cuda = torch.cuda.is_available()``, ``self.on_cuda = dev.type == "cuda"``).
    cuda_flags: set[str] = field(default_factory=set)
    #: ids of the parameter defaults that flow to their parameter's uses (``def f(device="cuda")``).
    parameter_defaults: set[int] = field(default_factory=set)
    #: (id of a function, the text of an expression) -> the only strings an assert at the top of
    #: the function lets it hold (``assert device_type in ["cuda", "ascend"]``), and the lines
    #: from which and before which it holds them; also for a name assigned from it.
    admitted: dict[tuple[int, str], tuple[frozenset[str], int, float]] = field(default_factory=dict)
    #: A function's local CUDA flag -> the check it was given (``is_cuda =
    #: torch.cuda.is_available()``): a call behind ``if is_cuda:`` is behind that check
    #: (``_behind_tests``). So is one behind a module-level flag or a ``self`` attribute given
    #: such a check once in the file.
    flag_values: dict[str, ast.expr] = field(default_factory=dict)
    #: The flags of ``flag_values`` given at module level.
    module_flags: set[str] = field(default_factory=set)
    #: ids of the nodes of the checks that flags of ``flag_values`` were given, where a test on
    #: the flag refuses to run (``num_gpus = torch.cuda.device_count()`` then ``if num_gpus ==
    #: 0: raise``): what is reported there stops every other machine, as in the test itself.
    refusing_checks: set[int] = field(default_factory=set)
    #: Nodes inside ``try:`` blocks that catch ImportError.
    import_fallbacks: set[int] = field(default_factory=set)
    reports: list[Report] = field(default_factory=list)
    #: The nodes of device-type tests that concern no single-device target
    #: (``_single_device_tests``), found when the findings are made.
    single_device_tests: set[int] = field(default_factory=set)
    #: The nodes of CUDA tests whose arm picks ONNX Runtime's CUDA provider
    #: (``_provider_tests``), with the advice that replaces their targets'.
    provider_tests: dict[int, Mapping[str, Advice]] = field(default_factory=dict)
    #: id(node) -> its parent node; recorded while walking.
    parents: dict[int, ast.AST] = field(default_factory=dict)
    #: The nodes from the module down to where the walk is (the walk's own list).
    walk_stack: list[ast.AST] = field(default_factory=list)
    #: Builds fixes for this module (``python.fix_builder.FixBuilder``); set before the walk.
    fixes: Any = None
    #: (first, last) lines of the CUDA and ROCm backends in the file (PRT105) and of ``def cuda``
    #: overrides: nothing inside them is reported.
    backend_lines: list[tuple[int, int]] = field(default_factory=list)
    #: ids of the nodes of the conditions that skip a test without CUDA (``python.cuda_tests``):
    #: the test's body is no site, so it gets no fix either, and a fix of the condition alone
    #: would run the body where it fails.
    skip_conditions: set[int] = field(default_factory=set)
    #: (test, body) of each branch on a CUDA test, to make the test info when its body is.
    cuda_branches: list[tuple[ast.expr, list[ast.AST]]] = field(default_factory=list)
    #: Attribute name -> values assigned to it anywhere in the file (``args.device = "cuda"``,
    #: argparse ``default=``), for device-string and backend flows.
    attribute_values: dict[str, list[ast.expr]] = field(default_factory=dict)
    #: (first, last, targets) of modules, classes and functions named for a CUDA-only package:
    #: the targets without a build of the package are not reported inside them.
    package_scopes: list[tuple[int, int, frozenset[str]]] = field(default_factory=list)
    #: The project's CUDA-API layers (``Settings.cuda_layers``) and the rules each kind covers
    #: (rules/device.toml ``[backend.project_layers]``).
    layers: tuple[Layer, ...] = ()
    layer_rules: Mapping[str, list[str]] = field(default_factory=dict)
    #: The targets that cannot load the module (``Settings.absent_targets``): none of its sites
    #: is theirs.
    absent_targets: tuple[str, ...] = ()
    #: The CUDA-only packages that are the module's own project (``Settings.own_packages``):
    #: importing them is importing the project itself.
    own_packages: tuple[str, ...] = ()
    #: The targets that no package of GPU kernels the module imports has a backend for
    #: (rules/device.toml ``[backend.kernels_absent_on]``): a device string there feeds those
    #: kernels, and renaming it for such a target is no port.
    kernels_absent: frozenset[str] = frozenset()
    #: Local name -> the cuDNN/TF32 switch its value was read from (``old = ...benchmark``).
    saved_switches: dict[str, str] = field(default_factory=dict)
    #: id(node) -> (id of its module-level statement, switch) for a write that restores a saved
    #: switch; and the same pairs for the other writes. A restore is reported only where nothing
    #: else in its module-level function or class changes its switch.
    switch_restores: dict[int, tuple[int, str]] = field(default_factory=dict)
    switch_changes: set[tuple[int, str]] = field(default_factory=set)
    #: id(node) -> (id of its module-level statement, local name, variable) for a read of an
    #: environment variable whose value is kept in a local name (``old =
    #: os.environ.get("CUDA_LAUNCH_BLOCKING")``); and the same triples for the names written
    #: back to their variable (``os.environ["CUDA_LAUNCH_BLOCKING"] = old``). A read kept only
    #: to be restored is no site: the change between is.
    variable_saves: dict[int, tuple[int, str, str]] = field(default_factory=dict)
    variable_restores: set[tuple[int, str, str]] = field(default_factory=set)
    #: Names of the functions defined at module level (per-vendor helpers name their siblings).
    module_functions: frozenset[str] = frozenset()
    #: Names bound by the module's relative imports (``from .workers import Worker``).
    relative_imports: frozenset[str] = frozenset()
    #: The parameters of the module's private functions that reach a device or backend
    #: position (``python.position_params.Summary``); set before the walk.
    positions: Any = None
    #: (what, id(node)) -> a fact about a whole function or block, found by one walk of it and
    #: kept while the tree stays as it is (``scope_fact``): a check asked at every site of a
    #: scope walks the scope once, not once per site.
    scope_facts: dict[tuple[str, int], Any] = field(default_factory=dict)
    _reported: set[tuple[int, str]] = field(default_factory=set)
    #: ``backend_lines`` sorted for ``in_backend``: (how many, first lines, furthest last line).
    _backend_index: tuple[int, list[int], list[int]] = (0, [], [])

    def scope_fact(self, what: str, node: ast.AST, compute: Callable[[ast.AST], T]) -> T:
        """``compute(node)``, found once per node and kept until ``tree_changed``."""
        key = (what, id(node))
        if key not in self.scope_facts:
            self.scope_facts[key] = compute(node)
        return self.scope_facts[key]

    def tree_changed(self) -> None:
        """A stand-in became the definition it stands for: facts about scopes may differ."""
        self.scope_facts.clear()

    def qualified_name(self, node: ast.AST) -> str | None:
        return self.resolver.qualified_name(node) if isinstance(node, ast.expr) else None

    def span(self, node: ast.AST) -> Span:
        line, end_line = node.lineno, node.end_lineno or node.lineno
        return Span(
            line,
            self.index.char_column(line, node.col_offset),
            end_line,
            self.index.char_column(end_line, node.end_col_offset or node.col_offset),
        )

    def source(self, node: ast.AST) -> str:
        span = self.span(node)
        return self.index.text(span.line, span.column, span.end_line, span.end_column)

    def report(
        self,
        node: ast.AST,
        code: str,
        message: str,
        targets: Mapping[str, Advice] | None = None,
        severity: Severity | None = None,
        fix: Fix | None = None,
        span: Span | None = None,
        hidden: bool = False,
        behind: ast.expr | None = None,
        strands: str | None = None,
    ) -> None:
        """Queue a finding at ``node`` (or at ``span`` within it).

        The guard in force at ``node`` is applied when the walk is over.
        """
        key = (id(node), code)
        if key in self._reported or self.in_backend(node):
            return
        self._reported.add(key)
        rule = self.catalog.rules[code]
        if fix is not None and id(node) in self.skip_conditions:
            fix = None
        chosen = targets if targets is not None else rule.targets
        report = Report(node, rule, message, chosen, severity, fix, span, hidden, behind, strands)
        self.reports.append(report)

    def is_reported(self, node: ast.AST, code: str) -> bool:
        """Whether a finding of ``code`` is queued at ``node``."""
        return (id(node), code) in self._reported

    def behind_cuda_test(self, node: ast.AST, guard: Guard | None) -> ast.expr | None:
        """``if torch.cuda.is_available(): torch.cuda.synchronize()`` (also after ``if not
        torch.cuda.is_available(): return``, or in ``ok and torch.cuda.is_available() and
        torch.cuda.X()``): the CUDA test the site sits behind (``guard`` is the one in force
        at it), or None. The site never runs off CUDA, so nothing happens to it on another
        target: the other targets skip it, and the test says so. Where the test is reported the
        site is no finding of its own (``_behind_tests``)."""
        if guard is not None and guard.behind is not None:
            return guard.behind
        return availability_before(node, self.parents, self.qualified_name, self.cuda_flags)

    def record_refusal(self, test: ast.expr) -> None:
        """A test that refuses to run: the checks its CUDA flags were given refuse with it."""
        own = {id(node) for node in walk(test)}
        self.refusing_checks.update(
            id(node) for node in self._test_nodes(test, module_flags=False) if id(node) not in own
        )

    def _test_nodes(self, test: ast.expr, module_flags: bool = True) -> Iterator[ast.AST]:
        """The nodes of a test, and those of the check each CUDA flag in it was given (with
        ``module_flags`` False, not for the flags given at module level)."""
        for node in walk(test):
            yield node
            name = flag_name(node)
            value = self.flag_values.get(name)
            followed = module_flags or name not in self.module_flags
            if value is not None and value is not test and followed:
                yield from walk(value)

    def names_cuda(self, test: ast.expr | None) -> bool:
        """The test is one portlint reports: it reads ``torch.cuda``, compares with ``"cuda"``,
        or reads a name or ``self`` attribute that holds a CUDA check."""
        for node in walk(test) if test is not None else ():
            if isinstance(node, ast.Constant) and node.value == "cuda":
                return True
            if isinstance(node, ast.Name | ast.Attribute) and flag_name(node) in self.cuda_flags:
                return True
            if isinstance(node, ast.Attribute | ast.Name):
                name = self.qualified_name(node)
                if name is not None and name.startswith("torch.cuda"):
                    return True
        return False

    def in_log_call(self, node: ast.AST) -> bool:
        """The node is part of what a print or log call is given
        (``logger.info("was {}".format(os.environ["NCCL_SOCKET_IFNAME"]))``)."""
        child, current = node, self.parents.get(id(node))
        while current is not None and not isinstance(current, ast.stmt):
            if isinstance(current, ast.Call) and current.func is not child:
                func = current.func
                name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
                if LOG_CALL.search(name):
                    return True
            child, current = current, self.parents.get(id(current))
        return False

    def assigned_name(self, value: ast.AST) -> str | None:
        """The local name ``value`` is the whole value of (``gpus = <value>``), or None."""
        assign = self.parents.get(id(value))
        if (
            isinstance(assign, ast.Assign)
            and assign.value is value
            and len(assign.targets) == 1
            and isinstance(assign.targets[0], ast.Name)
        ):
            return assign.targets[0].id
        return None

    def function_scope(self) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
        """The innermost function the walk is in, or None at module or class level."""
        return next(
            (
                s
                for s in reversed(self.walk_stack)
                if isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef)
            ),
            None,
        )

    def top_level(self, node: ast.AST) -> ast.AST:
        """The module-level statement (function, class) that holds ``node``."""
        while not isinstance(self.parents.get(id(node)), ast.Module | None):
            node = self.parents[id(node)]
        return node

    def stored_unread(self, node: ast.AST) -> bool:
        """``ngpus = torch.cuda.device_count()`` in a function that never reads ``ngpus``: the
        node is (in) the value of an assignment to a local name that nothing reads, so nothing
        depends on what it answers. Counted in the function's text, since a sliced parse may
        leave a nested definition that reads the name unparsed."""
        statement, child = self.parents.get(id(node)), node
        while statement is not None and not isinstance(statement, ast.stmt):
            statement, child = self.parents.get(id(statement)), statement
        if not (
            isinstance(statement, ast.Assign)
            and statement.value is child
            and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Name)
        ):
            return False
        scope = self.function_scope()
        if scope is None:
            return False  # a module-level name may be imported elsewhere
        name = statement.targets[0].id
        first, last = scope.lineno, scope.end_lineno or scope.lineno
        body = "\n".join(self.index.line(number) for number in range(first, last + 1))
        return len(re.findall(rf"(?<![\w.]){re.escape(name)}(?!\w)", body)) == 1

    def in_environment_report(self) -> bool:
        """The walk is in a function, or a module, named for an environment report
        (``collect_env``, rules/device.toml ``[device.environment_reports]``): what it gathers
        is printed."""
        table = self.catalog.table("device").get("device", {}).get("environment_reports", {})
        names = table.get("names", ())
        scope = self.function_scope()
        stem = os.path.splitext(os.path.basename(self.path))[0].lower()
        lower = scope.name.lower() if scope is not None else ""
        return any(name in lower or name == stem for name in names)

    def in_backend(self, node: ast.AST) -> bool:
        return self.in_backend_line(getattr(node, "lineno", 0))

    def in_backend_line(self, line: int) -> bool:
        """The line is in a CUDA backend or a test that runs only on CUDA (``backend_lines``)."""
        if len(self.backend_lines) < 8:
            return any(first <= line <= last for first, last in self.backend_lines)
        if self._backend_index[0] != len(self.backend_lines):  # lines were added: index again
            spans = sorted(self.backend_lines)
            reach = list(itertools.accumulate((last for _, last in spans), max))
            self._backend_index = (len(spans), [first for first, _ in spans], reach)
        _, firsts, reach = self._backend_index
        # the spans that start at or before the line; one of them reaches it if the furthest does
        before = bisect.bisect_right(firsts, line)
        return before > 0 and reach[before - 1] >= line

    def findings(self) -> list[Finding]:
        finished = {}
        self.single_device_tests = self._single_device_tests()
        self.provider_tests = self._provider_tests()
        for report in self.reports:
            finding = self._finish(report)
            if finding is not None:
                finished[id(report)] = (report, finding)
        self._behind_tests(finished)
        self._tests_of_reported_choices(finished)
        self._quiet_tests(finished)
        return [finding for report, finding in finished.values() if not report.hidden]

    def _tests_of_reported_choices(self, finished: dict[int, tuple[Report, Finding]]) -> None:
        """``"cuda" if torch.cuda.is_available() else "cpu"`` where the device string is reported
        (PRT101): the string's finding is the device choice, and its fix rewrites the whole
        expression, test included. The ``torch.cuda`` test in it is the same site, no finding of
        its own; so is a negated device-type test, whose arm moves what is not on CUDA there
        (``t.to("cuda:0") if not t.is_cuda else t``), or a comparison with the device itself
        (``if attr.device != torch.device("cuda"): attr = attr.to(torch.device("cuda"))``)."""
        strings = {
            id(report.node): finding
            for report, finding in finished.values()
            if report.rule.code == DEVICE_STRING_RULE and not report.hidden
        }
        moves = {
            id(report.node): finding
            for report, finding in finished.values()
            if report.rule.code in DEVICE_STRINGS and not report.hidden
        }
        for report, finding in finished.values():
            if report.hidden:
                continue
            if report.rule.code in DEVICE_TYPE_TESTS or (
                report.rule.code == DEVICE_STRING_RULE and self._compared_device(report.node)
            ):
                statement = self._if_tested_by(report.node)
                if statement is not None and self._only_moves(statement, finding, moves):
                    report.hidden = True
        if not strings:
            return
        for report, finding in finished.values():
            if report.hidden or not (
                report.rule.code == TORCH_CUDA_RULE or report.rule.code in DEVICE_TYPE_TESTS
            ):
                continue
            choice = self._choice_tested_by(report.node)
            if choice is None:
                continue
            if report.rule.code in DEVICE_TYPE_TESTS and negated(choice.test) is None:
                # ``"cuda" if "cuda" in device else "cpu"``: the device type picks the choice,
                # and the test is its site
                continue
            arms = [n for arm in (choice.body, choice.orelse) for n in walk(arm)]
            said = [strings[id(n)] for n in arms if id(n) in strings]
            # the string's finding must say all the test's does: its targets, as severe
            if any(says_all(string, finding) for string in said):
                report.hidden = True

    def _compared_device(self, node: ast.AST) -> bool:
        """The device string is one side of a comparison, bare or as ``torch.device("cuda")``
        (``attr.device != torch.device("cuda")``): a test of the device, like a device type's."""
        parent = self.parents.get(id(node))
        if isinstance(parent, ast.Call) and self.qualified_name(parent.func) == "torch.device":
            parent = self.parents.get(id(parent))
        return isinstance(parent, ast.Compare)

    def _if_tested_by(self, node: ast.AST) -> ast.If | None:
        """The ``if`` statement whose test holds ``node``."""
        child, current = node, self.parents.get(id(node))
        while current is not None and not isinstance(current, ast.stmt):
            child, current = current, self.parents.get(id(current))
        return current if isinstance(current, ast.If) and current.test is child else None

    @staticmethod
    def _only_moves(statement: ast.If, test: Finding, moves: dict[int, Finding]) -> bool:
        """``if not w.is_cuda: w = w.cuda()``, ``if w.device.type != "cuda": w =
        w.to("cuda:0")``: a negated test, no ``else``, and every statement of the arm (each a
        plain assignment or expression) holds a reported move to CUDA that says all the test
        does. The move is the site: once it names the chosen device, the test moves only what
        is not on it."""
        if statement.orelse or negated(statement.test) is None:
            return False
        for part in statement.body:
            if not isinstance(part, ast.Assign | ast.Expr):
                return False  # ``if xpu: w.to("xpu") else: w.to("cuda")``: more than a move
            said = [moves[id(n)] for n in walk(part) if id(n) in moves]
            if not said or not all(says_all(move, test) for move in said):
                return False
        return True

    def _choice_tested_by(self, node: ast.AST) -> ast.IfExp | None:
        """The conditional expression whose test holds ``node``, within one statement (also one
        nested in another's arm, ``a if ok else ("cuda" if torch.cuda.is_available() else
        "cpu")``, whose parents the walk does not record: the statement's own nodes are read)."""
        current = self.parents.get(id(node))
        while current is not None and not isinstance(current, ast.stmt):
            current = self.parents.get(id(current))
        if current is None:
            return None
        # the statement's own parts (its expressions, a function's parameters and their
        # defaults), not the statements of its body (an ``if``'s, a function's)
        parts = [
            value
            for _, field in ast.iter_fields(current)
            for value in (field if isinstance(field, list) else [field])
            if isinstance(value, ast.AST) and not isinstance(value, ast.stmt)
        ]
        tested = [
            choice
            for part in parts
            for choice in walk(part)
            if isinstance(choice, ast.IfExp) and any(n is node for n in walk(choice.test))
        ]
        return tested[-1] if tested else None  # the innermost: walked after the outer

    def _quiet_tests(self, finished: dict[int, tuple[Report, Finding]]) -> None:
        """A CUDA test whose branch has only info-level findings (memory printouts, seeding after
        torch.manual_seed) is itself info: nothing breaks on the other targets."""
        at: dict[int, list[int]] = {}  # id(node) -> the keys of the findings reported there
        for key, (report, _) in finished.items():
            at.setdefault(id(report.node), []).append(key)
        # A test's finding -> whether every branch on it has only info findings: a check kept
        # in a flag (``use_cuda = torch.cuda.is_available()``) is tested by every ``if
        # use_cuda:``, and is quiet only if all of them are.
        verdicts: dict[int, bool] = {}
        for test, body in self.cuda_branches:
            # a flag given at module level (``has_cuda = torch.cuda.is_available()``) is also
            # read by what is no branch (a skip mark, ``has_cuda and ...``): its branches alone
            # do not say what the other targets lose
            nodes = self._test_nodes(test, module_flags=False)
            test_keys = [key for node in nodes for key in at.get(id(node), ())]
            inside = [
                finished[key][1]
                for part in body
                for node in walk(part)
                for key in at.get(id(node), ())
                if not self._scopes_device(node)
            ]
            # A literal that restates the test is no finding of the body: a branch that only
            # stores it (``self.accelerator = "cuda"``) keeps its test's severity, since the
            # other targets skip that setting.
            quiet = bool(inside) and all(f.severity is Severity.INFO for f in inside)
            for key in test_keys:
                verdicts[key] = verdicts.get(key, True) and quiet
        for key, quiet in verdicts.items():
            report, finding = finished[key]
            if quiet and finding.severity is not Severity.INFO:
                message = finding.message.split(" (" + GUARDED_NOTE[:16])[0]
                finished[key] = (report, finding._replace(severity=Severity.INFO, message=message))

    def _provider_tests(self) -> dict[int, Mapping[str, Advice]]:
        """The nodes of the CUDA tests whose arm names ONNX Runtime's CUDA execution provider
        (rules/device.toml ``[device.onnx_providers]``), with each target's provider."""
        table = self.catalog.table("device").get("device", {}).get("onnx_providers", {})
        names = frozenset(table.get("names", ()))
        if not names or not self.cuda_branches or not any(n in self.text for n in names):
            return {}
        advice = {t: parse_advice(raw) for t, raw in table["targets"].items()}
        found: dict[int, Mapping[str, Advice]] = {}
        for test, body in self.cuda_branches:
            if any(
                isinstance(node, ast.Constant) and node.value in names
                for part in body
                for node in walk(part)
            ):
                found.update((id(node), advice) for node in walk(test))
        return found

    def _single_device_tests(self) -> set[int]:
        """The nodes of device-type tests (PRT103, PRT104) whose CUDA arm only picks one of
        several devices (rules/device.toml ``[device.single_device]``:
        ``torch.cuda.set_device(dev)``, ``with torch.cuda.device(dev):``): a target with a single
        device (mps, cpu) has nothing to pick there, and skipping the arm loses it nothing."""
        table = self.catalog.table("device").get("device", {}).get("single_device", {})
        selections = frozenset(table.get("selections", ()))
        if not selections or not self.cuda_branches:
            return set()
        at: dict[int, list[Report]] = {}
        for report in self.reports:
            at.setdefault(id(report.node), []).append(report)
        found: set[int] = set()
        for test, body in self.cuda_branches:
            inside = [r for part in body for node in walk(part) for r in at.get(id(node), ())]
            if inside and {self.qualified_name(r.node) for r in inside} <= selections:
                found.update(
                    id(node)
                    for node in self._test_nodes(test)
                    if any(r.rule.code in DEVICE_TYPE_TESTS for r in at.get(id(node), ()))
                )
        return found

    def _same_for_one_device(self, node: ast.AST) -> bool:
        """``@skipIf(torch.cuda.device_count() < 2, ...)``, ``multi = torch.cuda.device_count()
        > 1``: the count is compared with a number that gives the same answer for no device and
        for one (``same_for_one_device``). A single-device target (mps, cpu) reads 0 where its
        own count would say 1, and the answer does not change: it loses nothing here."""
        call = self.parents.get(id(node))
        if not (
            isinstance(call, ast.Call)
            and call.func is node
            and self.qualified_name(node) == "torch.cuda.device_count"
        ):
            return False
        compare = self.parents.get(id(call))
        return isinstance(compare, ast.Compare) and same_for_one_device(compare, call)

    def _asks_machine(self, test: ast.expr | None) -> bool:
        """The CUDA test in force asks about the machine (``torch.cuda.is_available()``, a device
        count, a flag that holds such a check), where the other targets fall back to the CPU;
        not a test of a device's type, which they pass on their own device. Unknown (None):
        the machine."""
        if test is None:
            return True
        return asks_availability(test, self.qualified_name, self.cuda_flags) or any(
            isinstance(node, ast.Attribute) and self.qualified_name(node) in CUDA_CHECKS
            for node in walk(test)
        )

    def _scopes_device(self, node: ast.AST) -> bool:
        """``with torch.cuda.device(device):``: the context only picks the device for the calls
        inside it, whose findings say what the arm loses."""
        call = self.parents.get(id(node))
        if not (isinstance(call, ast.Call) and call.func is node):
            return False
        item = self.parents.get(id(call))
        return isinstance(item, ast.withitem) and self.qualified_name(node) == "torch.cuda.device"

    def _behind_tests(self, finished: dict[int, tuple[Report, Finding]]) -> None:
        """A call behind a reported CUDA availability test is no finding: the test is the site
        of what the other targets miss. Its severity still counts for the test's
        (``_quiet_tests``), and where the test's own fix makes it device-generic the call's
        edits join that fix, or the other targets would now reach ``torch.cuda``. Behind a test
        that is no finding (a project's own ``is_cuda_available()``), the call stays the site."""
        sites = {
            id(r.node): key for key, (r, f) in finished.items() if not r.hidden and r.behind is None
        }

        def position(key: int) -> tuple[int, int]:
            node = finished[key][0].node
            return getattr(node, "lineno", 0), getattr(node, "col_offset", 0)

        # In source order, so that a call behind a test that is itself behind another
        # (``dev == "cuda" and torch.cuda.is_available()``) is judged after that test is.
        behind = sorted((k for k, (r, f) in finished.items() if r.behind is not None), key=position)
        for key in behind:
            report, finding = finished[key]
            test, site = report.behind, None
            while test is not None and site is None:
                site = next((sites[id(n)] for n in self._test_nodes(test) if id(n) in sites), None)
                test = self.guards.get(id(test), NO_GUARD).behind
            tested = finished[site][1].severity if site is not None else None
            if tested is None or (tested is Severity.INFO and finding.severity is not tested):
                # ``if torch.version.cuda: torch.cuda.set_device(0)``: an info test does not
                # say what the arm loses, the call does. Behind a warning or an error test, a
                # call that would raise never runs off CUDA: the test says all there is.
                if not report.hidden:
                    sites[id(report.node)] = key
                continue
            report.hidden = True
            owner, carrier = finished[site]
            if finding.fix is None or carrier.fix is None:
                continue
            fix = carrier.fix
            edits = fix.edits + tuple(e for e in finding.fix.edits if e not in fix.edits)
            unsafe = Applicability.UNSAFE in (fix.applicability, finding.fix.applicability)
            applicability = Applicability.UNSAFE if unsafe else fix.applicability
            merged = fix._replace(applicability=applicability, edits=edits)
            finished[site] = (owner, carrier._replace(fix=merged))

    def _behind_switch(self, node: ast.AST) -> bool:
        """``if use_cuda: model.cuda()``, ``if args.cuda and ...: x = x.to("cuda")``: in the arm
        of a switch that turns CUDA on (``names_switch``), the code was told to use CUDA. Where
        the switch is set (an option's default, a caller's test) is the site of the device
        choice, not the move in its arm. A ``torch.cuda`` call there stays a site of its own
        (``assert torch.cuda.is_available()`` refuses where CUDA was asked for and is missing).
        A plain name is a switch only as a parameter of the function: a local set from a test
        in the function (``use_cuda = device_type == "cuda"``) is that test, reported there."""
        tested: list[ast.expr] = []  # the operands of the tests whose arm holds the node
        child, current = node, self.parents.get(id(node))
        while current is not None and not isinstance(current, NEW_SCOPES):
            if isinstance(current, ast.If) and child is not current.test and child in current.body:
                test = current.test
                if not isinstance(test, ast.BoolOp):
                    tested.append(test)
                elif isinstance(test.op, ast.And):
                    tested += test.values
            child, current = current, self.parents.get(id(current))
        parameters = parameter_names(current) if current is not None else set()
        for value in tested:
            if isinstance(value, ast.Name) and value.id not in parameters:
                continue
            if names_switch(value) and self.qualified_name(value) != "torch.cuda":
                return True
        return False

    def _finish(self, report: Report) -> Finding | None:
        if self.switch_restores.get(id(report.node)) in self.switch_changes:
            return None  # the change of the switch is the site, not its restore
        if self.variable_saves.get(id(report.node)) in self.variable_restores:
            return None  # the value is read only to be put back after a change
        if report.rule.code in DEVICE_STRINGS and self._behind_switch(report.node):
            return None
        guard = self.guards.get(id(report.node), NO_GUARD)
        if isinstance(report.node, ast.alias):
            statement = self.guards.get(id(self.parents.get(id(report.node))), NO_GUARD)
            if statement.only is not None and not statement.only:
                return None  # an import that only NVIDIA reaches (the arm after a ROCm arm)
        if guard.restated and _restates(report.node, self.parents, guard.restated):
            return None
        if (
            report.rule.code == DEVICE_STRING_RULE
            and isinstance(report.node, ast.Constant)
            and report.node.value in guard.restated
        ):
            # ``elif name == "cuda": return torch.device("cuda")``, ``if device.type == "cuda":
            # with torch.autocast("cuda")``: the device the test required, used as it is; the
            # test is the site (or, where it is no device test, the caller's explicit choice)
            return None
        targets = dict(report.targets)
        covered = guard.covered
        if isinstance(report.node, ast.alias):
            # ``if is_npu_available(): from npu_utils import pad else: from flash_attn import
            # pad``: the import statement's sibling branches cover their targets. ROCm stays:
            # a CUDA test lets it through, and an NVIDIA-only package is what it lacks there
            statement = self.guards.get(id(self.parents.get(id(report.node))), NO_GUARD)
            covered = statement.covered - {"rocm"}
            if statement.only is not None:
                # ``if device_type == "xpu": import bitsandbytes``: only that target gets here
                covered = covered | (frozenset(targets) - statement.only)
            if statement.cuda_only and self.names_cuda(statement.behind):
                # ``if torch.cuda.is_available(): import pynvml``: only CUDA builds get here,
                # and of the targets only ROCm, which lacks the package; the test is the site
                # for the others (a project's own ``is_cuda_available()`` is no finding, so
                # there the import stays the site for every target)
                covered = covered | (frozenset(targets) - {"rocm"})
        if targets.keys() == {"rocm"}:
            # A site of ROCm alone (``torch.version.cuda`` behind a CUDA test): the CUDA arm
            # lets ROCm through, which is where it goes wrong, not what covers it.
            covered = covered - {"rocm"}
        for target in targets:
            if target in covered or (guard.only is not None and target not in guard.only):
                targets[target] = PORTABLE
        if not isinstance(report.node, ast.alias):  # the import itself keeps every target
            line = getattr(report.node, "lineno", 0)
            for first, last, absent in self.package_scopes:
                if first <= line <= last:
                    for target in absent & targets.keys():
                        targets[target] = PORTABLE
        if self.layers:
            # ``transfer_to_npu`` imported somewhere in the project: npu runs this site
            text = self.index.text(*(report.span or self.span(report.node)))
            code = report.rule.code
            for layer in self.layers:
                if layer.target in targets and layer.covers(code, text, self.layer_rules):
                    targets[layer.target] = PORTABLE
        if guard.cuda_only and "cpu" in targets:
            targets["cpu"] = PORTABLE
        if report.rule.code in DEVICE_STRINGS:
            # ``torch.randn(n, device="cuda")`` in a module of Triton kernels: on a CPU-only
            # machine "cpu" is a device, but the kernels the tensors feed have no backend there
            for target in self.kernels_absent & targets.keys():
                if targets[target].status is Status.RENAME:
                    targets[target] = UNSUPPORTED
        if id(report.node) in self.single_device_tests or self._same_for_one_device(report.node):
            single = self.catalog.single_device_targets
            targets.update((t, PORTABLE) for t in single & targets.keys())
        providers = self.provider_tests.get(id(report.node))
        if providers is not None:
            # the arm picks ONNX Runtime's CUDA provider: each listed target needs its own, and
            # ROCm, which passes the test, has no CUDA provider
            listed = {t for t, advice in targets.items() if not advice.portable} | {"rocm"}
            targets.update((t, providers[t]) for t in listed & providers.keys())
            report = replace(report, message=report.message + f" ({PROVIDER_NOTE})")
        if targets and all(advice.status is Status.PORTABLE for advice in targets.values()):
            return None
        severity = report.severity or report.rule.severity
        message = report.message
        # An import keeps its own severity: one with a fallback is a warning (PRT501).
        if guard.info and not isinstance(report.node, ast.alias):
            severity = Severity.INFO
        elif guard.tools_handled and report.rule.code == TOOL_RULE:
            severity = Severity.INFO  # the missing program fails into the handler
        # in a test that refuses to run, or the check a flag in such a test was given
        refuses = guard.refuses or id(report.node) in self.refusing_checks
        if refuses and guard.cuda_only:  # an assert only the CUDA path reaches
            severity = Severity.INFO
        elif refuses:  # ``assert torch.cuda.is_available()``: it stops everywhere else
            severity = Severity.ERROR
        elif report.strands and guard.cuda_only and severity is not Severity.INFO:
            # ``if x.is_cuda: mask = mask.cuda()``: the other accelerators skip the move, and
            # ``mask`` stays on the CPU beside ``x`` on their device: the next use fails
            severity = Severity.ERROR
            if "cpu" in targets:  # on a CPU-only machine both stay on the CPU: nothing fails
                targets["cpu"] = PORTABLE
            failing = _affected(targets)
            if failing:
                note = STRANDED_NOTE.format(targets=", ".join(failing), what=report.strands)
                message += f" ({note})"
        elif guard.fails_elsewhere and guard.cuda_only and severity is not Severity.INFO:
            severity = Severity.ERROR  # the other targets take an ``else`` that fails
            failing = _affected(targets)
            if failing:
                message += f" ({', '.join(failing)} take an arm that fails there)"
        elif guard.unbound is not None and guard.cuda_only and severity is not Severity.INFO:
            # ``if torch.cuda.is_available(): n = ...`` then ``total / n``: no CPU fallback,
            # the read fails wherever the arm is skipped, on a CPU-only machine too
            severity = Severity.ERROR
            # not where an arm of its own binds the name, nor among Triton kernels, which
            # have no CPU backend (``kernels_absent``)
            reaches_cpu = "cpu" not in covered | self.kernels_absent
            reaches_cpu = reaches_cpu and (guard.only is None or "cpu" in guard.only)
            if "cpu" in targets and targets["cpu"].portable and reaches_cpu:
                targets["cpu"] = MANUAL
            failing = _affected(targets)
            if failing:
                name = guard.unbound
                note = UNBOUND_NOTE.format(targets=", ".join(failing), name=name)
                message += f" ({note})"
        elif guard.cuda_only and severity is not Severity.INFO:
            severity = Severity.WARNING
            skipped = _affected(targets)
            if skipped:
                # a test of a device's type (PRT103, PRT104) is no fallback to the CPU either
                machine = report.rule.code not in DEVICE_TYPE_TESTS
                machine = machine and self._asks_machine(guard.behind)
                if guard.taken_off_cuda:
                    note = TAKEN_GUARDED_NOTE if machine else TAKEN_NOTE
                else:
                    note = GUARDED_NOTE if machine else SKIPPED_NOTE
                message += " (" + note.format(targets=", ".join(skipped)) + ")"
        if (
            report.rule.code in DEVICE_TYPE_TESTS
            and severity is not Severity.ERROR
            and "cpu" in targets
            and not targets["cpu"].portable
        ):
            # ``use_amp = device.type == "cuda"``: a CPU-only machine skips the CUDA arm as it
            # skips ``if torch.cuda.is_available():``, and needs nothing from it; only where
            # the test refuses to run (an error) is the CPU refused too
            targets["cpu"] = PORTABLE
            if all(advice.status is Status.PORTABLE for advice in targets.values()):
                return None
        only_rocm = not _affected(targets)
        if report.rule.code == CAPABILITY_RULE and severity is Severity.ERROR and only_rocm:
            # ``torch.cuda.get_device_capability()`` raises without CUDA, but where only ROCm
            # gets here it answers, in gfx numbers: a wrong branch, not a failure
            severity = Severity.WARNING
        span = report.span or self.span(report.node)
        symbol = self.index.text(span.line, span.column, span.end_line, span.end_column)
        # renaming the test is no port where the arm picks a provider of ONNX Runtime's
        fix = report.fix if providers is None else None
        return report.rule.finding(self.path, span, message, symbol, targets, severity, fix)


def _affected(targets: Mapping[str, Advice]) -> list[str]:
    """The targets that a CUDA arm's finding concerns, for its message: all listed but ROCm,
    which the arm lets through."""
    return [t for t, a in targets.items() if not a.portable and t != "rocm"]


def _restates(node: ast.AST, parents: Mapping[int, ast.AST], tested: frozenset[str]) -> bool:
    """``self.backend = "cuda:nccl,cpu:gloo"`` under ``if self.backend == "nccl":``, or
    ``flag not in ("auto", "cuda")`` under ``if dev.type == "cuda":``: the literal stored or
    compared says again what the enclosing test required, so the test is the site. A literal
    used is handled in ``_finish``: one equal to the tested value (``torch.device("cuda")``) is
    no site, one that only holds it (``torch.device("cuda:0")``) still is."""
    parent = parents.get(id(node))
    if isinstance(parent, ast.Tuple | ast.List | ast.Set):  # ``flag in ("auto", "cuda")``
        listed = isinstance(parents.get(id(parent)), ast.Compare)
    else:
        listed = False
    if isinstance(node, ast.Compare):
        parts: list[ast.AST] = list(node.comparators)
    elif isinstance(node, ast.Constant) and (isinstance(parent, ast.Assign) or listed):
        parts = [node]
    else:
        return False
    for part in parts:
        for inner in walk(part):
            if isinstance(inner, ast.Constant) and isinstance(inner.value, str):
                words = set(inner.value.replace(",", ":").split(":"))
                if words & tested:
                    return True
    return False

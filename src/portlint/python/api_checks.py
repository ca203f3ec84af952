"""PRT2xx and PRT6xx: the torch.cuda API, capability checks and NVIDIA-only switches."""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Callable, Mapping

from portlint.catalog import Catalog, parse_advice
from portlint.config import version_tuple
from portlint.model import PORTABLE, Advice, Edit, Fix, Severity, Span, Status
from portlint.python.backends import vendor_words
from portlint.python.context import LOG_CALL, Context
from portlint.python.cuda_tests import in_skip_condition, test_skips
from portlint.python.device_checks import picks_cpu_load
from portlint.python.fixes import FixBase
from portlint.python.guards import (
    CUDA_CHECKS,
    CUDA_DEVICE_TEXT,
    PREDICATE,
    Guard,
    availability_before,
    compared_with_none,
    handles_failures,
    if_chain,
    operands_before,
    rocm_build_test,
)
from portlint.python.torch_api import DISABLES_AUTOCAST, disables_autocast, torch_cuda_api
from portlint.python.tree import exits, statement_blocks, walk

TF32_SWITCHES = frozenset(
    {"torch.backends.cuda.matmul.allow_tf32", "torch.backends.cudnn.allow_tf32"}
)
CUDNN_SWITCHES = frozenset(
    {
        "torch.backends.cudnn.benchmark",
        "torch.backends.cudnn.deterministic",
        "torch.backends.cudnn.enabled",
    }
)
SM_STRING = re.compile(r"^sm_\d+[a-z]?$")


def _sets_default(node: ast.AST, ctx: Context) -> bool:
    """The switch is assigned the constant PyTorch starts it with (``[reduced_precision_switch]
    default``): the assignment changes nothing on any machine."""
    parent = ctx.parents.get(id(node))
    default = ctx.catalog.table("capability")["reduced_precision_switch"]["default"]
    return (
        isinstance(parent, ast.Assign)
        and node in parent.targets
        and isinstance(parent.value, ast.Constant)
        and parent.value.value is default
    )


def _generic_precision_beside(node: ast.AST, name: str, ctx: Context) -> bool:
    """``torch.backends.cuda.matmul.allow_tf32 = True`` in a block that also calls
    ``torch.set_float32_matmul_precision("high")`` (rules/capability.toml
    ``[generic_matmul_precision]``): the device-generic call already asks every target for TF32
    matmuls, so the CUDA switch ports nothing."""
    generic = ctx.catalog.table("capability")["generic_matmul_precision"]
    assign = ctx.parents.get(id(node))
    if not (
        name == generic["switch"]
        and isinstance(assign, ast.Assign)
        and node in assign.targets
        and isinstance(assign.value, ast.Constant)
        and assign.value.value is True
    ):
        return False
    holder = ctx.parents.get(id(assign))
    block = next((b for b in statement_blocks(holder) if assign in b), []) if holder else []
    return any(
        isinstance(statement, ast.Expr)
        and isinstance(call := statement.value, ast.Call)
        and ctx.qualified_name(call.func) == generic["call"]
        and len(call.args) == 1
        and isinstance(call.args[0], ast.Constant)
        and call.args[0].value in generic["allows_tf32"]
        for statement in block
    )


@functools.cache
def reduced_precision_switches(catalog: Catalog) -> tuple[frozenset[str], dict[str, Advice]]:
    """The reduced-precision reduction switches of rules/capability.toml, and their advice."""
    table = catalog.table("capability")["reduced_precision_switch"]
    return frozenset(table["names"]), {t: parse_advice(a) for t, a in table["targets"].items()}


def check_torch_name(node: ast.Attribute | ast.Name, name: str, ctx: Context) -> None:
    """One resolved ``torch.*`` name: route it to the rule that covers it."""
    if name.startswith("torch.cuda.") or name == "torch.cuda":
        _report_torch_cuda(node, name, ctx)
    elif name.startswith(PRIVATE_BINDINGS):
        if _probed(node, ctx):
            return  # ``if hasattr(torch._C, "_cuda_x"): torch._C._cuda_x()``
        message = f"`{name}` is a private binding of CUDA builds; no other build has it"
        ctx.report(node, "PRT201", message, targets=PRIVATE_TARGETS)
    elif name == PROFILER_CUDA:
        _report_profiler_activity(node, ctx)
    elif name == "torch.version.cuda":
        _report_cuda_version(node, ctx)
    elif name in TF32_SWITCHES:
        if _generic_precision_beside(node, name, ctx):
            return  # ``allow_tf32 = True`` beside ``torch.set_float32_matmul_precision("high")``
        _report_switch(node, name, ctx, "PRT603", f"`{name}` only affects NVIDIA GPUs")
    elif name in reduced_precision_switches(ctx.catalog)[0]:
        if _sets_default(node, ctx):
            return  # ``allow_fp16_reduced_precision_reduction = True``: no machine changes
        message = f"`{name}` only affects cuBLAS and hipBLAS matmuls"
        targets = reduced_precision_switches(ctx.catalog)[1]
        _report_switch(node, name, ctx, "PRT603", message, targets)
    elif name in CUDNN_SWITCHES:
        message = f"`{name}` has no effect outside NVIDIA and ROCm"
        _report_switch(node, name, ctx, "PRT604", message)


def _monkeypatch(node: ast.AST, name: str, ctx: Context) -> bool:
    """``torch.cuda.set_stream = patched``, and ``previous = torch.cuda.set_stream`` that keeps
    the original of a name the module patches so: replacing or saving an attribute of
    ``torch.cuda`` works on every build, and what the patch does runs where it is called."""
    if isinstance(getattr(node, "ctx", None), ast.Store | ast.Del):
        return True
    parent = ctx.parents.get(id(node))
    if not (isinstance(parent, ast.Assign) and parent.value is node):
        return False
    root: ast.AST = parent
    while (above := ctx.parents.get(id(root))) is not None:
        root = above
    return name in ctx.scope_fact("torch.cuda names patched", root, _patched_names(ctx))


def _patched_names(ctx: Context) -> Callable[[ast.AST], frozenset[str]]:
    """The qualified names a module assigns to (``torch.cuda.set_stream = patched``)."""

    def compute(root: ast.AST) -> frozenset[str]:
        return frozenset(
            name
            for n in walk(root)
            if isinstance(n, ast.Assign)
            for target in n.targets
            if isinstance(target, ast.Attribute)
            and (name := ctx.qualified_name(target) or "").startswith("torch.cuda.")
        )

    return compute


def _probed(node: ast.AST, ctx: Context) -> bool:
    """``hasattr(torch._C, "_cuda_setRNGState") and callable(torch._C._cuda_setRNGState)``, or
    the name used in the arm of ``if hasattr(...)`` (also from a function defined there): a
    binding only reached where the build has it."""
    if not isinstance(node, ast.Attribute):
        return False
    owner, attribute = ast.dump(node.value), node.attr

    def probes(test: ast.expr) -> bool:
        return any(
            isinstance(n, ast.Call)
            and isinstance(n.func, ast.Name)
            and n.func.id == "hasattr"
            and len(n.args) == 2
            and ast.dump(n.args[0]) == owner
            and isinstance(n.args[1], ast.Constant)
            and n.args[1].value == attribute
            for n in walk(test)
        )

    child, current = node, ctx.parents.get(id(node))
    while current is not None:
        if isinstance(current, ast.BoolOp) and isinstance(current.op, ast.And):
            before = current.values[: current.values.index(child)]
            if any(probes(value) for value in before):
                return True
        if isinstance(current, ast.If):
            # the branch of the chain (``elif`` too) whose body holds the statement
            branch = next((b for b in if_chain(current) if child in b.body), None)
            if branch is not None and branch.test is not None and probes(branch.test):
                return True
        if isinstance(current, ast.IfExp) and child is current.body and probes(current.test):
            return True
        child, current = current, ctx.parents.get(id(current))
    return False


#: Build versions a test can read: one that does is false on ROCm builds (``torch.version.cuda
#: is not None``, ``torch.version.hip is None``), unlike ``torch.cuda.is_available()``.
BUILD_VERSIONS = frozenset({"torch.version.cuda", "torch.version.hip"})


def _is_name(node: ast.AST) -> bool:
    return isinstance(node, ast.Name | ast.Attribute)


#: What a ``torch.cuda`` name does without CUDA (``ApiEntry.outcome``) when it does not raise.
NO_RAISE = frozenset({"warns", "noop", "value"})


def _beside_rocm_build_test(node: ast.AST, ctx: Context) -> bool:
    """The node is an operand of an ``and`` (or inside one) that also tests for a ROCm build
    (``torch.cuda.is_available() and torch.version.hip is not None``): the ``and`` is False
    off ROCm whatever the node answers, and on ROCm ``torch.cuda`` is ROCm's own API."""
    child, current = node, ctx.parents.get(id(node))
    while current is not None and not isinstance(current, ast.stmt):
        if isinstance(current, ast.BoolOp) and isinstance(current.op, ast.And):
            others = (value for value in current.values if value is not child)
            if any(rocm_build_test(value, ctx.qualified_name) for value in others):
                return True
        child, current = current, ctx.parents.get(id(current))
    return False


def _report_cuda_version(node: ast.AST, ctx: Context) -> None:
    """``torch.cuda.is_available() and torch.version.cuda``, or ``torch.version.cuda`` after
    ``if not torch.cuda.is_available(): return``: only builds that pass the CUDA test read it,
    NVIDIA's and ROCm's, and on ROCm it is None. The other targets never get there (the test is
    their site), so the read is ROCm's alone. Behind a test that ROCm fails too (``if
    torch.version.cuda is not None:``), only NVIDIA gets there: no finding. A read that fails
    on None where the code did not test it first is an error (``_fails_on_none``)."""
    test = ctx.behind_cuda_test(node, ctx.guards.get(id(node)))
    rocm_arm = _tested_beside_rocm_arm(node, ctx)
    # ``print("CUDA", torch.version.cuda)``, or a field of ``collect_env()``'s report: a line
    # that reads None elsewhere, a merely different value
    printed = Severity.INFO if ctx.in_log_call(node) or ctx.in_environment_report() else None
    fails = printed is None and _fails_on_none(node, ctx) and not _none_tested(node, ctx)
    if fails:
        # ``try: parse(torch.version.cuda) except TypeError: ...`` takes care of the failure
        printed = Severity.INFO if _caught(node, ctx) else Severity.ERROR
    # ``parse(torch.version.cuda)``: what the None makes of the line
    outcome = ", and the line fails on it" if fails else ""
    if test is None:
        message = f"`torch.version.cuda` is None on ROCm and every other vendor{outcome}"
        if rocm_arm:
            # ``if torch.version.cuda: ... elif torch.version.hip: ...``: ROCm has its own arm
            message = f"`torch.version.cuda` is None on every vendor but NVIDIA and ROCm{outcome}"
            targets = dict(ctx.catalog.rules["PRT601"].targets)
            targets.pop("rocm", None)
            ctx.report(node, "PRT601", message, targets=targets, severity=printed)
            return
        ctx.report(node, "PRT601", message, severity=printed)
        return
    if rocm_arm:
        return  # behind a CUDA test only ROCm was left, and it takes its own arm
    if any(ctx.qualified_name(n) in BUILD_VERSIONS for n in walk(test) if _is_name(n)):
        return
    if _none_tested(node, ctx):
        return  # ``is_cuda = torch.version.cuda is not None``, then ``if is_cuda:``
    if compared_with_none(ctx.parents.get(id(node)), (ast.Is, ast.IsNot)):
        # ``if torch.version.cuda is None: return`` behind a CUDA test: the code tells ROCm
        # from NVIDIA itself, and handles the None it is on ROCm
        return
    words = vendor_words(ctx.catalog)
    for before in operands_before(node, ctx.parents):
        # ``not torch.cuda.is_available() or is_rocm_pytorch() or torch.version.cuda < ...``:
        # ROCm stops at its own test, so only NVIDIA reads the version
        call = before if isinstance(before, ast.Call) else None
        name = _last_name(call.func) if call is not None else ""
        match = PREDICATE.fullmatch(name or "")
        if match and words.get(match.group(1).lower()) == "rocm":
            return
    message = f"`torch.version.cuda` is None on ROCm, which passes the CUDA test before it{outcome}"
    rocm = {"rocm": ctx.catalog.rules["PRT601"].targets["rocm"]}
    ctx.report(node, "PRT601", message, targets=rocm, severity=printed)


@functools.cache
def _version_parsers(catalog: Catalog) -> frozenset[str]:
    """rules/capability.toml ``[cuda_version_none] parsers``."""
    return frozenset(catalog.table("capability")["cuda_version_none"]["parsers"])


def _fails_on_none(node: ast.AST, ctx: Context) -> bool:
    """The read of ``torch.version.cuda`` at ``node`` fails where it is None: it is indexed,
    or the one argument of a version or number parse (``parse(torch.version.cuda)``)."""
    parent = ctx.parents.get(id(node))
    if isinstance(parent, ast.Subscript) and parent.value is node:
        return True
    if isinstance(parent, ast.Call) and parent.args == [node] and not parent.keywords:
        return _last_name(parent.func) in _version_parsers(ctx.catalog)
    return False


def _caught(node: ast.AST, ctx: Context) -> bool:
    """``node`` is in the body of a ``try`` with a handler that catches what a parse of None
    raises (``[cuda_version_none] caught_by``) and does not raise again. (A handler of
    ``Exception`` or a bare ``except`` already makes the read info, as for any call.)"""
    caught_by = frozenset(ctx.catalog.table("capability")["cuda_version_none"]["caught_by"])
    child, current = node, ctx.parents.get(id(node))
    while current is not None and not isinstance(current, ast.FunctionDef | ast.ClassDef):
        if (
            isinstance(current, ast.Try)
            and any(child is s for s in current.body)
            and any(handles_failures(handler, caught_by) for handler in current.handlers)
        ):
            return True
        child, current = current, ctx.parents.get(id(current))
    return False


def _none_tested(node: ast.AST, ctx: Context) -> bool:
    """The code asks whether ``torch.version.cuda`` is set before the read at ``node``: an
    operand before it in an ``and``/``or``, the test of an ``if`` or conditional expression
    around it, or an earlier ``if`` of its blocks that leaves (``if torch.version.cuda is None:
    return``), each reading it or a name stored from it."""

    def names_it(test: ast.AST, stored: bool = True) -> bool:
        """``test`` reads the version, itself or through a name stored from it (``is_cuda =
        torch.version.cuda is not None``, then ``if is_cuda:``)."""
        for n in walk(test):
            if isinstance(n, ast.Attribute) and ctx.qualified_name(n) == "torch.version.cuda":
                return True
            if stored and isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
                values = ctx.resolver.values_of(n.id)
                if any(names_it(value, stored=False) for value in values):
                    return True
        return False

    child, current = node, ctx.parents.get(id(node))
    while current is not None and not isinstance(current, ast.FunctionDef | ast.ClassDef):
        if isinstance(current, ast.BoolOp):
            position = next(i for i, v in enumerate(current.values) if v is child)
            if any(names_it(value) for value in current.values[:position]):
                return True
        elif (
            isinstance(current, ast.If | ast.IfExp | ast.While)
            and child is not current.test
            and names_it(current.test)
        ):
            return True
        for block in statement_blocks(current):
            if child in block:
                earlier = block[: block.index(child)]
                if any(
                    isinstance(s, ast.If) and names_it(s.test) and s.body and exits(s.body[-1])
                    for s in earlier
                ):
                    return True
        child, current = current, ctx.parents.get(id(current))
    return False


def _tested_beside_rocm_arm(node: ast.AST, ctx: Context) -> bool:
    """The read is (in) the test of an ``if`` arm, and another arm of the same chain tests for a
    ROCm build (``if torch.version.cuda: from .cuda import * elif torch.version.hip: from .hip
    import *``): ROCm, where the read is None, has an arm of its own."""
    child, current = node, ctx.parents.get(id(node))
    while current is not None and not isinstance(current, ast.stmt):
        child, current = current, ctx.parents.get(id(current))
    if not isinstance(current, ast.If):
        return False
    top = current
    parent = ctx.parents.get(id(top))
    while isinstance(parent, ast.If) and parent.orelse == [top]:
        top, parent = parent, ctx.parents.get(id(parent))
    tests = [branch.test for branch in if_chain(top) if branch.test is not None]
    if not any(test is child for test in tests):
        return False  # in an arm's body, not in its test
    return any(test is not child and _requires_rocm(test, ctx) for test in tests)


def _requires_rocm(test: ast.expr, ctx: Context) -> bool:
    """``torch.version.hip``, or an ``and`` that requires it (``torch.cuda.is_available() and
    torch.version.hip``, ``torch.version.hip and allow_rocm``): true on ROCm builds only."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return any(rocm_build_test(value, ctx.qualified_name) for value in test.values)
    return rocm_build_test(test, ctx.qualified_name)


def _report_switch(
    node: ast.AST,
    name: str,
    ctx: Context,
    code: str,
    message: str,
    targets: Mapping[str, Advice] | None = None,
) -> None:
    """``old = cudnn.benchmark`` ... ``cudnn.benchmark = old`` (or through an attribute or a
    keyword: ``capture(benchmark=cudnn.benchmark)`` ... ``cudnn.benchmark = self.benchmark``):
    the read that saves the flag is not reported; the write that restores it is reported only
    when its module-level function or class changes the flag nowhere else (then it is the one
    site of the pair)."""
    parent = ctx.parents.get(id(node))
    if isinstance(parent, ast.keyword) and parent.value is node and parent.arg:
        ctx.saved_switches[parent.arg] = name
        return
    if isinstance(parent, ast.Assign) and parent.value is node:
        names = [_last_name(t) for t in parent.targets]
        for saved in names:
            if saved:
                ctx.saved_switches[saved] = name
        if any(names):
            return
    if _read_for_a_log(node, ctx):
        return
    if _read_after_cuda_test(node, ctx):
        return
    restores = (
        isinstance(parent, ast.Assign)
        and parent.value is not node
        and ctx.saved_switches.get(_last_name(parent.value) or "") == name
    )
    switch = (id(ctx.top_level(node)), name)
    if restores:
        ctx.switch_restores[id(node)] = switch
    else:
        ctx.switch_changes.add(switch)
    guard = ctx.guards.get(id(node))
    if _only_cuda_reaches(guard, ctx):
        # ``if torch.cuda.is_available(): torch.backends.cudnn.benchmark = True``: of the
        # targets only ROCm gets here (the reported test is the others' site). It keeps cuDNN's
        # switches (MIOpen): the switch is the test's to report, as a call there is. TF32's it
        # does not keep: a site of ROCm alone.
        rocm = (targets or ctx.catalog.rules[code].targets).get("rocm", PORTABLE)
        if not rocm.portable:
            ctx.report(node, code, message, targets={"rocm": rocm})
            return
        ctx.report(node, code, message, targets=targets, behind=guard.behind)
        return
    ctx.report(node, code, message, targets=targets)


def _only_cuda_reaches(guard: Guard | None, ctx: Context) -> bool:
    """The node sits in the arm of a reported CUDA test, or after ``assert
    torch.cuda.is_available()``: of the targets only ROCm gets there."""
    if guard is None or not ctx.names_cuda(guard.behind):
        return False
    return guard.cuda_only or isinstance(ctx.parents.get(id(guard.behind)), ast.Assert)


def _read_after_cuda_test(node: ast.AST, ctx: Context) -> bool:
    """``device.type == "cuda" and torch.backends.cuda.matmul.allow_tf32``: the switch is read
    only where the test before it in the ``and`` found CUDA. The other targets stop at the test,
    which is their site; NVIDIA and ROCm only read the value, which changes nothing."""
    if not isinstance(getattr(node, "ctx", None), ast.Load):
        return False
    test = availability_before(node, ctx.parents, ctx.qualified_name, ctx.cuda_flags)
    return test is not None and ctx.names_cuda(test)


def _read_for_a_log(node: ast.AST, ctx: Context) -> bool:
    """``if torch.backends.cudnn.benchmark: logger.warning("benchmark is set to False")`` or
    ``logger.info(f"cudnn.benchmark: {torch.backends.cudnn.benchmark}")``: the switch is read
    only to decide on a log line or to print its value; reading it changes nothing anywhere."""
    child, current = node, ctx.parents.get(id(node))
    while current is not None and not isinstance(current, ast.stmt):
        child, current = current, ctx.parents.get(id(current))
    return _is_log_line(current) or _gates_a_log(current, child)


def _decides_only_a_log(node: ast.AST, ctx: Context) -> bool:
    """``if torch.cuda.get_device_capability()[0] < 8: warnings.warn(...)``, or ``major, minor
    = torch.cuda.get_device_capability()`` in a function that reads ``major`` and ``minor`` only
    in the tests of such ``if``s: the answer only decides whether a line is written. Names are
    counted in the function's text, as ``Context.stored_unread`` does."""
    statement, child = ctx.parents.get(id(node)), node
    while statement is not None and not isinstance(statement, ast.stmt):
        statement, child = ctx.parents.get(id(statement)), statement
    if _gates_a_log(statement, child):
        return True
    if not (
        isinstance(statement, ast.Assign)
        and statement.value is child
        and len(statement.targets) == 1
    ):
        return False
    target = statement.targets[0]
    names = target.elts if isinstance(target, ast.Tuple) else [target]
    scope = ctx.function_scope()
    if scope is None or not all(isinstance(name, ast.Name) for name in names):
        return False
    first, last = scope.lineno, scope.end_lineno or scope.lineno
    body = "\n".join(ctx.index.line(number) for number in range(first, last + 1))
    gates = [
        inner
        for inner in walk(scope)
        if isinstance(inner, ast.If) and _gates_a_log(inner, inner.test)
    ]
    reads = 0
    for name in {n.id for n in names if isinstance(n, ast.Name)}:
        written = len(re.findall(rf"(?<![\w.]){re.escape(name)}(?!\w)", body))
        read = sum(
            isinstance(n, ast.Name) and n.id == name for gate in gates for n in walk(gate.test)
        )
        if written != read + 1:
            return False  # read elsewhere too
        reads += read
    return reads > 0


def _gates_a_log(statement: ast.AST | None, test: ast.AST) -> bool:
    """``statement`` is an ``if`` without ``else`` whose test is ``test`` and whose body only
    writes lines."""
    return (
        isinstance(statement, ast.If)
        and statement.test is test
        and not statement.orelse
        and all(_is_log_line(line) for line in statement.body)
    )


def _is_log_line(statement: ast.AST | None) -> bool:
    """``logger.info(...)``, ``print(...)``: a statement that only writes a line."""
    return (
        isinstance(statement, ast.Expr)
        and isinstance(statement.value, ast.Call)
        and LOG_CALL.search(_call_name(statement.value) or "") is not None
    )


def _call_name(call: ast.Call) -> str | None:
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)


def _last_name(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    return node.attr if isinstance(node, ast.Attribute) else None


def _caught_type(node: ast.AST, parent: ast.AST | None, ctx: Context) -> bool:
    """``node`` is the type of an ``except`` clause, or one of a tuple of them."""
    if isinstance(parent, ast.Tuple):
        node, parent = parent, ctx.parents.get(id(parent))
    return isinstance(parent, ast.ExceptHandler) and parent.type is node


def _report_torch_cuda(node: ast.AST, name: str, ctx: Context) -> None:
    if _monkeypatch(node, name, ctx):
        return
    member = name[len("torch.cuda.") :] if name != "torch.cuda" else ""
    if any(part.startswith("_") for part in member.split(".")) and not _reported_private(
        member, ctx
    ):
        return  # private API: nothing portable to suggest
    parent = ctx.parents.get(id(node))
    probe = _is_probe(node, parent)
    if not member:
        if _lookup_fallback(node, parent, ctx):
            return
        message = (
            "`torch.cuda` module used directly; device-generic: `torch.get_device_module(device)`"
        )
        if probe:
            message = "`torch.cuda` probed with hasattr/getattr; other vendors' modules differ"
        severity = Severity.INFO if probe else None
        # ``torch.cuda.is_available() and hasattr(torch.cuda, "amp")``: asked only on CUDA
        behind = ctx.behind_cuda_test(node, ctx.guards.get(id(node)))
        ctx.report(
            node, "PRT201", message, targets=MODULE_TARGETS, severity=severity, behind=behind
        )
        return
    if isinstance(parent, ast.Call) and parent.func is node and picks_cpu_load(parent, ctx):
        return  # ``map_location=None if torch.cuda.is_available() else "cpu"``
    entry = torch_cuda_api(ctx.catalog).entry(member)
    if entry.outcome == "same":
        return  # ``except torch.cuda.OutOfMemoryError``: torch.OutOfMemoryError in every build
    if entry.exception and _caught_type(node, parent, ctx):
        return  # ``except torch.cuda.CudaError:`` catches what CUDA raised; nothing else does
    if entry.outcome in NO_RAISE and _beside_rocm_build_test(node, ctx):
        return  # ``torch.cuda.is_available() and torch.version.hip``: False off ROCm whatever
    guard = ctx.guards.get(id(node))
    if guard is not None and entry.generic and _older_than_generic(guard, entry.since):
        entry = entry.without_generic()  # the older torch of a version test has no such form
    # ``if device_type == "cuda": torch.cuda.is_bf16_supported()``: asked only of the CUDA
    # device the caller chose; the device-type test is the site
    hidden = (
        entry.rule == "PRT602"
        and guard is not None
        and guard.cuda_only
        and any(CUDA_DEVICE_TEXT.fullmatch(value) for value in guard.restated)
    )
    # ``if torch.cuda.get_device_capability()[0] < 8: warnings.warn(...)``: the answer only
    # decides on a line, which is no site where the question raises nowhere; where it raises
    # without CUDA that stays an error for the other targets, and ROCm, which answers, is fine
    log_only = entry.rule == "PRT602" and _decides_only_a_log(node, ctx)
    if log_only and entry.outcome in NO_RAISE:
        return
    if entry.rule == "PRT602":
        message = f"`torch.cuda.{member}` answers in NVIDIA compute-capability terms"
    elif entry.private:
        message = f"`torch.cuda.{member}` is a private API of NVIDIA and ROCm builds"
    else:
        message = f"`torch.cuda.{member}` exists only on NVIDIA and ROCm builds"
    parent = ctx.parents.get(id(node))
    call = parent if isinstance(parent, ast.Call) and parent.func is node else None
    # ``with torch.cuda.amp.autocast(False):`` (also as ``amp.autocast_mode.autocast``)
    judged = torch_cuda_api(ctx.catalog).normalise(member)
    disables = judged == "amp.autocast" and call is not None and disables_autocast(call, 0)
    behaviour = DISABLES_AUTOCAST if disables else entry.behaviour_text()
    if entry.generic:
        message += f"; device-generic: `{entry.generic_text()}`"
    if behaviour:
        message += f" ({behaviour})"
    fix = None
    if ctx.fixes is not None:
        fix = ctx.fixes.torch_cuda(node, entry, call)
    severity = Severity.INFO if disables else entry.severity
    if guard is not None and guard.cuda_only and _quiet_on_cuda_path(member, ctx):
        # ``if dev.type == "cuda": name = torch.cuda.get_device_name()`` for a printout, or
        # ``if torch.cuda.is_available(): torch.cuda.reset_peak_memory_stats()``
        severity = Severity.INFO
    if entry.generic and _beside_generic(node, entry.generic, ctx):
        return  # ``stream: torch.cuda.Stream | torch.Stream | None``: the generic type is named
    if severity is Severity.WARNING and (ctx.in_log_call(node) or ctx.in_environment_report()):
        # ``print(f"CUDA available: {torch.cuda.is_available()}")``, or ``cuda_device_count()``
        # in ``collect_env.py``: an answer that does not raise elsewhere, only printed: a merely
        # different line (a call that raises stays)
        severity = Severity.INFO
    targets = entry.targets
    if log_only:
        targets = {t: advice for t, advice in targets.items() if t != "rocm"}
    if severity is Severity.WARNING and _sizes_host_work(parent, ctx):
        # ``nd = torch.cuda.device_count()`` then ``os.cpu_count() // max(nd, 1)`` workers
        severity = Severity.INFO
    if severity is Severity.WARNING and _only_presentation(parent, ctx):
        # ``CACHE_EXAMPLES = torch.cuda.is_available() and ...`` read only as gradio's
        # ``cache_examples=``: the demo shows its examples another way, nothing runs elsewhere
        severity = Severity.INFO
    if call is None and LEGACY_TYPE.fullmatch(member) and _only_compared(node, ctx):
        # ``_FLOAT_TYPES = (torch.FloatTensor, torch.cuda.FloatTensor)`` for isinstance: the type
        # exists in every build, only making one raises; another device's tensors are not of it
        if severity in (None, Severity.ERROR):  # (None: the rule's, an error)
            severity = Severity.WARNING
        if _beside_cpu_type(node, member, ctx):
            targets = {t: advice for t, advice in targets.items() if t != "cpu"}
    elif call is None and member[:1].isupper() and _only_a_type(node, ctx):
        # ``isinstance(s, torch.cuda.Stream)``, ``Union[torch.cuda.Stream, ...]``: a type
        # probe or alias; the class exists in every build, and the probe raises nowhere
        severity = Severity.INFO
    if call is not None and entry.outcome in NO_RAISE:
        # ``torch.cuda.empty_cache()`` then ``if device == "xpu": torch.xpu.empty_cache()``: the
        # statements beside it do it for their vendors, where this call does nothing
        done = _done_beside(call, member, ctx)
        targets = {t: PORTABLE if t in done else advice for t, advice in targets.items()}
    if judged in SWITCHABLE and call is not None and _off_on_cpu(call, ctx):
        # ``GradScaler(enabled=cuda)`` after ``cuda = device.type != "cpu"``: off on the CPU
        targets = {t: advice for t, advice in targets.items() if t != "cpu"}
    off_cuda = guard is None or not guard.cuda_only
    if off_cuda and entry.value in EMPTY_MAPPINGS and _indexed(parent, ctx):
        # ``torch.cuda.memory_stats()["allocated_bytes.all.peak"]``: {} without CUDA, KeyError
        # (behind a CUDA test the read never runs without CUDA)
        severity = Severity.ERROR
    if _divides(parent, ctx):
        # ``proc_id % torch.cuda.device_count()``: 0 devices elsewhere, the division raises
        severity = Severity.ERROR
        targets = {**targets, "cpu": DIVIDES_BY_ZERO}
    if entry.outcome in NO_RAISE and ctx.stored_unread(call or node):
        return  # ``ngpus = torch.cuda.device_count()`` that nothing reads: nothing depends on it
    if in_skip_condition(node, ctx.parents, test_skips(ctx.catalog)):
        if _vendor_siblings(node, ctx):
            return  # ``require_multi_gpu`` beside ``require_multi_xpu``: nothing to port
        severity = Severity.INFO
    ctx.report(
        node,
        entry.rule,
        message,
        targets=targets,
        severity=severity,
        fix=fix,
        hidden=hidden,
        behind=ctx.behind_cuda_test(node, guard),
    )


#: How many statements before and after a call are read for its vendors' own forms.
BESIDE = 3


def _done_beside(call: ast.Call, member: str, ctx: Context) -> frozenset[str]:
    """The targets whose own form of the call (``torch.xpu.empty_cache()``) an ``if`` among the
    few statements before or after the call's statement makes: a call that raises nowhere
    (``torch.cuda.empty_cache()``, measured a no-op without CUDA) leaves those to them."""
    statement = ctx.parents.get(id(call))
    holder = ctx.parents.get(id(statement))
    if not isinstance(statement, ast.Expr) or holder is None:
        return frozenset()
    block = next(
        (b for b in statement_blocks(holder) if any(s is statement for s in b)),
        None,
    )
    if block is None:
        return frozenset()
    position = next(i for i, s in enumerate(block) if s is statement)
    near = block[max(0, position - BESIDE) : position] + block[position + 1 : position + 1 + BESIDE]
    done: set[str] = set()
    for other in near:
        if not isinstance(other, ast.If):
            continue
        for inner in walk(other):
            if isinstance(inner, ast.Call):
                name = ctx.qualified_name(inner.func) or ""
                parts = name.split(".")
                if len(parts) == 3 and parts[0] == "torch" and parts[2] == member:
                    done.add(parts[1])
    return frozenset(done - {"cuda"})


#: The legacy tensor types of torch.cuda (``FloatTensor``, ``HalfTensor``).
LEGACY_TYPE = re.compile(r"[A-Z][A-Za-z0-9]*Tensor")


def _only_compared(node: ast.AST, ctx: Context) -> bool:
    """The type is an element of a tuple, list or set, a class ``isinstance`` tests, or an
    operand of a comparison: it is asked about, not made (which raises off CUDA)."""
    parent = ctx.parents.get(id(node))
    if isinstance(parent, ast.Tuple | ast.List | ast.Set | ast.Compare):
        return True
    return (
        isinstance(parent, ast.Call)
        and isinstance(parent.func, ast.Name)
        and parent.func.id in ("isinstance", "issubclass")
        and node in parent.args[1:]
    )


def _only_a_type(node: ast.AST, ctx: Context) -> bool:
    """The class is the type ``isinstance`` or ``issubclass`` tests (alone or in their tuple),
    or a member of ``Union[...]`` or ``Optional[...]``: a type probe or alias, nothing made."""
    parent = ctx.parents.get(id(node))
    if isinstance(parent, ast.Tuple):
        holder = ctx.parents.get(id(parent))
        if isinstance(holder, ast.Subscript) and holder.slice is parent:
            parent = holder
        elif isinstance(holder, ast.Call) and parent in holder.args[1:]:
            node, parent = parent, holder
    if isinstance(parent, ast.Subscript):
        name = ctx.qualified_name(parent.value) or ""
        return name.rsplit(".", 1)[-1] in ("Union", "Optional")
    return (
        isinstance(parent, ast.Call)
        and isinstance(parent.func, ast.Name)
        and parent.func.id in ("isinstance", "issubclass")
        and node in parent.args[1:]
    )


def _beside_cpu_type(node: ast.AST, member: str, ctx: Context) -> bool:
    """``(torch.FloatTensor, torch.cuda.FloatTensor)``: the CPU type of the same name is beside
    it, which the CPU's tensors are of."""
    parent = ctx.parents.get(id(node))
    return isinstance(parent, ast.Tuple | ast.List | ast.Set) and any(
        ctx.qualified_name(element) == f"torch.{member}" for element in parent.elts
    )


#: The torch.cuda names whose ``enabled`` argument switches them off.
SWITCHABLE = frozenset({"amp.GradScaler", "amp.autocast"})


def _off_on_cpu(call: ast.Call, ctx: Context) -> bool:
    """``enabled=device.type != "cpu"``, directly or through a name the function gives only
    that value: the CPU passes False and switches the call off."""
    enabled = next((k.value for k in call.keywords if k.arg == "enabled"), None)
    if enabled is None:
        return False
    if _not_cpu(enabled):
        return True
    scope = ctx.function_scope()
    if scope is None or not isinstance(enabled, ast.Name):
        return False
    return enabled.id in ctx.scope_fact("not-cpu names", scope, _not_cpu_names)


def _not_cpu(test: ast.expr) -> bool:
    """``device.type != "cpu"``, ``device != "cpu"``."""
    return (
        isinstance(test, ast.Compare)
        and len(test.ops) == 1
        and isinstance(test.ops[0], ast.NotEq)
        and isinstance(test.comparators[0], ast.Constant)
        and test.comparators[0].value == "cpu"
    )


def _not_cpu_names(scope: ast.AST) -> frozenset[str]:
    """The names ``scope`` stores only ``x != "cpu"`` comparisons in."""
    values: dict[str, list[ast.expr]] = {}
    for node in walk(scope):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    values.setdefault(target.id, []).append(node.value)
        elif isinstance(node, ast.AugAssign | ast.AnnAssign) and isinstance(node.target, ast.Name):
            values.setdefault(node.target.id, []).append(node.value or node.target)
    return frozenset(name for name, stored in values.items() if all(map(_not_cpu, stored)))


#: What a memory-statistics call returns without CUDA (generated/torch_cuda_behaviour.toml).
EMPTY_MAPPINGS = frozenset({"OrderedDict()", "{}"})


def _indexed(call: ast.AST | None, ctx: Context) -> bool:
    """``torch.cuda.memory_stats()["key"]``, or ``stats = torch.cuda.memory_stats()`` then
    ``stats["key"]`` in the same function: a key read that raises KeyError from the empty
    mapping the call returns without CUDA (``stats.get("key", 0)`` does not)."""
    if not isinstance(call, ast.Call):
        return False
    parent = ctx.parents.get(id(call))
    if isinstance(parent, ast.Subscript) and parent.value is call:
        return isinstance(parent.ctx, ast.Load)
    name, scope = ctx.assigned_name(call), ctx.function_scope()
    if name is None or scope is None:
        return False
    return name in ctx.scope_fact("indexed names", scope, _indexed_names)


def _indexed_names(scope: ast.AST) -> frozenset[str]:
    """The local names ``scope`` reads a string key of (``stats["key"]``)."""
    return frozenset(
        node.value.id
        for node in walk(scope)
        if isinstance(node, ast.Subscript)
        and isinstance(node.ctx, ast.Load)
        and isinstance(node.value, ast.Name)
        and isinstance(node.slice, ast.Constant)
        and isinstance(node.slice.value, str)
    )


DIVIDES_BY_ZERO = Advice(Status.MANUAL, note="no device: the division by the count raises")
DIVISIONS = (ast.Mod, ast.Div, ast.FloorDiv)


def _divides(call: ast.AST | None, ctx: Context) -> bool:
    """``n % torch.cuda.device_count()``, or ``gpus = torch.cuda.device_count()`` then ``n %
    gpus`` in the same function: a count divides, and it is 0 without CUDA
    (ZeroDivisionError)."""
    if not isinstance(call, ast.Call):
        return False
    parent = ctx.parents.get(id(call))
    if isinstance(parent, ast.BinOp) and parent.right is call:
        return isinstance(parent.op, DIVISIONS)
    name, scope = ctx.assigned_name(call), ctx.function_scope()
    if name is None or scope is None:
        return False
    return name in ctx.scope_fact("divisors", scope, _divisor_names)


def _sizes_host_work(call: ast.AST | None, ctx: Context) -> bool:
    """``nd = torch.cuda.device_count()`` whose every read in the function is in an expression
    that also counts the host's CPUs (``os.cpu_count() // max(nd, 1)``, rules/torch_api.toml
    ``[host_counts]``): the count sizes host work, not a device choice."""
    if not isinstance(call, ast.Call):
        return False
    name, scope = ctx.assigned_name(call), ctx.function_scope()
    if name is None or scope is None:
        return False
    calls = frozenset(ctx.catalog.table("torch_api").get("host_counts", {}).get("calls", ()))
    resolve = ctx.qualified_name
    return name in ctx.scope_fact(
        "host work sizes", scope, lambda s: _read_beside(s, calls, resolve)
    )


def _only_presentation(call: ast.AST | None, ctx: Context) -> bool:
    """``CACHE_EXAMPLES = torch.cuda.is_available() and os.getenv(...) == "1"``: the answer is
    kept in a name spelled as a keyword of rules/torch_api.toml ``[presentation] keywords``
    (Gradio's ``cache_examples``), or, in a function, in a name whose every read there is the
    value of such a keyword (``gr.Examples(..., cache_examples=...)``): it only changes how a
    page presents its examples. (At module level only the name counts: a large file is analysed
    in parts, and the reads may be in another part.)"""
    if not isinstance(call, ast.Call):
        return False
    value: ast.AST = call
    while isinstance(holder := ctx.parents.get(id(value)), ast.BoolOp):
        value = holder  # ``torch.cuda.is_available() and os.getenv("X") == "1"``
    name = ctx.assigned_name(value)
    keywords = frozenset(ctx.catalog.table("torch_api").get("presentation", {}).get("keywords", ()))
    if name is None or not keywords:
        return False
    if name.lower() in keywords:
        return True
    scope = ctx.function_scope()
    return scope is not None and name in ctx.scope_fact(
        "presentation names", scope, lambda s: _read_only_as(s, keywords)
    )


def _read_only_as(scope: ast.AST, keywords: frozenset[str]) -> frozenset[str]:
    """The names of ``scope`` read at least once, and each time as the whole value of a
    keyword argument named in ``keywords``."""
    given: set[int] = set()
    for node in walk(scope):
        if isinstance(node, ast.keyword) and node.arg in keywords:
            given.add(id(node.value))
    inside: set[str] = set()
    elsewhere: set[str] = set()
    for node in walk(scope):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            (inside if id(node) in given else elsewhere).add(node.id)
    return frozenset(inside - elsewhere)


def _read_beside(scope: ast.AST, calls: frozenset[str], resolve) -> frozenset[str]:
    """The names of ``scope`` read at least once, and each time in a statement (or a compound
    statement's header) that also calls one of ``calls``."""
    beside: set[str] = set()
    elsewhere: set[str] = set()
    for statement in walk(scope):
        if not isinstance(statement, ast.stmt) or statement is scope:
            continue
        nodes = [n for part in _own_parts(statement) for n in walk(part)]
        read = {n.id for n in nodes if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
        counts = any(isinstance(n, ast.Call) and resolve(n.func) in calls for n in nodes)
        (beside if counts else elsewhere).update(read)
    return frozenset(beside - elsewhere)


#: The parts of a compound statement that are its own (its header); its body's statements are
#: walked on their own. A definition's header is left out.
STATEMENT_HEADERS: dict[type, tuple[str, ...]] = {
    ast.If: ("test",),
    ast.While: ("test",),
    ast.For: ("target", "iter"),
    ast.AsyncFor: ("target", "iter"),
    ast.With: ("items",),
    ast.AsyncWith: ("items",),
    ast.Try: (),
    ast.FunctionDef: (),
    ast.AsyncFunctionDef: (),
    ast.ClassDef: (),
    ast.Match: ("subject",),
}
if hasattr(ast, "TryStar"):  # Python 3.11+
    STATEMENT_HEADERS[ast.TryStar] = ()


def _own_parts(statement: ast.stmt) -> list[ast.AST]:
    fields = STATEMENT_HEADERS.get(type(statement))
    if fields is None:
        return [statement]  # a simple statement is all its own
    parts: list[ast.AST] = []
    for field in fields:
        value = getattr(statement, field)
        parts.extend(value if isinstance(value, list) else [value])
    return parts


def _divisor_names(scope: ast.AST) -> frozenset[str]:
    """The names that something in ``scope`` is divided by (``n % gpus``), outside an ``if``
    that tests the same name above 0 (``if gpus > 0: rank % gpus`` never divides by 0)."""
    guarded: set[int] = set()
    for branch in walk(scope):
        if isinstance(branch, ast.If) and (name := _tested_above_zero(branch.test)):
            guarded |= {
                id(inner)
                for statement in branch.body
                for inner in walk(statement)
                if isinstance(inner, ast.BinOp)
                and isinstance(inner.right, ast.Name)
                and inner.right.id == name
            }
    return frozenset(
        inner.right.id
        for inner in walk(scope)
        if isinstance(inner, ast.BinOp)
        and isinstance(inner.op, DIVISIONS)
        and isinstance(inner.right, ast.Name)
        and id(inner) not in guarded
    )


def _tested_above_zero(test: ast.expr) -> str | None:
    """``gpus``, ``gpus > 0``, ``gpus >= 1``: the name a test finds above 0, or None."""
    if isinstance(test, ast.Name):
        return test.id
    if (
        isinstance(test, ast.Compare)
        and len(test.ops) == 1
        and isinstance(test.left, ast.Name)
        and isinstance(test.comparators[0], ast.Constant)
    ):
        op, bound = test.ops[0], test.comparators[0].value
        if (isinstance(op, ast.Gt) and bound == 0) or (isinstance(op, ast.GtE) and bound == 1):
            return test.left.id
    return None


def _older_than_generic(guard: Guard, since: str | None) -> bool:
    """The node is in the older arm of a version test (``else`` of ``if torch >= 2.3:``), or in
    an arm for a torch older than the version the device-generic form needs."""
    below = guard.torch_below
    return guard.old_torch or (below is not None and version_tuple(since or "0") >= below)


def _beside_generic(node: ast.AST, generic: str, ctx: Context) -> bool:
    """``torch.cuda.Stream | torch.Stream``: the node is a member of a type union that also
    names its device-generic form, so every device's object is already allowed."""
    members: list[ast.AST] = []
    current = ctx.parents.get(id(node))
    while isinstance(current, ast.BinOp) and isinstance(current.op, ast.BitOr):
        members += [current.left, current.right]
        current = ctx.parents.get(id(current))
    return any(
        isinstance(m, ast.Attribute | ast.Name) and ctx.qualified_name(m) == generic
        for m in members
    )


def _reported_private(member: str, ctx: Context) -> bool:
    """A private name that projects call anyway (``torch.cuda.memory._record_memory_history``):
    ``private = true`` in rules/torch_api.toml."""
    return bool(torch_cuda_api(ctx.catalog).policy.get(member, {}).get("private"))


def _quiet_on_cuda_path(member: str, ctx: Context) -> bool:
    """rules/torch_api.toml says the name only describes the device (``get_device_name``) or
    is housekeeping that the other targets lose nothing by skipping (``reset_peak_memory_stats``,
    ``ipc_collect``, a saved CUDA RNG state): on the CUDA path alone, info."""
    api = torch_cuda_api(ctx.catalog)
    policy = api.policy.get(api.normalise(member), {})
    return bool(policy.get("describes", False) or policy.get("housekeeping", False))


#: The words of a function name that say it stands for the CUDA device.
CUDA_NAME_WORDS = frozenset({"gpu", "cuda"})


def _vendor_siblings(node: ast.AST, ctx: Context) -> bool:
    """The function around ``node`` is named for CUDA (``require_multi_gpu``) and the module
    defines the same function for another vendor (``require_multi_xpu``): a per-vendor helper."""
    current = ctx.parents.get(id(node))
    while current is not None and not isinstance(current, ast.FunctionDef | ast.AsyncFunctionDef):
        current = ctx.parents.get(id(current))
    if current is None:
        return False
    words = current.name.split("_")
    vendors = [t for t, facts in ctx.catalog.target_facts().items() if facts.get("markers")]
    for position, word in enumerate(words):
        if word.lower() in CUDA_NAME_WORDS:
            for vendor in vendors:
                sibling = "_".join([*words[:position], vendor, *words[position + 1 :]])
                if sibling in ctx.module_functions:
                    return True
    return False


#: ``torch._C._cuda_getDeviceCount()``: what torch.cuda calls underneath.
PRIVATE_BINDINGS = ("torch._C._cuda_", "torch._C._cudnn", "torch._C._nccl_")
PRIVATE_TARGETS = {
    "rocm": PORTABLE,
    **{t: Advice(Status.UNSUPPORTED) for t in ("npu", "mlu", "xpu", "mps", "cpu")},
}
PROFILER_CUDA = "torch.profiler.ProfilerActivity.CUDA"
#: The profiler activity of each target (torch.profiler.ProfilerActivity in torch 2.13 has CPU,
#: CUDA, XPU, MTIA, HPU; torch_npu and torch_mlu register theirs through their own profilers).
PROFILER_TARGETS = {
    "rocm": PORTABLE,
    "npu": Advice(Status.MANUAL, "torch_npu.profiler.ProfilerActivity.NPU"),
    "mlu": Advice(Status.MANUAL, "torch_mlu profiler activity"),
    "xpu": Advice(Status.RENAME, "torch.profiler.ProfilerActivity.XPU"),
    "mps": Advice(Status.UNSUPPORTED),
    "cpu": Advice(Status.MANUAL, None, "leave the activity out"),
}


def _report_profiler_activity(node: ast.AST, ctx: Context) -> None:
    # Elsewhere the trace lacks the device's activity, and the profiled run is unchanged: a
    # merely different value (info), not a skipped acceleration.
    message = "The CUDA profiler activity records nothing without CUDA (the trace lacks the device)"
    # ``{ProfilerActivity.CPU, ProfilerActivity.CUDA, ProfilerActivity.XPU}``, or ``if xpu:
    # activities.append(ProfilerActivity.XPU)`` in the same function: xpu has its activity
    # (the CPU activity is no device's: the CPU target still records no device)
    scope = ctx.function_scope() or (ctx.walk_stack[1] if len(ctx.walk_stack) > 1 else node)
    named = ctx.scope_fact("profiler activities", scope, _activity_names)
    targets = {
        t: PORTABLE if t != "cpu" and t.upper() in named else advice
        for t, advice in PROFILER_TARGETS.items()
    }
    ctx.report(node, "PRT201", message, targets=targets, severity=Severity.INFO)


def _activity_names(scope: ast.AST) -> frozenset[str]:
    """The members of ``ProfilerActivity`` that ``scope`` names (``XPU``, or ``"XPU"`` in an
    ``activities=`` list)."""
    names: set[str] = set()
    for node in walk(scope):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute | ast.Name):
            holder = node.value.attr if isinstance(node.value, ast.Attribute) else node.value.id
            if holder == "ProfilerActivity":
                names.add(node.attr)
        elif (
            isinstance(node, ast.keyword)
            and node.arg == "activities"
            and isinstance(node.value, ast.List | ast.Tuple)
        ):
            names.update(str(e.value) for e in node.value.elts if isinstance(e, ast.Constant))
    return frozenset(names)


def check_profiler_activities(node: ast.Call, ctx: Context) -> None:
    """``torch.profiler.profile(activities=["CPU", "CUDA"])``: the activity given by name."""
    for keyword in node.keywords:
        if keyword.arg == "activities" and isinstance(keyword.value, ast.List | ast.Tuple):
            for element in keyword.value.elts:
                if isinstance(element, ast.Constant) and element.value == "CUDA":
                    _report_profiler_activity(element, ctx)


#: ``torch.cuda`` itself: each vendor has its own module; a CPU-only machine has none to use.
MODULE_TARGETS = {
    "rocm": PORTABLE,
    **{t: Advice(Status.RENAME, f"torch.{t}") for t in ("npu", "mlu", "xpu", "mps")},
    "cpu": Advice(Status.UNSUPPORTED),
}


def _lookup_fallback(node: ast.AST, parent: ast.AST | None, ctx: Context) -> bool:
    """``getattr(torch, device_type, torch.cuda)``, or ``try: return getattr(torch, name)``
    then ``except AttributeError: return torch.cuda``: the device module is looked up by name,
    which every target's device type has; ``torch.cuda`` only stands in for a name that has no
    module, and is no site."""
    if _torch_lookup(parent, ctx) and len(parent.args) == 3 and parent.args[2] is node:
        return True
    stack = ctx.walk_stack
    for position in range(len(stack) - 1, 0, -1):
        handler, holder = stack[position], stack[position - 1]
        if isinstance(handler, ast.ExceptHandler) and isinstance(holder, ast.Try):
            names = {n.id for n in walk(handler.type)} if handler.type is not None else set()
            return "AttributeError" in names and any(
                _torch_lookup(inner, ctx) for part in holder.body for inner in walk(part)
            )
    return False


def _torch_lookup(node: ast.AST | None, ctx: Context) -> bool:
    """``getattr(torch, name, ...)``."""
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "getattr"
        and len(node.args) >= 2
        and ctx.qualified_name(node.args[0]) == "torch"
    )


def _is_probe(node: ast.AST, parent: ast.AST | None) -> bool:
    """``hasattr(torch.cuda, "memory_stats")``, ``getattr(torch.cuda, "nvtx", None)``."""
    return (
        isinstance(parent, ast.Call)
        and isinstance(parent.func, ast.Name)
        and parent.func.id in ("hasattr", "getattr")
        and bool(parent.args)
        and parent.args[0] is node
    )


def check_capability_attribute(node: ast.Attribute, ctx: Context) -> None:
    """``torch.cuda.get_device_properties(i).major`` — an NVIDIA compute capability."""
    if node.attr not in ("major", "minor") or not isinstance(node.value, ast.Call):
        return
    if ctx.qualified_name(node.value.func) == "torch.cuda.get_device_properties":
        if _decides_only_a_log(node, ctx):
            return  # ``if props.major < 8: logger.warning(...)``
        message = f"Compute capability `.{node.attr}` is NVIDIA numbering"
        before = availability_before(node, ctx.parents, ctx.qualified_name, ctx.cuda_flags)
        if _only_cuda_reaches(ctx.guards.get(id(node)), ctx) or (
            before is not None and ctx.names_cuda(before)
        ):
            # ``if torch.cuda.is_available(): ... .major >= 8`` (or ``"cuda" in device and
            # ....major >= 7``): of the targets only ROCm gets here, where the number is the GPU
            # architecture's (gfx9...), not NVIDIA's; the test is the other targets' site
            rocm = ctx.catalog.rules["PRT602"].targets.get("rocm", PORTABLE)
            ctx.report(node, "PRT602", message, targets={"rocm": rocm})
            return
        ctx.report(node, "PRT602", message)


def check_sm_comparison(node: ast.Compare, ctx: Context) -> None:
    for operand in (node.left, *node.comparators):
        if isinstance(operand, ast.Constant) and SM_STRING.match(str(operand.value)):
            if _decides_only_a_log(node, ctx):
                continue  # ``is_sm_90 = cc == "sm_90"`` read only to decide on a warning
            ctx.report(operand, "PRT602", f"`{operand.value}` is an NVIDIA architecture name")


# -- fixes ---------------------------------------------------------------------------------------
# Beside the checks above and apart from them: how --fix rewrites what they report.


class TorchCudaFixes(FixBase):
    """Fixes of ``torch.cuda`` API findings (PRT201 and the rules of the same table): the
    device-generic name, a guard for the CPU, or the CPU's answer."""

    def torch_cuda(self, node: ast.expr, entry, call: ast.Call | None) -> Fix | None:
        """``torch.cuda.X`` -> its device-generic form where ``min-torch`` has one.

        Only calls (and bare decorators) are rewritten: a name that is stored to or read as a
        value may be a monkeypatch (``torch.cuda.set_stream = patched``) or the saved original.
        Calls that a CPU-only machine cannot make (``synchronize``, ``empty_cache``) are put
        under a guard unless a CUDA check already guards them, and memory counters read 0
        there, so the fixed code runs on every machine. A name that some device module lacks
        (``get_device_name`` on ``torch.cpu``) gets its CPU answer from ``rules/fixes.toml``
        or no fix.
        """
        if isinstance(getattr(node, "ctx", None), ast.Store | ast.Del) or self.left_alone(node):
            return None
        is_call = call is not None and call.func is node
        if f"torch.cuda.{entry.name}" in CUDA_CHECKS and (
            self._branch_keeps_cuda_calls(node)
            or self._asserts_cuda(node)
            or self._inside_cuda_keyed_branch(node)
        ):
            return None  # ``torch.cuda.is_available() and torch.cuda.is_bf16_supported()``
        if entry.generic and entry.since and self.min_torch >= version_tuple(entry.since):
            generic = self.torch + entry.generic[len("torch") :]
            if is_call and call.args and generic.rpartition(".")[2][:1].isupper():
                # torch.Stream(device, *, priority), torch.Event(device, *, enable_timing...):
                # the device-generic classes take other positional arguments.
                return None
            if entry.generic_args:
                if not is_call:
                    return self._decorator_generic(node, entry, generic)
                if call.args:
                    # ``torch.cuda.amp.autocast(enabled)``: the generic form's positional
                    # parameters are others (``autocast(device_type, dtype, enabled)``), and a
                    # keyword cannot go before them
                    return None
                edit = self._call_with_device_argument(call, generic, entry)
                return self._fix([edit], f"use {generic}", unsafe=entry.unsafe)
        else:
            answer = self.table["module_cpu_answers"].get(entry.name)
            if answer is not None and is_call:
                text = answer.format(
                    device=self.device,
                    module=self._device_module(),
                    arguments=self._call_arguments(call),
                )
                return self._fix([Edit(self.ctx.span(call), text)], f"use {self.device}")
            generic = self._generic_module_name(entry)
            if generic is None:
                return self._missing_name(call, entry) if is_call else None
        if not is_call:
            return None
        edits = self._cpu_guard(node, call, entry, generic)
        if edits is None:
            return None
        uses_device = any(self.device_word.search(edit.content) for edit in edits)
        return self._fix(edits, f"use {generic}", unsafe=entry.unsafe, shared=uses_device)

    def _cpu_condition(self) -> str:
        """The test for "an accelerator is here": needs no device variable from torch 2.6."""
        cpu = self.table["cpu"]
        if self.uses_accelerator():
            return cpu["accelerator_condition"].format(torch=self.torch)
        return cpu["condition"].format(device=self.device)

    def _cpu_guard(self, node: ast.expr, call: ast.Call, entry, generic: str) -> list[Edit]:
        """The rename, and what keeps a CPU-only machine off the call where it needs that."""
        rename = [Edit(self.ctx.span(node), generic)]
        guard = self.ctx.guards.get(id(node))
        if guard is not None and guard.cuda_only:
            return rename
        if entry.cpu_value is None and not entry.cpu_remove:
            return rename
        condition = self._cpu_condition()
        call_text = generic + self._call_arguments(call)
        if entry.cpu_value is not None:
            text = f"({call_text} if {condition} else {entry.cpu_value})"
            return [Edit(self.ctx.span(call), text)]
        statement = self.parents.get(id(call))
        if isinstance(statement, ast.Expr) and self._alone_on_its_lines(statement):
            span = self.ctx.span(statement)
            indent = self.ctx.index.line(span.line)[: span.column]
            unit = "\t" if indent.startswith("\t") else "    "
            text = f"if {condition}:{self.newline}{indent}{unit}"
            return [Edit(Span(span.line, span.column, span.line, span.column), text), *rename]
        # Where no statement can go (a one-line compound, ``a; b``, a lambda, a comprehension):
        # the same guard as an expression.
        return [Edit(self.ctx.span(call), f"({call_text} if {condition} else None)")]

    def _call_arguments(self, call: ast.Call) -> str:
        """``(...)`` of a call, as written."""
        whole, func = self.ctx.span(call), self.ctx.span(call.func)
        return self.ctx.index.text(func.end_line, func.end_column, whole.end_line, whole.end_column)

    def _alone_on_its_lines(self, statement: ast.stmt) -> bool:
        span = self.ctx.span(statement)
        before = self.ctx.index.line(span.line)[: span.column]
        after = self.ctx.index.line(span.end_line)[span.end_column :].strip()
        parent = self.parents.get(id(statement))
        if parent is not None and parent is not self.tree and hasattr(parent, "lineno"):
            for field in ("body", "orelse", "finalbody", "handlers"):
                siblings = getattr(parent, field, None)
                if isinstance(siblings, list) and statement in siblings:
                    header = self.ctx.span(parent).line
                    if header == span.line and parent is not self.tree:
                        return False  # ``if x: torch.cuda.synchronize()``
        return not before.strip() and (not after or after.startswith("#"))

    def _decorator_generic(self, node: ast.expr, entry, generic: str) -> Fix | None:
        """A bare ``@torch.cuda.amp.custom_fwd`` decorator: give it the device argument."""
        parent = self.parents.get(id(node))
        if not isinstance(parent, ast.FunctionDef | ast.AsyncFunctionDef):
            return None
        replacement = f"{generic}({entry.generic_args}={self.device}.type)"
        return self._fix([Edit(self.ctx.span(node), replacement)], f"use {generic}")

    def _call_with_device_argument(self, call: ast.Call, generic: str, entry) -> Edit:
        """``torch.cuda.amp.autocast(...)`` -> ``torch.amp.autocast(device_type=..., ...)``."""
        arguments = self._call_arguments(call)
        inner = arguments[1:-1]
        text = f"{entry.generic_args}={self.device}.type"
        if inner.strip():
            text += ", " + inner.lstrip()
        return Edit(self.ctx.span(call), f"{generic}({text})")

    def _generic_module_name(self, entry) -> str | None:
        """``torch.get_device_module(DEVICE).X`` for ``torch.cuda.X`` when every vendor module
        and the CPU have ``X`` (or the CPU never reaches the call): otherwise the rewrite would
        fail on a machine where the original failed less clearly."""
        if entry.rule != "PRT201" or not entry.vendors:
            return None
        cpu_names = set(self.table["cpu"]["module_names"])
        if set(entry.vendors) != {"npu", "mlu", "xpu", "mps"}:
            return None
        if entry.name not in cpu_names and entry.cpu_value is None and not entry.cpu_remove:
            return None
        return self._device_module() + f".{entry.name}"

    def _device_module(self) -> str:
        module = self.table["generic_module"]
        recent = self.min_torch >= version_tuple(module["since"])
        template = module["expression"] if recent else module["fallback_expression"]
        return template.format(torch=self.torch, device=self.device)

    def _missing_name(self, call: ast.Call, entry) -> Fix | None:
        """A name some device module lacks: the device's own function where it has one, else
        the CPU-safe answer of ``rules/fixes.toml`` [missing]. On NVIDIA the original runs."""
        fallback = self.table["missing"].get(entry.name)
        if fallback is None and entry.cpu_value is not None:
            fallback = f"lambda *args, **kwargs: {entry.cpu_value}"
        if fallback is None or entry.rule != "PRT201":
            return None
        answer = fallback.format(device=self.device, torch=self.torch)
        text = f'getattr({self._device_module()}, "{entry.name}", {answer})'
        text += self._call_arguments(call)
        return self._fix([Edit(self.ctx.span(call), text)], f"use the device's {entry.name}")

"""PRT1xx: CUDA devices named in code — device strings, ``.cuda()``, ``.is_cuda``, comparisons."""

from __future__ import annotations

import ast
import os
import re
from collections.abc import Callable, Collection
from copy import deepcopy
from dataclasses import dataclass

from portlint.model import PORTABLE, Advice, Edit, Fix, Severity, Span, Status
from portlint.python.backends import names_nvidia, vendor_words
from portlint.python.context import Context
from portlint.python.cuda_tests import in_skip_condition, test_skips
from portlint.python.fixes import FixBase, _contains
from portlint.python.guards import (
    CUDA_DEVICE_TEXT,
    CUDA_PREDICATE,
    asks_availability,
    availability_before,
    cuda_polarity,
    cuda_prefix,
    device_type_literal,
    flag_name,
)
from portlint.python.torch_api import DISABLES_AUTOCAST, disables_autocast, torch_cuda_api
from portlint.python.tree import parameter_names, walk

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
        "torch.distributed.device_mesh.init_device_mesh",
        "torch.distributed.init_device_mesh",
    }
)
#: Keyword arguments that take a device, a device type or a list of devices; ``accelerator=``
#: is the accelerator name of Lightning's ``Trainer`` and ``Fabric`` (``"cuda"``, ``"mps"``);
#: ``device_map=`` the device Hugging Face's ``from_pretrained`` loads the weights on.
DEVICE_KEYWORDS = frozenset(
    {
        "device",
        "device_type",
        "map_location",
        "device_ids",
        "output_device",
        "devices",
        "accelerator",
        "device_map",
    }
)
#: Positions that want a device type string ("cuda"), not a torch.device: the autocast and grad
#: scaler's, and a device mesh's (``init_device_mesh(device_type, mesh_shape)``).
TYPE_FIRST_ARGUMENT = frozenset(
    {
        "torch.autocast",
        "torch.amp.autocast",
        "torch.amp.GradScaler",
        "torch.distributed.device_mesh.init_device_mesh",
        "torch.distributed.init_device_mesh",
    }
)
TYPE_KEYWORDS = frozenset({"device_type", "accelerator"})
#: How many assignments deep a device string is followed through variables.
FLOW_DEPTH = 3


@dataclass(frozen=True)
class DeviceLiteral:
    node: ast.expr
    #: It reaches the device position through a variable.
    via_variable: bool
    #: The expression that flows into the position: the argument itself, or a variable's value.
    origin: ast.expr


def device_literals(expr: ast.expr, ctx: Context) -> list[DeviceLiteral]:
    """CUDA device strings that ``expr`` can evaluate to."""
    return _device_literals(expr, ctx, 0, expr)


def _is_cuda_text(node: ast.expr, pattern: re.Pattern[str]) -> bool:
    return (
        isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and bool(pattern.match(node.value))
    )


def _device_literals(
    expr: ast.expr, ctx: Context, depth: int, origin: ast.expr
) -> list[DeviceLiteral]:
    found = DeviceLiteral(expr, depth > 0, origin)
    if isinstance(expr, ast.Constant):
        return [found] if _is_cuda_text(expr, CUDA_DEVICE) else []
    if isinstance(expr, ast.JoinedStr):
        first = expr.values[0] if expr.values else None
        return [found] if first is not None and _is_cuda_text(first, CUDA_PREFIX) else []
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add | ast.Mod):
        return [found] if _is_cuda_text(expr.left, CUDA_PREFIX) else []
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute):
        is_format = expr.func.attr == "format" and _is_cuda_text(expr.func.value, CUDA_PREFIX)
        return [found] if is_format else []
    if isinstance(expr, ast.List | ast.Tuple):
        # ``default=["cuda:0", "cuda:1", ...]``: one list of devices is one choice, which one
        # edit replaces; its first CUDA device stands for it
        for element in expr.elts:
            hits = _device_literals(element, ctx, depth, origin)
            if hits:
                return hits
        return []
    if isinstance(expr, ast.IfExp | ast.BoolOp):
        parts = [expr.body, expr.orelse] if isinstance(expr, ast.IfExp) else expr.values
        return [hit for part in parts for hit in _device_literals(part, ctx, depth, origin)]
    if isinstance(expr, ast.Name | ast.Attribute) and depth < FLOW_DEPTH:
        return [
            hit
            for value in flowing_values(expr, ctx)
            for hit in _device_literals(value, ctx, depth + 1, value)
        ]
    return []


def flowing_values(expr: ast.Name | ast.Attribute, ctx: Context) -> list[ast.expr]:
    """What a name or an attribute was assigned: ``dev = "cuda"``, a parameter default,
    ``args.device`` from ``add_argument("--device", default="cuda")``."""
    if isinstance(expr, ast.Name):
        return ctx.resolver.values_of(expr.id)
    if ctx.qualified_name(expr) is not None:
        return []  # a module attribute (torch.float16), not an object's
    return ctx.attribute_values.get(expr.attr, [])


def is_cpu_fallback(expr: ast.expr, ctx: Context) -> bool:
    if isinstance(expr, ast.Constant):
        return expr.value == "cpu"
    return (
        isinstance(expr, ast.Call)
        and ctx.qualified_name(expr.func) == "torch.device"
        and len(expr.args) == 1
        and is_cpu_fallback(expr.args[0], ctx)
    )


def is_selection(expr: ast.expr, ctx: Context) -> bool:
    """``"cuda" if <check> else "cpu"`` and its ``torch.device(...)`` spellings."""
    if not isinstance(expr, ast.IfExp) or not is_cpu_fallback(expr.orelse, ctx):
        return False
    body = _selected(expr, ctx)
    return isinstance(body, ast.Constant) and _is_cuda_text(body, CUDA_DEVICE)


def _selected(expr: ast.IfExp, ctx: Context) -> ast.expr:
    """The device a selection picks when its test holds: ``"cuda"`` of ``"cuda" if ...``, also
    of ``torch.device("cuda") if ...``."""
    body = expr.body
    if isinstance(body, ast.Call) and ctx.qualified_name(body.func) == "torch.device" and body.args:
        return body.args[0]
    return body


def _selected_text(expr: ast.expr, ctx: Context) -> str:
    """The CUDA device string of a selection (``"cuda:1" if ... else "cpu"``, or
    ``torch.device("cuda:1" if ...)``); empty when there is none."""
    if isinstance(expr, ast.Call) and expr.args:
        expr = expr.args[0]
    if not isinstance(expr, ast.IfExp):
        return ""
    body = _selected(expr, ctx)
    return body.value if isinstance(body, ast.Constant) and isinstance(body.value, str) else ""


def device_arguments(node: ast.Call, name: str | None) -> list[tuple[ast.expr, bool]]:
    """The arguments of a call that sit in a device position, each with whether the position
    wants a device type string (``device_type=``) rather than a device."""
    found = []
    is_to = isinstance(node.func, ast.Attribute) and node.func.attr == "to"
    if node.args and (name in DEVICE_FIRST_ARGUMENT or is_to):
        wants_type = name in TYPE_FIRST_ARGUMENT or (name == "torch.device" and len(node.args) > 1)
        found.append((node.args[0], wants_type))
    found.extend(
        (kw.value, kw.arg in TYPE_KEYWORDS) for kw in node.keywords if kw.arg in DEVICE_KEYWORDS
    )
    return found


#: Device-type positions whose torch.cuda counterpart's measured behaviour without CUDA sets
#: the severity (``torch.autocast("cuda")`` warns and disables itself, like
#: ``torch.cuda.amp.autocast``): rules/generated/torch_cuda_behaviour.toml.
BEHAVES_LIKE = {
    "torch.autocast": "amp.autocast",
    "torch.amp.autocast": "amp.autocast",
    "torch.amp.GradScaler": "amp.GradScaler",
    "torch.amp.grad_scaler.GradScaler": "amp.GradScaler",
    "torch.distributed.fsdp.sharded_grad_scaler.ShardedGradScaler": "amp.GradScaler",
    "torch.distributed.fsdp.ShardedGradScaler": "amp.GradScaler",
    "torch.amp.custom_fwd": "amp.custom_fwd",
    "torch.amp.custom_bwd": "amp.custom_bwd",
}


def _behaves_like(name: str | None, ctx: Context) -> str | None:
    """The torch.cuda name whose measured behaviour a device position of ``name`` shares: the
    table above, and the autocast wrappers of rules/device.toml (Lightning's MixedPrecision)."""
    if name is None or name in BEHAVES_LIKE:
        return BEHAVES_LIKE.get(name or "")
    table = ctx.catalog.table("device").get("device", {}).get("autocast_wrappers", {})
    package, _, rest = name.partition(".")
    if (
        rest
        and package in table.get("packages", ())
        and name.rsplit(".", 1)[-1] in table.get("classes", ())
    ):
        return "amp.autocast"
    return None


def _picks_auto_placement(node: ast.Compare, ctx: Context) -> bool:
    """The comparison is the test of ``"auto" if <test> else <other>``: what the CUDA arm picks
    is placement across several devices (a ``device_map`` of "auto")."""
    test: ast.AST = node
    parent = ctx.parents.get(id(node))
    if isinstance(parent, ast.BoolOp) and isinstance(parent.op, ast.And):
        test, parent = parent, ctx.parents.get(id(parent))  # ``dev == "cuda" and quantized``
    return (
        isinstance(parent, ast.IfExp)
        and parent.test is test
        and isinstance(parent.body, ast.Constant)
        and parent.body.value == "auto"
    )


def _type_literal(node: ast.expr, ctx: Context) -> ast.Constant | None:
    """``torch.device("cuda").type``: the device string itself, written as a device's type."""
    literal = device_type_literal(node)
    if (
        literal is None
        or not isinstance(node, ast.Attribute)
        or not isinstance(node.value, ast.Call)
    ):
        return None
    return literal if ctx.qualified_name(node.value.func) == "torch.device" else None


def called_name(node: ast.Call, ctx: Context) -> str | None:
    """The qualified name of what a call calls; through a local name that only ever holds one
    function with a device first (``precision_scope = autocast`` after ``from torch import
    autocast``, also ``autocast if amp else nullcontext``), that function's: the call
    ``precision_scope("cuda")`` is ``torch.autocast("cuda")`` where it is not a no-op."""
    name = ctx.qualified_name(node.func)
    if name is not None or not isinstance(node.func, ast.Name) or not _cuda_first(node):
        return name  # a name's assignments are looked for only where "cuda" comes first
    values = ctx.resolver.values_of(node.func.id) or _local_values(node, node.func.id, ctx)
    found = set()
    for value in values:
        arms = [value.body, value.orelse] if isinstance(value, ast.IfExp) else [value]
        names = {ctx.qualified_name(arm) for arm in arms} & DEVICE_FIRST_ARGUMENT
        if len(names) != 1:
            return None
        found |= names
    return found.pop() if len(found) == 1 else None


def _cuda_first(node: ast.Call) -> bool:
    """The call's first argument is a ``"cuda"`` string."""
    first = node.args[0] if node.args else None
    return (
        isinstance(first, ast.Constant)
        and isinstance(first.value, str)
        and CUDA_PREFIX.match(first.value) is not None
    )


def _local_values(node: ast.AST, name: str, ctx: Context) -> list[ast.expr]:
    """What the function around ``node`` assigns to ``name`` (the walk skips a statement with no
    candidate word, ``precision_scope = autocast``, so its value is not recorded); none where
    the name is a parameter."""
    scope = ctx.parents.get(id(node))
    while scope is not None and not isinstance(scope, ast.FunctionDef | ast.AsyncFunctionDef):
        scope = ctx.parents.get(id(scope))
    if scope is None or name in parameter_names(scope):
        return []
    return [
        statement.value
        for statement in walk(scope)
        if isinstance(statement, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id == name for t in statement.targets)
    ]


def check_device_strings(node: ast.Call, ctx: Context) -> None:
    name = called_name(node, ctx)
    parent = ctx.parents.get(id(node))
    if (
        isinstance(parent, ast.Attribute)
        and isinstance(ctx.parents.get(id(parent)), ast.Compare)
        and _type_literal(parent, ctx) is not None
    ):
        return  # ``torch.device("cuda").type == ...``: a device-type comparison (PRT104)
    severity, behaviour = None, ""
    like, shift = _behaves_like(name, ctx), 0
    if like is None and name == "functools.partial" and node.args:
        # ``partial(torch.autocast, device_type="cuda")``: the call it makes later
        like, shift = _behaves_like(ctx.qualified_name(node.args[0]), ctx), 1
    if like is not None:
        entry = torch_cuda_api(ctx.catalog).entry(like)
        severity, behaviour = entry.severity, entry.behaviour_text()
        if like == "amp.autocast" and disables_autocast(node, 2 + shift):
            severity, behaviour = Severity.INFO, DISABLES_AUTOCAST
    arguments = device_arguments(node, name)
    if not arguments and _takes_cuda_by_default(node, name, ctx):
        # ``torch.amp.GradScaler(enabled=fp16)``: no device given, and the default is "cuda"
        short = name.rsplit(".", 1)[-1] if name else "the call"
        message = f"`{short}()` takes CUDA as its device when none is given"
        if behaviour:
            message += f" ({behaviour})"
        ctx.report(
            node.func,
            "PRT101",
            message,
            severity=severity,
            fix=ctx.fixes.default_device(node) if ctx.fixes is not None else None,
            behind=_after_refusing_test(node, ctx),
        )
        return
    if ctx.positions is not None:
        # ``_place(x, device)`` where the module's private ``_place`` puts ``device`` in a
        # device position: the argument is in one too
        arguments += [(a, False) for a in ctx.positions.arguments(node, "device")]
    if name == "torch.device" and ctx.stored_unread(node):
        return  # ``device = torch.device("cuda")`` that nothing reads: naming it runs nothing
    for argument, wants_type in arguments:
        if _declares_cuda_alone(node, argument, name, ctx):
            # ``BackendInfo(device=["cuda"], ...)``: a registry entry that declares the devices
            # of an implementation made for CUDA; no device is placed, and the entry is right
            continue
        for literal in device_literals(argument, ctx):
            if in_index_arm(node, ctx):
                continue  # ``if device == "cuda": device = torch.device("cuda:0")``
            if literal.via_variable and ctx.in_backend(node):
                # used only inside a CUDA backend or a test that runs only on CUDA: correct
                # there by construction; a use elsewhere is the one that reports it
                continue
            if literal.via_variable and _forwarded_default(node, name, argument, literal, ctx):
                continue
            if _names_devices_only(node, argument, literal.node, ctx):
                continue
            if (
                isinstance(argument, ast.IfExp)
                and literal.node in (argument.body, argument.orelse)
                and any(k.arg == "map_location" and k.value is argument for k in node.keywords)
                and _cpu_off_cuda(argument, ctx)
            ):
                # ``map_location="cuda" if dev.type == "cuda" else "cpu"``: the CUDA arm of a
                # choice that loads to the CPU everywhere else
                continue
            flow = (
                " flows through a variable into a device position" if literal.via_variable else ""
            )
            text = ctx.source(literal.node)
            message = f"Hard-coded CUDA device `{text}`{flow}"
            if behaviour:
                message += f" ({behaviour})"
            fix = _device_fix(node, name, argument, literal, wants_type, ctx)
            targets = _keeping_index(
                ctx.catalog.rules["PRT101"].targets, text, ctx.catalog.single_device_targets
            )
            listed = _listed_beside(argument, literal.node, ctx)
            param = _marked_test_parameter(node, ctx)
            if param is not None:
                # ``pytest.param(torch.device("cuda"), marks=GPU_MARKS)`` beside the parameters
                # of other devices: where the marks skip it, the test is skipped, and the
                # devices beside it have their own parameters
                listed = listed | _parameter_devices(param, ctx)
                severity = Severity.WARNING
                message += " (a test parameter with marks: where they skip it, the test is skipped)"
                fix = None
            if listed:
                # ``register(device=["cuda", "npu"])``: the list names npu's own device too
                targets = {t: PORTABLE if t in listed else a for t, a in targets.items()}
            ctx.report(
                literal.node,
                "PRT101",
                message,
                targets=targets,
                fix=fix,
                severity=severity,
                behind=(
                    _after_refusing_test(node, ctx)
                    or _chosen_in_arm(literal.node, node, ctx)
                    or _moved_in_arm(node, literal, fix, ctx)
                ),
            )


def _takes_cuda_by_default(node: ast.Call, name: str | None, ctx: Context) -> bool:
    """A call whose device parameter defaults to "cuda" (rules/device.toml
    ``[device.cuda_defaults]``), given no device: no first argument, no ``device=``, and no
    ``**kwargs`` that may hold one."""
    table = ctx.catalog.table("device").get("device", {}).get("cuda_defaults", {})
    if name not in table.get("calls", ()):
        return False
    if node.args or any(k.arg is None for k in node.keywords):
        return False
    return not any(k.arg == "device" for k in node.keywords)


#: Methods that put a tensor or a module on a device.
PLACING_METHODS = frozenset({"to", "cuda"})


def _names_devices_only(node: ast.AST, argument: ast.expr, literal: ast.AST, ctx: Context) -> bool:
    """``pool.set_generation_devices([torch.device("cuda:0"), torch.device("cuda:1")])`` in a test
    that puts nothing on a device itself (no ``.to()``, ``.cuda()``, ``map_location``, nor any
    ``torch`` call beyond ``torch.device`` and the ``torch.cuda`` probes): the devices are data
    for the code under test (keys, labels, parsed strings), which runs on every machine. A
    device chosen by a CUDA test (``"cuda" if torch.cuda.is_available() else "cpu"``) is not
    such data: it is where the test runs."""
    scope = ctx.function_scope()
    if scope is None or not scope.name.lstrip("_").startswith("test"):
        return False
    guard = ctx.guards.get(id(node))
    if guard is not None and guard.cuda_only:
        return False
    for inner in walk(argument):  # written in the call, not walked yet: no parents of its own
        if (
            isinstance(inner, ast.IfExp)
            and ctx.names_cuda(inner.test)
            and any(part is literal for part in walk(inner))
        ):
            return False
    current = ctx.parents.get(id(literal))
    while current is not None and current is not scope:
        if isinstance(current, ast.IfExp) and ctx.names_cuda(current.test):
            return False
        current = ctx.parents.get(id(current))
    return not ctx.scope_fact("places on a device", scope, lambda s: _places(s, ctx))


def _places(scope: ast.AST, ctx: Context) -> bool:
    """The function puts a tensor or a module on a device, or runs torch's own code."""
    for inner in walk(scope):
        if not isinstance(inner, ast.Call):
            continue
        if isinstance(inner.func, ast.Attribute) and inner.func.attr in PLACING_METHODS:
            return True
        if any(keyword.arg == "map_location" for keyword in inner.keywords):
            return True
        name = ctx.qualified_name(inner.func) or ""
        if name.startswith("torch.") and not (
            name == "torch.device" or name.startswith(("torch.cuda.", "torch.backends."))
        ):
            return True
    return False


def _behind_cuda_path(node: ast.AST, ctx: Context) -> ast.expr | None:
    """The CUDA test a device-type test is evaluated behind, when only CUDA gets there: an
    operand before it in an ``and`` that found CUDA, or the test of the CUDA arm it sits in (``if
    torch.cuda.is_available():``). None after an exit that lets another target through too (``if
    dev.type not in ("cuda", "xpu"): return``): xpu goes on and skips the CUDA arm here."""
    found = availability_before(node, ctx.parents, ctx.qualified_name, ctx.cuda_flags)
    if found is not None:
        return found
    guard = ctx.guards.get(id(node))
    if guard is None or not guard.cuda_only or guard.only is not None:
        return None
    return guard.behind


def _after_refusing_test(node: ast.AST, ctx: Context) -> ast.expr | None:
    """``assert torch.cuda.is_available()`` then ``torch.device("cuda")``: the other targets
    stop at the assert and never reach the device, so the assert is the site (the test the
    device sits behind, which ``Context._behind_tests`` reads). None elsewhere: a device in the
    arm of ``if torch.cuda.is_available():`` is what the other targets skip, and is reported."""
    guard = ctx.guards.get(id(node))
    if guard is None or guard.behind is None or guard.cuda_only:
        return None
    if not isinstance(ctx.parents.get(id(guard.behind)), ast.Assert):
        return None  # ``if dev.type not in ("cuda", "xpu"): return``: xpu goes on to the device
    return guard.behind


def _chosen_in_arm(literal: ast.AST, call: ast.Call, ctx: Context) -> ast.expr | None:
    """``if torch.cuda.is_available(): device = torch.device("cuda", 0)``: a device that is all
    a statement on the CUDA path of a test assigns or returns (the value itself, or what
    ``torch.device`` is given for it) is the choice the test makes, and says nothing the test
    does not: the test is the site (``Context._behind_tests`` hides the device where the test is
    reported, and the test's fix carries the device's edits). A device the arm puts something on
    (``x.to("cuda")``) is a site of its own. ``call`` is the device position's call, whose own
    arguments the walk has not reached yet."""
    parent = ctx.parents.get(id(literal))
    if parent is None and any(
        literal is a for a in (*call.args, *(k.value for k in call.keywords))
    ):
        parent = call
    value, statement = literal, parent
    if (
        isinstance(statement, ast.Call)
        and statement.args
        and statement.args[0] is literal
        and ctx.qualified_name(statement.func) == "torch.device"
    ):
        value, statement = statement, ctx.parents.get(id(statement))
    if not isinstance(statement, ast.Assign | ast.AnnAssign | ast.Return):
        return None
    if statement.value is not value:
        return None
    guard = ctx.guards.get(id(statement))
    if guard is None or not guard.cuda_only:
        return None
    return guard.behind


def _moved_in_arm(
    call: ast.Call, literal: DeviceLiteral, fix: Fix | None, ctx: Context
) -> ast.expr | None:
    """``if torch.cuda.is_available(): x = x.to("cuda")``: a device written where it is used,
    on the CUDA path of a test, never runs off CUDA; as for ``.cuda()`` there, the test is the
    site of what the other targets skip (``Context._behind_tests`` hides the device where the
    test is reported, and the test's fix carries the device's edit). A device without a fix of
    its own stays a site, or the test's fix would lead the other targets to it; so does one
    that reaches the position through a variable, which other code may read."""
    if fix is None or literal.via_variable:
        return None
    test = ctx.behind_cuda_test(call, ctx.guards.get(id(call)))
    if any(isinstance(n, ast.IfExp) and _within(literal.node, n) for n in walk(call)):
        return None  # ``"cuda" if torch.cuda.is_available() else "cpu"``: the choice itself
    node: ast.AST | None = call  # (the walk has not reached the call's arguments yet)
    while node is not None:
        parent = ctx.parents.get(id(node))
        if isinstance(parent, ast.IfExp):
            return None
        if isinstance(parent, ast.If) and node in parent.body and _within(test, parent.test):
            # the arm of an ``if`` whose own test asks for CUDA (not a flag set elsewhere)
            return test if asks_availability(parent.test, ctx.qualified_name, set()) else None
        node = parent
    return None


def _within(node: ast.AST | None, tree: ast.AST) -> bool:
    return node is not None and any(n is node for n in walk(tree))


def _forwarded_default(
    node: ast.Call, name: str | None, argument: ast.expr, literal: DeviceLiteral, ctx: Context
) -> bool:
    """``def build(device_type="cuda"): Executor(device_type=device_type)``: a parameter's
    default handed on under the same keyword to the project's code in another module. The
    callee's own code is where the value meets a device position (and its own default is
    reported there); the forwarding function only passes its caller's choice along."""
    return (
        isinstance(argument, ast.Name)
        and id(literal.origin) in ctx.parameter_defaults
        and any(kw.value is argument and kw.arg == argument.id for kw in node.keywords)
        and _calls_project_code(node, name, ctx)
    )


def _calls_project_code(node: ast.Call, name: str | None, ctx: Context) -> bool:
    """The callee is the project's own code outside this module: a name imported from a
    package the file sits in (``lmdeploy.config.ModelConfig`` in ``lmdeploy/engine.py``), a
    relatively imported one (``from .workers import Worker``), or the base class's method
    (``super().__init__``). Torch, other libraries, this module's own functions and methods of
    objects (``tensor.to``) are not."""
    func = node.func
    if isinstance(func, ast.Name) and func.id == "dict":
        return True  # ``kwargs = dict(device_type=device_type)``: a mapping handed on
    if name is not None:
        folders = os.path.abspath(ctx.path).split(os.sep)[:-1]
        return name.split(".")[0] in folders
    if isinstance(func, ast.Name):
        scope = ctx.function_scope()
        local = ctx.scope_fact("relative imports", scope, relative_imports) if scope else ()
        return func.id in ctx.relative_imports or func.id in local
    return (
        isinstance(func, ast.Attribute)
        and isinstance(func.value, ast.Call)
        and isinstance(func.value.func, ast.Name)
        and func.value.func.id == "super"
    )


def relative_imports(scope: ast.AST) -> frozenset[str]:
    """The names that relative imports in ``scope`` bind (``from .workers import Worker``)."""
    return frozenset(
        alias.asname or alias.name
        for node in walk(scope)
        if isinstance(node, ast.ImportFrom) and node.level > 0
        for alias in node.names
    )


def _listed_beside(argument: ast.AST, node: ast.AST, ctx: Context) -> frozenset[str]:
    """The targets whose device names sit beside ``node`` in the list, tuple or set literal
    that is the argument (``device=["cuda", "npu"]``): a value that names several devices
    covers them."""
    parent = argument
    if not isinstance(parent, ast.List | ast.Tuple | ast.Set) or node not in parent.elts:
        return frozenset()
    names = ctx.catalog.rules["PRT101"].targets.keys()
    return frozenset(filter(None, (_target_device(e, names) for e in parent.elts)))


def _target_device(value: ast.expr, names: Collection[str]) -> str | None:
    """The target a device string names (``"npu"``, ``"xpu:0"`` -> xpu), or None."""
    if not (isinstance(value, ast.Constant) and isinstance(value.value, str)):
        return None
    name = value.value.split(":")[0]
    return name if name in names else None


def _declares_cuda_alone(
    node: ast.Call, argument: ast.expr, name: str | None, ctx: Context
) -> bool:
    """A list, tuple or set of device names, every one CUDA's, given to a call that is not
    torch's, when another call of the same name in the module declares other devices
    (``BackendInfo(device=["cuda"], ...)`` beside ``BackendInfo(device=["cpu", "xpu"], ...)``):
    a registry of implementations, this one made for CUDA; a device position takes one device,
    not a list, and the other devices have their own entries."""
    if name is not None and name.startswith("torch."):
        return False
    listed = _device_names(argument)
    if not listed or not all(CUDA_DEVICE_TEXT.fullmatch(n) for n in listed):
        return False
    module = ctx.walk_stack[0] if ctx.walk_stack else None
    if module is None:
        return False
    declared = ctx.scope_fact("declared devices", module, _declared_devices)
    others = declared.get(_callee(node), set())
    return any(not CUDA_DEVICE_TEXT.fullmatch(n) for n in others)


def _device_names(argument: ast.expr) -> list[str]:
    """The strings of a list, tuple or set literal made of strings alone, else none."""
    if not isinstance(argument, ast.List | ast.Tuple | ast.Set):
        return []
    names = [e.value for e in argument.elts if isinstance(e, ast.Constant)]
    strings = [n for n in names if isinstance(n, str)]
    return strings if len(strings) == len(argument.elts) else []


def _callee(call: ast.Call) -> str:
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


def _declared_devices(module: ast.AST) -> dict[str, set[str]]:
    """Callee name -> the device names its calls in the module list in a device keyword."""
    found: dict[str, set[str]] = {}
    for node in walk(module):
        if isinstance(node, ast.Call):
            for keyword in node.keywords:
                if keyword.arg in DEVICE_KEYWORDS:
                    names = _device_names(keyword.value)
                    if names:
                        found.setdefault(_callee(node), set()).update(names)
    return found


def _marked_test_parameter(node: ast.Call, ctx: Context) -> ast.Call | None:
    """The ``pytest.param(...)`` call whose value ``node`` is, when it carries ``marks=``."""
    parent = ctx.parents.get(id(node))
    if not (isinstance(parent, ast.Call) and parent.args and parent.args[0] is node):
        return None
    if ctx.qualified_name(parent.func) != "pytest.param":
        return None
    return parent if any(k.arg == "marks" for k in parent.keywords) else None


def _parameter_devices(param: ast.Call, ctx: Context) -> frozenset[str]:
    """The targets whose devices the other parameters of the list holding ``param`` are
    (``pytest.param(torch.device("mps"), marks=MPS_MARKS)``, ``"cpu"``)."""
    listed = ctx.parents.get(id(param))
    if not isinstance(listed, ast.List | ast.Tuple):
        return frozenset()
    names = ctx.catalog.rules["PRT101"].targets.keys()
    found = set()
    for element in listed.elts:
        value = element
        for wrapper in ("pytest.param", "torch.device"):
            if isinstance(value, ast.Call) and ctx.qualified_name(value.func) == wrapper:
                value = value.args[0] if value.args else value
        found.add(_target_device(value, names))
    return frozenset(found - {None})


def _keeping_index(targets, text: str, single: frozenset[str]) -> dict[str, Advice]:
    """Per-target advice for a device string with an index: ``f"cuda:{rank}"`` becomes
    ``f"npu:{rank}"``, not ``"npu"`` (which would put every rank on device 0). A target with
    one device (``single``) has no index to keep."""
    if "cuda:" not in text:
        return dict(targets)
    return {
        target: advice._replace(replacement=text.replace("cuda", target, 1))
        if advice.status is Status.RENAME
        and advice.replacement == f'"{target}"'
        and target not in single
        else advice
        for target, advice in targets.items()
    }


def _device_fix(call, name, argument, literal: DeviceLiteral, wants_type, ctx: Context):
    builder = ctx.fixes
    if builder is None:
        return None
    if isinstance(argument, ast.List | ast.Tuple | ast.Set) and any(
        element is literal.node for element in argument.elts
    ):
        # ``BackendInfo(device=["cuda", "cpu"])``: a list of device names, compared as names
        # (``"cuda" in info.device``); a device object put in it would match none: no fix
        return None
    whole_call = name == "torch.device" and len(call.args) == 1 and not call.keywords
    if whole_call and argument is literal.node and isinstance(literal.node, ast.Constant):
        return builder.device_literal(literal.node, False, False, replace=call)
    if is_selection(literal.origin, ctx):
        if whole_call and argument is literal.origin:
            return builder.selection(call, wants_type=False)
        return builder.selection(literal.origin, wants_type, unsafe=literal.via_variable)
    return builder.device_literal(literal.node, wants_type, literal.via_variable)


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
    receiver = func.value
    if isinstance(receiver, ast.Call) and getattr(receiver.func, "id", None) == "super":
        return  # super().cuda(...) inside a ``def cuda`` override: not a call site
    if _stateless_module(receiver, ctx):
        return  # ``nn.CrossEntropyLoss().cuda()``: nothing to move, on NVIDIA or elsewhere
    message = "`.cuda()` moves the object to a CUDA device"
    tail = attribute_tail_span(node, ctx)
    fix = ctx.fixes.cuda_method(node, tail) if ctx.fixes else None
    # behind a reported CUDA test the move never runs elsewhere: the test is the site
    behind = ctx.behind_cuda_test(node, ctx.guards.get(id(node)))
    ctx.report(node, "PRT102", message, span=tail, fix=fix, behind=behind)


def _stateless_module(node: ast.expr, ctx: Context) -> bool:
    """``nn.CrossEntropyLoss(reduction="sum")``: a ``torch.nn`` module that holds no tensor,
    built with constant arguments only (measured: rules/generated/torch_cuda_behaviour.toml
    ``[stateless]``), so that its ``.cuda()`` moves nothing."""
    if not isinstance(node, ast.Call):
        return False
    name = ctx.qualified_name(node.func) or ""
    if not name.startswith("torch.nn.") or name.count(".") != 2:
        return False
    arguments = [*node.args, *(keyword.value for keyword in node.keywords)]
    if any(not isinstance(argument, ast.Constant) for argument in arguments):
        return False  # ``weight=class_weights``: a tensor it keeps
    return name.rsplit(".", 1)[1] in torch_cuda_api(ctx.catalog).stateless_modules


def _stored_unread(node: ast.expr, ctx: Context) -> bool:
    """``on_gpu = q.is_cuda``, or one element of an unpacking (``b, h, is_cuda, device =
    *q.shape[:2], q.is_cuda, q.device``), in a function that never reads the name: nothing
    tests the value, so nothing differs on any target."""
    parent = ctx.parents.get(id(node))
    statement = ctx.parents.get(id(parent)) if isinstance(parent, ast.Tuple) else parent
    if not (
        isinstance(statement, ast.Assign)
        and len(statement.targets) == 1
        and statement.value is (parent if isinstance(parent, ast.Tuple) else node)
    ):
        return False
    target = statement.targets[0]
    if isinstance(parent, ast.Tuple):
        # matched from the end, past the last starred element (``*q.shape``)
        after = parent.elts[parent.elts.index(node) :]
        if not isinstance(target, ast.Tuple) or len(after) > len(target.elts):
            return False
        if any(isinstance(e, ast.Starred) for e in (*after, *target.elts[-len(after) :])):
            return False
        target = target.elts[-len(after)]
    if not isinstance(target, ast.Name):
        return False
    function = ctx.parents.get(id(statement))
    while function is not None and not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
        function = ctx.parents.get(id(function))
    if function is None:
        return False  # a module's name may be read by any importer
    return not any(
        (isinstance(n, ast.Name) and n.id == target.id and not isinstance(n.ctx, ast.Store))
        or (isinstance(n, ast.Global | ast.Nonlocal) and target.id in n.names)
        for n in walk(function)
    )


def check_is_cuda(node: ast.Attribute, ctx: Context) -> None:
    if node.attr != "is_cuda" or not isinstance(node.ctx, ast.Load):
        return
    parent = ctx.parents.get(id(node))
    if isinstance(parent, ast.Call) and parent.func is node:
        return  # ``platform.is_cuda()``: a method of the caller's own, not the tensor attribute
    if _stored_in_module(node, ctx):
        # ``self.is_cuda = device.type == "cuda"``, then ``if self.is_cuda:``: an attribute of
        # the project's own object, whose value is reported where it is computed
        return
    if _stored_unread(node, ctx):
        return
    message = "`.is_cuda` is False on every accelerator but NVIDIA and ROCm"
    fix = None
    if ctx.fixes:
        fix = ctx.fixes.is_cuda(node, parenthesise=not _takes_a_test(parent, node))
    strands = _companions_moved(node, ctx)
    span = attribute_tail_span(node, ctx)
    # ``x.is_cuda and not w.is_cuda``: evaluated only where the first test found CUDA
    behind = _behind_cuda_path(node, ctx)
    ctx.report(node, "PRT103", message, span=span, fix=fix, strands=strands, behind=behind)


def _companions_moved(node: ast.Attribute, ctx: Context) -> str | None:
    """``if rgb.is_cuda: mask = mask.cuda()`` with no ``else``: the arm only brings other
    tensors to the tested one's device, and only on CUDA. The other accelerators skip it and
    leave them on the CPU beside a tensor on their device, where the next operation on both
    fails: the names left behind (``"mask"``), or None."""
    if not isinstance(node.value, ast.Name):
        return None
    test, parent = node, ctx.parents.get(id(node))
    while isinstance(parent, ast.BoolOp) and isinstance(parent.op, ast.And):
        test, parent = parent, ctx.parents.get(id(parent))
    if not (isinstance(parent, ast.If) and parent.test is test and not parent.orelse):
        return None
    moved: list[str] = []
    for statement in parent.body:
        value = statement.value if isinstance(statement, ast.Assign) else None
        if not (
            isinstance(value, ast.Call)
            and isinstance(value.func, ast.Attribute)
            and value.func.attr == "cuda"
            and isinstance(value.func.value, ast.Name)
            and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Name)
            and statement.targets[0].id == value.func.value.id != node.value.id
        ):
            return None
        moved.append(value.func.value.id)
    return ", ".join(moved) or None


def _takes_a_test(parent: ast.AST | None, node: ast.AST) -> bool:
    """Where a comparison needs no parentheses: a condition, a boolean operand, an argument."""
    if isinstance(parent, ast.If | ast.While | ast.IfExp | ast.Assert):
        return parent.test is node
    if isinstance(parent, ast.UnaryOp):
        return isinstance(parent.op, ast.Not)
    if isinstance(parent, ast.Call):
        return node in parent.args
    return isinstance(parent, ast.BoolOp | ast.Return | ast.Assign | ast.keyword)


def is_device_expression(node: ast.expr) -> bool:
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "str":
        return bool(node.args) and is_device_expression(node.args[0])
    if isinstance(node, ast.Attribute):
        return node.attr == "type" or any(word in node.attr.lower() for word in DEVICE_WORDS)
    if isinstance(node, ast.Name):
        return any(word in node.id.lower() for word in DEVICE_WORDS)  # ``DEVICE_TYPE`` too
    return False


def _in_device_name(node: ast.Compare) -> bool:
    """``"cuda" in accelerator.current_device_name()``: the literal is looked for in what a
    function named for the device returns (its name, ``"cuda:0"``): a device-type test. (An
    equality with such a call is left alone: projects compare ``get_accelerator().device_name()``
    on purpose, in their own vendor layers.)"""
    if len(node.ops) != 1 or not isinstance(node.ops[0], ast.In | ast.NotIn):
        return False
    left, right = node.left, node.comparators[0]
    if not (isinstance(left, ast.Constant) and left.value == "cuda"):
        return False
    if not (isinstance(right, ast.Call) and not right.args and not right.keywords):
        return False
    func = right.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    return any(word in name for word in DEVICE_WORDS)


def asks_vendor_layer(test: ast.expr | None) -> bool:
    """``get_accelerator().device_name() == "cuda"``: the project asks its own vendor layer,
    whose answer is each vendor's name, which vendor it runs on; the arm is its CUDA arm by
    design, and every other vendor is sent elsewhere on purpose (ROCm builds answer "cuda").
    So is a platform object's own CUDA predicate (``current_platform.is_cuda_alike()``,
    ``current_platform.is_cuda()``, as vLLM's platforms and the projects built on them ask)."""
    if asks_platform_layer(test):
        return True
    if not (
        isinstance(test, ast.Compare)
        and len(test.ops) == 1
        and isinstance(test.ops[0], ast.Eq)
        and isinstance(test.comparators[0], ast.Constant)
        and test.comparators[0].value == "cuda"
    ):
        return False
    call = test.left
    if not (isinstance(call, ast.Call) and not call.args and not call.keywords):
        return False
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    return any(word in name for word in DEVICE_WORDS)


def asks_platform_layer(test: ast.expr | None) -> bool:
    """``current_platform.is_cuda_alike()``: a CUDA predicate (``guards.CUDA_PREDICATE``) that
    is a method of an object named for a platform (``PLATFORM_WORDS``), with no arguments."""
    if not (isinstance(test, ast.Call) and not test.args and not test.keywords):
        return False
    func = test.func
    if not (isinstance(func, ast.Attribute) and CUDA_PREDICATE.fullmatch(func.attr)):
        return False
    owner = func.value
    name = owner.attr if isinstance(owner, ast.Attribute) else getattr(owner, "id", "")
    return any(word in name.lower() for word in PLATFORM_WORDS)


#: Names of a project's platform object (vLLM's ``current_platform``).
PLATFORM_WORDS = ("platform",)


def _restates_selection(operand: ast.expr, ctx: Context) -> bool:
    """``device = "cuda" if torch.cuda.is_available() else "cpu"`` then ``dtype = torch.bfloat16
    if device == "cuda" else torch.float32``: every value the name holds is a selection by
    CUDA's availability, reported where it is made (PRT101); the comparison asks its question
    again. (``"cuda" if "cuda" in device else "cpu"`` selects by something else.)"""
    if not isinstance(operand, ast.Name):
        return False
    values = ctx.resolver.values_of(operand.id)
    return bool(values) and all(
        isinstance(value, ast.IfExp)
        and is_selection(value, ctx)
        and asks_availability(value.test, ctx.qualified_name, ctx.cuda_flags)
        for value in values
    )


#: Names that hold a device or an accelerator name (``self._accelerator_flag``).
DEVICE_WORDS = ("device", "accelerator")


def picks_cpu_load(test: ast.expr, ctx: Context) -> bool:
    """``torch.load(path, map_location="cpu" if device.type != "cuda" else None)``: a CUDA test
    that only loads to the CPU wherever CUDA is missing. Loading to the CPU works on every
    target (the tensors move to the device afterwards), so the test is no site. Also written
    as two arms that differ only there (``if torch.cuda.is_available(): sd = torch.load(f)``
    ``else: sd = torch.load(f, map_location="cpu")``), and with the test negated
    (``not torch.cuda.is_available()``) or in an ``or``/``and`` that it decides off CUDA."""
    whole = test
    while isinstance(parent := ctx.parents.get(id(whole)), ast.UnaryOp | ast.BoolOp):
        whole = parent
    choice = ctx.parents.get(id(whole))
    if isinstance(choice, ast.If) and choice.test is whole:
        return _loads_to_cpu_off_cuda(choice, ctx)
    if not (isinstance(choice, ast.IfExp) and choice.test is whole):
        return False
    keyword = ctx.parents.get(id(choice))
    if not (isinstance(keyword, ast.keyword) and keyword.arg == "map_location"):
        return False
    return _cpu_off_cuda(choice, ctx)


#: A CUDA device written with its index, or the index alone: ``"cuda:0"``, ``"0"``.
CUDA_INDEX = re.compile(r"(?:cuda:)?\d+")


def gives_cuda_its_index(test: ast.Compare, ctx: Context) -> bool:
    """``if str(self.device) == "cuda": self.device = torch.device("cuda:0")``, ``if device ==
    "cuda": device = "0"``, ``if "cuda" in dev and ":" not in dev: dev = f"{dev}:0"``: an arm
    with no ``else`` that only gives the bare CUDA name its index, in the value it tested.
    Every other device keeps its value and goes on as it came: nothing to port."""
    if len(test.ops) != 1 or not isinstance(test.ops[0], ast.Eq | ast.In):
        return False
    left, right = test.left, test.comparators[0]
    if isinstance(right, ast.Constant) and right.value == "cuda":
        subject = left  # ``device == "cuda"``
    elif isinstance(left, ast.Constant) and left.value == "cuda":
        subject = right  # ``"cuda" in device``
    else:
        return False
    whole = test
    parent = ctx.parents.get(id(test))
    if isinstance(parent, ast.BoolOp) and isinstance(parent.op, ast.And):
        whole, parent = parent, ctx.parents.get(id(parent))
    if not (
        isinstance(parent, ast.If)
        and parent.test is whole
        and not parent.orelse
        and len(parent.body) == 1
    ):
        return False
    statement = parent.body[0]
    if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1):
        return False
    if (
        isinstance(subject, ast.Call)
        and isinstance(subject.func, ast.Name)
        and subject.func.id == "str"
        and len(subject.args) == 1
    ):
        subject = subject.args[0]  # ``str(self.device) == "cuda"``
    target = ast.unparse(statement.targets[0])
    return target == ast.unparse(subject) and _indexed_cuda(statement.value, target, ctx)


def in_index_arm(node: ast.AST, ctx: Context) -> bool:
    """``node`` is in the arm that ``gives_cuda_its_index`` reads: the index it gives is no site
    either."""
    current = node
    while (parent := ctx.parents.get(id(current))) is not None and not isinstance(parent, ast.If):
        if isinstance(parent, ast.stmt) and not isinstance(parent, ast.Assign):
            return False
        current = parent
    if parent is None or current not in parent.body:
        return False
    tests = parent.test.values if isinstance(parent.test, ast.BoolOp) else [parent.test]
    return any(isinstance(test, ast.Compare) and gives_cuda_its_index(test, ctx) for test in tests)


def _indexed_cuda(value: ast.expr, subject: str, ctx: Context) -> bool:
    """``"cuda:0"``, ``"0"``, ``torch.device("cuda:0")``, ``torch.device("cuda", 0)``, or
    ``f"{subject}:0"``."""
    if isinstance(value, ast.Call) and ctx.qualified_name(value.func) == "torch.device":
        arguments = value.args
        if len(arguments) == 2:
            kind, index = arguments
            return (
                isinstance(kind, ast.Constant)
                and kind.value == "cuda"
                and isinstance(index, ast.Constant)
                and isinstance(index.value, int)
            )
        if len(arguments) != 1:
            return False
        value = arguments[0]
    if isinstance(value, ast.Constant) and isinstance(value.value, str):
        return CUDA_INDEX.fullmatch(value.value) is not None
    if isinstance(value, ast.JoinedStr) and len(value.values) == 2:
        named, index = value.values
        return (
            isinstance(named, ast.FormattedValue)
            and ast.unparse(named.value) == subject
            and isinstance(index, ast.Constant)
            and re.fullmatch(r":\d+", str(index.value)) is not None
        )
    return False


def _off_cuda_truth(test: ast.expr, ctx: Context) -> bool | None:
    """What a test that asks for CUDA evaluates to off CUDA (None: it does not decide)."""
    polarity = cuda_polarity(test, ctx.qualified_name, ctx.cuda_flags)
    if polarity:
        return polarity < 0
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        truth = _off_cuda_truth(test.operand, ctx)
        return None if truth is None else not truth
    if isinstance(test, ast.BoolOp):
        # ``device.type != "cuda" or backend == "rocm"`` is true wherever the first part is
        decisive = isinstance(test.op, ast.Or)
        if any(_off_cuda_truth(value, ctx) is decisive for value in test.values):
            return decisive
    return None


def _cpu_off_cuda(choice: ast.IfExp, ctx: Context) -> bool:
    """The arm of a choice by a CUDA test that runs without CUDA is ``"cpu"``."""
    truth = _off_cuda_truth(choice.test, ctx)
    off_cuda = {False: choice.orelse, True: choice.body}.get(truth)
    return isinstance(off_cuda, ast.Constant) and off_cuda.value == "cpu"


def _loads_to_cpu_off_cuda(choice: ast.If, ctx: Context) -> bool:
    """The arm that runs without CUDA is the CUDA arm with ``map_location="cpu"`` added to its
    loads, and nothing else differs."""
    truth = _off_cuda_truth(choice.test, ctx)
    if truth is None or not choice.orelse:
        return False
    off_cuda, on_cuda = (choice.body, choice.orelse) if truth else (choice.orelse, choice.body)
    loads_cpu = any(
        isinstance(keyword, ast.keyword)
        and keyword.arg == "map_location"
        and isinstance(keyword.value, ast.Constant)
        and keyword.value.value == "cpu"
        for statement in off_cuda
        for keyword in walk(statement)
    )
    return loads_cpu and _without_map_location(off_cuda) == _without_map_location(on_cuda)


def _without_map_location(statements: list[ast.stmt]) -> list[str]:
    """The statements as text for comparison, with every ``map_location="cpu"`` or
    ``map_location=None`` left out."""
    texts = []
    for statement in statements:
        copy = deepcopy(statement)
        for call in walk(copy):
            if isinstance(call, ast.Call):
                call.keywords = [k for k in call.keywords if not _loads_where_default(k)]
        texts.append(ast.dump(copy))
    return texts


def _loads_where_default(keyword: ast.keyword) -> bool:
    return (
        keyword.arg == "map_location"
        and isinstance(keyword.value, ast.Constant)
        and keyword.value.value in ("cpu", None)
    )


def _stored_in_module(node: ast.Attribute, ctx: Context) -> bool:
    """The module assigns to this very attribute (``self.is_cuda = ...``, ``args.is_cuda:
    bool = ...``): it is a flag of the project's, not a tensor's ``.is_cuda``."""
    text = flag_name(node)
    if not text:
        return False
    stored = re.compile(rf"(?<![\w.]){re.escape(text)}\s*(?::[^=\n]*)?=(?!=)")
    return stored.search(ctx.text) is not None


def compares_device_object(test: ast.AST, ctx: Context) -> bool:
    """``device == "cuda"`` (or ``!=``, ``in``, ``not in``) where ``device`` holds a
    ``torch.device`` wherever its scope binds it (``_bindings``): a device never equals a
    string, so the test has the same answer on every machine, NVIDIA's included
    (``torch.device("cuda") == "cuda"`` is False: tests/test_torch_behaviour.py). Nothing to
    port there."""
    if not (
        isinstance(test, ast.Compare)
        and len(test.ops) == 1
        and isinstance(test.ops[0], ast.Eq | ast.NotEq | ast.In | ast.NotIn)
    ):
        return False
    left, right = test.left, test.comparators[0]
    texts = right.elts if isinstance(right, ast.Tuple | ast.List | ast.Set) else [right]
    if not all(isinstance(t, ast.Constant) and isinstance(t.value, str) for t in texts):
        return False
    if not isinstance(left, ast.Name):
        return False
    scope = ctx.function_scope()
    if scope is not None:
        bound = ctx.scope_fact("bindings", scope, lambda f: _bindings(f, ctx))
        if left.id in bound:
            return bound[left.id]
    module = ctx.walk_stack[0] if ctx.walk_stack else None
    if not isinstance(module, ast.Module):
        return False
    return ctx.scope_fact("bindings", module, lambda m: _bindings(m, ctx)).get(left.id, False)


def _bindings(scope: ast.AST, ctx: Context) -> dict[str, bool]:
    """The names a function (or the module) binds itself, not in the scopes nested in it, each
    with whether every binding is ``name = torch.device(...)`` (or a choice between two such
    calls). A parameter, a ``global`` or ``nonlocal`` statement for it anywhere in the file, or
    any other binding says no."""
    found: dict[str, list[bool]] = {}
    for parameter in parameter_names(scope):
        found.setdefault(parameter, []).append(False)
    if isinstance(scope, ast.FunctionDef | ast.AsyncFunctionDef):
        pending = list(scope.body)
    else:
        pending = list(ast.iter_child_nodes(scope))
    while pending:
        node = pending.pop()
        if isinstance(node, ast.Global | ast.Nonlocal):
            for name in node.names:
                found.setdefault(name, []).append(False)
        if isinstance(node, ast.ExceptHandler) and node.name:
            found.setdefault(node.name, []).append(False)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            found.setdefault(node.name, []).append(False)
            pending += [*node.decorator_list]
            continue  # a scope of its own
        if isinstance(
            node, ast.Lambda | ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp
        ):
            continue  # a scope of its own
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and _makes_device(node.value, ctx)
        ):
            found.setdefault(node.targets[0].id, []).append(True)
            pending.append(node.value)
            continue
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            found.setdefault(node.id, []).append(False)
        elif isinstance(node, ast.alias):
            found.setdefault((node.asname or node.name).split(".")[0], []).append(False)
        pending += list(ast.iter_child_nodes(node))
    answer = {}
    for name, marks in found.items():
        # a definition the parse left out (``python.slices``) is a scope of its own, but may
        # still declare the name global and bind it
        declared = re.search(rf"\b(?:global|nonlocal)\b[^\n]*\b{re.escape(name)}\b", ctx.text)
        answer[name] = all(marks) and declared is None
    return answer


def _makes_device(value: ast.expr, ctx: Context) -> bool:
    """``torch.device(...)``, or ``torch.device(a) if test else torch.device(b)``."""
    if isinstance(value, ast.IfExp):
        return _makes_device(value.body, ctx) and _makes_device(value.orelse, ctx)
    return isinstance(value, ast.Call) and ctx.qualified_name(value.func) == "torch.device"


def check_device_type_comparison(node: ast.Compare, ctx: Context) -> None:
    operands = [node.left, *node.comparators]
    if compares_device_object(node, ctx):
        return
    if not any(is_device_expression(operand) for operand in operands) and not _in_device_name(node):
        return
    if any(_restates_selection(operand, ctx) for operand in operands):
        return
    if picks_cpu_load(node, ctx) or gives_cuda_its_index(node, ctx):
        return
    rule = ctx.catalog.rules["PRT104"]
    for operand in operands:
        named = closed_set(operand, ctx)
        if named is not None:
            # ``allowed = {"cpu", "cuda", "mps"}`` then ``if accelerator not in allowed:``: the
            # test that refuses the unlisted names is the site (at the set's name)
            listed = {e.value for e in named.elts if isinstance(e, ast.Constant)}
            if "cuda" in listed:
                targets = {t: PORTABLE if t in listed else a for t, a in rule.targets.items()}
                message = f'Device type checked against `{operand.id}`, a set with `"cuda"`'
                ctx.report(operand, "PRT104", message, targets=targets)
            continue
        elements = (
            operand.elts if isinstance(operand, ast.Tuple | ast.List | ast.Set) else [operand]
        )
        typed = [_type_literal(element, ctx) for element in elements]
        elements = [literal or element for literal, element in zip(typed, elements, strict=True)]
        # ``device_type in ("cuda", "mps", "cpu")``: the targets listed beside it are handled,
        # also by a vendor word (``"ascend"`` is npu's, ``"camb"`` mlu's: rules/device.toml
        # ``[backend.vendors]``); a target the function's assert left out never arrives
        words = vendor_words(ctx.catalog)
        listed = {e.value for e in elements if isinstance(e, ast.Constant)}
        handled = listed | {words.get(str(value).lower()) for value in listed}
        arriving = admitted_targets(operands, ctx, words)
        targets = {
            t: PORTABLE if t in handled or (arriving is not None and t not in arriving) else a
            for t, a in rule.targets.items()
        }
        if "cpu" in targets and _feeds_only_transfer_hints(node, ctx):
            targets["cpu"] = PORTABLE
        if _picks_auto_placement(node, ctx):
            # ``"auto" if dev == "cuda" else dev``: the CUDA arm only spreads the model over
            # several devices, which a single-device target does not have
            single = ctx.catalog.single_device_targets
            targets.update((t, PORTABLE) for t in single & targets.keys())
        rng_only = _feeds_only_rng_fork(node, ctx)
        # ``x.device.type == "cuda" and w.device.type == "cuda"``, or a test in the arm of ``if
        # torch.cuda.is_available():``: evaluated only where the first test found CUDA, which
        # is the site
        behind = _behind_cuda_path(node, ctx)
        # ``device_type in ["cuda", "rocm"]``: a list that names other vendors means them; the
        # machine's own type written into it would change which of them match
        names_vendors = any(
            words.get(str(value).lower()) not in (None, "cuda", "cpu") for value in listed
        )
        for element in elements:
            if isinstance(element, ast.Constant) and element.value == "cuda":
                fix = None
                if (
                    ctx.fixes
                    and not names_vendors
                    and element not in typed
                    and not _stored_as_nvidia_probe(node, ctx)
                ):
                    # (``torch.device("cuda").type`` is left as written: no fix)
                    fix = ctx.fixes.device_type_comparison(node, element)
                message = 'Device type compared with `"cuda"`'
                if rng_only:
                    message += " to pick the devices `fork_rng` forks"
                    message += " (elsewhere the global RNG is reseeded instead)"
                skips = in_skip_condition(node, ctx.parents, test_skips(ctx.catalog))
                reported = targets
                if skips:
                    fix = None  # the skipped test's body still says "cuda" (python.cuda_tests)
                    # a test that asks for an accelerator has nothing to run on a CPU-only one
                    reported = {**targets, "cpu": PORTABLE} if "cpu" in targets else targets
                severity = Severity.INFO if rng_only or skips else None
                ctx.report(
                    element,
                    "PRT104",
                    message,
                    targets=reported,
                    fix=fix,
                    severity=severity,
                    behind=behind,
                )


def _stored_as_nvidia_probe(node: ast.Compare, ctx: Context) -> bool:
    """``IS_NVIDIA = (device_platform == "cuda")``: a test stored in a name that names NVIDIA by
    name, whose readers take it to hold on NVIDIA alone (``if IS_NVIDIA:
    torch.cuda.get_device_capability()``). The device-generic test would hold on every
    accelerator and send the others into NVIDIA's probes: no fix."""
    parent = ctx.parents.get(id(node))
    if not (isinstance(parent, ast.Assign) and parent.value is node):
        return False
    for target in parent.targets:
        name = target.id if isinstance(target, ast.Name) else getattr(target, "attr", "")
        if names_nvidia(name):
            return True
    return False


def admitted_targets(
    operands: list[ast.expr], ctx: Context, words: dict[str, str]
) -> frozenset[str] | None:
    """The targets that can arrive in a compared name, where an assert at the top of the
    function admitted only some names (``assert device_type in ["cuda", "ascend", "camb"]``:
    npu and mlu, by their vendor words); None where nothing narrowed it."""
    scope = ctx.function_scope()
    if scope is None:
        return None
    for operand in operands:
        found = ctx.admitted.get((id(scope), ast.unparse(operand)))
        if found is not None:
            admitted, start, until = found
            if start < operand.lineno < until:
                return frozenset(words.get(value.lower(), value.lower()) for value in admitted)
    return None


def check_device_type_prefix(node: ast.Call, ctx: Context) -> None:
    """``str(device).startswith("cuda")``: a device-type comparison written as a prefix test.
    The prefixes listed beside ``"cuda"`` (``startswith(("cuda", "xpu"))``) are handled."""
    literal = cuda_prefix(node)
    if literal is None or not is_device_expression(node.func.value):
        return
    prefix = node.args[0]
    elements = prefix.elts if isinstance(prefix, ast.Tuple) else [prefix]
    listed = {e.value for e in elements if isinstance(e, ast.Constant)}
    rule = ctx.catalog.rules["PRT104"]
    targets = {t: PORTABLE if t in listed else a for t, a in rule.targets.items()}
    # on the CUDA path alone (after ``if not torch.cuda.is_available(): raise``) the test that
    # put it there is the site, as for ``==`` (``check_device_type_comparison``)
    behind = _behind_cuda_path(node, ctx)
    message = 'Device type compared with `"cuda"`'
    ctx.report(literal, "PRT104", message, targets=targets, behind=behind)


def closed_set(operand: ast.expr, ctx: Context) -> ast.Tuple | ast.List | ast.Set | None:
    """A local name whose only value is a literal collection of strings
    (``allowed_accelerators = {"cpu", "gpu", "cuda", "mps"}``)."""
    if not isinstance(operand, ast.Name):
        return None
    values = ctx.resolver.values_of(operand.id)
    if len(values) != 1 or not isinstance(values[0], ast.Tuple | ast.List | ast.Set):
        return None
    elements = values[0].elts
    if not elements or not all(
        isinstance(e, ast.Constant) and isinstance(e.value, str) for e in elements
    ):
        return None
    return values[0]


def _feeds_only_transfer_hints(node: ast.Compare, ctx: Context) -> bool:
    """``use_cuda = device == "cuda"``, and every use of ``use_cuda`` is ``pin_memory=use_cuda``
    or ``non_blocking=use_cuda`` (rules/device.toml ``[device.transfer_hints]``): a CPU-only
    machine has no host-to-device copy to tune."""
    table = ctx.catalog.table("device").get("device", {}).get("transfer_hints", {})
    hints = frozenset(table.get("keywords", ()))
    parent = ctx.parents.get(id(node))
    if isinstance(parent, ast.Assign) and all(_stored_name(t) in hints for t in parent.targets):
        return True  # ``self.non_blocking = "cuda" in str(self.device)``
    holder = parent
    while isinstance(holder, ast.BoolOp) and isinstance(holder.op, ast.And):
        holder = ctx.parents.get(id(holder))
    if isinstance(holder, ast.keyword) and holder.arg in hints:
        return True  # ``pin_memory=device.type == "cuda" and num_workers > 0``
    if _cuda_path_only_tunes(node, ctx, hints):
        return True
    return _only_given_as(node, ctx, lambda call, keyword: keyword.arg in hints)


def _cuda_path_only_tunes(node: ast.Compare, ctx: Context, hints: frozenset[str]) -> bool:
    """``if device.type != "cuda": return torch.tensor(data, device=device)`` then ``t =
    torch.tensor(data, pin_memory=True); return t.to(device, non_blocking=True)``: the early
    return leaves a CUDA path whose every call tunes the copy (a transfer-hint keyword, or
    ``.pin_memory()``), and the other path makes the same values without it."""
    child, current = node, ctx.parents.get(id(node))
    while isinstance(current, ast.BoolOp):
        child, current = current, ctx.parents.get(id(current))
    if not (isinstance(current, ast.If) and current.test is child) or current.orelse:
        return False
    # (the arm of ``if device.type == "cuda":`` is on the CUDA path, where cpu is no target)
    if len(node.ops) != 1 or not isinstance(node.ops[0], ast.NotEq):
        return False
    if not current.body or not isinstance(current.body[-1], ast.Return):
        return False
    holder = ctx.parents.get(id(current))
    block = getattr(holder, "body", [])
    if current not in block:
        return False
    path = block[block.index(current) + 1 :]
    calls = [n for statement in path for n in walk(statement) if isinstance(n, ast.Call)]
    return bool(calls) and all(
        any(keyword.arg in hints for keyword in call.keywords)
        or (isinstance(call.func, ast.Attribute) and call.func.attr in hints)
        for call in calls
    )


def _stored_name(target: ast.expr) -> str | None:
    if isinstance(target, ast.Attribute):
        return target.attr
    return target.id if isinstance(target, ast.Name) else None


def _feeds_only_rng_fork(node: ast.Compare, ctx: Context) -> bool:
    """``forked = [device] if device.type == "cuda" else []`` and every use of ``forked`` is
    ``torch.random.fork_rng(devices=forked)`` (rules/device.toml ``[device.rng_forks]``): the
    test only picks whose RNG state is saved and restored; elsewhere the seeding inside reseeds
    the global RNG instead of a forked one, a merely different state."""
    test_of = ctx.parents.get(id(node))
    if not (isinstance(test_of, ast.IfExp) and test_of.test is node):
        return False
    table = ctx.catalog.table("device").get("device", {}).get("rng_forks", {})
    calls, keyword_name = frozenset(table.get("calls", ())), table.get("keyword")

    def forks(call: ast.Call, keyword: ast.keyword) -> bool:
        return keyword.arg == keyword_name and ctx.qualified_name(call.func) in calls

    return _only_given_as(test_of, ctx, forks)


def _only_given_as(
    value: ast.expr, ctx: Context, accepts: Callable[[ast.Call, ast.keyword], bool]
) -> bool:
    """``value`` is assigned to a local name, and every use of that name is the whole value of
    a keyword argument that ``accepts`` (given the call and the keyword)."""
    name = ctx.assigned_name(value)
    if name is None:
        return False
    scope: ast.AST = ctx.parents[id(value)]
    while not isinstance(scope, ast.FunctionDef | ast.AsyncFunctionDef | ast.Module):
        parent = ctx.parents.get(id(scope))
        if parent is None:
            break
        scope = parent
    uses = given = 0
    for inner in walk(scope):
        if isinstance(inner, ast.Name) and inner.id == name and isinstance(inner.ctx, ast.Load):
            uses += 1
        elif isinstance(inner, ast.Call):
            given += sum(
                isinstance(k.value, ast.Name) and k.value.id == name and accepts(inner, k)
                for k in inner.keywords
            )
    return uses > 0 and uses == given


# -- fixes ---------------------------------------------------------------------------------------
# Beside the checks above and apart from them: how --fix rewrites what they report.


class DeviceFixes(FixBase):
    """Fixes of PRT101-PRT104: device strings and selections, ``.cuda()``, ``.is_cuda`` and
    device-type comparisons."""

    def device_literal(
        self,
        literal: ast.expr,
        wants_type: bool,
        via_variable: bool,
        replace: ast.expr | None = None,
    ) -> Fix | None:
        """``"cuda"`` -> DEVICE (or DEVICE.type); ``"cuda:1"`` -> torch.device(DEVICE.type, 1);
        ``f"cuda:{i}"`` -> ``f"{DEVICE.type}:{i}"``."""
        if self.left_alone(literal):
            return None
        if self.layout.device_value is not None and _contains(self.layout.device_value, literal):
            return self._fix((), f"choose {self.device} at run time")
        kind = f"{self.device}.type"
        if isinstance(literal, ast.Constant) and self._passed_to_other_code(literal):
            wants_type = True
        if via_variable and isinstance(literal, ast.Constant):
            # ``def init(device_type="cuda")``, ``dev = "cuda"``: the name may also be compared
            # with strings (``device_type in ["cuda", "cpu"]``), so it stays a string
            wants_type = True
        parent = self.parents.get(id(literal))
        if (
            isinstance(parent, ast.Call)
            and parent.args
            and parent.args[0] is literal
            and self.ctx.qualified_name(parent.func) == "torch.device"
            and (len(parent.args) > 1 or parent.keywords)
        ):
            wants_type = True  # torch.device("cuda", index=i): the type, then the index
        if isinstance(literal, ast.Constant):
            _, _, index = literal.value.partition(":")
            source = self.ctx.source(literal)
            if wants_type and index and source[:1] in ("'", '"'):
                # ``Preprocessor(device="cuda:1")``: still a string, and still device 1
                position = source.find("cuda")
                replacement = f"f{source[:position]}{{{kind}}}{source[position + 4 :]}"
            elif wants_type and index:
                return None
            elif wants_type:
                replacement = kind
            elif index:
                replacement = f"{self.torch}.device({kind}, {index})"
            else:
                replacement = self.device
        elif isinstance(literal, ast.JoinedStr):
            source = self.ctx.source(literal)
            position = source.find("cuda")
            replacement = source[:position] + "{" + kind + "}" + source[position + 4 :]
        elif isinstance(literal, ast.BinOp) and isinstance(literal.left, ast.Constant):
            left = self.ctx.source(literal.left)
            right = self.ctx.source(literal)[len(left) :]
            quote = left[-1]
            replacement = f"f{quote}{{{kind}}}{literal.left.value[4:]}{quote}{right}"
        else:
            return None
        edit = Edit(self.ctx.span(replace or literal), replacement)
        return self._fix([edit], f"use {self.device}", unsafe=via_variable)

    def selection(self, expression: ast.expr, wants_type: bool, unsafe: bool = False) -> Fix | None:
        """``"cuda" if torch.cuda.is_available() else "cpu"`` (or torch.device of it) -> DEVICE."""
        if self.left_alone(expression):
            return None
        if self.layout.device_value is not None and _contains(self.layout.device_value, expression):
            return self._fix((), f"choose {self.device} at run time")
        if isinstance(expression, ast.IfExp) and isinstance(expression.body, ast.Constant):
            wants_type = True  # the value was a string; it stays one
        wants_type = wants_type or self._passed_to_other_code(expression)
        replacement = f"{self.device}.type" if wants_type else self.device
        edit = Edit(self.ctx.span(expression), replacement)
        # ``"cuda:1" if torch.cuda.is_available() else "cpu"``: the module's device has no index,
        # so on NVIDIA the work would move to the current device: unsafe
        unsafe = unsafe or ":" in _selected_text(expression, self.ctx)
        return self._fix([edit], f"use {self.device}", unsafe=unsafe)

    def _passed_to_other_code(self, value: ast.expr) -> bool:
        """A device string passed to a function that is not torch's (``Preprocessor(device=
        "cuda")``): it may compare or print it, so it keeps getting a string."""
        parent = self.parents.get(id(value))
        if isinstance(parent, ast.keyword):
            parent = self.parents.get(id(parent))
        if not isinstance(parent, ast.Call):
            return False
        name = self.ctx.qualified_name(parent.func) or ""
        is_method = isinstance(parent.func, ast.Attribute) and not name
        return not name.startswith("torch") and not is_method

    def default_device(self, call: ast.Call) -> Fix | None:
        """``torch.amp.GradScaler(enabled=fp16)`` -> ``torch.amp.GradScaler(DEVICE.type,
        enabled=fp16)``: the device the call took by default, given as its first argument ("cuda"
        on NVIDIA, as before)."""
        if self.left_alone(call):
            return None
        head = self.ctx.source(call.func) + "("
        source = self.ctx.source(call)
        if not source.startswith(head):
            return None  # ``GradScaler (...)``: a space or a line break before the parenthesis
        rest = source[len(head) :]
        given = f"{self.device}.type" + (", " if call.keywords else "")
        edit = Edit(self.ctx.span(call), head + given + rest)
        return self._fix([edit], f"pass {self.device}.type")

    def cuda_method(self, call: ast.Call, tail: Span) -> Fix | None:
        """``.cuda()`` -> ``.to(DEVICE)``, keeping ``non_blocking=``; ``.cuda(i)`` -> an index.

        Not ``super().cuda(...)`` nor anything inside a ``def cuda`` override: there ``cuda`` is
        the class's own method, and its argument may already be a ``torch.device``.
        """
        owner = call.func.value if isinstance(call.func, ast.Attribute) else None
        if (
            isinstance(owner, ast.Call)
            and isinstance(owner.func, ast.Name)
            and owner.func.id == "super"
        ) or self.left_alone(call):
            return None
        arguments = [self.ctx.source(a) for a in call.args]
        keywords = {k.arg: self.ctx.source(k.value) for k in call.keywords if k.arg}
        if any(k.arg is None for k in call.keywords) or len(arguments) > 1:
            return None
        index = arguments[0] if arguments else keywords.pop("device", None)
        target = (
            self.device if index is None else f"{self.torch}.device({self.device}.type, {index})"
        )
        extra = "".join(f", {name}={value}" for name, value in keywords.items())
        # ``.cuda(i)`` takes an index or a device: torch.device(type, i) only takes the index.
        unsafe = index is not None and not (index.isdigit() or index.isidentifier())
        unsafe = unsafe or (index is not None and "device" in index.lower())
        edit = Edit(tail, f".to({target}{extra})")
        return self._fix([edit], f".to({self.device})", unsafe=unsafe)

    def is_cuda(self, node: ast.Attribute, parenthesise: bool) -> Fix | None:
        """``x.is_cuda`` -> ``x.device.type == DEVICE.type != "cpu"``: on NVIDIA the same answer,
        on another accelerator "on the chosen accelerator", and False on the CPU as before. In
        an ``assert`` (a "must be on the device" check) -> ``x.device.type == DEVICE.type``, which
        holds on a CPU-only machine too. ``platform.is_cuda()`` (a method that only shares the
        name) is left alone."""
        parent = self.parents.get(id(node))
        if isinstance(parent, ast.Call) and parent.func is node:
            return None
        if self.left_alone(node):
            return None
        if not isinstance(parent, ast.Assert) and self._branch_keeps_cuda_calls(node):
            return None
        test = f"{self.ctx.source(node.value)}.device.type == {self.device}.type"
        if not isinstance(parent, ast.Assert):
            # A branch on ``x.is_cuda`` holds code for the accelerator: the CPU still skips it.
            test += ' != "cpu"'
        if parenthesise:
            test = f"({test})"
        return self._fix([Edit(self.ctx.span(node), test)], f"compare with {self.device}.type")

    def device_type_comparison(self, compare: ast.Compare, literal: ast.Constant) -> Fix | None:
        """``t == "cuda"`` -> ``t == DEVICE.type != "cpu"`` (``t != "cuda"`` -> ``not (t ==
        DEVICE.type != "cpu")``): the same on NVIDIA and on a CPU-only machine, and on another
        machine its own accelerator. Not when the branch still makes CUDA-only calls (they would
        now run on the other accelerator) or when sibling branches test for other vendors."""
        if self.left_alone(compare) or self._branch_keeps_cuda_calls(compare):
            return None
        direct = literal is compare.left or any(literal is c for c in compare.comparators)
        if direct and any(isinstance(op, ast.In | ast.NotIn) for op in compare.ops):
            return None  # ``"cuda" in device``: a substring test on a configured string
        description = f"compare with {self.device}.type"
        in_assert = isinstance(self.parents.get(id(compare)), ast.Assert)
        if not direct or in_assert or len(compare.ops) != 1:
            # ``assert t == "cuda"`` (a "must be on the device" check, which holds on a CPU-only
            # machine too), ``t in ("cuda", "xpu")``: the literal alone. In a collection without
            # "cpu" the CPU now matches too, where it did not before: unsafe
            edit = Edit(self.ctx.span(literal), f"{self.device}.type")
            container = self.parents.get(id(literal))
            lists_cpu = any(
                isinstance(element, ast.Constant) and element.value == "cpu"
                for element in getattr(container, "elts", ())
            )
            unsafe = not (direct or in_assert or lists_cpu)
            return self._fix([edit], description, unsafe=unsafe)
        op = compare.ops[0]
        if not isinstance(op, ast.Eq | ast.NotEq):
            return None
        subject = compare.comparators[0] if literal is compare.left else compare.left
        # A branch on the device type holds code for the accelerator: the CPU still skips it
        # (``t == DEVICE.type != "cpu"``), as it did when the test said "cuda"
        test = f'{self.ctx.source(subject)} == {self.device}.type != "cpu"'
        if isinstance(op, ast.NotEq):
            test = f"not ({test})"
        return self._fix([Edit(self.ctx.span(compare), test)], description)

"""PRT2xx and PRT6xx: the torch.cuda API, capability checks and NVIDIA-only switches."""

from __future__ import annotations

import ast
import re

from portlint.model import PORTABLE, Advice, Severity, Status
from portlint.python.context import Context
from portlint.python.torch_api import torch_cuda_api

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


def check_torch_name(node: ast.Attribute | ast.Name, name: str, ctx: Context) -> None:
    """One resolved ``torch.*`` name: route it to the rule that covers it."""
    if name.startswith("torch.cuda.") or name == "torch.cuda":
        _report_torch_cuda(node, name, ctx)
    elif name.startswith(PRIVATE_BINDINGS):
        message = f"`{name}` is a private binding of CUDA builds; no other build has it"
        ctx.report(node, "PRT201", message, targets=PRIVATE_TARGETS)
    elif name == PROFILER_CUDA:
        _report_profiler_activity(node, ctx)
    elif name == "torch.version.cuda":
        ctx.report(node, "PRT601", "`torch.version.cuda` is None on ROCm and every other vendor")
    elif name in TF32_SWITCHES and not _saved_or_restored(node, name, ctx):
        ctx.report(node, "PRT603", f"`{name}` only affects NVIDIA GPUs")
    elif name in CUDNN_SWITCHES and not _saved_or_restored(node, name, ctx):
        ctx.report(node, "PRT604", f"`{name}` has no effect outside NVIDIA and ROCm")


def _saved_or_restored(node: ast.AST, name: str, ctx: Context) -> bool:
    """``old = cudnn.benchmark`` ... ``cudnn.benchmark = old`` (or through an attribute or a
    keyword: ``capture(benchmark=cudnn.benchmark)`` ... ``cudnn.benchmark = self.benchmark``):
    only the change in between is reported, not the read that saves the flag nor the write that
    restores it."""
    parent = ctx.parents.get(id(node))
    if isinstance(parent, ast.keyword) and parent.value is node and parent.arg:
        ctx.saved_switches[parent.arg] = name
        return True
    if not isinstance(parent, ast.Assign):
        return False
    if parent.value is node:
        names = [_last_name(t) for t in parent.targets]
        for saved in names:
            if saved:
                ctx.saved_switches[saved] = name
        return any(names)
    return ctx.saved_switches.get(_last_name(parent.value) or "") == name


def _last_name(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    return node.attr if isinstance(node, ast.Attribute) else None


def _report_torch_cuda(node: ast.AST, name: str, ctx: Context) -> None:
    member = name[len("torch.cuda.") :] if name != "torch.cuda" else ""
    if any(part.startswith("_") for part in member.split(".")):
        return  # private API: nothing portable to suggest
    parent = ctx.parents.get(id(node))
    probe = _is_probe(node, parent)
    if not member:
        message = (
            "`torch.cuda` module used directly; device-generic: `torch.get_device_module(device)`"
        )
        if probe:
            message = "`torch.cuda` probed with hasattr/getattr; other vendors' modules differ"
        severity = Severity.INFO if probe else None
        ctx.report(node, "PRT201", message, targets=MODULE_TARGETS, severity=severity)
        return
    entry = torch_cuda_api(ctx.catalog).entry(member)
    guard = ctx.guards.get(id(node))
    if guard is not None and guard.old_torch and entry.generic:
        entry = entry.without_generic()  # the older torch of a version test has no such form
    if entry.rule == "PRT602":
        message = f"`torch.cuda.{member}` answers in NVIDIA compute-capability terms"
    else:
        message = f"`torch.cuda.{member}` exists only on NVIDIA and ROCm builds"
    if entry.generic:
        message += f"; device-generic: `{entry.generic_text()}`"
    if entry.behaviour_text():
        message += f" ({entry.behaviour_text()})"
    fix = None
    if ctx.fixes is not None:
        parent = ctx.parents.get(id(node))
        call = parent if isinstance(parent, ast.Call) and parent.func is node else None
        fix = ctx.fixes.torch_cuda(node, entry, call)
    severity = entry.severity
    if guard is not None and guard.cuda_only and _describes(member, ctx):
        # ``if dev.type == "cuda": name = torch.cuda.get_device_name()`` for a printout
        severity = Severity.INFO
    if _in_skip_condition(node, ctx):
        if _vendor_siblings(node, ctx):
            return  # ``require_multi_gpu`` beside ``require_multi_xpu``: nothing to port
        severity = Severity.INFO
    ctx.report(node, entry.rule, message, targets=entry.targets, severity=severity, fix=fix)


def _describes(member: str, ctx: Context) -> bool:
    """``get_device_name``: rules/torch_api.toml says the name only describes the device."""
    return bool(torch_cuda_api(ctx.catalog).policy.get(member, {}).get("describes", False))


#: Test decorators whose condition only decides whether a test runs.
SKIP_CALLS = frozenset({"skipIf", "skipUnless", "skipif"})


def _in_skip_condition(node: ast.AST, ctx: Context) -> bool:
    """``unittest.skipUnless(torch.cuda.device_count() > 1, ...)``: skipping a CUDA test where
    there is no CUDA loses nothing."""
    current = ctx.parents.get(id(node))
    while current is not None and not isinstance(current, ast.stmt):
        if isinstance(current, ast.Call):
            func = current.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            if name in SKIP_CALLS:
                return True
        current = ctx.parents.get(id(current))
    return False


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
    message = "The CUDA profiler activity records nothing without CUDA"
    ctx.report(node, "PRT201", message, targets=PROFILER_TARGETS, severity=Severity.WARNING)


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
        ctx.report(node, "PRT602", f"Compute capability `.{node.attr}` is NVIDIA numbering")


def check_sm_comparison(node: ast.Compare, ctx: Context) -> None:
    for operand in (node.left, *node.comparators):
        if isinstance(operand, ast.Constant) and SM_STRING.match(str(operand.value)):
            ctx.report(operand, "PRT602", f"`{operand.value}` is an NVIDIA architecture name")

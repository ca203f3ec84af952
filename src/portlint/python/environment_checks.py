"""PRT4xx: CUDA-only environment variables and NVIDIA command-line tools."""

from __future__ import annotations

import ast
import functools
import re

from portlint.catalog import Catalog
from portlint.model import PORTABLE, Advice, Severity, Status
from portlint.python.context import Context

ENVIRON = "os.environ"
#: Calls whose first argument names an environment variable.
ENV_NAME_CALLS = frozenset(
    {
        "os.environ.get",
        "os.environ.setdefault",
        "os.environ.pop",
        "os.getenv",
        "os.putenv",
        "os.unsetenv",
    }
)
#: Calls that run a command given as a string or an argument list.
COMMAND_CALLS = frozenset(
    {
        "subprocess.run",
        "subprocess.call",
        "subprocess.check_call",
        "subprocess.check_output",
        "subprocess.Popen",
        "subprocess.getoutput",
        "subprocess.getstatusoutput",
        "os.system",
        "os.popen",
        "shutil.which",
    }
)


@functools.cache
def env_advice(catalog: Catalog) -> dict[str, dict[str, Advice]]:
    """Variable name -> per-target advice, from ``[env.*]`` in rules/environment.toml."""
    return {
        name: _advice_from_row(row, rocm_portable=row.get("rocm_portable", False))
        for name, row in catalog.table("environment").get("env", {}).items()
    }


@functools.cache
def tool_advice(catalog: Catalog) -> dict[str, dict[str, Advice]]:
    return {
        name: _advice_from_row(row, rocm_portable=False)
        for name, row in catalog.table("environment").get("tool", {}).items()
    }


def _advice_from_row(row: dict, rocm_portable: bool) -> dict[str, Advice]:
    advice = {}
    for target in ("rocm", "npu", "mlu", "xpu", "mps", "cpu"):
        value = row.get(target)
        if (target == "rocm" and rocm_portable) or value is None:
            advice[target] = PORTABLE
        elif value == "":
            advice[target] = Advice(Status.UNSUPPORTED)
        else:
            advice[target] = Advice(Status.RENAME, value)
    return advice


def _report_variable(node: ast.AST, ctx: Context) -> None:
    if not (isinstance(node, ast.Constant) and isinstance(node.value, str)):
        return
    advice = env_advice(ctx.catalog).get(node.value)
    if advice is not None:
        message = f"`{node.value}` is honoured only by NVIDIA's stack"
        ctx.report(node, "PRT401", message, targets=advice)


def check_environ_subscript(node: ast.Subscript, ctx: Context) -> None:
    if ctx.qualified_name(node.value) == ENVIRON:
        _report_variable(node.slice, ctx)


def check_environ_call(node: ast.Call, ctx: Context) -> None:
    name = ctx.qualified_name(node.func)
    if name in ENV_NAME_CALLS and node.args:
        _report_variable(node.args[0], ctx)
    elif name == "os.environ.update" and node.args and isinstance(node.args[0], ast.Dict):
        for key in node.args[0].keys:
            if key is not None:
                _report_variable(key, ctx)
    for keyword in node.keywords:
        if keyword.arg == "env" and isinstance(keyword.value, ast.Dict):
            for key in keyword.value.keys:
                if key is not None:
                    _report_variable(key, ctx)


def check_environ_membership(node: ast.Compare, ctx: Context) -> None:
    membership = len(node.ops) == 1 and isinstance(node.ops[0], ast.In | ast.NotIn)
    if membership and ctx.qualified_name(node.comparators[0]) == ENVIRON:
        _report_variable(node.left, ctx)


@functools.cache
def _tool_pattern(names: tuple[str, ...]) -> re.Pattern[str]:
    alternatives = "|".join(re.escape(name) for name in names)
    return re.compile(rf"(?<![\w.-])({alternatives})(?![\w-])")


def check_tool_call(node: ast.Call, ctx: Context) -> None:
    name = ctx.qualified_name(node.func)
    if name not in COMMAND_CALLS or not node.args:
        return
    # ``shutil.which("nvcc")`` only asks whether the tool is there: info
    severity = Severity.INFO if name == "shutil.which" else None
    tools = tool_advice(ctx.catalog)
    pattern = _tool_pattern(tuple(sorted(tools)))
    command = node.args[0]
    strings = command.elts[:1] if isinstance(command, ast.List | ast.Tuple) else [command]
    if isinstance(command, ast.JoinedStr):
        strings = list(command.values)
    for string in strings:
        if isinstance(string, ast.Constant) and isinstance(string.value, str):
            match = pattern.search(string.value)
            if match:
                tool = match.group(1)
                message = f"`{tool}` exists only where the NVIDIA driver or toolkit is installed"
                ctx.report(string, "PRT402", message, targets=tools[tool], severity=severity)

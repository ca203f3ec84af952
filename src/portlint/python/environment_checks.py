"""PRT4xx: CUDA-only environment variables and NVIDIA command-line tools."""

from __future__ import annotations

import ast
import functools
import re

from portlint.catalog import Catalog
from portlint.model import PORTABLE, TARGETS, Advice, Severity, Status
from portlint.python.context import LOG_CALL, Context

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
#: Methods of any mapping whose first argument is a key (``current_env.setdefault(...)``).
MAPPING_METHODS = frozenset({"get", "setdefault", "pop"})
#: A word in the text of a mapping that says it holds environment variables: ``env``,
#: ``environ``, ``ps_environ``, ``runtime_env["env_vars"]``.
ENVIRONMENT_WORD = re.compile(r"env", re.IGNORECASE)
#: Calls that build a path whose parts may name a tool: ``os.path.join(home, "bin", "nvcc")``.
PATH_CALLS = frozenset({"os.path.join", "pathlib.Path", "pathlib.PurePath"})
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
def env_severity(catalog: Catalog) -> dict[str, Severity]:
    """Variable name -> its severity where ``[env.*]`` gives one (info: no effect elsewhere)."""
    rows = catalog.table("environment").get("env", {})
    return {name: Severity(row["severity"]) for name, row in rows.items() if "severity" in row}


@functools.cache
def variable_families(
    catalog: Catalog,
) -> tuple[tuple[frozenset[str], str | None, dict[str, Advice], Severity | None], ...]:
    """``[env_family.*]`` of rules/environment.toml: (names, prefix, per-target advice,
    severity) of variables that share one row."""
    rows = catalog.table("environment").get("env_family", {})
    return tuple(
        (
            frozenset(row.get("names", ())),
            row.get("prefix"),
            _advice_from_row(row, rocm_portable=row.get("rocm_portable", False)),
            Severity(row["severity"]) if "severity" in row else None,
        )
        for row in rows.values()
    )


def tool_source(catalog: Catalog, tool: str) -> str:
    """What puts an NVIDIA tool on a machine (rules/environment.toml ``installed_with``), for
    PRT402 in Python and PRT922 in scripts."""
    row = catalog.table("environment").get("tool", {}).get(tool, {})
    return row.get("installed_with", "the NVIDIA driver or toolkit")


def variable_row(name: str, catalog: Catalog) -> tuple[dict[str, Advice], Severity | None] | None:
    """The advice and severity for a CUDA-only variable: its own ``[env.*]`` row, else its
    family's (``NCCL_ALGO``, ``TORCH_NCCL_DUMP_ON_TIMEOUT``); None for any other name."""
    advice = env_advice(catalog).get(name)
    if advice is not None:
        return advice, env_severity(catalog).get(name)
    for names, prefix, advice, severity in variable_families(catalog):
        if name in names or (prefix and name.startswith(prefix) and len(name) > len(prefix)):
            return advice, severity
    return None


@functools.cache
def vendor_variables(catalog: Catalog) -> dict[str, str]:
    """Another target's own variable -> that target (``HIP_VISIBLE_DEVICES`` -> rocm): the
    counterparts of ``[env.*]`` and the ``[vendor_variables]`` of rules/environment.toml."""
    table = catalog.table("environment")
    found = {
        counterpart: target
        for row in table.get("env", {}).values()
        for target, counterpart in row.items()
        if isinstance(counterpart, str) and counterpart.isupper()
    }
    for target, names in table.get("vendor_variables", {}).items():
        found.update(dict.fromkeys(names, target))
    return found


def read_variable(value: ast.expr) -> str | None:
    """``os.environ.get("X")``, ``os.getenv("X", ...)``, ``os.environ["X"]``: the name read."""
    if isinstance(value, ast.Call) and value.args:
        func = ast.unparse(value.func)
        if func in ("os.environ.get", "os.getenv", "environ.get", "getenv"):
            key = value.args[0]
            return (
                key.value if isinstance(key, ast.Constant) and isinstance(key.value, str) else None
            )
    if isinstance(value, ast.Subscript) and ast.unparse(value.value) in ("os.environ", "environ"):
        key = value.slice
        return key.value if isinstance(key, ast.Constant) and isinstance(key.value, str) else None
    return None


@functools.cache
def tool_advice(catalog: Catalog) -> dict[str, dict[str, Advice]]:
    return {
        name: _advice_from_row(row, rocm_portable=False)
        for name, row in catalog.table("environment").get("tool", {}).items()
    }


def _advice_from_row(row: dict, rocm_portable: bool) -> dict[str, Advice]:
    advice = {}
    for target in TARGETS:
        value = row.get(target)
        if (target == "rocm" and rocm_portable) or value is None:
            advice[target] = PORTABLE
        elif value == "":
            advice[target] = Advice(Status.UNSUPPORTED)
        else:
            advice[target] = Advice(Status.RENAME, value)
    return advice


def _report_variable(
    node: ast.AST,
    ctx: Context,
    within: ast.AST,
    any_case: bool = False,
    mapping: ast.expr | None = None,
) -> None:
    """``node`` names a variable in ``within`` (a subscript, a call, a dict, a comparison), as a
    key of ``mapping`` where one is given: not of the project's own settings."""
    if not (isinstance(node, ast.Constant) and isinstance(node.value, str)):
        return
    name = node.value.upper() if any_case and node.value.startswith("nccl_") else node.value
    row = variable_row(name, ctx.catalog)
    if row is not None and mapping is not None and _settings_mapping(mapping, ctx):
        return
    if row is not None:
        _record_save_or_restore(node, name, within, ctx)
    if row is not None and _tested_above(within, node.value, ctx):
        return
    # a value read only to be printed or logged configures nothing
    if row is not None and not ctx.in_log_call(within) and not _only_logged(within, ctx):
        advice, severity = row
        message = f"`{name}` is honoured only by NVIDIA's stack"
        beside = _names_beside(within, ctx)
        advice = {
            target: PORTABLE if entry.replacement in beside else entry
            for target, entry in advice.items()
        }
        behind = ctx.behind_cuda_test(within, ctx.guards.get(id(within)))
        ctx.report(node, "PRT401", message, targets=advice, severity=severity, behind=behind)


def _tested_above(within: ast.AST, name: str, ctx: Context) -> bool:
    """``within`` is in the arm of a test that names the same variable, and that test is
    reported (``if "CUDA_VISIBLE_DEVICES" in os.environ: ids = os.environ["CUDA_VISIBLE_DEVICES"]``,
    ``if os.getenv("NCCL_ALGO") is None: os.environ["NCCL_ALGO"] = "Ring"``): the test is the
    site, and the one edit that gives it the target's variable gives it to its arm too."""
    child, parent = within, ctx.parents.get(id(within))
    while parent is not None:
        if isinstance(parent, ast.If | ast.IfExp):
            arm = parent.body if isinstance(parent, ast.If) else [parent.body]
            if any(child is statement for statement in arm):
                for node in ast.walk(parent.test):
                    if (
                        isinstance(node, ast.Constant)
                        and node.value == name
                        and ctx.is_reported(node, "PRT401")
                    ):
                        return True
        child, parent = parent, ctx.parents.get(id(parent))
    return False


def _only_logged(within: ast.AST, ctx: Context) -> bool:
    """``visible = os.environ.get("CUDA_VISIBLE_DEVICES")`` whose every use in its function is
    in a print or log call: the value read is only shown. (At module level another module may
    import the name.) Counted in the function's text too, as ``Context.stored_unread`` counts,
    since a sliced parse may leave a nested definition that uses the name unparsed."""
    name = ctx.assigned_name(within)
    scope = ctx.function_scope()
    if name is None or scope is None:
        return False
    named = [n for n in ast.walk(scope) if isinstance(n, ast.Name) and n.id == name]
    uses = [n for n in named if isinstance(n.ctx, ast.Load)]
    logged = {
        id(inner)
        for call in ast.walk(scope)
        if isinstance(call, ast.Call) and LOG_CALL.search(_called_name(call.func))
        for given in (*call.args, *(keyword.value for keyword in call.keywords))
        for inner in ast.walk(given)
    }
    if not uses or not all(id(use) in logged for use in uses):
        return False
    first, last = scope.lineno, scope.end_lineno or scope.lineno
    body = "\n".join(ctx.index.line(number) for number in range(first, last + 1))
    return len(re.findall(rf"(?<![\w.]){re.escape(name)}(?!\w)", body)) == len(named)


def _called_name(func: ast.expr) -> str:
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


def _record_save_or_restore(node: ast.AST, name: str, within: ast.AST, ctx: Context) -> None:
    """``old = os.environ.get("CUDA_LAUNCH_BLOCKING", "")``, a change, then
    ``os.environ["CUDA_LAUNCH_BLOCKING"] = old``: the read that keeps the value and the write that
    puts it back are no sites where the same module-level function or class changes the
    variable (that change is the site), as for a saved cuDNN switch (``api_checks``)."""
    statement = ctx.parents.get(id(within))
    top = ctx.top_level(within)
    if not isinstance(statement, ast.Assign) or len(statement.targets) != 1:
        return
    target = statement.targets[0]
    if statement.value is within and isinstance(target, ast.Name):
        ctx.variable_saves[id(node)] = (id(top), target.id, name)
    elif target is within and isinstance(within, ast.Subscript):
        switch = (id(top), f"environ:{name}")
        kept = statement.value
        saved = (
            isinstance(kept, ast.Name)
            and (id(top), kept.id, name) in set(ctx.variable_saves.values())
            and _holds_the_read(kept.id, top)
        )
        if saved and isinstance(kept, ast.Name):
            ctx.variable_restores.add((id(top), kept.id, name))
            ctx.switch_restores[id(node)] = switch
        else:
            ctx.switch_changes.add(switch)


def _holds_the_read(name: str, top: ast.AST) -> bool:
    """Every store of ``name`` in ``top`` is a plain assignment of a constant (``old = ""``
    before the read) or of a read: the name still holds the value read when it is written back,
    not one made from it (``conf += ",backend:cudaMallocAsync"``, ``conf = ",".join(parts)``)."""
    for node in ast.walk(top):
        for child in ast.iter_child_nodes(node):
            if not (isinstance(child, ast.Name) and child.id == name):
                continue
            if not isinstance(child.ctx, ast.Store):
                continue
            if not (isinstance(node, ast.Assign) and node.targets == [child]):
                return False  # ``old += ...``, ``for old in ...``, ``old, new = ...``
            value = node.value
            if not isinstance(value, ast.Constant) and not _reads_a_variable(value):
                return False
    return True


def _reads_a_variable(value: ast.expr) -> bool:
    """``os.environ.get("X", default)``, ``os.getenv("X")``, ``os.environ["X"]``."""
    if isinstance(value, ast.Subscript):
        return isinstance(value.slice, ast.Constant)
    return (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Attribute)
        and value.func.attr in ("get", "getenv")
        and bool(value.args)
        and isinstance(value.args[0], ast.Constant)
    )


def _names_beside(node: ast.AST, ctx: Context) -> frozenset[str]:
    """The strings of the statements beside the one that holds ``node`` (in its block), and of
    that statement itself: ``os.environ["CUDA_VISIBLE_DEVICES"] = ids`` followed by
    ``os.environ["ASCEND_RT_VISIBLE_DEVICES"] = ids`` sets npu's variable too, so npu is
    covered (the variable names are those of rules/environment.toml)."""
    statement, parent = node, ctx.parents.get(id(node))
    while parent is not None and not isinstance(statement, ast.stmt):
        statement, parent = parent, ctx.parents.get(id(parent))
    key = ("strings", id(statement))
    if key not in ctx.scope_facts:  # once per block: each of its statements is told the answer
        block: list[ast.AST] = [statement]
        for value in vars(parent).values() if parent is not None else ():
            if isinstance(value, list) and any(s is statement for s in value):
                block = value
        strings = _strings_in(block)
        ctx.scope_facts.update((("strings", id(s)), strings) for s in block)
    return ctx.scope_facts[key]


def _strings_in(block: list[ast.AST]) -> frozenset[str]:
    return frozenset(
        inner.value
        for part in block
        for inner in ast.walk(part)
        if isinstance(inner, ast.Constant) and isinstance(inner.value, str)
    )


def _settings_mapping(mapping: ast.expr, ctx: Context) -> bool:
    """The mapping is the project's own settings, not an environment: the module also keys it
    by a name no variable has (``self.device_setting["CUDA_VISIBLE_DEVICES"]`` beside
    ``self.device_setting["n_devices"]``), and the environment is set where the value is copied
    into one (``ps_environ["CUDA_VISIBLE_DEVICES"] = ...``). Never ``os.environ``, nor a mapping
    whose text says environment (``env``, ``ps_environ``, ``runtime_env["env_vars"]``)."""
    if ctx.qualified_name(mapping) == ENVIRON:
        return False
    receiver = ast.unparse(mapping)
    if ENVIRONMENT_WORD.search(receiver):
        return False
    key = ("settings mapping", receiver)
    if key not in ctx.scope_facts:
        ctx.scope_facts[key] = _keyed_by_setting(receiver, ctx.text)
    return ctx.scope_facts[key]


def _keyed_by_setting(receiver: str, text: str) -> bool:
    """The text reads or writes a key of ``receiver`` that is no variable's name: one with a
    lower-case letter (``["n_devices"]``, ``.get("world_size")``), other than the ``nccl_*``
    keys of helpers that patch the environment (``patched["nccl_ib_disable"] = "1"``)."""
    key_of = r"\s*(?:\[|\.(?:get|pop|setdefault)\()\s*['\"](\w+)['\"]"  # ["k"], .get("k"
    access = rf"(?<![\w.]){re.escape(receiver)}{key_of}"
    return any(
        not key.isupper() and not key.lower().startswith("nccl_")
        for key in re.findall(access, text)
    )


def _settings_dict(node: ast.Dict, ctx: Context) -> bool:
    """``self.device_setting = {"CUDA_VISIBLE_DEVICES": ids, "n_devices": n}``: a dict given to
    a name or attribute that does not say environment, with a key no environment variable
    has (lower case), holds the project's settings."""
    statement = ctx.parents.get(id(node))
    if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
        target = statement.targets[0]
    elif isinstance(statement, ast.AnnAssign):
        target = statement.target
    else:
        return False
    if statement.value is not node or not isinstance(target, ast.Name | ast.Attribute):
        return False
    if ENVIRONMENT_WORD.search(ast.unparse(target)):
        return False
    return any(
        isinstance(key, ast.Constant) and isinstance(key.value, str) and not key.value.isupper()
        for key in node.keys
    )


def check_environ_subscript(node: ast.Subscript, ctx: Context) -> None:
    """``os.environ["NCCL_DEBUG"]``, and any other mapping of variables (``env = os.environ.copy()``
    then ``env["NCCL_P2P_DISABLE"] = "1"``): the names are distinctive enough. Lower-case
    ``nccl_*`` keys count too (``patch_environment(nccl_p2p_disable="1")`` style helpers). Not a
    key of the project's own settings (``_settings_mapping``)."""
    environ = ctx.qualified_name(node.value) == ENVIRON
    _report_variable(node.slice, ctx, node, any_case=not environ, mapping=node.value)


def check_environ_dict(node: ast.Dict, ctx: Context) -> None:
    """``{"CUDA_VISIBLE_DEVICES": "0"}``: a mapping of variables, wherever it goes. A key whose
    value is a function (``{"NCCL_DEBUG": lambda: os.environ.get("NCCL_DEBUG")}``, the registry of
    variables vLLM and the projects built on it keep) names a getter, not a value set: the read
    in the getter is the site. A mapping compared with something is data, not an environment, and
    so is a dict of the project's settings (``_settings_dict``)."""
    if isinstance(ctx.parents.get(id(node)), ast.Compare):
        return  # ``assert cleaned["envs"] == {"CUDA_VISIBLE_DEVICES": "0"}``: data compared
    if _settings_dict(node, ctx):
        return
    for key, value in zip(node.keys, node.values, strict=True):
        if key is not None and not isinstance(value, ast.Lambda):
            _report_variable(key, ctx, node)


def check_environ_call(node: ast.Call, ctx: Context) -> None:
    name = ctx.qualified_name(node.func)
    method = node.func.attr if isinstance(node.func, ast.Attribute) else None
    if not node.args:
        return
    if name in ENV_NAME_CALLS:
        _report_variable(node.args[0], ctx, node)
    elif method in MAPPING_METHODS:  # also env.setdefault(...) on a copied mapping
        _report_variable(node.args[0], ctx, node, mapping=node.func.value)


def check_environ_membership(node: ast.Compare, ctx: Context) -> None:
    membership = len(node.ops) == 1 and isinstance(node.ops[0], ast.In | ast.NotIn)
    if membership and ctx.qualified_name(node.comparators[0]) == ENVIRON:
        _report_variable(node.left, ctx, node)


@functools.cache
def _tool_pattern(names: tuple[str, ...]) -> re.Pattern[str]:
    alternatives = "|".join(re.escape(name) for name in names)
    return re.compile(rf"(?<![\w.-])({alternatives})(?![\w-])")


def _report_tool(string: ast.AST, ctx: Context, severity: Severity | None = None) -> None:
    if not (isinstance(string, ast.Constant) and isinstance(string.value, str)):
        return
    tools = tool_advice(ctx.catalog)
    match = _tool_pattern(tuple(sorted(tools))).search(string.value)
    if match:
        tool = match.group(1)
        message = f"`{tool}` exists only where {tool_source(ctx.catalog, tool)} is installed"
        ctx.report(string, "PRT402", message, targets=tools[tool], severity=severity)


def check_tool_path(node: ast.Call, ctx: Context) -> None:
    """``os.path.join(cuda_home, "bin", "nvcc")``: the path of a tool, about to be run."""
    if ctx.qualified_name(node.func) in PATH_CALLS:
        for argument in node.args:
            if isinstance(argument, ast.Constant) and argument.value in tool_advice(ctx.catalog):
                _report_tool(argument, ctx)


def check_tool_return(node: ast.Return, ctx: Context) -> None:
    """``return ["nvidia-smi", "-L"]`` or ``return "nvidia-smi"``: a command handed to a runner."""
    value = node.value
    if isinstance(value, ast.Name):
        values = ctx.resolver.values_of(value.id)
    else:
        values = [value] if value is not None else []
    for returned in values:
        first = returned
        if isinstance(returned, ast.List | ast.Tuple) and returned.elts:
            first = returned.elts[0]
        if isinstance(first, ast.Constant) and first.value in tool_advice(ctx.catalog):
            _report_tool(first, ctx)


def check_tool_call(node: ast.Call, ctx: Context) -> None:
    name = ctx.qualified_name(node.func)
    if name not in COMMAND_CALLS or not node.args:
        return
    # ``shutil.which("nvcc")`` only asks whether the tool is there: info
    severity = Severity.INFO if name == "shutil.which" else None
    command = node.args[0]
    strings = command.elts[:1] if isinstance(command, ast.List | ast.Tuple) else [command]
    if isinstance(command, ast.JoinedStr):
        strings = list(command.values)
    split = _split_command(command, ctx)
    if split is not None:
        strings = split
    for string in strings:
        _report_tool(string, ctx, severity)


def _split_command(command: ast.expr, ctx: Context) -> list[ast.expr] | None:
    """The command line a list of words is split from: ``"nvidia-smi -L".split()``,
    ``shlex.split(cmd)``, ``CMD.split()`` after ``CMD = "nvidia-smi --query-gpu=..."`` (the
    string is the site, where the name holds it); None where the command is no such split."""
    if not (isinstance(command, ast.Call) and not command.keywords):
        return None
    func = command.func
    if isinstance(func, ast.Attribute) and func.attr == "split" and not command.args:
        line = func.value
    elif ctx.qualified_name(func) == "shlex.split" and len(command.args) == 1:
        line = command.args[0]
    else:
        return None
    if isinstance(line, ast.Name):
        return [v for v in ctx.resolver.values_of(line.id) if isinstance(v, ast.Constant)]
    return [line]

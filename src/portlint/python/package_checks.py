"""PRT5xx: packages that need an NVIDIA GPU, and CUDA C++ extensions."""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Callable, Iterable
from pathlib import PurePath

from portlint.catalog import Catalog, parse_advice
from portlint.model import PORTABLE, TARGETS, Advice, Severity, Status
from portlint.python.context import Context
from portlint.python.extension_tests import extension_folder, setup_extensions
from portlint.python.guards import NO_GUARD
from portlint.python.tree import exits, parent_map, statement_blocks, walk

CUDA_EXTENSION = "torch.utils.cpp_extension.CUDAExtension"
EXTENSION_LOADERS = frozenset(
    {"torch.utils.cpp_extension.load", "torch.utils.cpp_extension.load_inline"}
)
CUDA_SUFFIXES = (".cu", ".cuh")


@functools.cache
def package_advice(catalog: Catalog) -> dict[str, dict[str, Advice]]:
    """Module name -> per-target advice, from ``[package.*]`` in rules/packages.toml."""
    table = {}
    for module, row in catalog.table("packages").get("package", {}).items():
        advice = {}
        for target in TARGETS:
            value = row.get(target, "")
            if value == "ok":
                advice[target] = PORTABLE
            elif value:
                advice[target] = Advice(Status.MANUAL, value)
            else:
                advice[target] = Advice(Status.UNSUPPORTED)
        table[module] = advice
    return table


def _match_package(module: str, table: dict[str, dict[str, Advice]]) -> str | None:
    """The longest table entry that is ``module`` or one of its parents."""
    parts = module.split(".")
    for length in range(len(parts), 0, -1):
        candidate = ".".join(parts[:length])
        if candidate in table:
            return candidate
    return None


def check_import(node: ast.Import | ast.ImportFrom, ctx: Context) -> None:
    if _for_type_checking(node, ctx):
        return  # ``if TYPE_CHECKING:`` imports never run
    table = package_advice(ctx.catalog)
    seen: set[str] = set()  # one finding per package per statement, not one per imported name
    for alias in node.names:
        if _imports_extension(node, alias.name, ctx):
            # ``import scaled_masked_softmax_cuda``: the project's own CUDA extension
            _scope_after_extension(node, ctx)
        module = _module_of(node, alias)
        if module is None:
            continue
        package = _match_package(module, table)
        if package is None or package in seen:
            continue
        seen.add(package)
        if _only_where_built(node, ctx, package) or _own_package(package, ctx):
            continue
        fallback = id(node) in ctx.import_fallbacks
        if fallback and _probes_package(ctx, package):
            continue
        checked = not fallback and _under_availability_check(node, ctx, package)
        if (fallback or checked) and package_row(package, ctx.catalog).get("one_generation"):
            # ``try: import flash_attn_interface except ImportError: FA3 = False``: a package
            # for one NVIDIA GPU generation, whose guarded import NVIDIA's other GPUs answer
            # False to as well: a probe, with the fallback every other target takes
            _scope_after_import(node, ctx, package, True)
            continue
        integration = not (fallback or checked) and _integration_module(node, ctx, package)
        if not (fallback or checked) and _nvidia_only_integration(node, ctx, package):
            # ``import tensorrt as trt`` at the top of ``trt/engine.py``: the integration of a
            # package no target has a build of runs on NVIDIA alone, by design
            _scope_after_import(node, ctx, package, False)
            continue
        if _imported_before(node, ctx, package):
            # no second site, but what follows still runs only where the package does
            _scope_after_import(node, ctx, package, fallback or checked)
            continue
        unbound = fallback and _leaves_names_unbound(node, ctx, package)
        severity = Severity.WARNING if fallback or checked or integration else None
        message = f"`{package}` needs an NVIDIA GPU"
        if unbound:
            severity = None
            message += (
                " (its ImportError handler only passes or prints: it binds nothing in the"
                " package's place, so where the package is missing its names are unbound)"
            )
        elif fallback and _own_state_only(node, ctx):
            severity = Severity.INFO
            message += (
                " (imported only to set the package's own state, with a fallback that does"
                " nothing: where it is missing there is nothing to set)"
            )
        elif fallback:
            message += " (imported with an ImportError fallback)"
        elif checked:
            message += " (imported behind an availability check)"
        elif integration:
            message += (
                f" (imported at the top of `{integration}`, named for it: loaded only where it is)"
            )
        ctx.parents[id(alias)] = node  # the walk does not enter aliases
        ctx.report(alias, "PRT501", message, targets=table[package], severity=severity)
        _scope_after_import(node, ctx, package, fallback or checked)


def _scope_after_import(
    node: ast.Import | ast.ImportFrom, ctx: Context, package: str, optional: bool
) -> None:
    """What follows the import runs only where the package does (``optional``: the import
    has a fallback or an availability check, so the module's later code may run without it;
    a module named for the package imports it unguarded, and loads only where it is)."""
    _scope_after_local_import(node, ctx, package)
    if not optional:
        _scope_after_module_import(node, ctx, package)


def _imported_before(node: ast.Import | ast.ImportFrom, ctx: Context, package: str) -> bool:
    """``import tensorrt_llm`` then ``from tensorrt_llm.runtime import ModelRunner``: an earlier
    statement of the block the import sits in, or of a block around it, imports the package
    already (``try: import xformers; import xformers.ops``, or a module's top-level import before
    a function that imports it again). So does a ``try`` whose handlers all import it again under
    another name (``try: from flash_attn import v1`` ``except ImportError: from flash_attn import
    v2``), for what follows it and for the handlers themselves. The later import runs only where
    the earlier one succeeded, or fails where it failed: the earlier one is the one site."""
    table = package_advice(ctx.catalog)
    current: ast.AST = node
    while (parent := ctx.parents.get(id(current))) is not None:
        block = _enclosing_block(current, parent)
        if block is not None:
            earlier = block[: block.index(current)]
            if any(_imports_package(statement, package, table) for statement in earlier):
                return True
        if isinstance(parent, ast.ExceptHandler):
            attempt = ctx.parents.get(id(parent))
            if isinstance(attempt, ast.Try) and any(
                _imports_package(statement, package, table) for statement in attempt.body
            ):
                return True
        current = parent
    return False


def _imports_package(statement: ast.AST, package: str, table: dict[str, dict[str, Advice]]) -> bool:
    """The statement imports the package: an import of it, or a ``try`` whose body does and
    whose every handler does again (a fallback to another name in the same package)."""
    if isinstance(statement, ast.Try) and statement.handlers:
        return any(_imports_package(s, package, table) for s in statement.body) and all(
            any(_imports_package(s, package, table) for s in handler.body)
            for handler in statement.handlers
        )
    return package in _imported_modules(statement, table)


def _imported_modules(statement: ast.AST, table: dict[str, dict[str, Advice]]) -> list[str]:
    """The table packages an import statement imports (empty for any other statement)."""
    if not isinstance(statement, ast.Import | ast.ImportFrom):
        return []
    modules = (_module_of(statement, alias) for alias in statement.names)
    packages = (_match_package(module, table) for module in modules if module is not None)
    return [package for package in packages if package is not None]


def _module_of(statement: ast.Import | ast.ImportFrom, alias: ast.alias) -> str | None:
    """The absolute module one imported name may be: ``import a.b`` -> ``a.b``; ``from a import
    b`` -> ``a.b`` (a name may be a submodule); None for a relative import."""
    if isinstance(statement, ast.Import):
        return alias.name
    if statement.level == 0 and statement.module:
        return f"{statement.module}.{alias.name}"
    return None


def _imports_extension(node: ast.Import | ast.ImportFrom, name: str, ctx: Context) -> bool:
    """``import scaled_masked_softmax_cuda``, or ``from fairscale import fused_adam_cuda`` in a
    ``try`` that catches the ImportError: a ``from`` import may name a function, but one that
    the project only hopes is there is its compiled extension. ``import amp_C`` or ``from apex
    import _C`` where the project's ``setup.py`` builds ``amp_C`` or ``apex._C`` with
    ``CUDAExtension``: the extension, whatever its name."""
    built = setup_extensions(ctx.path)
    if built:
        full = f"{node.module}.{name}" if isinstance(node, ast.ImportFrom) else name
        if full in built and (isinstance(node, ast.Import) or node.level == 0):
            return True
    if not _names_extension(name, ctx):
        return False
    return isinstance(node, ast.Import) or id(node) in ctx.import_fallbacks


def _names_extension(name: str, ctx: Context) -> bool:
    """``scaled_masked_softmax_cuda``: a module named as a compiled CUDA extension
    (rules/packages.toml ``[extension_modules]``)."""
    table = ctx.catalog.table("packages").get("extension_modules", {})
    return name.rsplit(".", 1)[-1].endswith(tuple(table.get("suffixes", ())))


def _scope_after_extension(node: ast.AST, ctx: Context) -> None:
    """What follows the import in its block (or, at a module's top level, in the module) runs
    only where the extension was built: CUDA and, hipified, ROCm."""
    absent = frozenset(TARGETS) - {"rocm"}
    parent = ctx.parents.get(id(node))
    block = _enclosing_block(node, parent)
    if block is not None:
        last = _module_end(ctx) if isinstance(parent, ast.Module) else _last_line(block[-1])
        ctx.package_scopes.append((_last_line(node) + 1, last, absent))


def scope_extension_tests(ctx: Context) -> None:
    """A test module of the project's own CUDA extension (``extension_tests``) runs only where
    the extension was built: CUDA and, hipified, ROCm."""
    if extension_folder(ctx.path) is not None:
        absent = frozenset(TARGETS) - {"rocm"}
        ctx.package_scopes.append((1, _module_end(ctx), absent))


def scope_package_objects(function: ast.FunctionDef | ast.AsyncFunctionDef, ctx: Context) -> None:
    """``context.execute_async_v3(stream)``: a call of a method only a package's objects have
    (``methods`` in rules/packages.toml) says that the function, or the ``if`` arm inside it
    that makes the call, runs the package's objects, and so only where the package is
    installed. For a package no target has a build of (TensorRT), nothing in that arm or
    function is another target's site: the import that made the objects is."""
    methods = _object_methods(ctx.catalog)
    if not methods:
        return
    lines = ctx.index.lines[function.lineno - 1 : function.end_lineno]
    if not any(method in line for line in lines for method in methods):
        return  # read from the text first: most functions call none of them
    parents = parent_map(function)
    for node in walk(function):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        absent = methods.get(node.func.attr)
        if absent is None:
            continue
        scope = (*_arm_of(node, parents), absent)
        if scope not in ctx.package_scopes:  # an enclosing function finds it too
            ctx.package_scopes.append(scope)


def _arm_of(node: ast.AST, parents: dict[int, ast.AST]) -> tuple[int, int]:
    """(first, last) lines of the innermost ``if`` arm or function that holds ``node``."""
    child, current = node, parents.get(id(node))
    while current is not None:
        if isinstance(current, ast.FunctionDef | ast.AsyncFunctionDef):
            return current.lineno, _last_line(current)
        if isinstance(current, ast.If) and child is not current.test:
            arm = current.body if child in current.body else current.orelse
            return arm[0].lineno, _last_line(arm[-1])
        child, current = current, parents.get(id(current))
    return _last_line(node), _last_line(node)


@functools.cache
def _object_methods(catalog: Catalog) -> dict[str, frozenset[str]]:
    """Method name -> the targets that have no build of the package whose objects have it."""
    found: dict[str, frozenset[str]] = {}
    for row in catalog.table("packages").get("package", {}).values():
        builds = row.get("builds")
        if builds is None:
            continue  # its builds are not known: every target may run its objects
        for method in row.get("methods", ()):
            found[method] = frozenset(TARGETS) - frozenset(builds)
    return found


#: What a function that only answers whether a package is there is called after.
PROBE_ENDINGS = ("available", "installed")


def _probes_package(ctx: Context, package: str) -> bool:
    """``def is_flash_v2_installed(): try: import flash_attn except: return False`` (or
    ``def cudnn_version(): ...`` that returns the version, or None where the import failed): the
    function is the project's availability check of the package, which is no site; its callers'
    tests are (PRT501 behind an availability check)."""
    scope = ctx.function_scope()
    if scope is None:
        return False
    words = WORD.findall(scope.name.lower())
    if len(words) >= 2 and words[-1] == "version":
        # ``def nvfuser_version(): try: import nvfuser except ImportError: return None``: the
        # package's version where it is there, None where not: the same check
        named = words[:-1]
    elif len(words) >= 2 and words[0] in ("is", "has") and words[-1] in PROBE_ENDINGS:
        named = words[1:-1]
    else:
        return False
    names = package_names(package, ctx.catalog)
    top = package.split(".")[0]
    return any(word in names or (len(word) >= 4 and top.startswith(word)) for word in named)


def _own_package(package: str, ctx: Context) -> bool:
    """``import bitsandbytes.functional`` in ``bitsandbytes/optim/adam.py``: the file is part of
    the package itself (its top folder, or the one below ``src/``, is named for it), which
    imports its own modules; what it needs is the package's own port, not an install. So is
    ``import mii`` in ``tests/conftest.py`` of the project that holds ``mii/`` (the run's fact
    ``own_packages``): the project's tests and scripts import the project."""
    top = package.split(".")[0]
    if top in ctx.own_packages:
        return True
    parts = PurePath(ctx.path.replace("\\", "/")).parts[:-1]
    if parts[:1] == ("src",):
        parts = parts[1:]
    return bool(parts) and parts[0] == top


def _only_where_built(node: ast.AST, ctx: Context, package: str) -> bool:
    """``if device_type == "hip": import bitsandbytes``: the arm is reached only by targets the
    package has builds of (``builds`` in rules/packages.toml): it is the import of that build,
    already that target's port."""
    reach = ctx.guards.get(id(node), NO_GUARD).only
    row = package_row(package, ctx.catalog)
    return reach is not None and bool(reach) and reach <= frozenset(row.get("builds", ()))


def _scope_after_module_import(node: ast.AST, ctx: Context, package: str) -> None:
    """``from flash_attn import flash_attn_func`` at the top of a module: the module loads only
    where the package does, so what follows lists only the targets of its own builds
    (``builds`` in rules/packages.toml); a package without the key keeps every target."""
    if not isinstance(ctx.parents.get(id(node)), ast.Module):
        return
    row = package_row(package, ctx.catalog)
    builds = row.get("builds")
    if builds is None:
        return
    absent = frozenset(TARGETS) - frozenset(builds)
    ctx.package_scopes.append((_last_line(node) + 1, _module_end(ctx), absent))


def _own_state_only(node: ast.AST, ctx: Context) -> bool:
    """``try: from te.module.base import _dummy_wgrads; _dummy_wgrads.clear() except
    ImportError: pass``, or ``add_safe_globals([te.FusedAdam])``: a block that imports the
    package only to call into it or into torch with nothing of the caller's (no local name
    flows in), whose handler does nothing. Where the package is missing, its state does not
    exist: nothing is skipped."""
    block = ctx.parents.get(id(node))
    if not isinstance(block, ast.Try) or node not in block.body:
        return False
    if not all(all(_does_nothing(s) for s in handler.body) for handler in block.handlers):
        return False
    imported = {
        (alias.asname or alias.name).split(".")[0]
        for statement in block.body
        if isinstance(statement, ast.Import | ast.ImportFrom)
        for alias in statement.names
    }
    calls = [s for s in block.body if not isinstance(s, ast.Import | ast.ImportFrom)]
    if not calls or block.orelse or block.finalbody:
        return False
    for statement in calls:
        if not (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call)):
            return False
        for name in ast.walk(statement):
            local = isinstance(name, ast.Name) and name.id not in imported
            if local and ctx.qualified_name(name) is None:
                return False  # a local or parameter of the caller's flows in
    return True


#: Calls that only tell: a handler that makes nothing but these does nothing for the code after it.
MESSAGE_CALLS = frozenset(
    {"print", "warn", "warning", "error", "info", "debug", "exception", "critical", "log"}
)


def _leaves_names_unbound(node: ast.Import | ast.ImportFrom, ctx: Context, package: str) -> bool:
    """``try: from flash_attn.bert_padding import pad_input except ImportError: pass`` (or a
    message only): the handler binds nothing in the names' place, and no flag records the
    failure, so where the package is missing what the file does with the names fails
    (NameError). That is no fallback. Not where the file names the package in a string
    (``find_spec("flash_attn")``, ``"apex" in sys.modules``: an availability check of its own).
    (Whether the names are used is not asked: their uses may be anywhere in the file, and a large
    file is analysed in parts that do not hold them all; over the benchmark every such import
    but one had its names used.)"""
    block = ctx.parents.get(id(node))
    if not isinstance(block, ast.Try) or node not in block.body or block.orelse or block.finalbody:
        return False
    if not all(isinstance(s, ast.Import | ast.ImportFrom) for s in block.body):
        return False
    if not all(_only_tells(s) for handler in block.handlers for s in handler.body):
        return False
    return not re.search(f"[\"']{re.escape(package)}[\"']", ctx.text)


def _only_tells(statement: ast.stmt) -> bool:
    """``pass``, a string, or a call of ``MESSAGE_CALLS`` (``logger.warning(...)``)."""
    if _does_nothing(statement):
        return True
    if not (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call)):
        return False
    func = statement.value.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    return name in MESSAGE_CALLS


def _does_nothing(statement: ast.stmt) -> bool:
    return isinstance(statement, ast.Pass) or (
        isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant)
    )


def _scope_after_local_import(node: ast.AST, ctx: Context, package: str) -> None:
    """``if dtype == torch.uint8: import bitsandbytes as bnb; ...; weight.cuda()``: what follows
    an import of a CUDA-only package in its block runs only where the package does, so the
    targets without a build of it (no counterpart in its advice, or none in its ``builds``) are
    none of its concern; so does what follows an ``if`` that imports it and raises in its
    ``else``, or a ``try`` whose handlers import it again or raise (``_insisted``). (A
    module-level import is left alone: the import itself is the site of the whole file, and
    once it is made optional the rest of the module runs everywhere.)"""
    advice = package_advice(ctx.catalog)[package]
    absent = frozenset(t for t, a in advice.items() if a.status is Status.UNSUPPORTED)
    builds = package_row(package, ctx.catalog).get("builds")
    if builds is not None:
        absent |= frozenset(TARGETS) - frozenset(builds)
    parent = ctx.parents.get(id(node))
    if isinstance(parent, ast.If) and node in parent.body and _ends_in_raise(parent.orelse):
        # ``if is_bnb_available(): import bitsandbytes`` ``else: raise ...``: what follows the
        # ``if`` in its block runs only where the import did
        node, parent = parent, ctx.parents.get(id(parent))
    elif isinstance(node, ast.Import | ast.ImportFrom) and _insisted(node, ctx):
        # ``try: import tensorrt except ImportError: install(...); import tensorrt``: every
        # handler imports the package again or raises, so past the ``try`` it is there
        node, parent = parent, ctx.parents.get(id(parent))
    if not absent or parent is None or isinstance(parent, ast.Module):
        return
    block = _enclosing_block(node, parent)
    if block is not None:
        ctx.package_scopes.append((node.lineno, _last_line(block[-1]), absent))


def _insisted(node: ast.Import | ast.ImportFrom, ctx: Context) -> bool:
    """The import sits in a ``try`` every handler of which ends by importing the same package
    again (after installing it) or by raising: past the ``try`` the package is there."""
    block = ctx.parents.get(id(node))
    if not (isinstance(block, ast.Try) and node in block.body and block.handlers):
        return False
    package = _top_module(node)

    def insists(handler: ast.ExceptHandler) -> bool:
        last = handler.body[-1]
        if isinstance(last, ast.Raise):
            return True
        return isinstance(last, ast.Import | ast.ImportFrom) and _top_module(last) == package

    return all(insists(handler) for handler in block.handlers)


def _top_module(node: ast.Import | ast.ImportFrom) -> str | None:
    if isinstance(node, ast.ImportFrom):
        return (node.module or "").split(".")[0] if node.level == 0 else None
    return node.names[0].name.split(".")[0]


def _enclosing_block(node: ast.AST, parent: ast.AST | None) -> list[ast.stmt] | None:
    """The statement list of ``parent`` (its body, ``else`` or ``finally``) that holds ``node``.
    The walk gives the statements of an ``elif`` arm the chain's first ``if`` as their parent:
    the arms of the ``elif`` are looked in too."""
    if parent is None:
        return None
    block = next((b for b in statement_blocks(parent) if node in b), None)
    if block is None and isinstance(parent, ast.If) and len(parent.orelse) == 1:
        elif_arm = parent.orelse[0]
        if isinstance(elif_arm, ast.If):
            return _enclosing_block(node, elif_arm)
    return block


def _last_line(node: ast.AST) -> int:
    return getattr(node, "end_lineno", None) or getattr(node, "lineno", 0)


def _module_end(ctx: Context) -> int:
    return ctx.text.count("\n") + 1


def _for_type_checking(node: ast.AST, ctx: Context) -> bool:
    current = ctx.parents.get(id(node))
    while current is not None:
        if isinstance(current, ast.If) and "TYPE_CHECKING" in ast.unparse(current.test):
            return True
        current = ctx.parents.get(id(current))
    return False


def _under_availability_check(node: ast.AST, ctx: Context, package: str) -> bool:
    names = package_names(package, ctx.catalog)
    return _guarded_by(node, ctx, names)


def _guarded_by(node: ast.AST, ctx: Context, names: set[str]) -> bool:
    """``if is_bnb_available(): import bitsandbytes``, or after ``if not is_bnb_available():
    return ...``, or under a test that names the package (``BitsandbytesPrecision``): only
    imported where it is installed."""
    child, current = node, ctx.parents.get(id(node))
    while current is not None:
        if isinstance(current, ast.If) and _checks_availability(current.test, names):
            # ``if is_bnb_available(): import bitsandbytes`` ``else: raise ValueError(...)``:
            # the code refuses to run without the package (no fallback: an error)
            return not (child in current.body and _ends_in_raise(current.orelse))
        decorators = getattr(current, "decorator_list", ())
        if any(_checks_availability(d, names) for d in decorators):
            return True  # @require_bnb
        for block in (getattr(current, "body", None), getattr(current, "orelse", None)):
            if isinstance(block, list) and child in block:
                # ``if not is_bnb_available(): return False`` then the import: the caller gets
                # a fallback (an early ``raise`` is no fallback)
                earlier = block[: block.index(child)]
                if any(
                    isinstance(s, ast.If)
                    and isinstance(s.body[-1], ast.Return)
                    and _checks_availability(s.test, names)
                    for s in earlier
                ):
                    return True
        child, current = current, ctx.parents.get(id(current))
    return False


def _integration_module(node: ast.AST, ctx: Context, package: str) -> str | None:
    """``import bitsandbytes as bnb`` at the top of ``lora/bnb.py``: a module named for the
    package it imports at module level (``bnb.py``, ``lora_bnb.py``, ``bitsandbytes_utils.py``,
    or a package folder ``bnb/``) cannot be imported where the package is missing, so the
    project imports it only behind a check of its own: it is the package's integration, and its
    import is guarded like one under ``if is_bnb_available():``. Returns the file name, or None.
    A lazy import inside a function of such a module is left alone: the function may be called
    where the package is missing."""
    current = ctx.parents.get(id(node))
    while current is not None:
        if isinstance(current, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            return None
        current = ctx.parents.get(id(current))
    path = PurePath(ctx.path)
    folder = path.stem == "__init__"
    stem = path.parent.name if folder else path.stem
    names = package_names(package, ctx.catalog) - VENDOR_NAMES
    if not stem or not _names_package(stem, names):
        return None
    return f"{stem}/" if folder else path.name


def _nvidia_only_integration(node: ast.AST, ctx: Context, package: str) -> bool:
    """The top-level import of a package no target has a build of (``builds = []`` in
    rules/packages.toml: TensorRT, TensorRT-LLM) in a module named for it, or in a folder named
    for it (``trt/engine.py``, ``tensorrt_llm_demo.py``): the module is that NVIDIA-only feature's
    own code, which the other targets do without rather than port."""
    row = package_row(package, ctx.catalog)
    if row.get("builds") != [] or not isinstance(ctx.parents.get(id(node)), ast.Module):
        return False
    names = _scoping_names(package, ctx.catalog)
    path = PurePath(ctx.path)
    return any(_names_package(part, names) for part in (path.stem, *path.parent.parts))


def _names_package(text: str, names: set[str]) -> bool:
    """An identifier names the package: one of its words is a name of it (``is_bnb_available``,
    ``lora_bnb``), or it holds a long name whole (``BitsandbytesPrecision``)."""
    lowered = text.lower()
    joined = lowered.replace("_", "")
    if set(WORD.findall(lowered)) & names or joined in names:
        return True
    # ``has_flash_attn`` holds ``flash_attn`` whole, written with or without its underscores
    return any(name.replace("_", "") in joined for name in names if len(name) > 4)


def _ends_in_raise(block: list[ast.stmt]) -> bool:
    return bool(block) and isinstance(block[-1], ast.Raise)


def _checks_availability(test: ast.expr, names: set[str]) -> bool:
    """The test asks whether ``package`` is there: it names it or an alias of it
    (``is_bnb_available()``, ``_BITSANDBYTES_AVAILABLE``, ``BitsandbytesPrecision``), or calls
    ``find_spec``. A vendor check (``is_hpu_available()``) does not count, nor does a setting
    (``config.use_flash_attn``, a ``te_checkpoint_wrapper`` parameter): the user's choice,
    which says nothing of whether the package is installed."""
    for node in ast.walk(test):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if node.value.split(".")[0] in names:
                return True
        elif isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
            # ``env_info["has_flash_attn"]``: a flag kept under a key
            key = node.slice.value
            if isinstance(key, str) and not _is_setting(key, names) and _names_package(key, names):
                return True
        elif isinstance(node, ast.Name | ast.Attribute):
            name = node.id if isinstance(node, ast.Name) else node.attr
            if not _is_setting(name, names) and _names_package(name, names):
                return True
    return False


#: Words of a flag that says whether something is installed (``_BITSANDBYTES_AVAILABLE``,
#: ``has_apex``, ``te_installed``, ``nvfuser_version()``, None where it is not), or a decorator
#: that skips without it (``@require_bnb``).
AVAILABILITY_WORDS = frozenset(
    {
        "available",
        "version",
        "availability",
        "installed",
        "imported",
        "has",
        "is",
        "exists",
        "found",
        "require",
    }
)


def _is_setting(name: str, names: set[str]) -> bool:
    """``use_flash_attn``, ``te_checkpoint_wrapper``, ``config.te_shard_fp8_weight``: a
    lower-case name that is not the module itself (``if apex:``) and says nothing of being
    installed is a setting the user chooses. A class name (``BitsandbytesPrecision``) or a
    flag (``_BNB_AVAILABLE``, ``is_bnb_available``) is not."""
    if name != name.lower() or name.lower() in names:
        return False
    return name.startswith("use_") or not set(WORD.findall(name)) & AVAILABILITY_WORDS


#: ``is_bnb_available`` -> is, bnb, available; ``BitsandbytesPrecision`` (lower-cased) -> one word
WORD = re.compile(r"[a-z0-9]+")


def package_row(package: str, catalog: Catalog) -> dict:
    """The package's own row of rules/packages.toml (``builds``, ``names``, ``aliases``, ...)."""
    return catalog.table("packages").get("package", {}).get(package, {})


def package_names(package: str, catalog: Catalog) -> set[str]:
    """Lower-case names a test may use for a package: its module, without underscores, and the
    aliases and class names rules/packages.toml gives it (bitsandbytes: bnb, Int8Params)."""
    top = package.split(".")[0]
    row = package_row(package, catalog)
    names = [n.lower() for n in row.get("names", ())]
    return {top, top.replace("_", ""), *row.get("aliases", ()), *names}


def check_extension_call(node: ast.Call, ctx: Context) -> None:
    name = ctx.qualified_name(node.func)
    if name == CUDA_EXTENSION:
        ctx.report(node.func, "PRT502", "`CUDAExtension` builds CUDA kernels")
    elif name in EXTENSION_LOADERS:
        for keyword in node.keywords:
            if keyword.arg == "cuda_sources":
                ctx.report(keyword, "PRT502", "`cuda_sources=` compiles CUDA kernels at run time")
        _check_extension_sources(node, ctx)


def check_toolkit_refusal(node: ast.If | ast.Assert, ctx: Context) -> None:
    """``if CUDA_HOME is None: raise RuntimeError("CUDA must be available")``, ``assert CUDA_HOME
    is not None``: the build refuses every target without PyTorch's CUDA toolkit, ROCm included
    (rules/packages.toml ``[toolkit_refusal]``). The test is their site; what follows it in its
    block runs nowhere else (``refuses_without_toolkit``)."""
    if not refuses_without_toolkit(node, ctx):
        return
    table = ctx.catalog.table("packages").get("toolkit_refusal", {})
    targets = {t: parse_advice(a) for t, a in table.get("targets", {}).items()}
    message = (
        "the build refuses to go on without the CUDA toolkit: `CUDA_HOME` is set on PyTorch's "
        "CUDA builds only (ROCm's set ROCM_HOME)"
    )
    ctx.report(node.test, "PRT502", message, targets=targets, severity=Severity.ERROR)


def refuses_without_toolkit(statement: ast.AST, ctx: Context) -> bool:
    """Whether ``statement`` stops where PyTorch found no CUDA toolkit
    (``stops_without_toolkit``), with the names of ``ctx``'s file."""
    return stops_without_toolkit(statement, ctx.catalog, ctx.qualified_name)


def stops_without_toolkit(
    statement: ast.AST, catalog: Catalog, qualified_name: Callable[[ast.expr], str | None]
) -> bool:
    """Whether ``statement`` stops where PyTorch found no CUDA toolkit: an ``if`` whose test
    asks that ``CUDA_HOME`` is None (``is None``, ``not``) and whose body ends in a ``raise``
    or an exit, or an ``assert`` that it is set (``qualified_name`` resolves the file's names:
    ``CUDA_HOME`` -> ``torch.utils.cpp_extension.CUDA_HOME``)."""
    # asked of every statement of every block: the cheap tests on its shape come first
    if isinstance(statement, ast.Assert):
        missing = False
    elif (
        isinstance(statement, ast.If)
        and statement.body
        and not statement.orelse
        and (isinstance(statement.body[-1], ast.Raise) or exits(statement.body[-1]))
    ):
        missing = True
    else:
        return False
    names = frozenset(catalog.table("packages").get("toolkit_refusal", {}).get("names", ()))
    return _names_toolkit(statement.test, qualified_name, names, missing)


def _names_toolkit(
    test: ast.expr,
    qualified_name: Callable[[ast.expr], str | None],
    names: frozenset[str],
    missing: bool,
) -> bool:
    """``CUDA_HOME is None`` or ``not CUDA_HOME`` (``missing``), else ``CUDA_HOME is not None``
    or ``CUDA_HOME``, of a name in ``names``."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return _names_toolkit(test.operand, qualified_name, names, not missing)
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        other = test.comparators[0]
        if not (isinstance(other, ast.Constant) and other.value is None):
            return False
        op = test.ops[0]
        if isinstance(op, ast.Is | ast.Eq):
            return missing and qualified_name(test.left) in names
        if isinstance(op, ast.IsNot | ast.NotEq):
            return not missing and qualified_name(test.left) in names
        return False
    return not missing and qualified_name(test) in names


def _check_extension_sources(node: ast.Call, ctx: Context) -> None:
    """``load(name, sources)``: the source list, given by keyword or as the second argument."""
    lists = [kw.value for kw in node.keywords if kw.arg == "sources"]
    if ctx.qualified_name(node.func) == "torch.utils.cpp_extension.load" and len(node.args) > 1:
        lists.append(node.args[1])
    for sources in lists:
        if isinstance(sources, ast.ListComp) and len(sources.generators) == 1:
            # ``[os.path.join(src, f) for f in ["grid.cu", "bindings.cpp"]]``
            sources = sources.generators[0].iter
        if not isinstance(sources, ast.List | ast.Tuple):
            continue
        for source in sources.elts:
            name = _source_name(source)
            if name is not None and name.endswith(CUDA_SUFFIXES):
                message = f"`{name}` is a CUDA source compiled at run time"
                ctx.report(source, "PRT502", message)


def _source_name(source: ast.expr) -> str | None:
    """The file name a source-list element ends in: ``"ops.cu"``, ``f"{root}/ops.cu"``,
    ``os.path.join(root, "ops.cu")``; None where it is not written out."""
    if isinstance(source, ast.Constant) and isinstance(source.value, str):
        return source.value
    if isinstance(source, ast.JoinedStr) and source.values:
        last = _source_name(source.values[-1])  # the text after the last placeholder
        return last.lstrip("/") if last is not None else None
    if isinstance(source, ast.Call) and source.args and not source.keywords:
        return _source_name(source.args[-1])  # os.path.join(root, "src", "ops.cu")
    return None


#: Package names that name more than the package: the vendor (cuda-python's ``cuda``), and torch's
#: own cuDNN switches (``torch.backends.cudnn``, ``make_cudnn_deterministic``) beside the cuDNN
#: frontend's ``cudnn``. Only an import of such a package scopes what follows it.
VENDOR_NAMES = frozenset({"cuda", "nvidia", "cudnn"})


def package_scope(
    name: str, catalog: Catalog, whole: bool = False, own: Iterable[str] = ()
) -> frozenset[str] | None:
    """A module, class or function named for a CUDA-only package (``bitsandbytes.py``,
    ``BitsandbytesPrecision``, ``_quantize_bnb``) runs only where the package does: the targets
    that have no build of it are none of its concern. Returns those targets, or None. With
    ``whole``, only a name that is a package's (or a class of it) from end to end counts: a
    string such as ``"Int8Params"``, not ``"APEX_DISTRIBUTED_ADAM"``, an option's name. Not a
    name of a package in ``own``, the module's own project (``ExLlamaV2DeviceContext`` inside
    exllamav2 is the project's code, which a port changes, not a backend of another's)."""
    pattern, absent, packages = _scope_table(catalog)
    lowered = name.lower()
    find = pattern.fullmatch if whole else pattern.search
    match = find(lowered) or find(lowered.replace("_", ""))
    if match is None or packages[match.group(0)] & set(own):
        return None
    return absent[match.group(0)]


def _scoping_names(package: str, catalog: Catalog) -> set[str]:
    """The names of a package that make a module, class or folder named for it (vendor names
    aside). ``numba.cuda``: a module named for numba is not one for its CUDA part (numba's CPU
    JIT runs everywhere), nor is one named for nvidia one for nvidia.dali."""
    names = package_names(package, catalog) - VENDOR_NAMES
    top = package.split(".")[0]
    if top != package and top not in package_advice(catalog):
        names -= {top, top.replace("_", "")}
    return names


@functools.cache
def _scope_table(
    catalog: Catalog,
) -> tuple[re.Pattern[str], dict[str, frozenset[str]], dict[str, frozenset[str]]]:
    """One pattern for every package name (whole words for short aliases such as ``bnb``), the
    targets each name's package is absent on, and the top-level packages each name is of."""
    table = package_advice(catalog)
    rows = catalog.table("packages").get("package", {})
    absent: dict[str, frozenset[str]] = {}
    packages: dict[str, set[str]] = {}
    for package, advice in table.items():
        if rows.get(package, {}).get("builds") == []:
            # no target has a build of it (FlashAttention-3): it runs on NVIDIA alone
            missing = frozenset(TARGETS)
        else:
            missing = frozenset(t for t, a in advice.items() if a.status is Status.UNSUPPORTED)
        for name in _scoping_names(package, catalog):
            if missing:
                absent.setdefault(name, missing)
                packages.setdefault(name, set()).add(package.split(".")[0])
    short = [n for n in absent if len(n) <= 4]
    long = [n for n in absent if len(n) > 4]
    alternatives = [rf"(?<![a-z0-9]){re.escape(n)}(?![a-z0-9])" for n in short]
    alternatives += [re.escape(n) for n in sorted(long, key=len, reverse=True)]
    named = {name: frozenset(tops) for name, tops in packages.items()}
    return re.compile("|".join(alternatives)), absent, named

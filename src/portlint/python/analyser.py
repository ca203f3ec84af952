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
import collections
import functools
import os
import re
from collections.abc import Callable, Iterator, Mapping
from typing import TypeGuard

from portlint.catalog import Catalog
from portlint.config import Settings, version_tuple
from portlint.fix import join_fixes
from portlint.model import TARGETS, Finding, Severity, SourceFile, Span
from portlint.python import (
    api_checks,
    bindings,
    device_checks,
    distributed_checks,
    environment_checks,
    package_checks,
    position_params,
    slices,
    triton_checks,
)
from portlint.python.attention_choice import AttentionNames
from portlint.python.backend_packages import (
    folder_vendor,
    listed_vendors,
    other_vendor_folder,
)
from portlint.python.backends import (
    Backend,
    backend_finding,
    find_backends,
    generic_module,
    nvidia_feature_words,
    vendor_words,
)
from portlint.python.context import LOG_CALL, Context, Report, is_call_of, is_log_statement
from portlint.python.cuda_tests import polarity_of, test_skips
from portlint.python.environment_checks import read_variable, vendor_variables
from portlint.python.fix_builder import FixBuilder
from portlint.python.fixes import is_main_block
from portlint.python.guards import (
    CUDA_DEVICE_TEXT,
    PREDICATE,
    Branch,
    Guard,
    MultiDevice,
    Resolve,
    Vendors,
    admits_cuda,
    asks_availability,
    asks_rocm,
    boolean_choice,
    compared_with_none,
    cuda_polarity,
    cuda_prefix,
    cuda_sentinels,
    flag_name,
    handled_targets,
    handles_failures,
    if_chain,
    ifexp_chain,
    nccl_backend_test,
    negated,
    negated_flag,
    newer_torch_arm,
    older_torch_bound,
    only_targets,
    reraises,
    system_targets,
)
from portlint.python.layers import REBINDING, REBINDINGS, rebound_names
from portlint.python.names import (
    NEW_SCOPES,
    class_locals,
    comprehension_locals,
    function_locals,
    import_bindings,
)
from portlint.python.newer_syntax import syntax_error_note
from portlint.python.package_checks import package_scope
from portlint.python.relevance import CANDIDATE_TEXT, Relevance
from portlint.python.torch_api import torch_cuda_api
from portlint.python.tree import (
    TERMINATORS,
    child_nodes,
    exits,
    parameter_names,
    parent_map,
    statement_blocks,
    statements_walk,
    walk,
)
from portlint.sink import FindingSink
from portlint.textindex import LineIndex

Check = Callable[[ast.AST, Context], None]

#: Node type -> checks run on every node of that type.
CHECKS: dict[type, tuple[Check, ...]] = {
    ast.Call: (
        device_checks.check_device_strings,
        device_checks.check_cuda_method,
        device_checks.check_device_type_prefix,
        distributed_checks.check_backend_call,
        environment_checks.check_environ_call,
        environment_checks.check_tool_call,
        environment_checks.check_tool_path,
        package_checks.check_extension_call,
        api_checks.check_profiler_activities,
        triton_checks.check_inline_asm,
    ),
    ast.Attribute: (device_checks.check_is_cuda, api_checks.check_capability_attribute),
    ast.Compare: (
        device_checks.check_device_type_comparison,
        distributed_checks.check_backend_comparison,
        environment_checks.check_environ_membership,
        api_checks.check_sm_comparison,
    ),
    ast.Subscript: (environment_checks.check_environ_subscript,),
    ast.Dict: (environment_checks.check_environ_dict,),
    ast.Return: (environment_checks.check_tool_return, distributed_checks.check_backend_return),
    ast.Import: (package_checks.check_import,),
    ast.ImportFrom: (package_checks.check_import,),
    ast.If: (package_checks.check_toolkit_refusal,),
    ast.Assert: (package_checks.check_toolkit_refusal,),
}

#: What opens a scope for names: where a name an arm binds is looked for (in a function).
SCOPES = (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)

IMPORT_ERRORS = frozenset({"ImportError", "ModuleNotFoundError", "Exception", "BaseException"})
#: Comparisons that hold where the value is not the one named (``dev.type != "cpu"``).
NEGATIONS = (ast.NotEq, ast.NotIn, ast.IsNot)
#: How many statements before and after an ``if`` (or a vendor flag) are looked at for the rest
#: of a dispatch written as a run of statements (``if is_xpu_available(): ...`` then ``if
#: is_npu_available(): ...``, early returns, adjacent flags). Real runs are a few statements;
#: the bound keeps a generated file of a thousand such ``if`` statements linear, not quadratic.
RUN_REACH = 32

#: Node type -> the Analyser method that walks it.
VISITORS: dict[type, Callable[[Analyser, ast.AST], None]] = {}

#: What makes a device or backend position, for the module's private functions' parameters.
POSITIONS = position_params.Positions(
    device_checks.DEVICE_KEYWORDS,
    distributed_checks.BACKEND_KEYWORDS,
    frozenset(name for name, first in distributed_checks.BACKEND_CALLS.items() if first),
)


class Analyser(ast.NodeVisitor):
    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.guard = Guard()
        self.stack: list[ast.AST] = ctx.walk_stack
        ctx.resolver.lines = ctx.index.lines
        self.relevance = Relevance(ctx.text, ctx.index.lines)
        markers = {
            target: tuple(facts.get("markers", ()))
            for target, facts in ctx.catalog.target_facts().items()
        }
        device = ctx.catalog.table("device")
        hosted = device.get("device", {}).get("hosted_notebooks", {})
        runtimes = device.get("backend", {}).get("runtimes", {})
        self.vendors = Vendors(
            markers,
            vendor_words(ctx.catalog),
            hosted=tuple(hosted.get("words", ())),
            runtimes=tuple(runtimes.get("words", ())),
            systems=_systems(ctx.catalog),
        )
        self.multi_device = MultiDevice.from_catalog(ctx.catalog)
        if self.multi_device.names_module(ctx.path):
            # ``tensor_parallel/layers.py``: the whole module is about several devices, which a
            # single-device target has not
            last = ctx.text.count("\n") + 1
            ctx.package_scopes.append((1, last, self.multi_device.single))
        self.feature_words = nvidia_feature_words(ctx.catalog)
        self.attention = AttentionNames.from_catalog(ctx.catalog)
        #: The module reads the operating system somewhere (``sys.platform``, ``os.name``): only
        #: then are the operands of an ``and`` looked at for it.
        self.reads_system = any(read in ctx.text for read in ("platform", "os.name"))
        #: The module names a skip (``pytest.skip``, ``self.skipTest``, ``SkipTest``): only then
        #: are the nested blocks of a function that is no test looked in for one.
        self.names_skip = any(word in ctx.text for word in ("skip", "Skip"))
        self.test_skips = test_skips(ctx.catalog)
        #: module names bound to a mark that skips without CUDA (``cuda_required``)
        self.skip_aliases: frozenset[str] = frozenset()
        #: names that hold an NCCL backend test (``is_nccl = backend == Backend.NCCL``)
        self.nccl_flags: set[str] = set()
        #: private function name -> its calls in the module (``_only_formatted``), made once
        self._private_calls: dict[str, tuple[int, list[tuple[str, ast.AST]]]] | None = None
        #: ``self.x`` attributes given a value that is not a CUDA test (``_record_attribute_flag``)
        self.other_attribute_values: set[str] = set()
        #: ids of the ``add_argument`` calls already recorded (``_record_option_default``)
        self.option_calls: set[int] = set()
        #: ids of the parameter defaults that every call overrides (``_visit_defaults``).
        self.overridden_defaults: set[int] = set()
        #: ids of the functions defined in a handled ``try`` that the ``try`` also calls
        #: (``_defined_and_called``): their bodies run under its handler.
        self.run_in_try: set[int] = set()
        #: ``self`` attributes set True only on the CUDA path of a test, with that test
        #: (``_armed_attribute_flags``).
        self.armed_flags: dict[str, ast.expr] = {}
        #: How often the file stores each ``self`` attribute (``_record_attribute_flag``).
        self.attribute_stores: collections.Counter[str] = collections.Counter()
        #: How often each name is stored at module level (a flag given once stands for its
        #: check).
        self.module_stores: collections.Counter[str] = collections.Counter()
        backends = ctx.catalog.table("distributed").get("backends", {})
        self.nvidia_backends = frozenset(backends.get("nvidia_only", ("nccl",)))
        #: id of a function (or module) -> its names read from one target's own environment
        #: variable (``_variable_flags``), found once
        self.variable_flags: dict[int, dict[str, str]] = {}
        self._names_vendor_variable: bool | None = None
        #: conditional expressions whose test is no CUDA test (``drop_repeated_arms``)
        self.plain_choices: list[ast.IfExp] = []
        #: the module's functions that do nothing, and its ``x.get(key, default)`` calls
        self._get_calls: tuple[set[str], list[tuple[tuple, ast.expr]]] | None = None

    # -- the walk --------------------------------------------------------------------------------

    def visit(self, node: ast.AST) -> None:
        if isinstance(node, ast.stmt) and not self.relevance.may_report(node):
            return  # no line of it can lead to a finding
        if len(self.stack) == 1 and isinstance(node, ast.If | ast.Assign):
            self._module_skip(node)
        ctx, stack, key = self.ctx, self.stack, id(node)
        ctx.guards[key] = self.guard
        if stack:
            ctx.parents[key] = stack[-1]
        stack.append(node)
        kind = type(node)
        checks = CHECKS.get(kind)
        if checks is not None:
            for check in checks:
                check(node, ctx)
        visitor = VISITORS.get(kind)
        if visitor is None:  # looked up once per node type, not once per node
            visitor = getattr(Analyser, "visit_" + kind.__name__, Analyser.generic_visit)
            VISITORS[kind] = visitor
        visitor(self, node)
        stack.pop()

    def generic_visit(self, node: ast.AST) -> None:
        for child in child_nodes(node):
            self.visit(child)

    def visit_Constant(self, node: ast.Constant) -> None:
        """A constant has no children (ast.NodeVisitor's visit_Constant only looks for the
        visit_Num/visit_Str of old Pythons)."""

    def visit_many(self, nodes: list[ast.AST]) -> None:
        """A block of statements: what follows ``if npu: return ...`` never runs on npu, and what
        follows ``if not torch.cuda.is_available(): return`` runs only on CUDA."""
        outer = self.guard
        for position, statement in enumerate(nodes):
            self.visit(statement)
            if package_checks.refuses_without_toolkit(statement, self.ctx):
                # ``if CUDA_HOME is None: raise ...``: only NVIDIA's CUDA builds go on, which
                # are no target's; the refusal is every target's site
                self.guard = self.guard.inside(False, frozenset(), frozenset())
                continue
            # ``if torch.cuda.is_available(): ... else: raise ImportError(...)``: only CUDA goes
            # on after it, as after ``if not torch.cuda.is_available(): raise``
            node = _as_early_exit(statement, self.ctx.qualified_name, self.ctx.cuda_flags)
            if _is_early_return(node):
                resolve = self.ctx.qualified_name
                polarity = cuda_polarity(node.test, resolve, self.ctx.cuda_flags)
                kept = negated(node.test)
                reach = None if kept is None else only_targets(kept, resolve, self.vendors)
                if reach is None:  # ``if is_npu_available(): return ...``: npu leaves here
                    leaving = _positive_terms(node.test)
                    covered = frozenset()
                    if leaving is not None:
                        covered = handled_targets(leaving, resolve, self.vendors)
                        covered |= only_targets(leaving, resolve, self.vendors) or frozenset()
                else:  # ``if not (cuda or npu): return``: only they go on
                    covered = frozenset()
                refuses = isinstance(node.body[-1], ast.Raise) or exits(node.body[-1])
                flags = self.ctx.cuda_flags
                if not refuses and kept is not None and admits_cuda(kept, resolve, flags):
                    # the rest of the block is the CUDA test's arm: a test whose arm has only
                    # info findings (a TF32 switch) is info too
                    self.ctx.cuda_branches.append((node.test, nodes[position + 1 :]))
                if polarity == -1 and reach is None and _leaves_on_rocm(node.test, resolve):
                    # ``if not torch.cuda.is_available() or _is_hip(): return``: ROCm leaves too,
                    # and only NVIDIA goes on
                    reach = frozenset()
                if polarity == -1 and kept is not None and _asks_vendor_layer(kept):
                    # ``if not current_platform.is_cuda_alike(): return None``: what follows is
                    # the vendor layer's CUDA arm, no other vendor's concern
                    covered |= frozenset(self.vendors.markers) - {"rocm"}
                if self.multi_device.single_process(node.test):
                    # ``if distributed_type == DistributedType.NO: return``: what follows runs
                    # with several processes, which a single-device target never has
                    covered |= self.multi_device.single
                # ``if dev not in ("cuda", "xpu"): return``: xpu goes on too, so what follows
                # is no CUDA-only path (xpu does not skip it, it runs it), and the test does not
                # speak for what xpu meets there
                cuda_path = polarity == -1 and _only_cuda_goes_on(reach)
                if cuda_path and refuses and self._holds_without_cuda(node.test):
                    # ``if not torch.cuda.is_available(): raise ...`` (or ``sys.exit``): the
                    # other targets stop at the refusal, which is their site; of the targets
                    # only ROCm goes on (not after ``if tp and not cuda: raise``)
                    covered |= frozenset(self.vendors.markers) - {"rocm"}
                # (the statement's own test where the early exit was read from an ``else``)
                behind = (node.test if node is statement else statement.test) if cuda_path else None
                self.guard = self.guard.inside(cuda_path, covered, reach, behind=behind)
            elif isinstance(node, ast.Assert):
                self._after_assert(node)
            elif (admitted := self._refusing_vendor_chain(statement)) is not None:
                # ``if torch.version.cuda: ... elif torch.version.hip: ... else: raise``: only
                # the targets an arm admits go on
                self.guard = self.guard.inside(False, frozenset(), admitted)
            elif _after_launch_chain(statement, self.multi_device):
                # ``if "RANK" in os.environ: ... else: args.distributed = False; return``: what
                # follows runs with several processes, which a single-device target never has
                self.guard = self.guard.inside(False, self.multi_device.single)
        self.guard = outer

    def _refusing_vendor_chain(self, statement: ast.AST) -> frozenset[str] | None:
        """The targets that go on after an ``if``/``elif`` chain of vendor tests whose final
        ``else`` alone leaves (``if is_cuda(): ... elif is_hip(): ... elif is_ascend(): pass
        else: raise``): those some arm's test admits (a CUDA test admits ROCm, whose builds
        pass it). None where the statement is no such chain, or an arm's test is not a vendor
        test (``if backend == "sdpa": ...``)."""
        if not (isinstance(statement, ast.If) and statement.orelse):
            return None
        branches = if_chain(statement)
        if len(branches) < 2 or branches[-1].test is not None:
            return None
        if not _leaves(branches[-1].body) or any(_leaves(b.body) for b in branches[:-1]):
            return None
        resolve, flags = self.ctx.qualified_name, self.ctx.cuda_flags
        admitted: set[str] = set()
        for branch in branches[:-1]:
            assert branch.test is not None
            if cuda_polarity(branch.test, resolve, flags) == 1:
                admitted.add("rocm")
                continue
            only = only_targets(branch.test, resolve, self.vendors)
            if only is None:
                return None
            admitted |= only
        return frozenset(admitted)

    def _after_assert(self, node: ast.Assert) -> None:
        """``assert torch.cuda.is_available()``: what follows in the block runs only where the
        assert held, as after ``if not torch.cuda.is_available(): raise``; ``assert cuda or xpu
        or mps``: only those targets go on."""
        resolve = self.ctx.qualified_name
        reach = only_targets(node.test, resolve, self.vendors)
        asks = cuda_polarity(node.test, resolve, self.ctx.cuda_flags) == 1 and (
            self._asks_availability(node.test)
        )
        if reach is None and not asks and self._asks_device_count(node.test):
            # ``assert torch.cuda.device_count() > local_rank``: enough devices for the rank;
            # every accelerator ports it and goes on, a machine without one stops there
            reach = frozenset(self.vendors.markers) - {"cpu"}
        names = _required_device_names(node.test) if reach is None and not asks else None
        if names:
            # ``assert device_type in {"cuda"}, "GPU required"``: a refusal of every other
            # device (the assert is the site); only the devices it names go on
            reach = frozenset(self._targets_named(names))
        if reach is None and not asks:
            return
        # (not a CUDA path: the other targets do not skip what follows, they stop at the assert)
        behind = node.test if asks else None
        self.guard = self.guard.inside(False, frozenset(), reach, behind=behind)

    def _asks_device_count(self, test: ast.expr) -> bool:
        """``torch.cuda.device_count() > n`` (or ``>= n``): a test of how many devices there
        are, which an assert makes a precondition of the multi-device code after it."""
        return (
            isinstance(test, ast.Compare)
            and len(test.ops) == 1
            and isinstance(test.ops[0], ast.Gt | ast.GtE)
            and isinstance(test.left, ast.Call)
            and self.ctx.qualified_name(test.left.func) == "torch.cuda.device_count"
        )

    def visit_Module(self, node: ast.Module) -> None:
        self.ctx.module_functions = frozenset(
            s.name for s in node.body if isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef)
        )
        self.ctx.relative_imports = frozenset(
            alias.asname or alias.name
            for s in node.body
            if isinstance(s, ast.ImportFrom) and s.level > 0
            for alias in s.names
        )  # the module's own; a function's are read where they are needed
        self.ctx.positions = position_params.summarise(
            node, self.relevance.has_candidate, POSITIONS
        )
        self.ctx.cuda_flags.update(_cuda_predicates(node))
        if "init_process_group" in self.ctx.text:
            # what follows ``init_process_group("nccl")`` runs with several GPU processes
            self.ctx.package_scopes.extend(self.multi_device.nccl_group_scopes(node))
        self.armed_flags = _armed_attribute_flags(node, self.ctx.text)
        for flag, test in self.armed_flags.items():
            self.ctx.cuda_flags.add(flag)
            self.ctx.flag_values[flag] = test
        packages = _top_level_packages(node)
        reach = self._module_vendor_reach()
        if reach is None:
            reach = self._vendor_stack_reach(packages)
        loads = self._platform_reach(packages)
        # ``import triton``: its kernels have no CPU backend (``[backend.kernels_absent_on]``)
        self.ctx.kernels_absent = frozenset(self._listed_for(packages, "kernels_absent_on"))
        if self.ctx.absent_targets:
            # ``mamba_ssm/__init__.py`` loads a module that imports ``triton``: no module of
            # the package loads on mps (``python.package_loads``)
            every = loads if loads is not None else frozenset(self.ctx.catalog.target_facts())
            loads = every - frozenset(self.ctx.absent_targets)
        if loads is not None:
            reach = loads if reach is None else reach & loads
        if _rebinds_cuda_api(self.ctx.text):
            # ``torch.cuda.is_available = torch.xpu.is_available`` and the like: a layer that
            # points the CUDA API at another device's, run where that device is; none of its
            # lines is a site of any target
            reach = frozenset()
        migrated = self._migrated_targets(node)
        if reach is not None or migrated:
            # ``ascend_cudagraph.py`` beside ``camb_cudagraph.py``, or a module that imports
            # ``torch_npu`` unguarded: the module is another vendor's own code, which only that
            # vendor runs; one that imports ``transfer_to_npu`` already runs on npu
            self.guard = self.guard.inside(False, migrated, reach)
        self.visit_many(node.body)

    def _module_vendor_reach(self) -> frozenset[str] | None:
        """The targets that run a module named first for a vendor other than CUDA, ROCm and the
        CPU (``ascend_cudagraph.py``, ``npu_utils.py``, ``musa_ops.py``): that vendor's target,
        or none where it is no portlint target. None for any other module."""
        stem = os.path.splitext(os.path.basename(self.ctx.path))[0]
        vendor = folder_vendor(stem, self.vendors.words)
        if vendor is None:
            # a module of another vendor's backend package (``backend/_ascend/ops/fill.py``
            # beside ``backend/_nvidia/``): that vendor's code too
            vendor = other_vendor_folder(self.ctx.path, self.vendors.words, OWN_MODULE_VENDORS)
        if vendor is None or vendor in OWN_MODULE_VENDORS:
            return None
        return frozenset({vendor}) & frozenset(self.vendors.markers)

    def _migrated_targets(self, module: ast.Module) -> frozenset[str]:
        """The targets whose migration tool the module imports at its top level, also in a
        ``try`` there (``from torch_npu.contrib import transfer_to_npu``: rules/device.toml
        ``[backend.migration]``; where it is installed, the import succeeds): it maps the CUDA
        API to theirs, so none of the module's sites is theirs."""
        tools = self.ctx.catalog.table("device").get("backend", {}).get("migration", {})
        target_of = {name: target for target, names in tools.items() for name in names}
        found = set()
        statements = list(module.body)
        statements += [s for t in module.body if isinstance(t, ast.Try) for s in t.body]
        for statement in statements:
            if isinstance(statement, ast.Import):
                found |= {target_of.get(alias.name) for alias in statement.names}
            elif isinstance(statement, ast.ImportFrom) and statement.module and not statement.level:
                found |= {target_of.get(statement.module)}
                found |= {target_of.get(f"{statement.module}.{a.name}") for a in statement.names}
        return frozenset(found - {None}) & frozenset(self.vendors.markers)

    def _vendor_stack_reach(self, packages: set[str]) -> frozenset[str] | None:
        """The targets that can load a module whose top level imports a vendor's own PyTorch
        stack outside any ``try`` or ``if`` (``import torch_npu``, ``import
        habana_frameworks.torch.core``; rules/device.toml ``[backend.packages]``): that vendor's
        target, or none where it is no portlint target. None when no such import is there."""
        stacks = self.ctx.catalog.table("device").get("backend", {}).get("packages", {})
        vendor_of = {name: vendor for vendor, names in stacks.items() for name in names}
        vendors = {vendor_of[p] for p in packages if p in vendor_of}
        if len(vendors) != 1:
            return None  # none, or two vendors' stacks (a module no machine loads is rare)
        return frozenset(vendors) & frozenset(self.vendors.markers)

    def _platform_reach(self, packages: set[str]) -> frozenset[str] | None:
        """The targets whose machines can load a module that imports, at its top level and
        outside any ``try`` or ``if``, a package published for some operating systems only
        (``import triton``: rules/device.toml ``[backend.absent_on]``): all but those the package
        is absent on. None when no such import is there."""
        absent = self._listed_for(packages, "absent_on")
        if not absent:
            return None
        return frozenset(self.ctx.catalog.target_facts()) - absent

    def _listed_for(self, packages: set[str], table: str) -> set[str]:
        """The targets that rules/device.toml ``[backend.<table>]`` lists for any of
        ``packages``, the top-level packages a module imports outside any ``try`` or ``if``."""
        listed = self.ctx.catalog.table("device").get("backend", {}).get(table, {})
        return {t for p in packages for t in listed.get(p, ())}

    def _module_skip(self, node: ast.If | ast.Assign) -> None:
        """``pytestmark = pytest.mark.skipif(...)`` or an early skip at module level, and
        ``cuda_required = pytest.mark.skipif(...)``: judged when the walk reaches the statement,
        once the imports before it are bound."""
        self._skipped_rest([node], len(self.ctx.index.lines), marks=True)
        polarity = polarity_of(self.ctx.qualified_name, self.ctx.cuda_flags)
        alias = self.test_skips.mark_alias(node, polarity, self.vendors.words)
        if alias is not None:
            self.skip_aliases |= {alias}

    def _cuda_only_test(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> None:
        """A test (or test class) skipped wherever CUDA is missing runs only on CUDA: its body
        is no site of its own (``python.cuda_tests``); the skip condition is."""
        last = node.end_lineno or node.lineno
        polarity = polarity_of(self.ctx.qualified_name, self.ctx.cuda_flags)
        words = self.vendors.words
        aliases = self.skip_aliases
        skips = [
            d
            for d in node.decorator_list
            if self.test_skips.skips_without_cuda(d, polarity, words, aliases)
        ]
        if any(map(self.test_skips.skips_always, node.decorator_list)):
            # ``@pytest.mark.skip(reason="flaky")``: the test runs nowhere, nothing in it is a site
            self.ctx.backend_lines.append((node.lineno, last))
        elif skips:
            self.ctx.backend_lines.append((node.lineno, last))
            self.ctx.skip_conditions.update(id(n) for d in skips for n in walk(d))
        elif isinstance(node, ast.ClassDef):
            self._set_up_skips(node)
        else:
            self._skipped_rest(node.body, last, in_test=_is_test(node))

    def _set_up_skips(self, node: ast.ClassDef) -> None:
        """``def setUp(self): if torch.cuda.is_available(): ... else: self.skipTest(...)``: the
        set-up runs before each test of the class, so every test, and every other method the
        tests call, runs only on CUDA (rules/device.toml ``[device.test_skips] setups``); the
        skip in the set-up is the site."""
        methods = [s for s in node.body if isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef)]
        setup = next((m for m in methods if m.name in self.test_skips.setups), None)
        # (not ``in_test``: a bare ``return`` ends the set-up early, it skips no test)
        if setup is None or not self._skipped_rest(setup.body, setup.end_lineno or setup.lineno):
            return
        for method in methods:
            if method is not setup:
                self.ctx.backend_lines.append((method.lineno, method.end_lineno or method.lineno))

    def _test_targets(
        self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef
    ) -> frozenset[str] | None:
        """``@pytest.mark.skipif(torch_device not in ["cuda", "xpu"], ...)``: only the listed
        targets run the test, so only they are reported in it."""
        markers = frozenset(self.vendors.markers)
        found = None
        for decorator in node.decorator_list:
            admitted = self.test_skips.runs_only_on(decorator, self.vendors.words, markers)
            if admitted is not None:
                found = admitted if found is None else found & admitted
        return found

    def _else_skips(self, branches: list[Branch]) -> bool:
        """``if torch.cuda.is_available(): ... else: pytest.skip(...)``: every other target
        takes the ``else``, which skips the running test, so the CUDA test only decides whether
        the test runs there, as ``if not torch.cuda.is_available(): pytest.skip()`` does."""
        last = branches[-1]
        return (
            len(branches) > 1
            and last.test is None
            and self.test_skips.ends_in_skip(last.body, self._in_test())
        )

    def _in_test(self) -> bool:
        scope = self._function_scope()
        return scope is not None and _is_test(scope)

    def _skipped_rest(
        self, body: list[ast.stmt], last: int, marks: bool = False, in_test: bool = False
    ) -> bool:
        """``if not torch.cuda.is_available(): pytest.skip(...)`` (or, at module level, a
        ``pytestmark`` that skips without CUDA): the statements after it run only on CUDA. In a
        nested block (``if arch in NEEDS_CUDA: if not torch.cuda.is_available(): pytest.skip()``)
        the rest of that block does, and so does a later ``if`` on the same test. True where
        ``body`` itself skips."""
        polarity = polarity_of(self.ctx.qualified_name, self.ctx.cuda_flags)
        words = self.vendors.words
        for index, statement in enumerate(body):
            first = self.test_skips.skipped_from(statement, polarity, words, in_test)
            if first is None and marks and self.test_skips.marks_module(statement, polarity, words):
                first = (statement.end_lineno or statement.lineno) + 1
            if first is not None:
                self.ctx.backend_lines.append((first, last))
                self.ctx.skip_conditions.update(id(n) for n in walk(statement))
                return True
            if marks or isinstance(statement, NEW_SCOPES) or not (in_test or self.names_skip):
                continue  # (outside a test, only a skip call can skip: none in the module)
            for block in _blocks(statement):
                skips = self._skipped_rest(block, block[-1].end_lineno or last, in_test=in_test)
                if skips and isinstance(statement, ast.If) and block is statement.body:
                    self._same_test_after(statement.test, body[index + 1 :])
        return False

    def _same_test_after(self, test: ast.expr, following: list[ast.stmt]) -> None:
        """``if arch in NEEDS_CUDA:`` skipped the test without CUDA; a later ``if arch in
        NEEDS_CUDA:`` runs its arm only on CUDA, until a name of the test is assigned again. Only
        a test of names, attributes and constants (a call may answer differently)."""
        parts = list(walk(test))
        if not all(isinstance(n, SETTLED_TEST_NODES) for n in parts):
            return
        names = {n.id for n in parts if isinstance(n, ast.Name)}
        wanted = ast.dump(test)
        for statement in following:
            nodes = list(walk(statement))
            if any(
                isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store) and n.id in names
                for n in nodes
            ):
                return
            for node in nodes:
                if isinstance(node, ast.If) and ast.dump(node.test) == wanted:
                    self.ctx.backend_lines.append(
                        (node.body[0].lineno, node.body[-1].end_lineno or node.lineno)
                    )

    # -- names -----------------------------------------------------------------------------------

    def visit_Import(self, node: ast.Import | ast.ImportFrom) -> None:
        if self.guard.old_torch:
            # ``else: from torch.cuda.amp import GradScaler`` of a version test: the name keeps
            # the newer arm's meaning where that arm bound it
            bindings = import_bindings(node)
            for name, qualified in bindings.items():
                if self.ctx.resolver.lookup(name) is None:
                    self.ctx.resolver.current.bindings[name] = qualified
            return
        self.ctx.resolver.bind_import(node)
        # ``from torch.cuda import synchronize as sync``: lines that say ``sync()`` matter too.
        for local, qualified in import_bindings(node).items():
            if CANDIDATE_TEXT.search(qualified) and not CANDIDATE_TEXT.search(local):
                self.relevance.add_flow_name(local)

    visit_ImportFrom = visit_Import

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self._package_scope(node)
        package_checks.scope_package_objects(node, self.ctx)
        override = node.name == "cuda" and isinstance(self.stack[-2], ast.ClassDef)
        lower = node.name.lower()
        feature = any(word in lower for word in self.feature_words)
        helper = self._vendor_helper(node)
        registration = self._cuda_registration(node)
        patch = (
            self._patches_cuda_module(node)
            or self._cuda_answer(node)
            or self._nvidia_feature_gate(node)
            or self._mocks_cuda(node)
            or registration is not None
        )
        if override or feature or helper or patch or self._is_predicate(node.name):
            # an override of ``.cuda()``: its body is the CUDA implementation, and its
            # ``super().cuda(...)`` is not a call site; the body of ``is_cuda_available()`` or
            # ``is_rocm_available()`` is the vendor check itself; ``check_nvlink_connectivity``
            # implements a feature only NVIDIA has; ``_check_nvidia_connectivity`` beside
            # ``_check_amd_connectivity`` is the NVIDIA arm of a per-vendor helper; a patch of
            # another library's CUDA module (``gpu_worker.init = patched``) runs where it does;
            # ``get_cuda_device_capability`` answers a CUDA question, None elsewhere; the kernel
            # of a custom op registered for ``device_types="cuda"`` runs for CUDA tensors alone
            self.ctx.backend_lines.append((node.lineno, node.end_lineno or node.lineno))
        self._cuda_only_test(node)
        self.visit_many(node.decorator_list)
        if registration is not None and self._uses_torch_cuda(node):
            # the registration decides where a kernel that uses torch.cuda runs, as a CUDA test
            # would: its site (a kernel that wraps another library is that library's)
            message = (
                f"`{node.name}` is registered as an operator's kernel for CUDA alone: "
                "other devices' tensors find no kernel for the operator"
            )
            self.ctx.report(registration, "PRT101", message, severity=Severity.ERROR)
        self._visit_defaults(node)
        # ``-> torch.cuda.Stream``: an annotation runs nothing (info)
        outer = self.guard
        self.guard = outer.inside(False, frozenset(), info=True)
        arguments = node.args
        every = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]
        every += [a for a in (arguments.vararg, arguments.kwarg) if a is not None]
        self.visit_many([a.annotation for a in every if a.annotation is not None])
        if node.returns:
            self.visit(node.returns)
        self.guard = outer
        self.ctx.resolver.push(function_locals(node))
        self._record_defaults(node)
        # ``device_id = _get_device_id()`` only ever formatted into a log file's name: what the
        # private helper finds out merely shows differently elsewhere (info)
        only = self._test_targets(node)
        # a ``try`` around the ``def`` does not run the body, unless it calls the function too
        body = outer if id(node) in self.run_in_try else outer.in_function()
        self.guard = body.inside(False, frozenset(), only, info=self._only_formatted(node))
        self.visit_many(node.body)
        self.guard = outer
        self.ctx.resolver.pop()

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_With(self, node: ast.With | ast.AsyncWith) -> None:
        """``with patch("torch.cuda.is_available", return_value=True):``: the block runs the CUDA
        path against a mock of the CUDA API, on every machine; it is no site."""
        resolve = self.ctx.qualified_name
        if any(
            isinstance(item.context_expr, ast.Call) and _mocks_cuda_api(item.context_expr, resolve)
            for item in node.items
        ):
            self.ctx.backend_lines.append((node.lineno, node.end_lineno or node.lineno))
        for item in node.items:
            built = item.context_expr
            if isinstance(built, ast.BoolOp) and isinstance(built.op, ast.And):
                # ``with torch.cuda.amp.autocast() and torch.no_grad():`` enters only the last
                # operand (``and`` gives it): an autocast before it is built and dropped, on
                # NVIDIA too. Built without CUDA it only warns: no site on any machine.
                outer = self.guard
                for value in built.values[:-1]:
                    if self._built_harmlessly(value):
                        self.guard = outer.inside(False, frozenset(), frozenset())
                    self.visit(value)
                    self.guard = outer
                self.visit(built.values[-1])
                if item.optional_vars is not None:
                    self.visit(item.optional_vars)
            else:
                self.visit(item)
        self.visit_many(node.body)

    def _built_harmlessly(self, value: ast.expr) -> bool:
        """``value`` builds a context manager whose CUDA form, built without CUDA, raises
        nothing (an autocast warns and disables itself; by the measured outcomes)."""
        if not isinstance(value, ast.Call):
            return False
        name = self.ctx.qualified_name(value.func) or ""
        member = device_checks.BEHAVES_LIKE.get(name)
        if member is None and name.startswith("torch.cuda."):
            member = name[len("torch.cuda.") :]
        outcome = torch_cuda_api(self.ctx.catalog).entry(member).outcome if member else None
        return outcome in ("warns", "noop")

    visit_AsyncWith = visit_With

    def visit_While(self, node: ast.While) -> None:
        self.visit(node.test)
        self.visit_many(node.body)
        self.visit_many(node.orelse)

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        if node.type is not None:
            self.visit(node.type)
        self.visit_many(node.body)

    def _cuda_registration(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> ast.expr | None:
        """The device types of a decorator that registers the function as an operator's kernel
        for CUDA's device type alone (``@torch.library.custom_op("lib::op", mutates_args=(),
        device_types="cuda")``; rules/device.toml ``[device.kernel_registrations]``), or None:
        the dispatcher calls it for CUDA tensors only, so its body is CUDA's implementation."""
        table = self.ctx.catalog.table("device")["device"]["kernel_registrations"]
        for decorator in node.decorator_list:
            if not isinstance(decorator, ast.Call):
                continue
            where = table.get(self.ctx.qualified_name(decorator.func) or "")
            if where is None:
                continue
            given = [k.value for k in decorator.keywords if k.arg == where["keyword"]]
            position = where.get("position")
            if not given and position is not None and len(decorator.args) > position:
                given = [decorator.args[position]]
            listed = listed_vendors(given[0], self.vendors.words, False) if given else []
            if listed and all(vendor == "cuda" for vendor in listed):
                return given[0]
        return None

    def _uses_torch_cuda(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
        """The function's body names ``torch.cuda`` (``torch.cuda.Stream()``)."""
        resolve = self.ctx.qualified_name
        return any(
            isinstance(inner, ast.Attribute | ast.Name)
            and (resolve(inner) or "").startswith("torch.cuda")
            for statement in node.body
            for inner in walk(statement)
        )

    def _mocks_cuda(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
        """A test that mocks the CUDA API, by a decorator (``@patch("torch.cuda.device_count",
        return_value=2)``) or among its own statements (``monkeypatch.setattr(torch.cuda,
        "is_available", lambda: True)``): it runs the CUDA path on every machine."""
        if not _is_test(node):
            return False
        resolve = self.ctx.qualified_name
        calls = [d for d in node.decorator_list if isinstance(d, ast.Call)]
        calls += [
            s.value for s in node.body if isinstance(s, ast.Expr) and isinstance(s.value, ast.Call)
        ]
        return any(_mocks_cuda_api(call, resolve) for call in calls)

    def _vendor_helper(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
        """The function is named for CUDA or ROCm (``_check_nvidia_connectivity``,
        ``_rocm_gpu_count``) and its module or class defines the same function for another
        accelerator vendor (``_check_amd_connectivity``, ``_musa_gpu_count``)."""
        words = node.name.split("_")
        own = {self.vendors.words.get(word.lower()) for word in words} & {"cuda", "rocm"}
        if not own:
            return False
        names = self.ctx.scope_fact("functions", self.stack[-2], _function_names)
        for position, word in enumerate(words):
            vendor = self.vendors.words.get(word.lower())
            if vendor not in own:
                continue
            for other, other_vendor in self.vendors.words.items():
                if other_vendor in (vendor, "cpu"):
                    continue
                if "_".join([*words[:position], other, *words[position + 1 :]]) in names:
                    return True
        return False

    def _patches_cuda_module(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
        """The function imports another library's module named for CUDA or GPUs (``from
        vllm.v1.worker import gpu_worker as gw``) and assigns to its attributes (``gw.init =
        patched``): a patch of a CUDA-only module, whose code runs only where that module does."""
        text = "\n".join(self.ctx.index.lines[node.lineno - 1 : node.end_lineno])
        if "import" not in text:
            return False  # imports nothing
        folded = text.lower()
        cuda_words = (word for word, vendor in self.vendors.words.items() if vendor == "cuda")
        if not any(word in folded for word in cuda_words):
            return False  # names no module for CUDA
        modules: set[str] = set()
        for inner in walk(node):
            if isinstance(inner, ast.ImportFrom) and inner.module and inner.level == 0:
                for alias in inner.names:
                    if self._names_cuda(f"{inner.module}.{alias.name}"):
                        modules.add(alias.asname or alias.name)
            elif isinstance(inner, ast.Import):
                for alias in inner.names:
                    if alias.asname and self._names_cuda(alias.name):
                        modules.add(alias.asname)
        return bool(modules) and any(
            isinstance(inner, ast.Assign)
            and any(
                isinstance(target, ast.Attribute)
                and isinstance(target.value, ast.Name)
                and target.value.id in modules
                for target in inner.targets
            )
            for inner in walk(node)
        )

    def _only_formatted(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
        """A private module-level function whose every call in the module gives a local name
        that is only formatted into text (an f-string, a print or log call): its value names
        or describes something (``f"{name}_device{device_id}.log"``), it chooses nothing."""
        if not node.name.startswith("_") or not isinstance(self.stack[-2], ast.Module):
            return False
        # Read from the text first: each call must be a ``name = _f()`` line. Only then is the
        # whole module parsed (a sliced parse leaves the callers out).
        if f"{node.name}()" not in self.ctx.text:
            return False  # no ``name = _f()`` at all
        calls, given = _calls_and_assigned_calls(node.name, self.ctx.text)
        if calls - 1 < 1 or calls - 1 != given:  # less the definition
            return False
        if self._private_calls is None:
            self._private_calls = _private_calls(slices.whole(self.stack[0]))
        calls, assigns = self._private_calls.get(node.name, (0, []))
        return (
            bool(calls)
            and calls == len(assigns)
            and all(_only_in_text(name, scope) for name, scope in assigns)
        )

    def _cuda_answer(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
        """A function named for a question only NVIDIA hardware answers (its name says CUDA,
        NVIDIA, an SM version or a compute capability: ``get_torch_cuda_device_capability``,
        ``is_sm_at_least_90``, ``has_compute_capability``) whose whole body answers only on CUDA
        and gives a falsy constant elsewhere (None, False, 0): ``if torch.cuda.is_available():
        return ... else: return None``, ``return torch.cuda.is_available() and ...``, ``return
        ... if is_cuda else False`` after ``is_cuda = torch.cuda.is_available() and ...``, or
        ``if not torch.cuda.is_available(): return False`` first. Elsewhere the falsy answer is
        the right one; its callers ask the question, and they are the sites."""
        words = set(node.name.lower().split("_"))
        if not words & NVIDIA_QUESTION_WORDS:
            return False
        # a capability or an SM version may be answered 0 (``get_compute_capability``), a
        # quantity (``cuda_memory``) may not: 0 bytes elsewhere is a value that misleads
        number = bool(words & {"capability", "sm"})
        body = [s for s in node.body if not _is_docstring(s)]
        if not body:
            return False
        resolve, flags = self.ctx.qualified_name, set(self.ctx.cuda_flags)
        first = body[0]
        if (
            len(body) == 2
            and isinstance(first, ast.Assign)
            and len(first.targets) == 1
            and isinstance(first.targets[0], ast.Name)
            and cuda_polarity(first.value, resolve, flags) == 1
        ):
            flags.add(first.targets[0].id)  # ``is_cuda = torch.cuda.is_available() and ...``
            body, first = body[1:], body[1]
        if isinstance(first, ast.Return) and first.value is not None and len(body) == 1:
            value = first.value
            if isinstance(value, ast.BoolOp) and isinstance(value.op, ast.And):
                return cuda_polarity(value.values[0], resolve, flags) == 1
            if isinstance(value, ast.IfExp):
                test, orelse = value.test, value.orelse
                return cuda_polarity(test, resolve, flags) == 1 and _is_falsy(orelse, number)
            return False
        if not isinstance(first, ast.If):
            return False
        if (
            not first.orelse
            and len(first.body) == 1
            and isinstance(first.body[0], ast.Return)
            and _is_falsy(first.body[0].value, number)
            and cuda_polarity(first.test, resolve, flags) == -1
        ):
            return True  # ``if not torch.cuda.is_available(): return False`` first
        branches = if_chain(first)
        rest = [b.body for b in branches[1:]] + ([body[1:]] if len(body) > 1 else [])
        return (
            len(branches) <= 2
            and cuda_polarity(branches[0].test, resolve, flags) == 1
            and len(rest) == 1
            and len(rest[0]) == 1
            and isinstance(rest[0][0], ast.Return)
            and _is_falsy(rest[0][0].value, number)
        )

    def _nvidia_feature_gate(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
        """A function whose first statements turn away both ROCm and machines without CUDA,
        answering no (False, None or a message: ``if IS_ROCM or not torch.cuda.is_available():
        return False``, or ``if IS_ROCM: return "not supported on ROCm"`` then ``if not
        torch.cuda.is_available(): return "requires CUDA"``). Refusing ROCm, which keeps the
        ``torch.cuda`` API, says the function answers for something only NVIDIA's hardware has (a
        kernel built for its architectures): elsewhere "no" is the right answer, its callers
        choose what it gates, and nothing after it runs on another target."""
        resolve, flags = self.ctx.qualified_name, self.ctx.cuda_flags
        turns_away: set[str] = set()
        for statement in [s for s in node.body if not _is_docstring(s)][:3]:
            if not (_is_early_return(statement) and _answers_no(statement.body)):
                break
            test = statement.test
            terms = (
                test.values
                if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or)
                else [test]
            )
            for term in terms:
                if asks_rocm(term, resolve) or _rocm_flag(term):
                    turns_away.add("rocm")
                elif cuda_polarity(term, resolve, flags) == -1:
                    turns_away.add("cuda")
        return turns_away == {"rocm", "cuda"}

    def _names_cuda(self, module: str) -> bool:
        """``vllm.v1.worker.gpu_worker``: a module below another library's top level named for
        CUDA (its words, rules/device.toml ``[backend.vendors]``); torch's own are not patches."""
        parts = module.split(".")
        if parts[0] == "torch":
            return False
        return any(
            self.vendors.words.get(word.lower()) == "cuda"
            for part in parts[1:]
            for word in part.split("_")
        )

    def _package_scope(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> None:
        absent = package_scope(node.name, self.ctx.catalog, own=self.ctx.own_packages)
        if self.multi_device.names_scope(node.name):
            # ``class FullyShardedDataParallelPlugin``, ``def get_batch_on_this_tp_rank``: FSDP
            # and model parallelism need a collective backend, which a single-device target
            # has not
            absent = (absent or frozenset()) | self.multi_device.single
        if absent:
            self.ctx.package_scopes.append((node.lineno, node.end_lineno or node.lineno, absent))

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self._package_scope(node)
        self._cuda_only_test(node)
        self.visit_many([*node.bases, *node.keywords])
        self.ctx.resolver.push(class_locals(node))
        outer = self.guard
        self.guard = outer.inside(False, frozenset(), self._test_targets(node))
        admitted = self._admitted_devices(node)
        if admitted is None:
            self.visit_many(node.body)
        else:
            # ``if device.type not in ("cpu", "cuda"): raise`` in ``__init__``: an instance
            # holds only those devices, so only their targets reach its methods
            methods = {id(m) for m in _instance_methods(node)}
            for statement in node.body:
                inner = self.guard
                if id(statement) in methods:
                    self.guard = inner.inside(False, frozenset(), admitted)
                self.visit(statement)
                self.guard = inner
        self.guard = outer
        self.ctx.resolver.pop()
        self.visit_many(node.decorator_list)

    def _admitted_devices(self, node: ast.ClassDef) -> frozenset[str] | None:
        """The targets whose devices a class's ``__init__`` lets through when it refuses the
        others: ``if device.type not in ("cpu", "cuda"): raise ValueError(...)``, or
        ``device.type != "cpu" and device.type != "cuda"`` (``cuda`` admits ROCm builds), at
        its top level or under ``if device is not None:``. None when it refuses no device."""
        init = _init_of(node)
        if init is None:
            return None
        statements = list(init.body)
        statements += [
            inner
            for s in init.body
            if isinstance(s, ast.If) and not s.orelse and compared_with_none(s.test, (ast.IsNot,))
            for inner in s.body
        ]
        for statement in statements:
            if not (
                isinstance(statement, ast.If)
                and not statement.orelse
                and isinstance(statement.body[-1], ast.Raise)
            ):
                continue
            names = _refused_device_names(statement.test)
            if names:
                return frozenset(self._targets_named(names))
        return None

    def _targets_named(self, names: set[str]) -> set[str]:
        """The targets whose devices carry these names ("cuda" admits ROCm builds)."""
        admitted: set[str] = set()
        for name in names:
            vendor = "rocm" if name == "cuda" else self.vendors.words.get(name)
            if vendor in self.vendors.markers:
                admitted.add(vendor)
        return admitted

    def _is_predicate(self, name: str) -> bool:
        """``is_cuda_available``, ``is_rocm_available``, ``has_rocm_capability``: a function
        that names a vendor. A CUDA capability helper (``has_cuda_capability(9, 0)``) is not:
        its body is where the CUDA-only question is asked, and its callers do not show it."""
        match = PREDICATE.fullmatch(name)
        if match is None or match.group(1).lower() not in self.vendors.words:
            return False
        vendor = self.vendors.words[match.group(1).lower()]
        return not (vendor == "cuda" and name.lower().endswith("_capability"))

    def _visit_defaults(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        """The parameter defaults; one that every call overrides (``_always_given``: ``def
        _pixels(shape, device=torch.device("cuda"))`` whose calls all pass ``device=...``) never
        runs, so nothing in it is a site. Records those defaults for ``_record_defaults``."""
        positional = [*node.args.posonlyargs, *node.args.args]
        outer = self.guard
        for argument, default in _default_pairs(node):
            last = default.end_lineno or default.lineno
            if self.relevance.has_candidate(default.lineno, last) and self._always_given(
                node, argument.arg, positional
            ):
                self.overridden_defaults.add(id(default))
                self.guard = outer.inside(False, frozenset(self.vendors.markers))
            self.visit(default)
            self.guard = outer

    def _record_defaults(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        """``def f(device="cuda")``: the default flows to the parameter's uses, unless the body
        assigns the parameter (then the default may never reach them), or every call overrides
        it (``_visit_defaults`` found those)."""
        pairs = [
            (a.arg, d)
            for a, d in [*_default_pairs(node), *self._option_defaults(node)]
            if self.relevance.has_candidate(d.lineno, d.lineno)
        ]
        if not pairs:
            return
        assigned = {
            n.id
            for statement in node.body
            for n in walk(statement)
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
        }
        for name, default in pairs:
            if name in assigned or id(default) in self.overridden_defaults:
                continue
            self.ctx.resolver.record_value(name, default)
            self.ctx.parameter_defaults.add(id(default))
            self.relevance.add_flow_name(name)

    def _option_defaults(
        self, node: ast.FunctionDef | ast.AsyncFunctionDef
    ) -> list[tuple[ast.arg, ast.expr]]:
        """``@click.option("--device", "-d", default="cuda")`` above ``def main(device)``: the
        command's parameter, and the default click gives it when the option is not passed."""
        parameters = {a.arg: a for a in (*node.args.posonlyargs, *node.args.args)}
        parameters.update({a.arg: a for a in node.args.kwonlyargs})
        pairs = []
        for decorator in node.decorator_list:
            if not (
                isinstance(decorator, ast.Call)
                and self.ctx.qualified_name(decorator.func) == "click.option"
            ):
                continue
            default = next((k.value for k in decorator.keywords if k.arg == "default"), None)
            name = click_parameter(decorator)
            if default is not None and name in parameters:
                pairs.append((parameters[name], default))
        return pairs

    def _always_given(
        self, node: ast.FunctionDef | ast.AsyncFunctionDef, name: str, positional: list[ast.arg]
    ) -> bool:
        """``def _check(self, dtype, device="cuda")`` whose every call in the module gives
        ``device`` (``self._check(torch.float, device=device)``): a private function's default
        that no call leaves in place never flows. Only a private name, a method (called
        through its objects, whose class's module makes the calls: ``self.cos_sin(n, q.device)``),
        or any name of a script outside a package (``train.py`` with a ``__main__`` block, no
        ``__init__.py`` beside it): another module may call a public function without the
        argument."""
        if node.name.startswith("__"):
            return False
        module = self.stack[0] if self.stack else None
        if module is None:
            return False
        in_class = len(self.stack) > 1 and isinstance(self.stack[-2], ast.ClassDef)
        if not node.name.startswith("_") and not in_class and not self._standalone_script(module):
            return False
        mentions, called = _mentions(node.name, self.ctx.text, method=True)
        calls = self.ctx.scope_fact("calls by callee", module, _calls_by_callee).get(node.name, [])
        if called > len(calls) + 1 and self._fill_stand_ins(module, node.name):
            # a call sits in a definition the sliced parse left out: parsed now
            calls = self.ctx.scope_fact("calls by callee", module, _calls_by_callee)
            calls = calls.get(node.name, [])
        if not calls or mentions != called or called != len(calls) + 1:
            # a call the parse left out (a definition not read), the name handed on as a value
            # (``partial(self._check, x)``), or no call at all
            return False
        method = bool(positional) and positional[0].arg in ("self", "cls")
        index = next((i for i, a in enumerate(positional) if a.arg == name), None)
        if index is not None and method:
            index -= 1
        for call in calls:
            given = [kw.value for kw in call.keywords if kw.arg == name]
            if index is not None and index < len(call.args):
                given.append(call.args[index])
            if any(isinstance(a, ast.Starred) for a in call.args) or any(
                kw.arg is None for kw in call.keywords
            ):
                return False  # ``f(*args)``, ``f(**options)``: cannot tell
            if not given or (isinstance(given[0], ast.Constant) and given[0].value is None):
                return False
        return True

    def _standalone_script(self, module: ast.AST) -> bool:
        """A module run as a program that no package holds: a ``__main__`` block at its top
        level, and no ``__init__.py`` in its folder (that file's presence is part of the
        cache key of every module beside it)."""
        if not isinstance(module, ast.Module) or not any(map(is_main_block, module.body)):
            return False
        folder = os.path.dirname(os.path.abspath(self.ctx.path))
        return not os.path.exists(os.path.join(folder, "__init__.py"))

    def _fill_stand_ins(self, module: ast.AST, name: str) -> bool:
        """Parse the definitions left unparsed (``python.slices``) whose lines mention
        ``name``; True if one was."""
        stand_ins = self.relevance.stand_ins
        if not stand_ins:
            return False
        lines = self.relevance.lines
        stubs = [
            node
            for node in walk(module)
            if id(node) in stand_ins
            and any(name in line for line in lines[node.lineno - 1 : node.end_lineno])
        ]
        return any([stand_ins.pop(id(stub))() for stub in stubs])

    def visit_Lambda(self, node: ast.Lambda) -> None:
        self.ctx.resolver.push(function_locals(node))
        self.visit(node.body)
        self.ctx.resolver.pop()

    def visit_ListComp(
        self, node: ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp
    ) -> None:
        """``[torch.cuda for torch in objs]``: the loop names hide outer names inside the
        comprehension only; its first iterable is evaluated outside it."""
        first, *others = node.generators
        self.visit(first.iter)
        self.ctx.resolver.push(comprehension_locals(node))
        outer = self.guard
        if not outer.cuda_only and self._over_cuda_devices(first.iter):
            # ``[torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]``: as
            # in a ``for`` loop over the same range, the count is the site. In the arm of a CUDA
            # test the count is no site, and what the element asks stays one.
            self.guard = outer.inside(True, frozenset(), frozenset({"rocm"}))
        self.visit(first.target)
        for generator in others:
            self.visit_many([generator.target, generator.iter])
        conditions = [test for generator in node.generators for test in generator.ifs]
        self.visit_many(conditions)
        if conditions:
            self._filtered_by(conditions[-1])
        if isinstance(node, ast.DictComp):
            self.visit_many([node.key, node.value])
        else:
            self.visit(node.elt)
        self.guard = outer
        self.ctx.resolver.pop()

    visit_SetComp = visit_GeneratorExp = visit_DictComp = visit_ListComp

    def _filtered_by(self, condition: ast.expr) -> None:
        """``[torch.cuda.get_device_name(d.index) for d in devices if d.type == "cuda"]``: the
        element is evaluated only where the comprehension's last condition holds, as the arm of
        an ``if`` in a loop; a CUDA test there puts it on the CUDA path (the test stays the
        site), and ``if d.type in ("cuda", "xpu")`` lets only xpu (and ROCm) evaluate it."""
        resolve = self.ctx.qualified_name
        if cuda_polarity(condition, resolve, self.ctx.cuda_flags) != 1:
            return
        only = only_targets(condition, resolve, self.vendors)
        if only is not None and only - {"rocm"}:
            # ``if d.type in ("cuda", "xpu")``: xpu evaluates the element too, and only xpu
            self.guard = self.guard.inside(False, frozenset(), only)
            return
        covered = handled_targets(condition, resolve, self.vendors) if only is None else frozenset()
        self.guard = self.guard.inside(True, covered, only, behind=condition)

    def visit_Assign(self, node: ast.Assign) -> None:
        covered = frozenset()
        info = False
        if self._only_printed(node) or self._only_raised(node):
            # ``device = torch.device("cuda" if ... else "cpu")`` then only ``print(device)``:
            # the choice places no work, it is only described
            covered = frozenset(self.vendors.markers)
        elif cuda_polarity(node.value, self.ctx.qualified_name, self.ctx.cuda_flags) == 1:
            covered = self._flag_run(node)
            # ``self.gpu_available = torch.cuda.is_available()`` in a ``SystemMetricsMonitor``:
            # the flag decides what is recorded, as a test there does
            info = self._in_observer()
        if len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            covered |= self._overridden_after(node.targets[0].id)
        outer = self.guard
        self.guard = outer.inside(False, covered, info=info)
        self.visit(node.value)
        self.guard = outer
        self._record_assignment(node.targets, node.value)
        self.visit_many(node.targets)
        for target in node.targets:  # args.dist_backend = "nccl"; self.device = "cuda"
            if isinstance(target, ast.Attribute):
                self._record_attribute(target.attr, node.value)
                self._record_attribute_flag(target, node.value)

    def _overridden_after(self, name: str) -> frozenset[str]:
        """``device = "cuda" if torch.cuda.is_available() else "cpu"`` followed at once by ``if
        torch.backends.mps.is_available(): device = "mps"`` (or ``device = "mps" if
        torch.backends.mps.is_available() else device``): the statements right after store the
        name again for the targets their vendor tests name, so those targets never use the
        first choice. The run of such statements ends at the first other statement."""
        resolve = self.ctx.qualified_name
        covered: set[str] = set()
        for statement in self._after()[:RUN_REACH]:
            test = _vendor_override(statement, name)
            only = None if test is None else only_targets(test, resolve, self.vendors)
            if only is None:
                break
            covered |= only
        return frozenset(covered)

    def _runs_a_collective(self) -> bool:
        """The function makes a collective call (``dist.all_reduce(t)``, rules/distributed.toml
        ``[collectives]``): a device backend there takes only its own device's tensors."""
        scope = self._function_scope()
        if scope is None:
            return False
        calls = frozenset(
            self.ctx.catalog.table("distributed").get("collectives", {}).get("calls", ())
        )
        return self.ctx.scope_fact(
            "runs a collective",
            scope,
            lambda s: any(isinstance(n, ast.Call) and _call_name(n) in calls for n in walk(s)),
        )

    def _unadmitted(self, branches: list[Branch]) -> frozenset[str]:
        """The targets an assert of the function keeps out of what the chain's tests compare."""
        if not self.ctx.admitted:
            return frozenset()
        tests = [b.test for b in branches if b.test is not None]
        for test in (node for t in tests for node in walk(t)):
            if isinstance(test, ast.Compare) and self._names_devices(test):
                arriving = device_checks.admitted_targets(
                    [test.left, *test.comparators], self.ctx, self.vendors.words
                )
                if arriving is not None:
                    return frozenset(self.vendors.markers) - arriving
        return frozenset()

    def _names_devices(self, test: ast.Compare) -> bool:
        """Every string the test compares with names a device (``dev == "cuda"``): ``accelerator
        == "auto"`` stands for whatever device is there, every target among them."""
        words = self.vendors.words
        strings = [
            node.value
            for part in test.comparators
            for node in walk(part)
            if isinstance(node, ast.Constant) and isinstance(node.value, str)
        ]
        return all(value.lower() in words for value in strings)

    def _flag_run(self, node: ast.Assign) -> frozenset[str]:
        """``use_cuda = torch.cuda.is_available()`` among ``use_xpu = is_xpu_available()``,
        ``use_npu = is_npu_available()``: adjacent flags for each vendor, as a dispatch's arms
        are; the targets the other flags check are covered."""
        anchor, holder = node, self.stack[-2] if len(self.stack) > 1 else None
        if isinstance(holder, ast.Try) and holder.body == [node] and len(self.stack) > 2:
            # ``try: HAS_CUDA = torch.cuda.is_available() except Exception: HAS_CUDA = False``
            # beside the same for HAS_MPS and HAS_XPU: the run is of the try statements
            anchor, holder = holder, self.stack[-3]
        block = _block_of(anchor, holder, self.ctx) if holder is not None else []
        if not block:
            return frozenset()
        resolve = self.ctx.qualified_name

        def vendor_flag(statement: ast.AST) -> frozenset[str] | None:
            if isinstance(statement, ast.Try) and len(statement.body) == 1:
                statement = statement.body[0]
            if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1):
                return None
            return only_targets(statement.value, resolve, self.vendors)

        index = _position_in(anchor, holder, self.ctx)
        covered: set[str] = set()
        for step in (-1, 1):
            position = index + step
            while 0 <= position < len(block) and abs(position - index) <= RUN_REACH:
                targets = vendor_flag(block[position])
                if targets is None:
                    break
                covered |= targets
                position += step
        return frozenset(covered)

    def _only_printed(self, node: ast.Assign) -> bool:
        """The statement gives a local name a device choice (a value with a ``"cuda"`` string:
        ``torch.device("cuda" if ... else "cpu")``), and every use of the name in the function
        is inside a print or log call. (A value read from the device, such as a memory counter,
        is still reported: elsewhere it prints a different number.)"""
        if not (len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)):
            return False
        value = node.value
        if not any(
            isinstance(n, ast.Constant)
            and isinstance(n.value, str)
            and CUDA_DEVICE_TEXT.fullmatch(n.value)
            for n in walk(value)
        ):
            return False
        scope = self._function_scope()
        return scope is not None and _only_printed_names({node.targets[0].id}, scope, self.ctx)

    def _only_raised(self, node: ast.Assign) -> bool:
        """``sm = torch.cuda.get_device_capability()`` in a block that ends in ``raise
        RuntimeError(f"... sm{sm}")``, and the name is read nowhere else in the function: the
        value only words the failure the block raises on every target."""
        if not (len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)):
            return False
        holder = self.stack[-2] if len(self.stack) > 1 else None
        block = _block_of(node, holder, self.ctx) if holder is not None else []
        scope = self._function_scope()
        if not block or not isinstance(block[-1], ast.Raise) or scope is None:
            return False
        if not self.relevance.has_candidate(node.lineno, node.end_lineno or node.lineno):
            return False
        name = node.targets[0].id
        raised = {id(n) for n in walk(block[-1])}
        reads = [
            n
            for n in walk(scope)
            if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)
        ]
        return bool(reads) and all(id(n) in raised for n in reads)

    def visit_Raise(self, node: ast.Raise) -> None:
        """``raise RuntimeError(f"unsupported GPU {torch.cuda.get_device_name()}")``: the
        message words a failure that happens on every target; a CUDA call in it only changes
        which exception says so."""
        outer = self.guard
        self.guard = outer.inside(False, frozenset(self.vendors.markers))
        self.generic_visit(node)
        self.guard = outer

    def _function_scope(self) -> ast.AST | None:
        """The innermost function being walked, or None at module or class level."""
        return next(
            (
                s
                for s in reversed(self.stack)
                if isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef)
            ),
            None,
        )

    def _feeds_only_prints(self, branch: Branch) -> bool:
        """The branch only assigns local names or entries of a local mapping, and the function
        uses them only in print or log calls (``n = torch.cuda.device_count()`` then
        ``print(f"ran on {n} GPUs")``; an environment report's ``info["GPU number"] = ...``
        then ``print(... info.items() ...)``): elsewhere a value merely different is printed
        (info)."""
        scope = self._function_scope()
        if scope is None or not branch.body:
            return False
        names = set()
        for statement in branch.body:
            if is_log_statement(statement):
                continue  # ``pct = ...`` then ``logger.info(f"... {pct:.1f}%")`` in the arm
            if isinstance(statement, ast.Assign):
                targets = statement.targets
            elif isinstance(statement, ast.AugAssign):
                targets = [statement.target]
            else:
                return False
            for target in targets:
                if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
                    target = target.value
                parts = target.elts if isinstance(target, ast.Tuple) else [target]
                if not all(isinstance(part, ast.Name) for part in parts):
                    return False
                names.update(part.id for part in parts if isinstance(part, ast.Name))
        return bool(names) and _only_printed_names(names, scope, self.ctx)

    def _record_attribute(self, attribute: str, value: ast.expr) -> None:
        if self.relevance.has_candidate(value.lineno, value.end_lineno or value.lineno):
            self.ctx.attribute_values.setdefault(attribute, []).append(value)
            self.relevance.add_flow_name(attribute)

    def record_option_defaults(self, tree: ast.AST) -> None:
        """``p.add_argument("--device", default="cuda")`` anywhere in the module: ``args.device``
        holds the default wherever it is read, also in a function defined above the parser
        (``def main(args): model.to(args.device)``, then ``main(parser.parse_args())``)."""
        if "add_argument" not in self.ctx.text:
            return  # most files define no option: no walk over their tree
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                self._record_option_default(node)

    def _record_option_default(self, node: ast.Call) -> None:
        func = node.func
        if id(node) in self.option_calls or not (
            isinstance(func, ast.Attribute) and func.attr == "add_argument"
        ):
            return
        self.option_calls.add(id(node))
        default = next((k.value for k in node.keywords if k.arg == "default"), None)
        destination = argument_destination(node)
        if default is not None and destination:
            self._record_attribute(destination, default)

    def visit_Call(self, node: ast.Call) -> None:
        # p.add_argument("--device", default="cuda") in a definition parsed only now
        self._record_option_default(node)
        func = node.func
        vendor = self._registry_vendor(node)
        if vendor is not None:
            outer = self.guard
            if vendor in ("cuda", "rocm"):
                self.guard = outer.inside(False, frozenset(self.vendors.markers))
            else:  # another vendor's entry concerns its target alone (none for MetaX)
                only = frozenset({vendor}) & frozenset(self.vendors.markers)
                self.guard = outer.inside(False, frozenset(), only)
            self.generic_visit(node)
            self.guard = outer
            return
        if self._cuda_only_param(node):
            return
        if node.args and self.ctx.qualified_name(func) == "typing.cast":
            # ``cast(torch.cuda.Stream, stream)``: the type is an annotation, which runs nothing
            outer = self.guard
            self.guard = outer.inside(False, frozenset(), info=True)
            self.visit(node.args[0])
            self.guard = outer
            self.visit_many([func, *node.args[1:], *node.keywords])
            return
        self.generic_visit(node)

    def _cuda_only_param(self, node: ast.Call) -> bool:
        """``pytest.param("cuda", torch.cuda.device_count(), marks=pytest.mark.skipif(
        torch.cuda.device_count() == 0, ...))`` in a ``parametrize`` list: a case that runs only
        on CUDA, as a test with that mark does. Its skip condition is the site, and the cases
        beside it that run only on another target (``skipif(not
        torch.backends.mps.is_available())``) cover that target. Its values are no sites: they
        are read where the case is collected, on every machine, so only values that raise
        nowhere (a count that is 0 elsewhere) are left to the skip condition. True when the
        call was visited here."""
        siblings = self.ctx.parents.get(id(node))
        if not (
            isinstance(siblings, ast.List | ast.Tuple)
            and self.ctx.qualified_name(node.func) == "pytest.param"
        ):
            return False
        polarity = polarity_of(self.ctx.qualified_name, self.ctx.cuda_flags)
        words = self.vendors.words
        if not any(
            self.test_skips.skips_without_cuda(mark, polarity, words) for mark in _param_marks(node)
        ):
            return False
        covered: frozenset[str] = frozenset()
        for other in siblings.elts:
            if other is node or not isinstance(other, ast.Call):
                continue
            if self.ctx.qualified_name(other.func) != "pytest.param":
                continue
            for mark in _param_marks(other):
                required = self.test_skips.required(mark)
                if required is not None:
                    runs_on = only_targets(required, self.ctx.qualified_name, self.vendors)
                    covered |= runs_on or frozenset()
        outer = self.guard
        if not any(map(self._raises_elsewhere, node.args)):
            self.guard = outer.inside(True, frozenset(), frozenset({"rocm"}))
        self.visit_many(node.args)
        self.guard = outer.inside(False, covered)
        self.visit_many([node.func, *node.keywords])
        self.guard = outer
        return True

    def _raises_elsewhere(self, value: ast.expr) -> bool:
        """``value`` calls a ``torch.cuda`` function that raises without CUDA (by the
        measured outcomes of rules/torch_api.toml)."""
        api = torch_cuda_api(self.ctx.catalog)
        for inner in walk(value):
            if not isinstance(inner, ast.Call):
                continue
            name = self.ctx.qualified_name(inner.func) or ""
            if name.startswith("torch.cuda."):
                member = name[len("torch.cuda.") :]
                if api.entry(member).outcome not in api_checks.NO_RAISE:
                    return True
        return False

    def _registry_vendor(self, node: ast.Call) -> str | None:
        """``DeviceSpec(name="rocm", device_count_fn=lambda: torch.cuda.device_count())`` in a
        list beside entries of the same callee named for other vendors (``name="npu"``): the
        entry of a registry per device type serves its vendor. For CUDA or ROCm its CUDA calls
        are right by construction, and the registry's lookup is the site; another vendor's
        entry (``name="metax"``, whose build keeps the ``torch.cuda`` API) concerns that vendor
        alone. The entry's vendor, or None for any other call."""
        own = self._entry_vendor(node)
        if own is None:
            return None
        holder = self.stack[-2] if len(self.stack) > 1 else None
        if not isinstance(holder, ast.List | ast.Tuple):
            return None
        callee = ast.unparse(node.func)
        siblings = any(
            isinstance(entry, ast.Call)
            and ast.unparse(entry.func) == callee
            and self._entry_vendor(entry) not in (None, own)
            for entry in holder.elts
        )
        return own if siblings else None

    def _entry_vendor(self, node: ast.Call) -> str | None:
        """The vendor a call's ``name=`` keyword names (``name="npu"``), or None."""
        value = next((k.value for k in node.keywords if k.arg == "name"), None)
        if not (isinstance(value, ast.Constant) and isinstance(value.value, str)):
            return None
        return self.vendors.words.get(value.value.lower())

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:
            self.visit(node.value)
            self._record_assignment([node.target], node.value)
        self.visit(node.target)
        # ``stream: torch.cuda.Stream | None = None``: an annotation runs nothing (info), as a
        # function's are
        outer = self.guard
        self.guard = outer.inside(False, frozenset(), info=True)
        self.visit(node.annotation)
        self.guard = outer

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
                if nccl_backend_test(value, self.nccl_flags, self.nvidia_backends):
                    self.nccl_flags.add(target.id)
                if cuda_polarity(value, self.ctx.qualified_name, self.ctx.cuda_flags) == 1:
                    self.ctx.cuda_flags.add(target.id)
                    if resolver.current is not resolver.module:
                        # a local flag: its check is near the tests on it, and stands for them
                        self.ctx.flag_values[target.id] = value
                    elif self.module_stores[target.id] == 0:
                        # given once at module level (``use_cuda = torch.cuda.is_available()``),
                        # the check stands for the tests on it, as an attribute's does
                        self.ctx.flag_values[target.id] = value
                        self.ctx.module_flags.add(target.id)
                    else:
                        self.ctx.flag_values.pop(target.id, None)
                elif (
                    isinstance(value, ast.UnaryOp)
                    and isinstance(value.op, ast.Not)
                    and (
                        cuda_polarity(value.operand, self.ctx.qualified_name, self.ctx.cuda_flags)
                        == 1
                    )
                ):
                    # ``_CUDA_UNAVAILABLE = not torch.cuda.is_available()``: a later
                    # ``@skipIf(_CUDA_UNAVAILABLE, ...)`` skips without CUDA
                    self.ctx.cuda_flags.add(negated_flag(target.id))
                elif not isinstance(value, ast.Constant):
                    self._record_vendor_flag(target.id, value)
                if resolver.current is resolver.module:
                    if self.module_stores[target.id] and target.id in self.ctx.flag_values:
                        self.ctx.flag_values.pop(target.id)  # given another value too
                    self.module_stores[target.id] += 1

    def _record_attribute_flag(self, target: ast.Attribute, value: ast.expr) -> None:
        """``self.cuda_available = device.type == "cuda"``: a later ``if self.cuda_available:``
        is a CUDA test, as long as every value the file gives the attribute is one. ``True``
        stored on the CUDA path of a test is that test (``if lqs.is_cuda: self.cpu_cache =
        True``), and ``False`` turns no CUDA path on (``else: self.cpu_cache = False``)."""
        flag = flag_name(target)
        if not flag:
            return
        if isinstance(value, ast.Constant) and value.value is False:
            return
        flags = self.ctx.cuda_flags
        armed = self.armed_flags.get(flag) if _is_true(value) else None
        if armed is not None:
            value = armed
        if armed is not None or cuda_polarity(value, self.ctx.qualified_name, flags) == 1:
            if flag not in self.other_attribute_values:
                flags.add(flag)
        else:
            self.other_attribute_values.add(flag)
            flags.discard(flag)
        # given once, the check stands for the tests on the attribute, as a local flag's does
        # (``self.is_cuda = device.type == "cuda"``, then ``if self.is_cuda:``)
        self.attribute_stores[flag] += 1
        if flag in flags and self.attribute_stores[flag] == 1:
            self.ctx.flag_values[flag] = value
        else:
            self.ctx.flag_values.pop(flag, None)

    def _record_vendor_flag(self, name: str, value: ast.expr) -> None:
        """``use_npu = is_npu_available()``, ``on_xpu = dev.type == "xpu"``: a later
        ``if use_npu:`` is a branch for that vendor."""
        targets = only_targets(value, self.ctx.qualified_name, self.vendors)
        if targets is None and isinstance(value, ast.Compare):
            named = handled_targets(value, self.ctx.qualified_name, self.vendors)
            if any(isinstance(op, NEGATIONS) for op in value.ops):
                # ``accelerated = dev.type != "cpu"``: every target but the one it names passes,
                # and ``if accelerated:`` is the branch that sends that one elsewhere, as the
                # test itself would be
                if named:
                    self.vendors.excluding_flags[name] = named
                    self.vendors.flags.pop(name, None)
                return
            targets = named  # ``on_xpu = dev.type == "xpu"``
        if targets:
            self.vendors.flags[name] = targets
            self.vendors.excluding_flags.pop(name, None)

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

    def visit_BoolOp(self, node: ast.BoolOp) -> None:
        """``torch.cuda.device_count() > 1 or torch.xpu.device_count() > 1``: in an ``or``,
        the operands that ask for another target cover it for the CUDA one (also outside an
        ``if``: a skip condition, a returned flag)."""
        last = node.end_lineno or node.lineno
        if isinstance(node.op, ast.And) and any(map(device_checks.asks_vendor_layer, node.values)):
            self._visit_after_vendor_layer(node)
            return
        if isinstance(node.op, ast.And) and self.reads_system and _asks_system(node):
            self._visit_after_reach(node)
            return
        if not isinstance(node.op, ast.Or) or not self.relevance.names_vendor(node.lineno, last):
            self.generic_visit(node)  # no other target named: nothing to cover
            return
        resolve = self.ctx.qualified_name
        handled = [handled_targets(value, resolve, self.vendors) for value in node.values]
        outer = self.guard
        for position, value in enumerate(node.values):
            others = frozenset().union(*(h for i, h in enumerate(handled) if i != position))
            self.guard = outer.inside(False, others)
            self.visit(value)
        self.guard = outer

    def _visit_after_reach(self, node: ast.BoolOp) -> None:
        """``sys.platform == "win32" and not torch.cuda.is_available()``: what the ``and``
        evaluates after a test that only some targets pass runs only on those."""
        resolve = self.ctx.qualified_name
        outer = self.guard
        for value in node.values:
            self.visit(value)
            reach = only_targets(value, resolve, self.vendors)
            if reach is None:
                reach = system_targets(value, resolve, self.vendors)
            if reach is not None:
                self.guard = self.guard.inside(False, frozenset(), reach)
        self.guard = outer

    def _visit_after_vendor_layer(self, node: ast.BoolOp) -> None:
        """``get_accelerator().device_name() == "cuda" and os.environ.get("CUDA_X")``: what the
        ``and`` evaluates after the vendor layer's answer runs only on its CUDA arm."""
        outer = self.guard
        for value in node.values:
            self.visit(value)
            if device_checks.asks_vendor_layer(value):
                self.guard = self.guard.inside(False, frozenset(self.vendors.markers) - {"rocm"})
        self.guard = outer

    def visit_If(self, node: ast.If) -> None:
        self._visit_branches(if_chain(node), statement=True)
        test = node.test
        if (
            not node.orelse
            and isinstance(node.body[-1], ast.Raise)
            and isinstance(test, ast.Compare)
            and len(test.ops) == 1
            and isinstance(test.ops[0], ast.NotIn)
        ):
            # ``if accelerator not in {"cpu", "cuda", "mps"}: raise ValueError(...)``
            self._record_admitted(node, test.left, self._listed(test.comparators[0]))
        elif node.orelse:
            # ``if device.type == "cpu": ... elif device.type == "cuda": ... else: raise``
            self._record_refusing_chain(node)

    def _record_refusing_chain(self, node: ast.If) -> None:
        """An ``if``/``elif`` chain of equality tests of one expression whose final ``else``
        raises admits only the strings it tests, from its end on."""
        branches = if_chain(node)
        last = branches[-1]
        if last.test is not None or not last.body or not isinstance(last.body[-1], ast.Raise):
            return
        tested: ast.expr | None = None
        values: list[ast.expr] = []
        for branch in branches[:-1]:
            test = branch.test
            if not (
                isinstance(test, ast.Compare)
                and len(test.ops) == 1
                and isinstance(test.ops[0], ast.Eq | ast.In)
            ):
                return
            if tested is not None and ast.unparse(test.left) != ast.unparse(tested):
                return
            tested = test.left
            compared = test.comparators[0]
            values += compared.elts if isinstance(compared, ast.Tuple | ast.List) else [compared]
        if tested is not None:
            self._record_admitted(node, tested, values, after=node.end_lineno or node.lineno)

    def _listed(self, listed: ast.expr) -> list[ast.expr] | None:
        """The elements of a literal collection, or of a local name holding one (``allowed =
        {"cpu", "gpu", "cuda", "mps"}``)."""
        if isinstance(listed, ast.Name):
            named = device_checks.closed_set(listed, self.ctx)
            listed = named if named is not None else listed
        return list(listed.elts) if isinstance(listed, ast.List | ast.Tuple | ast.Set) else None

    def visit_IfExp(self, node: ast.IfExp) -> None:
        if boolean_choice(node):
            # ``use_gpu = True if torch.cuda.is_available() else False``: the test's own truth,
            # judged where the name is tested, as for ``use_gpu = torch.cuda.is_available()``
            self.visit(node.test)
            return
        if cuda_polarity(node.test, self.ctx.qualified_name, self.ctx.cuda_flags) == 0:
            self.plain_choices.append(node)
        self._visit_branches(ifexp_chain(node), statement=False)

    def _visit_branches(self, branches: list[Branch], statement: bool) -> None:
        for branch in branches:
            if branch.test is not None:
                self._variable_flags(branch.test)
        resolve, flags = self.ctx.qualified_name, self.ctx.cuda_flags
        # Early-return siblings (``if cuda: return ...`` then ``if xpu: return ...``) count as
        # branches of this chain for what they handle.
        extra = self._early_return_siblings(branches) if statement else []
        if statement:
            extra += self._vendor_run(branches)
        # A branch handles a target when its test or its body names that target's API or device.
        polarity = [
            cuda_polarity(b.test, resolve, flags) if b.test is not None else 0 for b in branches
        ]
        if self._dispatches_on_kinds(branches):
            # ``if kind == "torchscript": ... x.to("xpu") elif kind == "bladedisc": ...``: arms
            # for other things than devices; what one arm does for xpu is not what another does
            handled = [frozenset[str]() for _ in branches]
        else:
            handled = [self._handled(b) for b in branches]
        extra_handled = frozenset().union(*(self._handled(b) for b in extra))
        outer = self.guard
        # ``if torch >= 2.3: torch.amp.X(...) else: torch.cuda.amp.X()``: the older arm
        # (also ``elif vendor: ... else: if torch >= 2.3: ... else: ...``, flattened into the
        # chain as its last two branches)
        last = len(branches) - 1
        gate = branches[last - 1].test if last else None
        newer = None
        if gate is not None and (last == 1 or branches[last].test is None):
            newer = newer_torch_arm(gate)
        old_arm = None if newer is None else (last if newer else last - 1)
        # ``device = "cuda" if torch.cuda.is_available() else "cpu"`` in a function that makes a
        # collective call: elsewhere the CPU tensors meet the device backend's process group,
        # which raises; a single-device target's group is Gloo, which takes them
        collective_fallback = (
            last > 0
            and branches[last].test is None
            and _falls_back_to_cpu(branches[last])
            and self._runs_a_collective()
        )
        # ``dev = torch.device("cuda", x.get_device()) if x.is_cuda else torch.device("cpu")``:
        # on another accelerator ``x`` stays on its device, and what the CPU arm gives meets it
        tensor_fallback = (
            last == 1
            and branches[1].test is None
            and _tests_own_device(branches[0].test)
            and _makes_cpu_data(branches[1])
        )
        refused_else = (
            last > 0
            and branches[last].test is None
            and (
                _refuses(branches[last])
                or _says_why_and_exits(branches[last])
                or collective_fallback
                or tensor_fallback
            )
        ) or (statement and self._falls_through_to_raise(branches))
        # ``if args.fp8: if device_type != "cuda": print("ignoring --fp8") else: ...``: a CUDA
        # test inside a branch taken for an NVIDIA-only feature gates that feature by design
        feature_gate = any(polarity) and self._in_feature_branch()
        for branch in branches:
            self._package_test_scope(branch)
        rocm_arms = [
            i
            for i, b in enumerate(branches)
            if b.test is not None and only_targets(b.test, resolve, self.vendors) == {"rocm"}
        ]
        rocm_arm = bool(rocm_arms)
        twinned: set[int] | None = None  # the branches with a generic twin, found on demand
        # ``if not x.is_cuda: x = x.cpu()``: the other targets take the lone arm (the message)
        lone_off_cuda = _lone_arm_off_cuda(branches, polarity)
        # ``assert device_type in ["cuda", "ascend", "camb"]`` at the top of the function: a
        # target it leaves out never reaches the chain
        unadmitted = self._unadmitted(branches)
        for position, branch in enumerate(branches):
            covered = frozenset().union(
                extra_handled, unadmitted, *(h for i, h in enumerate(handled) if i != position)
            )
            only = None
            if branch.test is not None:
                only = only_targets(branch.test, resolve, self.vendors)
                either = isinstance(branch.test, ast.BoolOp) and isinstance(branch.test.op, ast.Or)
                if only is None or either:  # ``dev in ("cuda", "xpu")`` handles xpu itself
                    covered |= handled_targets(branch.test, resolve, self.vendors)
                if only is None:
                    # ``if sys.platform == "win32":``: only the targets with a build there
                    only = system_targets(branch.test, resolve, self.vendors)
            elif outer.cuda_only and rocm_arm:
                # ``if torch.cuda.is_available(): if is_rocm_available(): ... else: import
                # pynvml``: only NVIDIA reaches the else; the CUDA test above is the site
                only = frozenset()
            elif last == 1 and (kept := negated(branches[0].test)) is not None:
                # ``backend if backend != "hip" else "cuda"``, ``if not is_npu_available(): ...
                # else: ...``: the other arm of a negated vendor test is that vendor's, which
                # the first arm, taken everywhere else, does not handle
                only = only_targets(kept, resolve, self.vendors)
                covered -= only or frozenset()
            if (
                isinstance(branch.test, ast.Compare)
                and isinstance(branch.test.ops[0], ast.Eq | ast.In)
                and device_checks.compares_device_object(branch.test, self.ctx)
            ):
                # ``if device == "cuda":`` with ``device = torch.device(...)``: a device never
                # equals a string, so no machine runs the arm, NVIDIA's included
                only = frozenset()
            if branch.test is not None and nccl_backend_test(
                branch.test, self.nccl_flags, self.nvidia_backends
            ):
                # ``if backend == Backend.NCCL: dev = torch.device("cuda", ...)``: the arm runs
                # only where the process group is on NCCL, so on CUDA or ROCm; the backend test
                # is the site for the other targets' collective backends
                only = frozenset({"rocm"})
            # the ROCm arms beside this one (``_is_cuda() or _is_hip()`` is one of its own)
            other_rocm = [i for i in rocm_arms if i != position]
            if (
                other_rocm
                and polarity[position] == 1
                and (
                    other_rocm[0] < position
                    or _names_one_of(branch.test, branches[other_rocm[0]].test)
                )
            ):
                # ``if is_torch_rocm(): ... elif is_torch_cuda_available(): import pynvml``:
                # ROCm took the earlier arm, so only NVIDIA reaches this one; the other targets
                # are the CUDA test's to report. So too in any order when both arms compare one
                # name with a string (``device_type == "cuda"`` beside ``device_type == "hip"``):
                # the name holds one or the other
                only = frozenset()
            if self._may_report(branch):
                if twinned is None:
                    twinned = _with_generic_twin(branches)
                if position in twinned:
                    covered |= frozenset(self.vendors.markers)
            if position == 0 and _moves_to_devices_of_data(branches, polarity):
                # ``if not x.is_cuda: x = x.to(y.device)``: the other targets' arm moves the data
                # where other data is, which is right on every device
                covered |= frozenset(self.vendors.markers)
            if polarity[position] == 1 and _asks_vendor_layer(branch.test):
                # ``if get_accelerator().device_name() == "cuda":`` a vendor layer's CUDA arm,
                # which ROCm builds take too: nothing in it is another vendor's concern
                covered |= frozenset(self.vendors.markers) - {"rocm"}
            if feature_gate or (
                polarity[position] == 1
                and (_only_calls(branch, NVIDIA_FEATURE_CALL) or _asks_for_feature(branch.test))
            ):
                # ``if torch.cuda.is_available(): check_nvlink_connectivity()``: an NVIDIA
                # feature gated on NVIDIA, correct by design
                covered |= frozenset(self.vendors.markers)
            if position == old_arm and _newer_twin(branch, branches[2 * last - 1 - position]):
                # ``torch.amp.GradScaler(dev) if newer else torch.cuda.amp.GradScaler()``: the
                # older torch has no generic form, and the newer arm already is one
                covered |= frozenset(self.vendors.markers)
            # ``if TORCH_VERSION < digit_version("1.10"):``: an arm for an older torch, which
            # had no xpu or mps build, nor the newer device-generic forms
            bound = older_torch_bound(branch.test) if branch.test is not None else None
            covered |= self._absent_before(bound)
            if collective_fallback and polarity[position] == 1:
                covered |= self.multi_device.single
            if tensor_fallback:
                covered |= {"cpu"}  # a CPU-only machine's tensors are on the CPU: nothing meets
            if (
                (polarity[position] == 1 or (polarity[position] == -1 and last == 1))
                and position < last
                and branches[last].test is None
                and _same_body(branch, branches[last])
            ):
                # ``if "cuda" in t: n = torch.cuda.device_count() ... else: n =
                # torch.cuda.device_count()``: the other targets run the same code in the final
                # ``else``, whose own findings say what happens there; the test decides nothing
                # (a negated test with only an ``else`` too: ``if "cuda" not in str(d): d =
                # torch.device(d) else: d = torch.device(d)``)
                covered |= frozenset(self.vendors.markers)
            has_else = position < last and branches[last].test is None
            if (
                self.multi_device.concerns(branch)
                or (polarity[position] == 1 and self.multi_device.only_selects_device(branch))
                or (
                    branch.test is not None
                    and has_else
                    and self.multi_device.splits_batches(branch)
                )
            ):
                # ``elif torch.cuda.is_available(): backend = "nccl"``: a single-device target
                # has no collective backend, no visible-devices mask, never a second device (nor
                # a batch to split over several, beside an ``else`` that runs the model as it is)
                covered |= self.multi_device.single
            if polarity[position] == 1 and statement and _refines(branch, self._after()):
                # ``if torch.cuda.is_available(): return "bf16" if supported else "16"`` then
                # ``return "bf16"``: the other targets get the CUDA arm's own best answer
                covered |= frozenset(self.vendors.markers)
            if polarity[position] == 1 and _builds_refusal(branch):
                # ``if torch.cuda.is_initialized(): raise RuntimeError(...)``: a refusal only
                # CUDA needs; elsewhere the test is False and the code goes on
                covered |= frozenset(self.vendors.markers)
            if branch.test is not None and _only_cleanup(branch):
                # ``if backend == "nccl": atexit.register(destroy)``: cleanup that only the
                # CUDA backend asks for; nothing to port
                covered |= frozenset(self.vendors.markers)
            if polarity[position] == 1 and self._only_relayouts(branch):
                # ``if q.device.type == "cuda": q = q.contiguous()``: a workaround for a CUDA
                # kernel, harmless to skip elsewhere
                covered |= frozenset(self.vendors.markers)
            if branch.test is not None and self._tests_accelerator_choice(branch.test):
                # ``if args.device == "gpu": model.cuda()``: a CPU-only machine takes the CPU
                # choice, never this arm
                covered |= {"cpu"}
            if polarity[position] == 1 and _works_around_older_gpus(branch.test):
                # ``device_type == "cuda" and torch.cuda.get_device_capability()[0] < 8``: a
                # workaround for older NVIDIA GPUs, which the other targets do not need
                covered |= frozenset(self.vendors.markers)
            fallback = branches[last] if position < last and branches[last].test is None else None
            if (
                polarity[position] == 1
                and fallback is not None
                and (_adds_only_checks(branch, fallback) or _passes_device_on(branch, fallback))
            ):
                # the generic ``else`` arm does what the CUDA arm does: ``if
                # dev.startswith("cuda"): if not torch.cuda.is_available(): raise ...`` before
                # the else arm's own statement (elsewhere only the check is skipped), or ``m =
                # {"": torch.cuda.current_device()}`` where the else arm says ``m = {"": dev}``
                covered |= frozenset(self.vendors.markers)
            if polarity[position] == 1 and self.attention.only_picks_kernel(branch, fallback):
                # ``"flash_attention_2" if dev.startswith("cuda") else "sdpa"``: the arm only
                # picks FlashAttention's kernel where flash-attn is built; the others get the
                # portable one, as they should
                covered |= frozenset(self.vendors.markers)
            if polarity[position] == 1 and _only_asserts(branch):
                # ``if device_type == "cuda": assert torch.cuda.is_available()``: a check that
                # only the CUDA path needs; skipping it elsewhere is correct
                covered |= frozenset(self.vendors.markers)
            # A negated CUDA test (``if not torch.cuda.is_available()``) puts every later branch
            # of the chain on the CUDA path, whether or not its own arm leaves.
            cuda_only = polarity[position] == 1 or -1 in polarity[:position]
            if only is not None and only - {"rocm"}:
                cuda_only = False  # ``if dev in ("cuda", "xpu"):``: xpu runs the arm too
            behind = self._cuda_test(branches, position, polarity) if cuda_only else None
            if not cuda_only and polarity[position] == 0 and branch.test is not None:
                # ``if state is not None: torch.cuda.set_rng_state(state)``
                behind = self._cuda_sentinel(branch.test)
                cuda_only = behind is not None
            # A CUDA branch that only prints or logs (memory used, "running on GPU"), or whose
            # sibling is a stand-in (``torch.cuda.synchronize if cuda else lambda: None``): info.
            logs = polarity[position] != 0 and (
                # ``if not torch.cuda.is_available(): print("using CPU") elif ...: model.cuda()``:
                # the later arms are the CUDA path, and what they hold is what the test decides
                (
                    (_only_logs(branch) or _only_notes(branch))
                    and (polarity[position] == 1 or all(map(_only_logs, branches[position + 1 :])))
                )
                or (
                    polarity[position] == -1
                    and statement
                    and _returns(branch)
                    and _only_warns(self._after())
                )
                or self.test_skips.ends_in_skip(branch.body, self._in_test())
                or (polarity[position] == 1 and self._else_skips(branches))
                or self._feeds_only_prints(branch)
                or _only_calls(branch, NUMERIC_MODE_CALL)
                or self._waits_for_a_clock(branch)
                or (polarity[position] == 1 and self._times_with_events(branch, branches))
                or self._only_releases_cache(branch)
                or self._in_environment_report()
                or self._in_observer()
                or _fills_index(branch)
                or any(_stand_in(other) for other in branches if other is not branch)
            )
            if polarity[position] == 1 and branch.test is not None:
                self.ctx.cuda_branches.append((branch.test, branch.body))
            if branch.test is not None:
                # The CUDA check itself is CUDA-only detection: False on every other vendor,
                # unless the branch refuses to run (``if device.type != "cuda": raise``), or
                # the chain's final ``else`` does (``if dev == "cuda": ... else: raise``).
                refuses = (
                    _refuses(branch)
                    or (polarity[position] == -1 and _says_why_and_exits(branch))
                    or (refused_else and admits_cuda(branch.test, resolve, flags))
                )
                if refuses:
                    self.ctx.record_refusal(branch.test)
                detection = polarity[position] != 0 and not refuses
                unbound = None
                if statement and polarity[position] == 1 and not refuses:
                    unbound = self._unbound_read(branches, position)
                self.guard = outer.inside(
                    (cuda_only and not refuses) or detection,
                    covered,
                    _short_circuit_only(branch.test, resolve, self.vendors),
                    info=logs,
                    refuses=refuses,
                    unbound=unbound,
                    taken_off_cuda=lone_off_cuda,
                )
                self.visit(branch.test)
            self.guard = outer.inside(
                cuda_only,
                covered,
                only,
                old_torch=position == old_arm,
                info=logs,
                restated=_tested_values(branch.test),
                fails_elsewhere=refused_else and polarity[position] == 1,
                torch_below=bound,
                behind=behind,
            )
            self.visit_many(branch.body)
        self.guard = outer

    def _variable_flags(self, test: ast.expr) -> None:
        """``hip_val = os.environ.get("HIP_VISIBLE_DEVICES")`` then ``if hip_val:``: a variable
        only one target's runtime reads (rules/environment.toml) is set only on its machines,
        so the branch is that target's. (The assignment itself may hold nothing the walk
        visits, so the function is searched when its test is met.)"""
        names = {n.id for n in walk(test) if isinstance(n, ast.Name)} - self.vendors.flags.keys()
        if not names:
            return
        if self._names_vendor_variable is None:  # once per file: is any such variable named?
            text = self.ctx.text
            self._names_vendor_variable = any(
                name in text for name in vendor_variables(self.ctx.catalog)
            )
        if not self._names_vendor_variable:
            return
        scope = self.ctx.function_scope() or (self.stack[0] if self.stack else None)
        if scope is None:
            return
        found = self.variable_flags.get(id(scope))
        if found is None:  # once per function: name -> target
            variables = vendor_variables(self.ctx.catalog)
            found = self.variable_flags[id(scope)] = {
                node.targets[0].id: target
                for node in walk(scope)
                if isinstance(node, ast.Assign)
                and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
                and (target := variables.get(read_variable(node.value) or ""))
            }
        for name in names & found.keys():
            self.vendors.flags[name] = frozenset({found[name]})

    def _cuda_test(
        self, branches: list[Branch], position: int, polarity: list[int]
    ) -> ast.expr | None:
        """The positive CUDA test whose arm this branch is: ``if torch.cuda.is_available():``,
        ``if device.type == "cuda":``, or a later arm of a chain after ``if not
        torch.cuda.is_available():`` (``elif``/``else``)."""
        test = branches[position].test
        if polarity[position] == 1 and test is not None:
            return test
        earlier = zip(branches[:position], polarity[:position], strict=True)
        negated = [branch.test for branch, sign in earlier if sign == -1]
        return negated[-1] if negated else None

    def _cuda_sentinel(self, test: ast.expr) -> ast.expr | None:
        """``if state is not None:`` (or ``if state:``, or an ``and`` with it) where ``state``
        holds None or what a ``torch.cuda`` call gave (``guards.cuda_sentinels``): the arm runs
        only where that call ran, so the call (or the CUDA test it is behind) is the site. The
        call's store, or None. A parameter of the function may hold anything its callers give."""
        sentinels = self.ctx.scope_fact(
            "cuda sentinels", self.stack[0], lambda m: cuda_sentinels(m, self.ctx.qualified_name)
        )
        if not sentinels:
            return None
        scope = self._function_scope()
        parameters = parameter_names(scope) if scope is not None else set()
        operands = (
            test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) else [test]
        )
        for operand in operands:
            if compared_with_none(operand, (ast.IsNot,)):
                operand = operand.left
            name = flag_name(operand)
            if name in sentinels and name not in parameters:
                return sentinels[name]
        return None

    def _asks_availability(self, test: ast.expr) -> bool:
        return asks_availability(test, self.ctx.qualified_name, self.ctx.cuda_flags)

    def _in_environment_report(self) -> bool:
        """The innermost function, or the module, is named for an environment report
        (``collect_env``, rules/device.toml ``[device.environment_reports]``): what it gathers
        is printed."""
        return self.ctx.in_environment_report()

    def _in_observer(self) -> bool:
        """The innermost class, or one of its bases, is named for observing the run
        (``MemoryMonitor``, ``TextLoggerHook``; rules/device.toml ``[device.observers]``): a
        CUDA test there only decides what is recorded."""
        scope = next((s for s in reversed(self.stack) if isinstance(s, ast.ClassDef)), None)
        if scope is None:
            return False
        table = self.ctx.catalog.table("device").get("device", {}).get("observers", {})
        names = [scope.name, *(_last_name(base) for base in scope.bases)]
        return any(word in name for name in names for word in table.get("words", ()))

    def _tests_accelerator_choice(self, test: ast.expr) -> bool:
        """The test compares a value with a name for any accelerator's choice (``args.device ==
        "gpu"``, ``accelerator.upper() in ("GPU",)``; rules/device.toml
        ``[device.accelerator_choices]``), alone or in an ``and``."""
        table = self.ctx.catalog.table("device").get("device", {}).get("accelerator_choices", {})
        words = frozenset(table.get("words", ()))
        values = (
            test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) else [test]
        )
        for value in values:
            if not (
                isinstance(value, ast.Compare)
                and len(value.ops) == 1
                and isinstance(value.ops[0], ast.Eq | ast.In)
            ):
                continue
            for operand in (value.left, *value.comparators):
                several = isinstance(operand, ast.Tuple | ast.List | ast.Set)
                for element in operand.elts if several else [operand]:
                    if (
                        isinstance(element, ast.Constant)
                        and isinstance(element.value, str)
                        and element.value.lower() in words
                    ):
                        return True
        return False

    def _only_relayouts(self, branch: Branch) -> bool:
        """Every statement of the branch is ``x = x.contiguous()`` (rules/device.toml
        ``[device.layout_workarounds]``): it changes how tensors are laid out, nothing else."""
        table = self.ctx.catalog.table("device").get("device", {}).get("layout_workarounds", {})
        methods = frozenset(table.get("methods", ()))
        return bool(branch.body) and all(
            isinstance(s, ast.Assign)
            and isinstance(s.value, ast.Call)
            and isinstance(s.value.func, ast.Attribute)
            and s.value.func.attr in methods
            and any(ast.unparse(t) == ast.unparse(s.value.func.value) for t in s.targets)
            for s in branch.body
        )

    def _holds_without_cuda(self, test: ast.expr) -> bool:
        """Whether the early exit's test holds on every machine without CUDA, so that only CUDA
        goes on after it: ``not torch.cuda.is_available()``, ``not use_cuda or x``, ``not
        torch.cuda.is_available() and not is_musa_available()`` (no target is MUSA). Not ``tp
        and not torch.cuda.is_available()``: where ``tp`` is false every machine goes on."""
        if isinstance(test, ast.BoolOp):
            parts = [self._holds_without_cuda(value) for value in test.values]
            return any(parts) if isinstance(test.op, ast.Or) else all(parts)
        negated = isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)
        if negated and self.vendors.predicate_vendor(test.operand) is not None:
            return True  # ``not is_npu_available()``: false only on npu, which ``reach`` admits
        return cuda_polarity(test, self.ctx.qualified_name, self.ctx.cuda_flags) == -1

    def _absent_before(self, bound: tuple[int, int] | None) -> frozenset[str]:
        """The targets with no PyTorch build older than ``bound`` (rules/targets.toml
        ``first_torch``): an arm for such a torch never runs on them."""
        if bound is None:
            return frozenset()
        return frozenset(
            target
            for target, facts in self.ctx.catalog.target_facts().items()
            if "first_torch" in facts and version_tuple(facts["first_torch"]) >= bound
        )

    def _waits_for_a_clock(self, branch: Branch) -> bool:
        """``if torch.cuda.is_available(): torch.cuda.synchronize()`` in a function that reads a
        clock (rules/device.toml ``[device.timing]``): the wait only makes a timing exact, so
        elsewhere a merely different time is measured (info)."""
        table = self.ctx.catalog.table("device").get("device", {}).get("timing", {})
        waits = tuple(table.get("waits", ()))
        if not branch.body or not all(
            isinstance(s, ast.Expr)
            and isinstance(s.value, ast.Call)
            and _call_name(s.value) in waits
            for s in branch.body
        ):
            return False
        scope = self._function_scope()
        clocks = frozenset(table.get("clocks", ()))

        def reads_clock(scope: ast.AST) -> bool:
            return any(
                isinstance(node, ast.Call) and self.ctx.qualified_name(node.func) in clocks
                for node in walk(scope)
            )

        return scope is not None and self.ctx.scope_fact("reads a clock", scope, reads_clock)

    def _times_with_events(self, branch: Branch, branches: list[Branch]) -> bool:
        """``if use_cuda: start = torch.cuda.Event(enable_timing=True); start.record() else: t0 =
        time.time()``: the CUDA arm only times with device events (rules/device.toml
        ``[device.timing]`` ``events``) and the final ``else`` reads a clock instead, so elsewhere
        only the way the time is taken differs (info)."""
        table = self.ctx.catalog.table("device").get("device", {}).get("timing", {})
        events = frozenset(table.get("events", ()))
        clocks = frozenset(table.get("clocks", ()))
        fallback = branches[-1]
        if fallback is branch or fallback.test is not None or not branch.body:
            return False
        calls = [n for part in branch.body for n in walk(part) if isinstance(n, ast.Call)]
        if not calls or any(_call_name(call) not in events for call in calls):
            return False
        return any(
            isinstance(node, ast.Call) and self.ctx.qualified_name(node.func) in clocks
            for part in fallback.body
            for node in walk(part)
        )

    def _only_releases_cache(self, branch: Branch) -> bool:
        """``if torch.cuda.is_available(): torch.cuda.empty_cache(); torch.cuda.synchronize()``:
        the arm only hands cached memory back (rules/device.toml ``[device.cache_release]``), so
        elsewhere the memory is merely kept cached (info)."""
        table = self.ctx.catalog.table("device").get("device", {}).get("cache_release", {})
        frees = frozenset(table.get("frees", ()))
        allowed = frees | frozenset(table.get("with", ()))
        names = [
            _call_name(s.value)
            for s in branch.body
            if isinstance(s, ast.Expr) and isinstance(s.value, ast.Call)
        ]
        return (
            bool(names)
            and len(names) == len(branch.body)
            and all(name in allowed for name in names)
            and any(name in frees for name in names)
        )

    def _in_feature_branch(self) -> bool:
        """The node being visited is in the body of an ``if`` whose test names an NVIDIA-only
        feature (``if args.fp8:``, ``if use_nvlink:``)."""
        for holder, inner in zip(self.stack[-2::-1], self.stack[:0:-1], strict=False):
            if isinstance(holder, ast.If) and inner in holder.body and _names_feature(holder.test):
                return True
        return False

    def _package_test_scope(self, branch: Branch) -> None:
        """``if type(p).__name__ in ["Int8Params", "Params4bit"] and dev.type in ("cuda",
        "xpu"):``: a branch whose test names a CUDA-only package, or a class only that package
        defines, runs only where the package does (a negated test is the other way round)."""
        test = branch.test
        if test is None or not branch.body:
            return
        if any(isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.Not) for n in walk(test)):
            return
        absent = self._package_in(test)
        if absent:
            last = max(n.end_lineno or n.lineno for n in branch.body)
            self.ctx.package_scopes.append((test.lineno, last, absent))

    def _package_in(self, test: ast.expr) -> frozenset[str] | None:
        """The targets without a build of the package a branch test names (``_package_test_scope``),
        or None. In an ``or`` every operand must name one (``load_jit or load_trt`` also holds
        without TensorRT); in an ``and`` one is enough."""
        if isinstance(test, ast.BoolOp):
            found = [self._package_in(value) for value in test.values]
            if isinstance(test.op, ast.Or):
                return found[0] if all(found) else None
            return next((absent for absent in found if absent), None)
        attributes = {  # ``hasattr(m.weight, "bnb_quantized")``: an attribute's name
            id(n.args[1])
            for n in walk(test)
            if isinstance(n, ast.Call)
            and isinstance(n.func, ast.Name)
            and n.func.id in ("hasattr", "getattr")
            and len(n.args) > 1
        }
        for node in walk(test):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                # ``"Int8Params"``, ``"bitsandbytes.nn"``; not ``has_flag("--x",
                # "APEX_DISTRIBUTED_ADAM")``, a build option named after the project
                word, whole = node.value.split(".")[0], id(node) not in attributes
            elif isinstance(node, ast.Name | ast.Attribute):
                word = node.id if isinstance(node, ast.Name) else node.attr
                if len(word) <= SHORT_ALIAS and self.ctx.qualified_name(node) is None:
                    continue  # ``isinstance(te, nn.Module)``: a variable, not the imported ``te``
                whole = False
            else:
                continue
            absent = package_scope(word, self.ctx.catalog, whole)
            if absent:
                return absent
        return None

    def _unbound_read(self, branches: list[Branch], position: int) -> str | None:
        """``if torch.cuda.is_available(): n_gpu = torch.cuda.device_count()`` then ``total /
        n_gpu``: a name only the CUDA arm at ``position`` binds that is read after the chain
        (the ``if`` being visited); None when there is none."""
        depth = next(
            (i for i in range(len(self.stack) - 2, -1, -1) if isinstance(self.stack[i], SCOPES)),
            None,
        )
        if depth is None or not isinstance(self.stack[-1], ast.If):
            return None
        if isinstance(self.stack[depth], ast.ClassDef | ast.Module):
            # a class body's names are read as attributes; the reads of a module's names are
            # spread over its whole text, which a large file's parts do not each hold
            return None
        fallthrough = branches[-1].body if branches[-1].test is None else None
        return bindings.unbound_read(self.stack[depth:], branches[position].body, fallthrough)

    def _after(self) -> list[ast.AST]:
        """The statements after the one being visited, in its block."""
        if len(self.stack) < 2:
            return []
        node, parent = self.stack[-1], self.stack[-2]
        for field in ("body", "orelse", "finalbody"):
            block = getattr(parent, field, None)
            if isinstance(block, list) and node in block:
                return block[block.index(node) + 1 :]
        return []

    def _falls_through_to_raise(self, branches: list[Branch]) -> bool:
        """``if cuda: return "cuda"`` ``elif xpu: return "xpu"`` then ``raise ...`` at the end of
        the function: every arm leaves, so what follows the chain is its ``else``, and it ends
        by refusing (a target no arm takes stops there, it does not fall back)."""
        if branches[-1].test is None or not all(_leaves(b.body) for b in branches):
            return False
        if len(self.stack) < 2 or not isinstance(
            self.stack[-2], ast.FunctionDef | ast.AsyncFunctionDef
        ):
            return False
        rest = self._after()
        return (
            bool(rest)
            and isinstance(rest[-1], ast.Raise)
            and not any(isinstance(n, ast.Return) for s in rest for n in walk(s))
        )

    def _may_report(self, branch: Branch) -> bool:
        """The branch has a line that can hold a finding (what a generic twin would cover)."""
        nodes = [branch.test, *branch.body] if branch.test is not None else branch.body
        first = min(n.lineno for n in nodes)
        return self.relevance.has_candidate(first, max(n.end_lineno or n.lineno for n in nodes))

    def _handled(self, branch: Branch) -> frozenset[str]:
        nodes = [branch.test, *branch.body] if branch.test is not None else branch.body
        first = min(n.lineno for n in nodes)
        last = max(n.end_lineno or n.lineno for n in nodes)
        if not self.relevance.names_vendor(first, last) and not self._names_flag(first, last):
            return frozenset()  # nothing in it can name a target
        resolve = self.ctx.qualified_name
        return frozenset().union(*(handled_targets(n, resolve, self.vendors) for n in nodes))

    def _dispatches_on_kinds(self, branches: list[Branch]) -> bool:
        """Every test of the chain compares one expression with strings that name no device
        or vendor (``type == "onnx"``, ``elif type == "torchscript"``): the arms are per kind
        of something else, and what one does for a target covers nothing in another."""
        tests = [b.test for b in branches if b.test is not None]
        if len(tests) < 2:
            return False
        compared = [_string_equality(test) for test in tests]
        if any(c is None for c in compared) or len({c[0] for c in compared if c}) != 1:
            return False
        return not any(c[1].lower() in self.vendors.words for c in compared if c)

    def _names_flag(self, first: int, last: int) -> bool:
        flags = [*self.vendors.flags, *self.vendors.excluding_flags]
        return bool(flags) and any(
            name in line for line in self.relevance.lines[first - 1 : last] for name in flags
        )

    def _early_return_siblings(self, branches: list[Branch]) -> list[Branch]:
        """The other ``if X: return`` statements of a chain without ``else``, and the statements
        after the chain (its fall-through arm)."""
        if len(branches) != 1 or len(self.stack) < 2:
            return []
        node, parent = self.stack[-1], self.stack[-2]
        block = next((v for v in vars(parent).values() if isinstance(v, list) and node in v), None)
        if block is None:
            return []
        index = block.index(node)

        leaves = _is_early_return(node)

        def partner(statement: ast.AST) -> bool:  # also ``if name is None:`` detection chains
            return (leaves and _is_early_return(statement)) or _same_test(statement, node)

        start = index
        while start > max(0, index - RUN_REACH) and partner(block[start - 1]):
            start -= 1
        end = index + 1
        while end < min(len(block), index + 1 + RUN_REACH) and partner(block[end]):
            end += 1
        siblings = [Branch(s.test, list(s.body)) for s in block[start:end] if s is not node]
        # ``if name is None:`` after earlier statements that try to set ``name``
        unset = _unset_name(node.test)
        if unset is not None:
            siblings += [Branch(None, [s]) for s in block[:start] if _assigns(s, unset)]
        cut = end < len(block) and partner(block[end])  # the run goes on past RUN_REACH
        run = block[start:end]
        if leaves and block[end:] and not cut and all(_is_early_return(s) for s in run):
            siblings.append(Branch(None, list(block[end:])))
        return siblings

    def _vendor_run(self, branches: list[Branch]) -> list[Branch]:
        """``if is_xpu_available(): ...`` then ``if is_mlu_available(): ...`` then ``if
        is_cuda_available(): ...``: a run of ``if`` statements that each start with a vendor
        test is one dispatch written without ``elif``; the others' branches are siblings."""
        if len(self.stack) < 2 or not self._vendor_if(self.stack[-1]):
            return []
        node = self.stack[-1]
        block = _block_of(node, self.stack[-2], self.ctx)
        if not block:
            return []
        index = _position_in(node, self.stack[-2], self.ctx)
        start = index
        while start > max(0, index - RUN_REACH) and self._vendor_if(block[start - 1]):
            start -= 1
        end = index + 1
        while end < min(len(block), index + 1 + RUN_REACH) and self._vendor_if(block[end]):
            end += 1
        return [
            branch
            for statement in block[start:end]
            if statement is not node
            for branch in if_chain(statement)
            if branch.test is not None and self._vendor_test(branch.test)
        ]

    def _vendor_if(self, statement: ast.AST) -> bool:
        """An ``if`` whose first test is a vendor predicate or a CUDA test."""
        return isinstance(statement, ast.If) and self._vendor_test(statement.test)

    def _vendor_test(self, test: ast.expr) -> bool:
        resolve = self.ctx.qualified_name
        return (
            only_targets(test, resolve, self.vendors) is not None
            or cuda_polarity(test, resolve, self.ctx.cuda_flags) == 1
        )

    def visit_For(self, node: ast.For | ast.AsyncFor) -> None:
        """``for i in range(torch.cuda.device_count()):``: the body runs once per CUDA device,
        so never without CUDA; the count is the site, not what the body asks of each device."""
        if not self._over_cuda_devices(node.iter):
            # a block, so that ``if dev.type != "cuda": continue`` leaves the rest of the body
            # to CUDA (``visit_many``)
            self.visit_many([node.target, node.iter])
            self.visit_many(node.body)
            self.visit_many(node.orelse)
            return
        self.visit_many([node.target, node.iter])
        outer = self.guard
        self.guard = outer.inside(True, frozenset(), frozenset({"rocm"}))
        self.visit_many(node.body)
        self.guard = outer
        self.visit_many(node.orelse)

    visit_AsyncFor = visit_For

    def _over_cuda_devices(self, iterable: ast.expr) -> bool:
        """``range(torch.cuda.device_count())``."""
        return (
            isinstance(iterable, ast.Call)
            and _call_name(iterable) == "range"
            and len(iterable.args) == 1
            and isinstance(iterable.args[0], ast.Call)
            and self.ctx.qualified_name(iterable.args[0].func) == "torch.cuda.device_count"
        )

    def visit_Dict(self, node: ast.Dict) -> None:
        """Dispatch keyed by device type: the ``"cuda"`` entry's siblings cover their targets."""
        keys = [
            k.value if isinstance(k, ast.Constant) and isinstance(k.value, str) else None
            for k in node.keys
        ]
        devices = {key for key in keys if key in self.vendors.markers or key == "cuda"}
        if "cuda" not in devices or len(devices) < 2:
            self.generic_visit(node)
            return
        outer = self.guard
        for key, key_node, value in zip(keys, node.keys, node.values, strict=True):
            if key_node is not None:
                self.visit(key_node)
            if key == "cuda":
                siblings = frozenset(k for k in devices if k != "cuda")
                # ``TABLE.get(device_type, noop)``: a device without an entry does nothing
                self.guard = outer.inside(False, siblings, info=self._missing_is_noop(node))
            self.visit(value)
            self.guard = outer

    def _missing_is_noop(self, table: ast.Dict) -> bool:
        """The mapping is read with ``.get(key, default)`` whose default does nothing (``lambda
        *args: None``, a function whose body only passes or returns None): a device type
        without an entry gets a no-op, not an error."""
        name = self.ctx.assigned_name(table)
        # Read from the text first: the whole module is parsed only where such a call may be
        # (each expression starts with literal text, so the search skips ahead to it).
        receiver = re.escape(name) if name is not None else r"\}[\s)]*"
        if re.search(rf"{receiver}\s*\.\s*get\s*\(", self.ctx.text) is None:
            return False
        if self._get_calls is None:  # once per file, of every statement (a sliced parse's too)
            self._get_calls = _get_calls(slices.whole(self.stack[0]))
        noops, calls = self._get_calls
        for receiver, default in calls:
            if receiver == ("dict", table.lineno, table.col_offset) or (
                name is not None and receiver == ("name", name)
            ):
                if isinstance(default, ast.Lambda):
                    return _does_nothing(ast.Return(default.body))
                return isinstance(default, ast.Name) and default.id in noops
        return False

    def visit_Assert(self, node: ast.Assert) -> None:
        """``assert torch.cuda.is_available(), "needs CUDA"``: refuses to run elsewhere."""
        outer = self.guard
        self.guard = outer.inside(False, frozenset(), refuses=True)
        self.visit(node.test)
        self.guard = outer
        if node.msg is not None:
            self.visit(node.msg)
        test = node.test
        if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.In):
            self._record_admitted(node, test.left, self._listed(test.comparators[0]))

    def _record_admitted(
        self,
        node: ast.Assert | ast.If,
        tested: ast.expr,
        elements: list[ast.expr] | None,
        after: int | None = None,
    ) -> None:
        """``assert device_type in ["cuda", "ascend", "camb"]``, ``if accelerator not in
        allowed: raise ...`` with ``allowed`` a literal set, or a chain of tests whose ``else``
        raises, among the statements of a function's body: after it (after line ``after``),
        ``tested`` holds one of those strings."""
        scope = self.ctx.function_scope()
        if scope is None or node not in scope.body:
            return
        if not elements or not all(
            isinstance(e, ast.Constant) and isinstance(e.value, str) for e in elements
        ):
            return
        admitted = frozenset(str(e.value) for e in elements if isinstance(e, ast.Constant))
        if not any(value.lower() in self.vendors.words for value in admitted):
            return  # ``assert backend in ["gloo", "nccl"]``: no device names
        expression = ast.unparse(tested)
        if after is None:
            after = node.lineno
        # The stores after the assert, by name: a name first stored from the asserted expression
        # (``device_type = eles[0]``) holds the same until its next store; the expression
        # itself until a store of it.
        stores: dict[str, list[tuple[int, ast.expr | None]]] = {}
        simple: set[int] = set()  # the targets of ``name = value``, counted with their value
        for inner in walk(scope):
            line = getattr(inner, "lineno", 0)
            if line <= after:
                continue
            if isinstance(inner, ast.Assign) and len(inner.targets) == 1:
                target = inner.targets[0]
                if isinstance(target, ast.Name):
                    simple.add(id(target))
                    value = inner.value
                    if isinstance(value, ast.Constant) and value.value in admitted:
                        continue  # ``if accelerator == "auto": accelerator = "cuda"``: still in
                    stores.setdefault(target.id, []).append((line, value))
                    continue
            stored = isinstance(inner, ast.Name) and isinstance(inner.ctx, ast.Store)
            if stored and id(inner) not in simple:
                stores.setdefault(inner.id, []).append((line, None))
        never = float("inf")
        spans = {
            expression: (after, min((ln for ln, _ in stores.get(expression, [])), default=never))
        }
        for name, found in stores.items():
            found.sort(key=lambda store: store[0])
            first_line, value = found[0]
            if value is not None and ast.unparse(value) == expression:
                until = found[1][0] if len(found) > 1 else never
                spans[name] = (first_line, until)
        for name, (start, until) in spans.items():
            self.ctx.admitted[(id(scope), name)] = (admitted, start, until)

    def visit_Try(self, node: ast.Try) -> None:
        self._try_flags(node)
        outer = self.guard
        if any(handles_failures(handler, FAILURES) for handler in node.handlers):
            # ``try: torch.cuda.mem_get_info() except Exception: ...``: info
            self.guard = outer.in_handled_try()
            self.run_in_try |= _defined_and_called(node.body)
        elif any(handles_failures(handler, MISSING_PROGRAM) for handler in node.handlers):
            # ``try: check_output(["nvidia-smi", ...]) except FileNotFoundError: ...``
            self.guard = outer.in_try_for_programs()
        self.visit_many(node.body)
        self.guard = outer
        self._visit_handlers(node)
        self.visit_many([*node.orelse, *node.finalbody])

    def _visit_handlers(self, node: ast.Try) -> None:
        """``try: torch.amp.GradScaler(device=d) except AttributeError:
        torch.cuda.amp.GradScaler()``: a handler for a torch that lacks what the ``try`` used
        is the older arm of a version test, and the ``try`` already makes the generic call."""
        outer = self.guard
        newer = Branch(None, list(node.body))
        for handler in node.handlers:
            older = Branch(None, handler.body)
            if _catches_missing_api(handler) and _newer_twin(older, newer, self.vendors.words):
                self.guard = outer.inside(False, frozenset(self.vendors.markers))
            self.visit(handler)
            self.guard = outer

    def _try_flags(self, node: ast.Try) -> None:
        catches_import = any(_catches_import_error(handler) for handler in node.handlers)
        if catches_import:
            vendors: set[str] = set()
            for child in node.body:
                for inner in walk(child):
                    if isinstance(inner, ast.Import | ast.ImportFrom):
                        self.ctx.import_fallbacks.add(id(inner))
                        vendors.update(self._imported_vendors(inner))
            # try: import torch_npu; HAS_NPU = True -> ``if HAS_NPU:`` is an Ascend branch
            for child in node.body if vendors else ():
                if isinstance(child, ast.Assign) and _is_true(child.value):
                    for target in child.targets:
                        if isinstance(target, ast.Name):
                            self.vendors.flags[target.id] = frozenset(vendors)

    def drop_cuda_path_helpers(self, tree: ast.Module) -> None:
        """``def swap_weights_cuda(...)`` called only as ``if self.cuda_available:
        swap_weights_cuda(...)``: a module-level function, or a method of a module-level class
        called as ``self.name(...)``, that is private or named for CUDA and that the module
        calls only on CUDA paths, runs only on CUDA; the tests before its calls are the sites,
        not its body. A call from inside another such helper is on a CUDA path too
        (``_num_sms()`` called only by ``_fused_step()``, itself called only under the test),
        and so is one from a method of a class whose constructor refuses without CUDA, whose
        methods run only on CUDA themselves (``_refuses_without_cuda``). Run once the walk is
        over, when every call's guard is known."""
        reports = self.ctx.reports
        if not reports:
            return
        cuda_only: set[int] = set()  # ids of the helpers found to run only on CUDA
        for statement in tree.body:
            if isinstance(statement, ast.ClassDef) and self._refuses_without_cuda(statement):
                cuda_only.update(id(method) for method in _instance_methods(statement))
            if isinstance(statement, ast.ClassDef) and self._forward_refuses(statement):
                cuda_only.update(id(m) for m in statement.body if _is_method(m, "backward"))
        if not cuda_only and not self.ctx.cuda_branches:
            return  # no CUDA test in the file: no call is on a CUDA path
        # the module-level functions and the methods of module-level classes, with their class
        helpers: list[tuple[ast.FunctionDef | ast.AsyncFunctionDef, ast.ClassDef | None]] = []
        for statement in tree.body:
            inner = statement.body if isinstance(statement, ast.ClassDef) else [statement]
            owner = statement if isinstance(statement, ast.ClassDef) else None
            helpers += [
                (s, owner) for s in inner if isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef)
            ]
        calls: dict[int, dict[str, list[ast.Call]]] = {}  # id(holder) -> name -> its calls
        parents: dict[int, dict[int, ast.AST]] = {}  # id(statement) -> its parent map
        # (helper, the calls of it from elsewhere) for each helper the module calls only by name:
        # looked for from the helpers that hold a report, then from the helpers that call those
        candidates: list[tuple[ast.FunctionDef | ast.AsyncFunctionDef, ast.AST, list[ast.Call]]]
        candidates = []
        lines = [getattr(r.node, "lineno", 0) for r in reports]
        queue = [(h, o) for h, o in helpers if any(_spans(h, line) for line in lines)]
        seen: set[int] = set()
        while queue:
            helper, owner = queue.pop()
            if id(helper) in seen:
                continue
            seen.add(id(helper))
            name = helper.name
            if not (
                name.startswith("_") or set(name.lower().split("_")) & api_checks.CUDA_NAME_WORDS
            ):
                continue
            holder: ast.AST = owner or tree
            method = owner is not None
            if not self._only_called(name, None, method):
                continue  # the name is passed on, or not called at all
            if id(holder) not in calls:
                calls[id(holder)] = _helper_calls(holder, method)
            every = calls[id(holder)].get(name, [])
            if not self._only_called(name, len(every), method) and self._fill_stand_ins(tree, name):
                # a call sits in a definition the sliced parse left out: parsed now
                calls = {id(holder): _helper_calls(holder, method)}
                parents.clear()  # made before the parse: without the new nodes
                every = calls[id(holder)].get(name, [])
            # a call from inside the helper itself (a backward pass that builds it again) runs
            # where the helper runs: the calls from elsewhere decide
            found = [call for call in every if not _spans(helper, call.lineno)]
            if found and self._only_called(name, len(every), method):
                candidates.append((helper, holder, found))
                queue += [(h, o) for h, o in helpers if any(_spans(h, c.lineno) for c in found)]
        grown = True
        while grown:  # a helper called only from one found already is found in the next round
            grown = False
            for helper, holder, found in candidates:
                if id(helper) not in cuda_only and all(
                    self._on_cuda_path(call, _parents_of(call, holder, parents), cuda_only)
                    for call in found
                ):
                    cuda_only.add(id(helper))
                    grown = True
        spans = [
            (helper.lineno, helper.end_lineno or helper.lineno)
            for helper in _definitions(tree)
            if id(helper) in cuda_only
        ]
        if spans:
            reports[:] = [
                r
                for r in reports
                if not any(a <= getattr(r.node, "lineno", 0) <= b for a, b in spans)
            ]

    def drop_repeated_arms(self) -> None:
        """``x.cuda() * 2 if large else x.cuda()``, ``torch.cuda.Stream(d) if d is not None else
        torch.cuda.Stream()``: where a conditional expression that tests no device repeats in its
        ``else`` what its first arm has (the same rule and message), one edit of the expression
        fixes both, and the first arm's finding stands for them, with both arms' edits as its
        fix. Where the two fixes cannot be one (only one arm has a fix, or they differ in
        applicability), both findings stay: ``--fix`` edits what check mode reports. Run once
        the walk is over."""
        reports = self.ctx.reports
        if not reports or not self.plain_choices:
            return
        at_node: dict[int, list[int]] = collections.defaultdict(list)  # node -> report indices
        for index, report in enumerate(reports):
            at_node[id(report.node)].append(index)

        def reports_in(expression: ast.expr) -> list[Report]:
            found = (i for node in walk(expression) for i in at_node.get(id(node), ()))
            return [reports[i] for i in sorted(found)]

        repeated: set[int] = set()
        for choice in self.plain_choices:
            said = {(r.rule.code, r.message): r for r in reports_in(choice.body)}
            for report in reports_in(choice.orelse) if said else ():
                twin = said.get((report.rule.code, report.message))
                if twin is None:
                    continue
                if twin.fix is None and report.fix is None:
                    repeated.add(id(report))
                    continue
                joined = join_fixes(twin.fix, report.fix)
                if joined is not None:
                    twin.fix = joined
                    repeated.add(id(report))
        if repeated:
            reports[:] = [r for r in reports if id(r) not in repeated]

    def drop_skipped_test_helpers(self, tree: ast.Module) -> None:
        """``_test_alltoall(rank, world_size)`` named only inside tests skipped without CUDA
        (``self._run_multi_process_test(callable=_test_alltoall)`` in a test marked
        ``skipIf(torch.cuda.device_count() < 2, ...)``), or inside helpers found so already: a
        private function or method (in a test module, any that is no test) that only CUDA-only
        tests run, runs only on CUDA, like their
        bodies (``_cuda_only_test``); their skip conditions are the sites. Every mention in the
        text counts, a call or the name handed on as a value (which runs within the test that
        hands it on), so one mention anywhere else keeps the helper's findings. Run once the
        walk is over, when every skipped test is known."""
        reports = self.ctx.reports
        if not reports or not self.ctx.backend_lines:
            return
        methods = {id(s) for c in tree.body if isinstance(c, ast.ClassDef) for s in c.body}
        # in a test module every helper is the tests' own (``reset_exp_det()`` beside them)
        in_tests = _is_test_module(self.ctx.path)
        helpers = [
            d
            for d in _definitions(tree)
            if isinstance(d, ast.FunctionDef | ast.AsyncFunctionDef)
            and not d.name.startswith("__")
            and (d.name.startswith("_") or (in_tests and not _is_test(d)))
        ]
        mentions = {
            id(h): [
                line
                for line in _mention_lines(h.name, self.ctx.text, id(h) in methods)
                if line != h.lineno and not _spans(h, line)
            ]
            for h in helpers
        }
        found: list[ast.stmt] = []
        grown = True
        while grown:  # a helper named only inside one found already is found in the next round
            grown = False
            for helper in helpers:
                lines = mentions[id(helper)]
                if helper in found or not lines:
                    continue
                if all(
                    self.ctx.in_backend_line(line) or any(_spans(h, line) for h in found)
                    for line in lines
                ):
                    found.append(helper)
                    grown = True
        if found:
            reports[:] = [
                r
                for r in reports
                if not any(_spans(h, getattr(r.node, "lineno", 0)) for h in found)
            ]

    def _forward_refuses(self, node: ast.ClassDef) -> bool:
        """An autograd function (a class based on ``Function``) whose ``forward`` raises unless
        CUDA is there (``if not input.is_cuda: raise NotImplementedError(...)``): its
        ``backward`` runs only after a forward that succeeded, on CUDA; the refusal is the
        site."""
        if not any(_last_part(base) == "Function" for base in node.bases):
            return False
        forward = next((m for m in node.body if _is_method(m, "forward")), None)
        return forward is not None and any(
            isinstance(s, ast.If)
            and isinstance(s.body[-1], ast.Raise)
            and self._leaves_unless_cuda(s)
            for s in forward.body
        )

    def _refuses_without_cuda(self, node: ast.ClassDef) -> bool:
        """The class's ``__init__`` raises unless CUDA is there (``if not
        torch.cuda.is_available(): raise TypeError(...)`` or ``assert device.type == "cuda"``
        among its statements): an instance exists only on CUDA, so its methods run only there,
        and the refusal is the site."""
        init = _init_of(node)
        return init is not None and any(
            (
                isinstance(s, ast.If)
                and isinstance(s.body[-1], ast.Raise)
                and self._leaves_unless_cuda(s)
            )
            or (isinstance(s, ast.Assert) and self._asserts_cuda(s))
            for s in init.body
        )

    def _asserts_cuda(self, statement: ast.Assert) -> bool:
        """``assert device.type == "cuda"``, ``assert torch.cuda.is_available()``: only CUDA
        gets past it (not ``assert dev in ("cuda", "xpu")``, which xpu passes)."""
        resolve, flags = self.ctx.qualified_name, self.ctx.cuda_flags
        if cuda_polarity(statement.test, resolve, flags) != 1:
            return False
        return _only_cuda_goes_on(only_targets(statement.test, resolve, self.vendors))

    def _only_called(self, name: str, calls: int | None, method: bool) -> bool:
        """Every mention of the name in the file is its definition or one of the ``calls``
        found: a sliced parse leaves code out, and a name passed on as a value may be called
        anywhere, so the text has the last word (for a method, any ``.name`` counts). With
        ``calls`` None, from the text alone: every mention but one is followed by ``(``."""
        mentions, called = _mentions(name, self.ctx.text, method)
        if calls is None:
            return mentions > 1 and called == mentions  # the definition says ``name(`` too
        return mentions == calls + 1

    def _on_cuda_path(
        self,
        node: ast.AST,
        parents: dict[int, ast.AST],
        cuda_only: set[int] | frozenset = frozenset(),
    ) -> bool:
        """The node runs only on CUDA: an enclosing ``if`` (or conditional expression, or
        ``and``) tests for CUDA, or the walk found a statement above it on a CUDA path, or it is
        inside a function of ``cuda_only`` (ids of helpers that run only on CUDA). The walk
        skips statements with no candidate word (``self._sync()``), so their own ``if`` is
        judged here."""
        guards, resolve, flags = self.ctx.guards, self.ctx.qualified_name, self.ctx.cuda_flags
        child, current = node, parents.get(id(node))
        while current is not None:
            guard = guards.get(id(child))
            if guard is not None and guard.cuda_only:
                return True
            if isinstance(current, ast.If | ast.IfExp) and child is not current.test:
                polarity = cuda_polarity(current.test, resolve, flags)
                in_body = (
                    child in current.body
                    if isinstance(current, ast.If)
                    else (child is current.body)
                )
                if polarity == (1 if in_body else -1):
                    return True
            if isinstance(current, ast.BoolOp) and isinstance(current.op, ast.And):
                earlier = current.values[: current.values.index(child)]
                if any(cuda_polarity(value, resolve, flags) == 1 for value in earlier):
                    return True
            if isinstance(child, ast.stmt) and any(
                self._leaves_unless_cuda(s) for s in _statements_before(child, current)
            ):
                return True  # after ``if dev.type != "cuda": return``
            if isinstance(current, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                return id(current) in cuda_only
            child, current = current, parents.get(id(current))
        return id(child) in cuda_only

    def _leaves_unless_cuda(self, statement: ast.AST) -> bool:
        """``if not torch.cuda.is_available(): return``, ``if dev.type != "cuda": return``:
        only CUDA goes on (not ``if dev not in ("cuda", "xpu"): return``, which xpu passes).
        Read as the walk reads it (``_as_early_exit``: ``if off or not torch.cuda.is_available():
        return`` too)."""
        resolve = self.ctx.qualified_name
        statement = _as_early_exit(statement, resolve, self.ctx.cuda_flags)
        if not _is_early_return(statement):
            return False
        if cuda_polarity(statement.test, resolve, self.ctx.cuda_flags) != -1:
            return False
        kept = negated(statement.test)
        return _only_cuda_goes_on(
            None if kept is None else only_targets(kept, resolve, self.vendors)
        )

    def _imported_vendors(self, node: ast.Import | ast.ImportFrom) -> set[str]:
        modules = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module]
        found = {self.vendors.package_target(m) for m in modules if m}
        return {t for t in found if t is not None}

    visit_TryStar = visit_Try


def _only_cuda_goes_on(reach: frozenset[str] | None) -> bool:
    """After the early return of a negated CUDA test whose kept test admits ``reach``: only
    CUDA goes on, unless another target passes too (``if dev not in ("cuda", "xpu"): return``:
    xpu runs what follows, it does not skip it)."""
    return not (reach and reach - {"rocm"})


def _refused_device_names(test: ast.expr) -> set[str] | None:
    """The device names a refusal lets through, lower-cased: ``dev.type not in ("cpu",
    "cuda")`` or ``dev.type != "cpu" and dev.type != "cuda"`` (one operand that says device,
    the other a string) -> {"cpu", "cuda"}; None for any other test."""
    terms = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) else [test]
    names: set[str] = set()
    subjects = set()
    for term in terms:
        compared = _compared_device_names(term, negated=True)
        if compared is None:
            return None
        subject, found = compared
        names |= found
        subjects.add(ast.dump(subject))
    return names if len(subjects) == 1 and "cuda" in names else None


def _required_device_names(test: ast.expr) -> set[str] | None:
    """The device names an assert requires of the run's device, lower-cased: ``device_type ==
    "cuda"`` or ``args.device in {"cuda", "xpu"}`` (a name, or an attribute of one, that says
    device; strings on the other side) -> those names; None for any other test, for one that
    names no CUDA device, and for a tensor's device (``x.device.type == "cuda"``: a check of
    where one tensor is, before a kernel that reads it)."""
    compared = _compared_device_names(test, negated=False)
    if compared is None:
        return None
    subject, names = compared
    if not (
        isinstance(subject, ast.Name)
        or (isinstance(subject, ast.Attribute) and isinstance(subject.value, ast.Name))
    ):
        return None
    return names if "cuda" in names else None


def _compared_device_names(term: ast.expr, negated: bool) -> tuple[ast.expr, set[str]] | None:
    """``dev.type == "cuda"`` or ``dev.type in ("cuda", "xpu")`` (with ``negated``, ``!=`` and
    ``not in``): the operand that says device, and the lower-cased device names of the strings
    on the other side; None for any other comparison."""
    if not (isinstance(term, ast.Compare) and len(term.ops) == 1):
        return None
    subject, other = term.left, term.comparators[0]
    equal, member = (ast.NotEq, ast.NotIn) if negated else (ast.Eq, ast.In)
    if isinstance(term.ops[0], equal) and isinstance(other, ast.Constant):
        values = [other.value]
    elif isinstance(term.ops[0], member) and isinstance(other, ast.Tuple | ast.List | ast.Set):
        values = [e.value for e in other.elts if isinstance(e, ast.Constant)]
        if len(values) != len(other.elts):
            return None
    else:
        return None
    strings = [v for v in values if isinstance(v, str)]
    if len(strings) != len(values) or not _says_device(subject):
        return None
    return subject, {v.lower().split(":")[0] for v in strings}


def _says_device(node: ast.expr) -> bool:
    """``device.type``, ``self.device_type``, ``str(device)``: an expression named for a device."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.args:
        node = node.args[0]  # ``str(device)``
    text = ast.unparse(node).lower()
    return "device" in text


def _spans(node: ast.stmt, line: int) -> bool:
    """The statement's lines hold ``line``."""
    return node.lineno <= line <= (node.end_lineno or node.lineno)


def _is_method(node: ast.stmt, name: str) -> bool:
    return isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == name


def _last_part(node: ast.expr) -> str:
    """``torch.autograd.Function`` -> ``Function``; ``Function`` itself."""
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""


def _init_of(node: ast.ClassDef) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The class's own ``__init__``, if it defines one."""
    return next(
        (
            s
            for s in node.body
            if isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef) and s.name == "__init__"
        ),
        None,
    )


def _instance_methods(node: ast.ClassDef) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    """The methods of a class that need an instance: not ``__init__`` (which runs before any
    check it makes), nor a ``staticmethod`` or ``classmethod``."""
    return [
        s
        for s in node.body
        if isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef)
        and s.name not in ("__init__", "__new__")
        and not any(
            isinstance(d, ast.Name) and d.id in ("staticmethod", "classmethod")
            for d in s.decorator_list
        )
    ]


def _definitions(tree: ast.Module) -> list[ast.stmt]:
    """The module's functions and classes, and the methods of its classes."""
    found: list[ast.stmt] = []
    for statement in tree.body:
        if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            found.append(statement)
        if isinstance(statement, ast.ClassDef):
            found += [
                s for s in statement.body if isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef)
            ]
    return found


def _parents_of(
    node: ast.AST, holder: ast.AST, known: dict[int, dict[int, ast.AST]]
) -> dict[int, ast.AST]:
    """The parent map of the statement of ``holder``'s body that holds ``node`` (made once per
    statement, not for the whole module)."""
    line = getattr(node, "lineno", 0)
    for statement in getattr(holder, "body", ()):
        if statement.lineno <= line <= (statement.end_lineno or statement.lineno):
            if id(statement) not in known:
                known[id(statement)] = parent_map(statement)
            return known[id(statement)]
    return {}


def _mentions(name: str, text: str, method: bool) -> tuple[int, int]:
    """How many times ``text`` names ``name`` as a whole word (for a function of the module,
    not as an attribute ``.name``), and how many of those are followed by ``(``."""
    mentions = called = 0
    after = len(name)
    for position in _mention_positions(name, text, method):
        mentions += 1
        called += text[position + after : position + after + 64].lstrip().startswith("(")
    return mentions, called


def _mention_lines(name: str, text: str, method: bool) -> list[int]:
    """The lines where ``text`` names ``name`` as ``_mentions`` counts it."""
    found = []
    line, counted = 1, 0  # the line of ``counted``, the last position whose line is known
    for position in _mention_positions(name, text, method):
        line += text.count("\n", counted, position)
        counted = position
        found.append(line)
    return found


def _mention_positions(name: str, text: str, method: bool) -> Iterator[int]:
    """Where ``text`` names ``name`` as a whole word outside comments (for a function of the
    module, not as an attribute ``.name``). Found with ``str.find``: an expression that starts
    with a word boundary is tried at every character."""
    size = len(name)
    position = text.find(name)
    while position >= 0:
        before = text[position - 1] if position else " "
        after = position + size
        if (
            not (before.isalnum() or before == "_")
            and (method or before != ".")
            and not (after < len(text) and (text[after].isalnum() or text[after] == "_"))
            and not _in_comment(text, position)
        ):
            yield position
        position = text.find(name, position + 1)


def _in_comment(text: str, position: int) -> bool:
    """``position`` follows a ``#`` on its line that starts a comment: one outside quotes
    (``# same rule as Offloader.swap_weight_devices_cuda``, which calls nothing)."""
    start = text.rfind("\n", 0, position) + 1
    hash_at = text.find("#", start, position)
    if hash_at < 0:
        return False
    before = text[start:hash_at]
    return before.count('"') % 2 == 0 and before.count("'") % 2 == 0


def _helper_calls(holder: ast.AST, method: bool) -> dict[str, list[ast.Call]]:
    """The calls in ``holder`` by the name called: ``name(...)``, or for the methods of a
    class ``self.name(...)`` / ``cls.name(...)``."""
    found: dict[str, list[ast.Call]] = {}
    for node in walk(holder):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if not method and isinstance(func, ast.Name):
            found.setdefault(func.id, []).append(node)
        elif (
            method
            and isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Name)
            and func.value.id in ("self", "cls")
        ):
            found.setdefault(func.attr, []).append(node)
    return found


def _get_calls(module: ast.Module) -> tuple[set[str], list[tuple[tuple, ast.expr]]]:
    """The module's top-level functions whose body does nothing, and its ``x.get(key,
    default)`` calls in walk order: (``("dict", line, column)`` of a mapping written in place
    or ``("name", name)``, the default)."""
    noops = {
        s.name
        for s in module.body
        if isinstance(s, ast.FunctionDef) and all(_does_nothing(b) for b in s.body)
    }
    calls = []
    for call in walk(module):
        if (
            isinstance(call, ast.Call)
            and isinstance(call.func, ast.Attribute)
            and call.func.attr == "get"
            and len(call.args) == 2
        ):
            receiver = call.func.value
            if isinstance(receiver, ast.Dict):
                calls.append((("dict", receiver.lineno, receiver.col_offset), call.args[1]))
            elif isinstance(receiver, ast.Name):
                calls.append((("name", receiver.id), call.args[1]))
    return noops, calls


def _private_calls(root: ast.AST) -> dict[str, tuple[int, list[tuple[str, ast.AST]]]]:
    """Private function name -> (how many calls of it the module makes, the local names given
    its value by ``name = _f()``, each with its function)."""
    found: dict[str, tuple[int, list[tuple[str, ast.AST]]]] = {}
    for node in walk(root):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            if node.func.id.startswith("_"):
                count, assigns = found.get(node.func.id, (0, []))
                found[node.func.id] = (count + 1, assigns)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            for statement in node.body:
                if (
                    isinstance(statement, ast.Assign)
                    and len(statement.targets) == 1
                    and isinstance(statement.targets[0], ast.Name)
                    and isinstance(statement.value, ast.Call)
                    and isinstance(statement.value.func, ast.Name)
                    and statement.value.func.id.startswith("_")
                ):
                    count, assigns = found.get(statement.value.func.id, (0, []))
                    assigns.append((statement.targets[0].id, node))
                    found[statement.value.func.id] = (count, assigns)
    return found


def _only_in_text(name: str, scope: ast.AST) -> bool:
    """Every read of ``name`` in ``scope`` is inside an f-string or the arguments of a print or
    log call."""
    in_text: set[int] = set()
    for node in walk(scope):
        if isinstance(node, ast.JoinedStr) or (
            isinstance(node, ast.Call) and LOG_CALL.search(_call_name(node) or "")
        ):
            in_text.update(id(n) for n in walk(node) if isinstance(n, ast.Name))
    reads = [
        n
        for n in walk(scope)
        if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)
    ]
    return bool(reads) and all(id(n) in in_text for n in reads)


def _cuda_predicates(module: ast.Module) -> set[str]:
    """The module's functions, and the methods of its classes (as ``self.name``), that answer
    True only on CUDA: each ``return`` gives a falsy constant, or comes after an ``if`` among
    the function's statements that returns falsy unless a device's type is CUDA's (``if
    x.device.type != "cuda": return False`` ... ``return True``). A call of one is a CUDA test
    (``elif self._should_use_streaming(x):``), like a flag that holds one. Only device-type
    tests count: the names the module imports are not bound yet when this is asked."""
    found: set[str] = set()
    for statement in module.body:
        inner = statement.body if isinstance(statement, ast.ClassDef) else [statement]
        prefix = "self." if isinstance(statement, ast.ClassDef) else ""
        for function in inner:
            if isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef) and (
                _answers_only_on_cuda(function)
            ):
                found.add(prefix + function.name)
    return found


def _answers_only_on_cuda(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    body = function.body
    # most functions have no such gate among their statements: found first, it spares the walk
    gate = next((i for i, statement in enumerate(body) if _is_cuda_gate(statement)), None)
    if gate is None:
        return False
    for position, statement in enumerate(body):
        for node in walk(statement):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                return False  # a nested function's returns are not this one's
            if position < gate and isinstance(node, ast.Return) and not _is_falsy(node.value):
                return False  # an answer given before CUDA was asked for
    return True


def _armed_attribute_flags(module: ast.Module, text: str) -> dict[str, ast.expr]:
    """``self.cpu_cache = True`` in the arm of ``if n > limit and lqs.is_cuda:``, the attribute
    given no other value in the module than ``False``: ``if self.cpu_cache:`` is that test,
    also in a method written before the one that sets it. Found before the walk, so only
    device-type tests count (the names the module imports are not bound yet). A sliced parse
    leaves statements out, so the text must hold no store the tree does not."""
    if not _may_arm(text):
        return {}  # most modules set no attribute True in a CUDA arm: no walk
    armed: dict[str, list[ast.expr]] = {}
    arming: set[int] = set()  # ids of the ``= True`` statements in such arms
    stores: list[tuple[str, ast.stmt]] = []
    for node in ast.walk(module):
        if isinstance(node, ast.If) and cuda_polarity(node.test, _no_names, set()) == 1:
            for statement in node.body:
                if isinstance(statement, ast.Assign) and _is_true(statement.value):
                    arming.add(id(statement))
                    for target in statement.targets:
                        if flag_name(target).startswith("self."):
                            armed.setdefault(flag_name(target), []).append(node.test)
        elif isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            stores += [(flag_name(t), node) for t in targets if flag_name(t).startswith("self.")]
    spoiled = {
        name
        for name, statement in stores
        if name in armed
        and id(statement) not in arming
        and statement.value is not None  # ``self.cpu_cache: bool`` only declares it
        and not (isinstance(statement.value, ast.Constant) and statement.value.value is False)
    }
    counted = collections.Counter(name for name, _ in stores)
    return {
        name: tests[0]
        for name, tests in armed.items()
        if len(tests) == 1 and name not in spoiled and _stores_in_text(name, text) == counted[name]
    }


def _may_arm(text: str) -> bool:
    """Whether a line of ``text`` sets a ``self`` attribute True right below a line that tests
    something about CUDA (``if lqs.is_cuda:`` then ``self.cpu_cache = True``): read from the
    text, by plain searches (a regular expression over every module costs more than the walk
    it spares)."""
    at = text.find("= True")
    while at != -1:
        start = text.rfind("\n", 0, at) + 1
        if text[start:at].strip().startswith("self."):
            above = text.rfind("\n", 0, max(start - 1, 0)) + 1
            line = text[above:start].strip()
            if line.startswith(("if ", "elif ")) and "cuda" in line:
                return True
        at = text.find("= True", at + 6)
    return False


def _stores_in_text(flag: str, text: str) -> int:
    """How many statements of ``text`` store ``flag`` (``self.x = ...``, ``self.x += ...``,
    ``self.x: bool = ...``), read from the text."""
    store = re.compile(rf"\b{re.escape(flag)}[ \t]*(?::[^=\n]*)?[-+*/%|&^]?=(?!=)")
    return len(store.findall(text))


def _is_cuda_gate(statement: ast.stmt) -> bool:
    """``if x.device.type != "cuda": return False``."""
    return (
        isinstance(statement, ast.If)
        and not statement.orelse
        and len(statement.body) == 1
        and isinstance(statement.body[0], ast.Return)
        and _is_falsy(statement.body[0].value)
        and cuda_polarity(statement.test, _no_names, set()) == -1
    )


def _no_names(node: ast.AST) -> str | None:
    """A resolver that knows no import: only what a test says outright counts."""
    return None


#: Words of a function name that ask a question only NVIDIA hardware answers: the CUDA toolkit,
#: an SM version (``is_sm_at_least_90``), a compute capability (``has_compute_capability``).
NVIDIA_QUESTION_WORDS = frozenset({"cuda", "nvidia", "sm", "capability"})


def _is_docstring(statement: ast.AST) -> bool:
    return isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant)


def _is_falsy(value: ast.expr | None, number: bool = False) -> bool:
    """``None`` (also a bare ``return``) or ``False``: what a question answers where it cannot
    be asked; with ``number``, ``0`` and ``0.0`` too (a capability read as a number)."""
    if value is None:
        return True
    if not isinstance(value, ast.Constant):
        return False
    if value.value is None or value.value is False:
        return True
    return number and type(value.value) in (int, float) and value.value == 0


def _rebinds_cuda_api(text: str) -> bool:
    """The module assigns to at least ``REBINDINGS`` names of ``torch.cuda``
    (``torch.cuda.is_available = torch.xpu.is_available``, ``torch.cuda.device =
    torch.dml.device``): it redirects the CUDA API to another device's, as a vendor's migration
    tool does (sdnext's Intel and DirectML layers). The lines are those the project-wide search
    for layers reads (``layers.rebound_names``)."""
    if len(REBINDING.findall(text)) < REBINDINGS:
        return False  # most modules
    return len(rebound_names(text.encode())[0]) >= REBINDINGS


def _top_level_packages(module: ast.Module) -> set[str]:
    """The top-level packages a module imports in its own body, outside any ``try`` or ``if``
    (``import habana_frameworks.torch.core``, ``from triton import language``)."""
    packages = set()
    for statement in module.body:
        if isinstance(statement, ast.Import):
            packages |= {alias.name.split(".")[0] for alias in statement.names}
        elif isinstance(statement, ast.ImportFrom) and not statement.level and statement.module:
            packages.add(statement.module.split(".")[0])
    return packages


def _answers_no(body: list[ast.stmt]) -> bool:
    """A block that ends by returning False, None or a message, after at most a logging call:
    how a question about a feature answers where the feature is missing."""
    last = body[-1]
    if len(body) > 2 or not isinstance(last, ast.Return):
        return False
    if len(body) == 2 and not (
        isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Call)
    ):
        return False
    value = last.value
    message = isinstance(value, ast.JoinedStr) or (
        isinstance(value, ast.Constant) and isinstance(value.value, str)
    )
    return message or _is_falsy(value)


def _rocm_flag(test: ast.expr) -> bool:
    """``IS_ROCM``, ``self._is_hip``, ``utils.IS_ROCM``: a flag named for a ROCm build (a ROCm
    vendor word of rules/device.toml ``[backend.vendors]`` after ``is_``, ``has_`` or ``use_``)."""
    from portlint.python.backend_packages import catalogue_words

    name = (
        test.attr
        if isinstance(test, ast.Attribute)
        else test.id
        if isinstance(test, ast.Name)
        else ""
    )
    match = PREDICATE.fullmatch(name.lstrip("_"))
    return match is not None and catalogue_words().get(match.group(1).lower()) == "rocm"


def _does_nothing(statement: ast.AST) -> bool:
    """``pass``, ``return``, ``return None``, a docstring."""
    if isinstance(statement, ast.Pass):
        return True
    if isinstance(statement, ast.Return):
        value = statement.value
        return value is None or (isinstance(value, ast.Constant) and value.value is None)
    return isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant)


def _short_circuit_only(
    test: ast.expr, resolve: Resolve, vendors: Vendors
) -> frozenset[str] | None:
    """``in_colab and not torch.cuda.is_available()``: the terms after a vendor test run only
    where it holds, so only the targets it admits reach them."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return only_targets(test.values[0], resolve, vendors)
    return None


def _function_names(holder: ast.AST) -> frozenset[str]:
    """The names of the functions defined in the body of a module or class."""
    body = getattr(holder, "body", [])
    return frozenset(s.name for s in body if isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef))


def _single_value(branch: Branch) -> ast.AST | None:
    """What an arm of one statement gives: the value it assigns, returns or computes (the arm
    of a conditional expression is that value), or None."""
    if len(branch.body) != 1:
        return None
    part = branch.body[0]
    return part.value if isinstance(part, ast.Expr | ast.Assign | ast.Return) else part


def _falls_back_to_cpu(branch: Branch) -> bool:
    """The arm is the CPU device: ``else torch.device("cpu")``, ``else "cpu"``."""
    value = _single_value(branch)
    if isinstance(value, ast.Call) and len(value.args) == 1 and not value.keywords:
        value = value.args[0]  # ``torch.device("cpu")``
    return isinstance(value, ast.Constant) and value.value == "cpu"


#: A name this short that is a package's alias (``te``, ``bnb``) names the package in a test
#: only where it is the imported module: otherwise it is a variable that happens to share it.
SHORT_ALIAS = 4


def _tests_own_device(test: ast.expr | None) -> bool:
    """``x.is_cuda``, ``next(m.parameters()).is_cuda`` or ``x.device.type == "cuda"``: one
    question about where a tensor (or a module's parameters) already is, not about the machine."""
    if isinstance(test, ast.Attribute) and test.attr == "is_cuda":
        return _last_part(test.value) not in ("cuda", "torch")
    return (
        isinstance(test, ast.Compare)
        and len(test.ops) == 1
        and isinstance(test.ops[0], ast.Eq)
        and isinstance(test.left, ast.Attribute)
        and test.left.attr == "type"
        and isinstance(test.left.value, ast.Attribute)
        and test.left.value.attr == "device"
        and isinstance(test.comparators[0], ast.Constant)
        and test.comparators[0].value == "cuda"
    )


def _makes_cpu_data(branch: Branch) -> bool:
    """The arm is the CPU device (``_falls_back_to_cpu``) or one value moved there
    (``else mask.detach().cpu()``)."""
    if _falls_back_to_cpu(branch):
        return True
    value = _single_value(branch)
    return (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Attribute)
        and value.func.attr == "cpu"
        and not value.args
    )


def _only_printed_names(names: set[str], scope: ast.AST, ctx: Context) -> bool:
    """Every use of the names in ``scope`` is inside what a print or log call is given (an
    entry stored into one, ``info["GPU type"] = ...``, is no use), or in the value of another of
    the names (``s = f"{s} | {props.name}"``, then ``log.info(s)``)."""
    printed, uses = ctx.scope_fact("printed names", scope, _printed_and_uses)
    stored = ctx.scope_fact("stored into", scope, _stored_into)
    used = [node for name in names for node in uses.get(name, ())]
    return bool(used) and all(
        node in printed or stored.get(node, frozenset({""})) <= names for node in used
    )


#: What precedes a call on its line when the call's value is given to a name: ``name = ``.
ASSIGNED = re.compile(r"\s*\w+\s*=\s*")
WORD_CHARACTER = re.compile(r"\w")


def _calls_and_assigned_calls(name: str, text: str) -> tuple[int, int]:
    """How many times ``text`` has ``name(`` (as a word: its definition too), and how many of
    those are ``local = name()`` lines. Searched from the literal text: an expression that
    starts with a word boundary or a line start is tried at every character."""
    calls = given = 0
    opening = f"{name}("
    position = text.find(opening)
    while position >= 0:
        if position == 0 or not WORD_CHARACTER.match(text, position - 1):
            calls += 1
            if text.startswith(")", position + len(opening)):
                line_start = text.rfind("\n", 0, position) + 1
                given += ASSIGNED.fullmatch(text, line_start, position) is not None
        position = text.find(opening, position + 1)
    return calls, given


def _printed_and_uses(scope: ast.AST) -> tuple[set[int], dict[str, list[int]]]:
    """The ids of the nodes in ``scope`` that a print or log call is given (or that an entry is
    stored into), and name -> the ids of the places that read it."""
    printed: set[int] = set()
    uses: dict[str, list[int]] = {}
    for node in walk(scope):
        if isinstance(node, ast.Call) and LOG_CALL.search(_call_name(node) or ""):
            for part in [*node.args, *node.keywords]:
                printed.update(id(n) for n in walk(part))
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store):
            printed.add(id(node.value))
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            uses.setdefault(node.id, []).append(id(node))
    return printed, uses


def _stored_into(scope: ast.AST) -> dict[int, frozenset[str]]:
    """id of a name read in the value of ``a = ...`` (plain names stored) -> those names: the
    read goes where they go (``s = f"{s} | {props.name}"``)."""
    found: dict[int, frozenset[str]] = {}
    for node in walk(scope):
        if isinstance(node, ast.Assign) and all(isinstance(t, ast.Name) for t in node.targets):
            stored = frozenset(t.id for t in node.targets if isinstance(t, ast.Name))
            for inner in walk(node.value):
                if isinstance(inner, ast.Name) and isinstance(inner.ctx, ast.Load):
                    found[id(inner)] = stored
    return found


def _default_pairs(node: ast.FunctionDef | ast.AsyncFunctionDef) -> list[tuple[ast.arg, ast.expr]]:
    """Each parameter with a default, and its default (positional ones, then keyword-only)."""
    arguments = node.args
    positional = [*arguments.posonlyargs, *arguments.args]
    with_defaults = positional[len(positional) - len(arguments.defaults) :]
    pairs = list(zip(with_defaults, arguments.defaults, strict=True))
    # kw_defaults holds None for a keyword-only argument without a default.
    keywords = zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True)
    return pairs + [(a, d) for a, d in keywords if d is not None]


def _calls_by_callee(module: ast.AST) -> dict[str, list[ast.Call]]:
    """The calls in ``module`` of a plain name or of a ``self``/``cls`` method, by that name."""
    found: dict[str, list[ast.Call]] = {}
    for node in walk(module):
        if isinstance(node, ast.Call) and (name := position_params.callee_name(node)):
            found.setdefault(name, []).append(node)
    return found


def _last_name(node: ast.expr) -> str:
    """``Callback`` of ``composer.core.Callback``; empty for anything but a name."""
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""


def _block_of(node: ast.AST, parent: ast.AST, ctx: Context) -> list[ast.AST]:
    """The statement list that holds ``node``: in ``parent`` or in one of its ``elif`` arms."""
    place = _place_of(node, parent, ctx)
    return place[0] if place is not None else []


def _position_in(node: ast.AST, parent: ast.AST, ctx: Context) -> int:
    """Where ``node`` is in ``_block_of(node, parent, ctx)``."""
    place = _place_of(node, parent, ctx)
    assert place is not None
    return place[1]


def _place_of(node: ast.AST, parent: ast.AST, ctx: Context) -> tuple[list[ast.AST], int] | None:
    """The statement list below ``parent`` that holds ``node``, and its index there. Most
    statements that ask are in a list of ``parent`` itself: the lists further down are only
    gathered (a walk of all of ``parent``) for one that is not."""
    place = ctx.scope_fact("own statement lists", parent, _own_statement_lists).get(id(node))
    if place is None:
        place = ctx.scope_fact("statement lists", parent, _statement_lists).get(id(node))
    return place


def _own_statement_lists(holder: ast.AST) -> dict[int, tuple[list[ast.AST], int]]:
    """id(statement) -> (the statement list of ``holder`` that holds it, its index there)."""
    places: dict[int, tuple[list[ast.AST], int]] = {}
    if isinstance(holder, ast.stmt | ast.Module | ast.ExceptHandler):
        for value in vars(holder).values():
            if isinstance(value, list):
                for index, item in enumerate(value):
                    if isinstance(item, ast.stmt):
                        places.setdefault(id(item), (value, index))
    return places


def _statement_lists(parent: ast.AST) -> dict[int, tuple[list[ast.AST], int]]:
    """``_own_statement_lists`` of ``parent`` and of every statement below it: one walk for all
    the statements that ask. (A statement is in one list only: where it is found, from
    ``parent`` or from a statement below it, it is the same.)"""
    places: dict[int, tuple[list[ast.AST], int]] = {}
    for holder in statements_walk(parent):
        places.update(_own_statement_lists(holder))
    return places


def argument_destination(call: ast.Call) -> str | None:
    """The attribute argparse stores an option under: ``--dist-backend`` -> dist_backend."""
    for keyword in call.keywords:
        if keyword.arg == "dest" and isinstance(keyword.value, ast.Constant):
            return str(keyword.value.value)
    names = [a.value for a in call.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
    long = [n for n in names if n.startswith("--")]
    chosen = long[0] if long else (names[0] if names else "")
    return chosen.lstrip("-").replace("-", "_") or None


def click_parameter(call: ast.Call) -> str | None:
    """The parameter a ``click.option`` passes its value as, named as click names it: a name
    given without dashes (``"dev"``), else the first ``--`` name, else the first ``-`` one, its
    dashes made underscores (``--dist-backend`` -> dist_backend)."""
    names = [a.value for a in call.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
    plain = [n for n in names if n.isidentifier()]
    if plain:
        return plain[0]
    dashed = [n for n in names if n.startswith("--")] or [n for n in names if n.startswith("-")]
    return dashed[0].lstrip("-").replace("-", "_").lower() if dashed else None


def _call_name(call: ast.Call) -> str | None:
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)


def _is_true(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is True


#: What replaces an attribute for a test: ``patch("m.torch.cuda.X")``, ``patch.object(torch.cuda,
#: "X")``, ``monkeypatch.setattr(torch.cuda, "X", f)`` (unittest.mock and pytest).
MOCK_CALLS = frozenset({"patch", "object", "setattr"})


def _mocks_cuda_api(call: ast.Call, resolve: Resolve) -> bool:
    """The call replaces a name of ``torch.cuda`` for a test (``patch("invokeai.backend.util.
    devices.torch.cuda.is_available", return_value=True)``, ``patch.object(torch.cuda,
    "get_device_name", ...)``, ``monkeypatch.setattr("torch.cuda.device_count", ...)``)."""
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    if name not in MOCK_CALLS or not call.args:
        return False
    owner = _last_part(func.value) if isinstance(func, ast.Attribute) else ""
    if name == "setattr" and "patch" not in owner:
        return False  # the builtin ``setattr`` or an object's own: not a mock
    if name == "object" and owner != "patch":
        return False
    first = call.args[0]
    if isinstance(first, ast.Constant) and isinstance(first.value, str):
        return "torch.cuda." in f"{first.value}." and name != "object"
    return resolve(first) == "torch.cuda"


def _vendor_override(statement: ast.AST, name: str) -> ast.expr | None:
    """The test of ``if <test>: name = ...`` (without ``else``, storing only ``name``) or of
    ``name = ... if <test> else name``: a store of ``name`` for where the test holds, which
    keeps the earlier value elsewhere; None for any other statement."""
    if isinstance(statement, ast.If) and not statement.orelse and statement.body:
        if all(_stores_only(s, name) for s in statement.body):
            return statement.test
        return None
    if (
        _stores_only(statement, name)
        and isinstance(statement.value, ast.IfExp)
        and isinstance(statement.value.orelse, ast.Name)
        and statement.value.orelse.id == name
    ):
        return statement.value.test
    return None


def _stores_only(statement: ast.AST, name: str) -> TypeGuard[ast.Assign]:
    return (
        isinstance(statement, ast.Assign)
        and len(statement.targets) == 1
        and isinstance(statement.targets[0], ast.Name)
        and statement.targets[0].id == name
    )


def _leaves(body: list[ast.AST]) -> bool:
    """The block ends by leaving (return, raise, continue, break, ``sys.exit()``)."""
    return bool(body) and (isinstance(body[-1], TERMINATORS) or exits(body[-1]))


def _statements_before(statement: ast.stmt, holder: ast.AST) -> list[ast.stmt]:
    """The statements before ``statement`` in the block of ``holder`` that holds it."""
    for field in ("body", "orelse", "finalbody"):
        block = getattr(holder, field, None)
        if isinstance(block, list) and statement in block:
            return block[: block.index(statement)]
    return []


def _leaves_on_rocm(test: ast.expr, resolve: Resolve) -> bool:
    """``not torch.cuda.is_available() or _is_hip()``: one of the ``or``'s terms is a ROCm test."""
    return (
        isinstance(test, ast.BoolOp)
        and isinstance(test.op, ast.Or)
        and any(asks_rocm(v, resolve) for v in test.values)
    )


def _as_early_exit(statement: ast.AST, resolve: Resolve, cuda_flags: set[str]) -> ast.AST:
    """``if <CUDA test>: ... else: raise ...`` read as ``if not <CUDA test>: raise ...``: what
    follows runs only where the test held. ``if disabled or not torch.cuda.is_available():
    return`` is read as ``if not torch.cuda.is_available(): return``: every machine without
    CUDA leaves there too (and so does CUDA when ``disabled``), so what follows runs only on
    CUDA. ``if not torch.cuda.is_available(): return`` followed by ``elif``/``else`` arms is read
    without them: whatever those arms do, what follows the chain runs only where the first test
    failed. Any other statement is returned as it is."""
    if isinstance(statement, ast.If) and statement.orelse and _leaves(statement.body):
        statement = ast.copy_location(
            ast.If(test=statement.test, body=statement.body, orelse=[]), statement
        )
    if (
        _is_early_return(statement)
        and isinstance(statement.test, ast.BoolOp)
        and isinstance(statement.test.op, ast.Or)
        and cuda_polarity(statement.test, resolve, cuda_flags) == 0  # not ``... or _is_hip()``
    ):
        each = [cuda_polarity(v, resolve, cuda_flags) for v in statement.test.values]
        if -1 in each and 1 not in each:
            operand = statement.test.values[each.index(-1)]
            return ast.copy_location(
                ast.If(test=operand, body=statement.body, orelse=[]), statement
            )
    if not (
        isinstance(statement, ast.If)
        and statement.orelse
        and not isinstance(statement.orelse[0], ast.If)  # an ``elif`` chain is no such test
        and _leaves(statement.orelse)
        and not _leaves(statement.body)
        and cuda_polarity(statement.test, resolve, cuda_flags) == 1
    ):
        return statement
    negated = ast.copy_location(ast.UnaryOp(op=ast.Not(), operand=statement.test), statement.test)
    return ast.copy_location(ast.If(test=negated, body=statement.orelse, orelse=[]), statement)


def _param_marks(param: ast.Call) -> list[ast.expr]:
    """The marks of ``pytest.param(..., marks=mark)`` or ``marks=[mark, ...]``."""
    marks: list[ast.expr] = []
    for keyword in param.keywords:
        if keyword.arg == "marks":
            value = keyword.value
            marks += value.elts if isinstance(value, ast.List | ast.Tuple) else [value]
    return marks


def _after_launch_chain(statement: ast.AST, multi: MultiDevice) -> bool:
    """An ``if``/``elif`` chain whose ``else`` leaves and whose other arms do not, where every
    arm asks for a launcher's variable or the ``else`` says the run is not distributed: what
    follows it runs only where a launcher started several processes."""
    if not (isinstance(statement, ast.If) and statement.orelse):
        return False
    tests: list[ast.expr] = []
    node = statement
    while True:
        if _leaves(node.body):
            return False
        tests.append(node.test)
        if len(node.orelse) == 1 and isinstance(node.orelse[0], ast.If):
            node = node.orelse[0]
            continue
        last = node.orelse
        break
    if not _leaves(last):
        return False
    return all(multi.launched(test) for test in tests) or multi.declares_single(last)


def _is_early_return(statement: ast.AST) -> TypeGuard[ast.If]:
    return isinstance(statement, ast.If) and not statement.orelse and _leaves(statement.body)


#: Vendors whose module names say nothing of who runs them: CUDA and ROCm code is what portlint
#: reads, and a module named for the CPU (``cpu_offload.py``) runs on every machine.
OWN_MODULE_VENDORS = frozenset({"cuda", "rocm", "cpu"})


#: What a test may be made of for a later test written the same to give the same answer.
SETTLED_TEST_NODES = (
    ast.Name,
    ast.Attribute,
    ast.Constant,
    ast.Compare,
    ast.BoolOp,
    ast.UnaryOp,
    ast.expr_context,
    ast.cmpop,
    ast.boolop,
    ast.unaryop,
)


def _blocks(statement: ast.stmt) -> list[list[ast.stmt]]:
    """The non-empty statement blocks a compound statement holds (its arms, its loop body)."""
    return [block for block in statement_blocks(statement) if block]


def _asks_system(node: ast.BoolOp) -> bool:
    """An operand reads the operating system (``sys.platform``, ``platform.system()``,
    ``os.name``): a cheap look before the operands are judged."""
    return any(
        isinstance(part, ast.Attribute)
        and isinstance(part.value, ast.Name)
        and (part.value.id, part.attr) in SYSTEM_READS
        for value in node.values
        for part in walk(value)
    )


#: The reads of the operating system ``_asks_system`` looks for.
SYSTEM_READS = frozenset({("sys", "platform"), ("platform", "system"), ("os", "name")})


@functools.cache
def _systems(catalog: Catalog) -> dict[str, frozenset[str]]:
    """Operating system -> the targets with a build there (rules/targets.toml ``systems``)."""
    found: dict[str, set[str]] = {}
    for target, fact in catalog.target_facts().items():
        for system in fact.get("systems", ()):
            found.setdefault(system, set()).add(target)
    return {system: frozenset(targets) for system, targets in found.items()}


def _is_test_module(path: str) -> bool:
    """A test module by pytest's and unittest's default naming: ``test_*.py`` or ``*_test.py``
    (not ``conftest.py``, whose fixtures serve other modules)."""
    name = os.path.basename(path)
    return name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py"))


def _is_test(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """A test function by pytest's and unittest's default naming (``test_*``), or a test's
    private helper named as one (``_test_softmax``, which the test methods call)."""
    return node.name.lstrip("_").startswith("test")


def _unset_name(test: ast.expr) -> str | None:
    """``name is None`` or ``not name``: the name a detection chain tries to set."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        test = test.operand
        return test.id if isinstance(test, ast.Name) else None
    if (
        isinstance(test, ast.Compare)
        and isinstance(test.left, ast.Name)
        and isinstance(test.ops[0], ast.Is)
        and isinstance(test.comparators[0], ast.Constant)
        and test.comparators[0].value is None
    ):
        return test.left.id
    return None


def _assigns(statement: ast.AST, name: str) -> bool:
    return any(
        isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store)
        for n in walk(statement)
    )


def _same_test(statement: ast.AST, node: ast.AST) -> bool:
    return (
        isinstance(statement, ast.If)
        and isinstance(node, ast.If)
        and not statement.orelse
        and ast.dump(statement.test) == ast.dump(node.test)
    )


#: Calls that only schedule or do teardown at exit.
CLEANUP_CALLS = frozenset({"atexit.register", "dist.destroy_process_group"})


def _only_cleanup(branch: Branch) -> bool:
    """The branch only registers or runs teardown (``atexit.register(_destroy_group)``)."""
    return bool(branch.body) and all(
        isinstance(s, ast.Expr)
        and isinstance(s.value, ast.Call)
        and (
            ast.unparse(s.value.func) in CLEANUP_CALLS
            or ast.unparse(s.value.func).endswith("destroy_process_group")
        )
        for s in branch.body
    )


def _only_asserts(branch: Branch) -> bool:
    """The branch only asserts (``assert not torch._C._cuda_isInBadFork()``)."""
    return bool(branch.body) and all(isinstance(s, ast.Assert) for s in branch.body)


def _tested_values(test: ast.expr | None) -> frozenset[str]:
    """``self.backend == "nccl" and ...``, ``dev.type == "cuda"``: the strings the branch test
    requires its subject to equal. A body that writes them again restates what was tested."""
    if test is None:
        return frozenset()
    terms = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) else [test]
    found = set()
    for term in terms:
        if isinstance(term, ast.Compare) and len(term.ops) == 1 and isinstance(term.ops[0], ast.Eq):
            for side in (term.left, term.comparators[0]):
                if isinstance(side, ast.Constant) and isinstance(side.value, str) and side.value:
                    found.add(side.value)
    return frozenset(found)


def _asks_vendor_layer(test: ast.expr | None) -> bool:
    """The test is a vendor layer's CUDA test, alone or in an ``and``."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return any(map(device_checks.asks_vendor_layer, test.values))
    return device_checks.asks_vendor_layer(test)


def _names_one_of(test: ast.expr | None, other: ast.expr | None) -> bool:
    """``kind == "cuda"`` and ``kind == "hip"``: two tests that compare the same expression for
    equality with a string each, so no value passes both."""
    first, second = _string_equality(test), _string_equality(other)
    return first is not None and second is not None and first[0] == second[0]


def _string_equality(test: ast.expr | None) -> tuple[str, str] | None:
    """``kind == "onnx"``: the source of what is compared, and the string; else None."""
    if (
        isinstance(test, ast.Compare)
        and len(test.ops) == 1
        and isinstance(test.ops[0], ast.Eq)
        and isinstance(test.comparators[0], ast.Constant)
        and isinstance(test.comparators[0].value, str)
    ):
        return ast.unparse(test.left), test.comparators[0].value
    return None


def _builds_refusal(branch: Branch) -> bool:
    """The branch only composes a message and raises: no call runs before the ``raise``."""
    body = branch.body
    return (
        bool(body)
        and isinstance(body[-1], ast.Raise)
        and not any(isinstance(n, ast.Call) for s in body[:-1] for n in walk(s))
    )


def _adds_only_checks(branch: Branch, fallback: Branch) -> bool:
    """Every statement of ``branch`` is a check that can only refuse (``assert``, or an ``if``
    whose body only raises) or a statement the ``fallback`` arm also has, and there is at least
    one of each: the arm does what the generic arm does, after checks of its own."""
    done = {ast.dump(statement) for statement in fallback.body}
    kept = _past_checks(branch)
    return 0 < len(kept) < len(branch.body) and all(ast.dump(s) in done for s in kept)


def _past_checks(branch: Branch) -> list[ast.AST]:
    """The statements of ``branch`` that are not checks that can only refuse."""
    return [s for s in branch.body if not _refusal_check(s)]


def _passes_device_on(branch: Branch, fallback: Branch) -> bool:
    """The CUDA arm only assigns (after checks that refuse), and the ``else`` arm assigns each
    of the same names from the device the test looked at (``if cfg.device.startswith("cuda"):
    device_map = {"": torch.cuda.current_device()} ... else: device_map = {"": cfg.device}``):
    the else arm is the device-generic form of the CUDA arm."""
    subject = _device_subject(branch.test)
    if subject is None:
        return False
    kept = _past_checks(branch)
    if not kept or not all(isinstance(s, ast.Assign) for s in kept):
        return False
    given = {
        ast.dump(target): statement.value
        for statement in fallback.body
        if isinstance(statement, ast.Assign)
        for target in statement.targets
    }
    for statement in kept:
        for target in statement.targets:
            value = given.get(ast.dump(target))
            if value is None or not any(ast.dump(n) == subject for n in walk(value)):
                return False
    return True


def _device_subject(test: ast.expr | None) -> str | None:
    """What a device-type test looks at, as an ``ast.dump``: ``cfg.device`` in
    ``cfg.device.startswith("cuda")``, ``device`` in ``str(device) == "cuda"``."""
    subject: ast.expr | None = None
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        left, right = test.left, test.comparators[0]
        if isinstance(right, ast.Constant) and right.value == "cuda":
            subject = left
        elif isinstance(left, ast.Constant) and left.value == "cuda":
            subject = right
    elif cuda_prefix(test) is not None:
        subject = test.func.value
    if (
        isinstance(subject, ast.Call)
        and isinstance(subject.func, ast.Name)
        and subject.func.id == "str"
        and len(subject.args) == 1
    ):
        subject = subject.args[0]
    if isinstance(subject, ast.Attribute) and subject.attr == "type":
        subject = subject.value  # ``device.type == "cuda"``: the device itself
    return None if subject is None else ast.dump(subject)


def _refusal_check(statement: ast.AST) -> bool:
    if isinstance(statement, ast.Assert):
        return True
    return (
        isinstance(statement, ast.If)
        and not statement.orelse
        and _builds_refusal(Branch(statement.test, statement.body))
    )


#: Comparisons that hold for a compute capability below a bound (``capability < (8, 0)``).
BELOW = (ast.Lt, ast.LtE)
ABOVE = (ast.Gt, ast.GtE)


def _works_around_older_gpus(test: ast.expr | None) -> bool:
    """A term of the test holds only below an NVIDIA compute capability
    (``torch.cuda.get_device_capability()[0] < 8``, ``(8, 0) > capability``): the branch works
    around older NVIDIA GPUs, which no other target is."""
    if test is None:
        return False
    terms = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) else [test]
    for term in terms:
        if not (isinstance(term, ast.Compare) and len(term.ops) == 1):
            continue
        op, left, right = term.ops[0], term.left, term.comparators[0]
        if (isinstance(op, BELOW) and _reads_capability(left)) or (
            isinstance(op, ABOVE) and _reads_capability(right)
        ):
            return True
    return False


def _reads_capability(expr: ast.expr) -> bool:
    return any(
        isinstance(node, ast.Call) and _call_name(node) == "get_device_capability"
        for node in walk(expr)
    )


def _same_body(branch: Branch, other: Branch) -> bool:
    """``elif cuda: torch.cuda.synchronize(d) else: torch.cuda.synchronize(d)``: the two arms
    do the same thing, so the ``else`` does off CUDA what the CUDA arm would."""
    dump = [ast.dump(statement) for statement in branch.body]
    return bool(dump) and dump == [ast.dump(statement) for statement in other.body]


def _refuses(branch: Branch) -> bool:
    """``if device.type != "cuda": raise ...``: the branch refuses to run, it does not fall back."""
    return len(branch.body) == 1 and isinstance(branch.body[0], ast.Raise)


def _positive_terms(test: ast.expr) -> ast.expr | None:
    """The test without its negated ``and`` operands (``rocm and not torch.version.hip`` ->
    ``rocm``), None when nothing is left: a negated vendor test holds on every other machine,
    so leaving on it takes no vendor away."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return None
    if not (isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And)):
        return test
    kept = [
        v for v in test.values if not (isinstance(v, ast.UnaryOp) and isinstance(v.op, ast.Not))
    ]
    if not kept:
        return None
    return kept[0] if len(kept) == 1 else ast.BoolOp(op=ast.And(), values=kept)


def _says_why_and_exits(branch: Branch) -> bool:
    """``if not torch.cuda.is_available(): print("needs a GPU"); sys.exit(1)``: the arm where CUDA
    is missing says why and ends the program, a refusal as ``raise`` is."""
    body = branch.body
    return bool(body) and exits(body[-1]) and all(isinstance(s, ast.Expr) for s in body[:-1])


def _lone_arm_off_cuda(branches: list[Branch], polarity: list[int]) -> bool:
    """``if not x.is_cuda: x = x.cpu()``: one arm, taken where CUDA is missing, that goes on to
    what follows. (After ``if not torch.cuda.is_available(): return 0`` the rest is the CUDA
    path, which the other targets skip.)"""
    if len(branches) != 1 or polarity[0] != -1 or not branches[0].body:
        return False
    last = branches[0].body[-1]
    leaves = ast.Return | ast.Raise | ast.Continue | ast.Break
    return not isinstance(last, leaves) and not exits(last)


def _moves_to_devices_of_data(branches: list[Branch], polarity: list[int]) -> bool:
    """``if not next(self.lm.parameters()).is_cuda: self.lm.to(tokens.device)``, or ``if
    img.is_cuda: w = w.cuda(img.get_device()) else: w = w.to(img.device)``: the arm that the
    other targets take only moves data to the device of other data (``.to(x.device)``,
    ``.type_as(x)``), which is right on every device, and the CUDA arm, if there is one, only
    moves data to CUDA. The test leaves no target anything to port."""
    if len(branches) > 2 or branches[0].test is None or polarity[0] == 0:
        return False
    second = branches[1] if len(branches) == 2 else None
    cuda_arm, other = (branches[0], second) if polarity[0] == 1 else (second, branches[0])
    if other is None or not other.body:
        return False
    if not all(_moved(statement, _to_device_of_data) for statement in other.body):
        return False
    return cuda_arm is None or all(_moved(s, _to_cuda) for s in cuda_arm.body)


def _moved(statement: ast.stmt, move: Callable[[ast.Call], bool]) -> bool:
    """The statement is one call that ``move`` accepts, or assigns what one returns."""
    value = statement.value if isinstance(statement, ast.Expr | ast.Assign) else None
    return isinstance(value, ast.Call) and move(value)


def _to_device_of_data(call: ast.Call) -> bool:
    """``t.to(x.device)``, ``t.to(device=x.device, non_blocking=True)``, ``t.type_as(x)``."""
    if not isinstance(call.func, ast.Attribute):
        return False
    if call.func.attr == "type_as":
        return len(call.args) == 1
    if call.func.attr != "to":
        return False
    given = [*call.args[:1], *(k.value for k in call.keywords if k.arg == "device")]
    return len(given) == 1 and isinstance(given[0], ast.Attribute) and given[0].attr == "device"


def _to_cuda(call: ast.Call) -> bool:
    return isinstance(call.func, ast.Attribute) and call.func.attr == "cuda"


def _with_generic_twin(branches: list[Branch]) -> set[int]:
    """The positions of the branches that have a generic twin in another branch: ``dist.barrier(
    device_ids=[r]) if use_ids else dist.barrier()``, where the other arm makes the same call
    without the device-specific arguments, so every target has a working arm. The calls of
    each branch are read once, and only calls that name no CUDA are twins."""
    calls = [_calls_by_name(branch) for branch in branches]
    # Only a name called in two branches can have a twin: the others are not written out.
    seen: set[str] = set()
    shared: set[str] = set()
    for found in calls:
        shared |= seen & found.keys()
        seen |= found.keys()
    # call name -> (branch position, the twin, its function as written)
    generic: dict[str, list[tuple[int, ast.Call, str]]] = {}
    for position, found in enumerate(calls):
        for name, group in found.items():
            if name not in shared:
                continue
            for twin in group:
                if not CUDA_TEXT.search(ast.unparse(twin)):
                    generic.setdefault(name, []).append((position, twin, ast.unparse(twin.func)))
    twinned = set()
    known: dict[int, frozenset[str]] = {}  # a call compared with many: its arguments unparsed once

    def arguments(call: ast.Call) -> frozenset[str]:
        if id(call) not in known:
            known[id(call)] = _arguments(call)
        return known[id(call)]

    for position, found in enumerate(calls):
        for name, group in found.items():
            twins = [(t, function) for at, t, function in generic.get(name, ()) if at != position]
            if not twins:
                continue
            functions = [(call, ast.unparse(call.func)) for call in group]
            if any(
                function == written and _drops_only_hints(call, twin, arguments)
                for twin, function in twins
                for call, written in functions
            ):
                twinned.add(position)
                break
    return twinned


def _newer_twin(older: Branch, newer: Branch, words: Mapping[str, str] | None = None) -> bool:
    """The newer-torch arm makes a call of the same name through a module that names no CUDA
    (``torch.amp.GradScaler`` for the older arm's ``torch.cuda.amp.GradScaler``). With the
    vendor ``words``, also a torch call the older arm makes per device where the newer one
    takes the device (``torch.get_autocast_gpu_dtype()`` or ``torch.is_autocast_enabled()`` for
    ``torch.get_autocast_dtype(device)``, ``torch.is_autocast_enabled(device)``)."""
    calls = _calls_by_name(older)
    twins = _calls_by_name(newer)
    if any(
        not CUDA_TEXT.search(ast.unparse(twin.func))
        and any(CUDA_TEXT.search(ast.unparse(call.func)) for call in calls[name])
        for name in calls.keys() & twins.keys()
        for twin in twins[name]
    ):
        return True
    if words is None:
        return False
    generic = {
        name: twin
        for name, found in twins.items()
        for twin in found
        if _torch_call(twin) and any(_says_device(a) for a in _argument_values(twin))
    }
    for name, found in calls.items():
        parts = name.split("_")
        without = "_".join(p for p in parts if p.lower() not in words)
        twin = generic.get(without)
        if twin is None or not any(_torch_call(call) for call in found):
            continue
        if without != name or all(
            len(_argument_values(c)) < len(_argument_values(twin)) for c in found
        ):
            return True  # a device word dropped, or the same call without the device
    return False


def _torch_call(call: ast.Call) -> bool:
    """``torch.name(...)``: a call of torch's top level."""
    func = call.func
    return isinstance(func, ast.Attribute) and ast.unparse(func.value) == "torch"


def _argument_values(call: ast.Call) -> list[ast.expr]:
    return [*call.args, *(k.value for k in call.keywords)]


def _calls_by_name(branch: Branch) -> dict[str, list[ast.Call]]:
    found: dict[str, list[ast.Call]] = {}
    for part in branch.body:
        for node in walk(part):
            if isinstance(node, ast.Call):
                func = node.func
                name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
                found.setdefault(name, []).append(node)
    return found


#: Keywords that place work on a device: an arm that drops them runs on the CPU instead.
PLACEMENTS = frozenset({"device", "map_location", "device_type", "output_device"})


def _drops_only_hints(
    call: ast.Call, twin: ast.Call, arguments: Callable[[ast.Call], frozenset[str]]
) -> bool:
    """``twin`` is ``call`` less some keyword arguments, none of which places work on a device:
    ``barrier(device_ids=...)`` -> ``barrier()``, not ``ones(2, device="cuda")`` -> ``ones(2)``.
    ``arguments``: a call's arguments as written (``_arguments``)."""
    kept = arguments(twin)
    if not kept < arguments(call):
        return False
    dropped_positional = any(ast.unparse(a) not in kept for a in call.args)
    dropped = [k.arg for k in call.keywords if ast.unparse(k) not in kept]
    return not dropped_positional and all(k is not None and k not in PLACEMENTS for k in dropped)


def _arguments(call: ast.Call) -> frozenset[str]:
    return frozenset([ast.unparse(a) for a in call.args] + [ast.unparse(k) for k in call.keywords])


CUDA_TEXT = re.compile(r"(?i:cuda|nccl|nvidia)")


#: Exceptions whose handler takes care of a CUDA call failing off CUDA.
FAILURES = frozenset(
    {"Exception", "BaseException", "RuntimeError", "AssertionError", "AttributeError"}
)
#: What running a program that is not installed raises (``FileNotFoundError``, an ``OSError``;
#: ``EnvironmentError`` and ``IOError`` are its old names).
MISSING_PROGRAM = frozenset({"FileNotFoundError", "OSError", "EnvironmentError", "IOError"})


def _defined_and_called(body: list[ast.stmt]) -> set[int]:
    """The functions defined in a ``try`` body that the body also calls by name (``def
    run(): ...`` then ``run()``), and the methods of a class it builds there (``Probe()``):
    they may run inside the ``try``. Others run later."""
    called = {
        node.func.id
        for statement in body
        for node in walk(statement)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    }
    found = set()
    for statement in body:
        for node in walk(statement):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name in called:
                found.add(id(node))
            elif isinstance(node, ast.ClassDef) and node.name in called:
                found.update(
                    id(method)
                    for method in node.body
                    if isinstance(method, ast.FunctionDef | ast.AsyncFunctionDef)
                )
    return found


#: A function named for an NVIDIA-only feature: ``check_nvlink_connectivity``,
#: ``check_cuda_fp8_capability``, ``check_cuda_p2p_ib_support``, ``_load_flash_attention_3``.
NVIDIA_FEATURE_CALL = re.compile(
    r"(?i)nvlink|nvidia|nvml|fp8|p2p|flash_?attention_?3|fa3|hopper|check_cuda"
)


def _asks_for_feature(test: ast.expr | None) -> bool:
    """The test of a CUDA branch also asks for an NVIDIA-only feature
    (``device.type == "cuda" and not check_cuda_p2p_ib_support()``): a feature gate."""
    for node in walk(test) if test is not None else ():
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if NVIDIA_FEATURE_CALL.search(name):
                return True
    return False


#: A flag or option named for an NVIDIA-only feature (``args.fp8``, ``use_nvlink``); not ``p2p``,
#: which also names the device-generic point-to-point operations of torch.distributed.
NVIDIA_FEATURE_NAME = re.compile(r"(?i)nvlink|nvidia|nvml|fp8|flash_?attention_?3|fa3|hopper")


def _names_feature(test: ast.expr) -> bool:
    """The test names an NVIDIA-only feature through a call, a flag or an option (``args.fp8``)."""
    for node in walk(test):
        if isinstance(node, ast.Call):
            if NVIDIA_FEATURE_CALL.search(_call_name(node) or ""):
                return True
        elif isinstance(node, ast.Name | ast.Attribute):
            name = node.attr if isinstance(node, ast.Attribute) else node.id
            if NVIDIA_FEATURE_NAME.search(name):
                return True
    return False


#: A switch to a different numeric mode (TF32 matmuls): elsewhere only the numbers differ.
NUMERIC_MODE_CALL = re.compile(r"^set_float32_matmul_precision$")


def _returns(branch: Branch) -> bool:
    """The branch is an early ``return`` with no value."""
    return (
        len(branch.body) == 1
        and isinstance(branch.body[0], ast.Return)
        and branch.body[0].value is None
    )


def _only_warns(statements: list[ast.AST]) -> bool:
    """``if not torch.cuda.is_available(): return`` followed only by more early returns and a
    warning or a log line (``_maybe_warn_rowwise_fp8_cuda_12_9``): what the CUDA test gates is a
    message, which the other targets merely do not get."""
    if not statements:
        return False
    said = False
    for statement in statements:
        if isinstance(statement, ast.If) and not statement.orelse:
            if not _returns(Branch(statement.test, statement.body)):
                return False
        elif isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
            func = statement.value.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if not LOG_CALL.search(name):
                return False
            said = True
        else:
            return False
    return said


def _only_calls(branch: Branch, pattern: re.Pattern[str]) -> bool:
    """The branch body only makes calls whose function name matches ``pattern``."""
    return bool(branch.body) and all(is_call_of(s, pattern) for s in branch.body)


def _refines(branch: Branch, after: list[ast.AST]) -> bool:
    """The branch only returns values (through nested ``if``s), and the statement after it
    returns one of them without computing anything: the CUDA arm refines an answer that every
    other target gets as it is."""
    if branch.test is None or not after or not isinstance(after[0], ast.Return):
        return False
    fallback = after[0].value
    if fallback is None or any(isinstance(n, ast.Call) for n in walk(fallback)):
        return False
    returns = []
    pending = list(branch.body)
    while pending:
        statement = pending.pop()
        if isinstance(statement, ast.If):
            pending += [*statement.body, *statement.orelse]
        elif isinstance(statement, ast.Return) and statement.value is not None:
            returns.append(ast.dump(statement.value))
        else:
            return False
    return ast.dump(fallback) in returns


def _only_notes(branch: Branch) -> bool:
    """``if not torch.cuda.is_available(): DESCRIPTION += "<p>Running on CPU ...</p>"``: the
    branch only appends fixed text to a message (a demo's page description); nothing runs
    elsewhere because of it, a value merely different (info). Not a formatted string: ``device
    += f":{rank}"`` picks a device."""
    return bool(branch.body) and all(
        isinstance(statement, ast.AugAssign)
        and isinstance(statement.op, ast.Add)
        and isinstance(statement.target, ast.Name | ast.Attribute)
        and isinstance(statement.value, ast.Constant)
        and isinstance(statement.value.value, str)
        for statement in branch.body
    )


def _fills_index(branch: Branch) -> bool:
    """``if device.type == "cuda" and device.index is None: return torch.device(f"cuda:{i}")``:
    the branch only gives a device without an index the current one; elsewhere the device keeps
    no index, a value merely different (info)."""
    test = branch.test
    if not (isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And)):
        return False
    asks_index = any(
        isinstance(term, ast.Compare)
        and isinstance(term.left, ast.Attribute)
        and term.left.attr == "index"
        and isinstance(term.ops[0], ast.Is)
        and isinstance(term.comparators[0], ast.Constant)
        and term.comparators[0].value is None
        for term in test.values
    )
    return (
        asks_index and len(branch.body) == 1 and isinstance(branch.body[0], ast.Return | ast.Assign)
    )


def _stand_in(branch: Branch) -> bool:
    """``lambda: None``, ``lambda: 0``, ``None``: an arm that stands in for the CUDA one."""
    if len(branch.body) != 1:
        return False
    arm = branch.body[0]
    if isinstance(arm, ast.Lambda):
        arm = arm.body
    return isinstance(arm, ast.Constant) and not isinstance(arm.value, str)


def _only_logs(branch: Branch) -> bool:
    """The branch body only prints or logs."""
    return _only_calls(branch, LOG_CALL)


#: What a torch that lacks an API raises: a missing name, a missing keyword, a missing module.
MISSING_API = frozenset({"AttributeError", "TypeError", "ImportError", "ModuleNotFoundError"})


def _catches_missing_api(handler: ast.ExceptHandler) -> bool:
    """The handler names an exception that an older torch's missing API raises."""
    if handler.type is None:
        return False
    names = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return any(isinstance(n, ast.Name) and n.id in MISSING_API for n in names)


def _catches_import_error(handler: ast.ExceptHandler) -> bool:
    """The handler catches a failed import and carries on: one that ends by raising (``except
    ImportError as e: raise MissingDependencyError(...) from e``) is no fallback."""
    if reraises(handler):
        return False
    if handler.type is None:
        return True
    names = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return any(isinstance(n, ast.Name) and n.id in IMPORT_ERRORS for n in names)


def analyse_python(
    source: SourceFile,
    catalog: Catalog,
    settings: Settings | None,
    sink: FindingSink,
    sliced: bool = True,
) -> None:
    """Emit the findings of one Python file, with their fixes, into ``sink``. A syntax error
    gives one PRT001 finding.

    ``sliced``: parse only the statements the analysis can read (``python.slices``); the
    findings are the same as with a whole parse."""
    index = LineIndex(source.text)
    relevance = Relevance(source.text, index.lines)
    words = vendor_words(catalog)
    try:
        tree, stubs = slices.parse(source.text, source.path, relevance, words, sliced)
    except SyntaxError as error:
        requires = settings.requires_python if settings else None
        sink.emit(parse_error_finding(source.path, error, index, catalog, requires))
        return
    except (ValueError, RecursionError) as error:  # null bytes; absurdly deep nesting
        sink.emit(_finding_at_start(source.path, f"cannot parse: {error}", catalog))
        return
    try:
        findings, visited = _analyse_tree(source, tree, stubs, index, catalog, settings)
    except RecursionError:
        # Python parses an expression of several hundred nested parts (``a + a + ... + a``),
        # and the walk, which recurses per node, is deeper than the interpreter allows
        message = "cannot analyse: nested too deeply (maximum recursion depth exceeded)"
        sink.emit(_finding_at_start(source.path, message, catalog))
        return
    if any(id(stub) in visited and slices.is_stub(stub) for stub in stubs):
        # the walk reached a definition left unparsed, and it did not parse alone
        tree = ast.parse(source.text, filename=source.path)
        findings, _ = _analyse_tree(source, tree, [], index, catalog, settings)
    for finding in findings:
        sink.emit(finding)


def _fold_lone_class(
    backend: Backend, findings: list[Finding], summaries: list[Finding], path: str, catalog: Catalog
) -> list[Finding]:
    """A class named for CUDA or ROCm with no sibling (``CUDAGraphWrapper``): what is reported
    inside it becomes its one summary, added to ``summaries``; a class with nothing reported
    inside gets none."""
    inside = [f for f in findings if backend.first_line <= f.span.line <= backend.last_line]
    if not inside:
        return findings
    summaries.append(backend_finding(backend, path, catalog, len(inside)))
    return [f for f in findings if not backend.first_line <= f.span.line <= backend.last_line]


def _analyse_tree(
    source: SourceFile,
    tree: ast.Module,
    stubs: list[ast.stmt],
    index: LineIndex,
    catalog: Catalog,
    settings: Settings | None,
    backends: bool = True,
) -> tuple[list[Finding], dict[int, Guard]]:
    """The findings of a parsed module, and the nodes the walk visited (their guards).
    ``stubs``: the module's definitions left unparsed, parsed if the walk reaches them;
    ``backends``: whether the module's CUDA backends are read (or it is read as a plain
    module)."""
    found = (
        find_backends(tree, source.path, source.text.count("\n") + 1, catalog) if backends else []
    )
    held = [backend for backend in found if not backend.lone]
    summaries = [
        backend_finding(backend, source.path, catalog) for backend in held if backend.summarised
    ]
    words = vendor_words(catalog)
    if summaries and any(generic_module(backend, words) for backend in held):
        # ``patched_modeling_gpu.py`` beside ``patched_modeling_npu.py``: "GPU" names no one
        # vendor; with nothing in it that only CUDA runs, it is the module every other target
        # loads, no CUDA backend (with something, its summary stands for it)
        plain = _analyse_tree(source, tree, stubs, index, catalog, settings, backends=False)[0]
        return (summaries if plain else []), {}
    if any(backend.kind in ("module", "package") for backend in held):
        return summaries, {}  # the whole file is the backend: nothing in it is reported
    ctx = Context(path=source.path, text=source.text, catalog=catalog, index=index)
    ctx.backend_lines = [(backend.first_line, backend.last_line) for backend in held]
    if settings is not None and settings.cuda_layers:
        ctx.layers = settings.cuda_layers
        ctx.layer_rules = catalog.table("device").get("backend", {}).get("project_layers", {})
    if settings is not None:
        ctx.absent_targets = settings.absent_targets
        ctx.own_packages = settings.own_packages
    stem = os.path.splitext(os.path.basename(source.path))[0]
    folders = [f for f in os.path.dirname(source.path).replace("\\", "/").split("/") if f]
    if folders and folders[0] == "src":
        folders = folders[1:]
    # bitsandbytes.py, bnb.py, or a module in a folder named for the package (layers/marlin/).
    # The top folder may be the package's own sources (bitsandbytes/ in bitsandbytes, which is
    # ported to other targets): it counts only for a package no target has a build of.
    for position, name in enumerate((stem, *reversed(folders))):
        absent = package_scope(name, catalog) if name not in ("", ".", "..") else None
        top = position == len(folders)
        if absent and (not top or absent >= frozenset(TARGETS)):
            ctx.package_scopes.append((1, source.text.count("\n") + 1, absent))
            break
    package_checks.scope_extension_tests(ctx)  # fused_kernels/tests/test_fused_kernels.py
    min_torch = (settings or Settings()).min_torch
    ctx.fixes = FixBuilder(ctx, tree, min_torch, source.newline)
    analyser = Analyser(ctx)
    for stub in stubs:
        analyser.relevance.stand_ins[id(stub)] = functools.partial(_parse_stub, stub, ctx)
    analyser.record_option_defaults(tree)
    analyser.visit(tree)
    analyser.drop_cuda_path_helpers(tree)
    analyser.drop_skipped_test_helpers(tree)
    analyser.drop_repeated_arms()
    findings = ctx.findings()
    for backend in found:
        if backend.lone:
            findings = _fold_lone_class(backend, findings, summaries, source.path, catalog)
    findings = summaries + findings
    ctx.fixes = None  # the builder refers back to ctx: without the cycle, the tree is freed now
    return findings, ctx.guards


def _parse_stub(stub: ast.stmt, ctx: Context) -> bool:
    """Make the stand-in the definition it stands for, and add its nodes to the fix builder's
    map of parents if that is built already."""
    if not slices.fill(stub):
        return False
    ctx.tree_changed()
    parents = vars(ctx.fixes).get("parents") if ctx.fixes is not None else None
    if parents is not None:
        parents.update(parent_map(stub))
    return True


def parse_error_finding(
    path: str,
    error: SyntaxError,
    index: LineIndex,
    catalog: Catalog,
    requires_python: str | None = None,
) -> Finding:
    line = error.lineno or 1
    # SyntaxError.offset is 1-based and counts characters.
    column = max((error.offset or 1) - 1, 0)
    column = min(column, len(index.line(line)))
    span = Span(line, column, line, column)
    note = syntax_error_note(index.line(line), requires_python)
    return catalog.rules["PRT001"].finding(path, span, f"SyntaxError: {error.msg}{note}")


def _finding_at_start(path: str, message: str, catalog: Catalog) -> Finding:
    return catalog.rules["PRT001"].finding(path, Span(1, 0, 1, 0), message)

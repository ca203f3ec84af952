"""Vendor branches: is a site on a CUDA-only path, and which targets do its sibling branches cover?

``if torch.cuda.is_available(): model.cuda()`` is a CUDA-only path: on an Ascend machine the branch
is skipped and the model stays on the CPU. An ``elif torch.npu.is_available():`` sibling covers
Ascend, so the CUDA branch needs nothing for that target. Every path that the guard skips runs the
CPU code, so a guarded site is never a problem for the ``cpu`` target.
"""

from __future__ import annotations

import ast
import functools
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, TypeGuard

from portlint.python.backends import WORD, vendor_of
from portlint.python.tree import walk

if TYPE_CHECKING:
    from portlint.catalog import Catalog

#: Qualified names whose truth means "an NVIDIA (or ROCm) GPU is here".
CUDA_CHECKS = frozenset(
    {
        "torch.cuda.is_available",
        "torch.cuda.device_count",
        "torch.cuda.is_initialized",
        "torch.version.cuda",
        "torch.backends.cudnn.is_available",
        "torch.cuda.default_generators",  # one per CUDA device: empty without CUDA
    }
)
#: Everything a device-generic API covers.
GENERIC_MARKERS = ("torch.accelerator", "torch.get_device_module")


#: ``"cuda"``, ``"cuda:0"``; not a backend spec such as ``"cuda:nccl,cpu:gloo"``.
CUDA_DEVICE_TEXT = re.compile(r"cuda(:\d+)?")
#: ``is_npu_available``, ``is_torch_xpu_available``, ``is_rocm``, ``has_mlu``,
#: ``has_rocm_capability``, ``is_rocm_pytorch`` (mmengine.utils.dl_utils): a vendor predicate.
PREDICATE = re.compile(
    r"(?:is|has|use)_(?:torch_)?([a-z]+)(?:_available|_capability|_pytorch)?", re.IGNORECASE
)


@dataclass(frozen=True)
class Guard:
    """Where a node sits: under a CUDA check, and which targets other branches handle."""

    cuda_only: bool = False
    covered: frozenset[str] = frozenset()
    #: The only targets that can reach the node (``elif is_npu_available():`` -> npu), or None.
    only: frozenset[str] | None = None
    #: In the arm of a torch-version test that runs on the older torch: no newer form exists.
    old_torch: bool = False
    #: Nothing breaks here (a try whose except handles the failure, an annotation, a branch
    #: that only logs): info.
    info: bool = False
    #: In a test that refuses to run elsewhere (``assert torch.cuda.is_available()``): error.
    refuses: bool = False
    #: Strings an enclosing branch test required (``if dev.type == "cuda":``, ``if backend ==
    #: "nccl":``): a literal that says them again restates the test, it is no new site.
    restated: frozenset[str] = frozenset()
    #: In the CUDA arm of a chain whose ``else`` fails off CUDA (``else: raise``, or the same
    #: CUDA call again): the other targets do not skip the arm silently, they fail (error).
    fails_elsewhere: bool = False
    #: In an arm for a torch older than this version (``if TORCH_VERSION < "1.10":``): a
    #: device-generic form added since is not there.
    torch_below: tuple[int, int] | None = None
    #: The positive CUDA test (``if torch.cuda.is_available():``, or the negated test of an
    #: early return) whose arm the node is in: a ``torch.cuda`` call here never runs off CUDA,
    #: the test is the site (its fix carries the call's).
    behind: ast.expr | None = None
    #: In the test of a CUDA arm that alone binds a name read after the chain (``if
    #: torch.cuda.is_available(): n = ...`` then ``total / n``): the name. Off CUDA the read
    #: raises (``bindings.unbound_read``).
    unbound: str | None = None
    #: In the body of a ``try`` whose ``except`` handles the failure (what makes ``info``
    #: true there), with the ``info`` the node would have outside it: a function defined in
    #: the ``try`` runs later, where the handler no longer catches anything (``in_function``).
    handled: bool = False
    info_unhandled: bool = False
    #: In the test of a lone arm taken where CUDA is missing (``if not x.is_cuda: ...``, no
    #: ``else``): the other targets take the arm; there is no CUDA path for them to skip.
    taken_off_cuda: bool = False
    #: In the body of a ``try`` whose ``except`` catches a missing program (``except
    #: (subprocess.CalledProcessError, FileNotFoundError):``): a command that runs NVIDIA's tools
    #: (``subprocess.check_output(["nvidia-smi", ...])``) fails into the handler there: info.
    tools_handled: bool = False

    def inside(
        self,
        cuda_only: bool,
        covered: frozenset[str],
        only: frozenset[str] | None = None,
        old_torch: bool = False,
        info: bool = False,
        refuses: bool = False,
        restated: frozenset[str] = frozenset(),
        fails_elsewhere: bool = False,
        torch_below: tuple[int, int] | None = None,
        behind: ast.expr | None = None,
        unbound: str | None = None,
        taken_off_cuda: bool = False,
    ) -> Guard:
        if only is None:
            only = self.only
        elif self.only is not None:
            only = only & self.only
        return Guard(
            self.cuda_only or cuda_only,
            self.covered | covered,
            only,
            self.old_torch or old_torch,
            self.info or info,
            self.refuses or refuses,
            self.restated | restated,
            self.fails_elsewhere or fails_elsewhere,
            min(filter(None, (self.torch_below, torch_below)), default=None),
            behind if behind is not None else self.behind,
            unbound if unbound is not None else self.unbound,
            self.handled,
            self.info_unhandled or info,
            taken_off_cuda,
            self.tools_handled,
        )

    def in_handled_try(self) -> Guard:
        """The body of a ``try`` whose ``except`` handles the failure: info."""
        unhandled = self.info_unhandled if self.handled else self.info
        return replace(self, info=True, handled=True, info_unhandled=unhandled)

    def in_try_for_programs(self) -> Guard:
        """The body of a ``try`` whose ``except`` catches a missing program."""
        return replace(self, tools_handled=True)

    def in_function(self) -> Guard:
        """The body of a function defined here: it runs when called, outside any ``try`` the
        definition sits in."""
        if not self.handled and not self.tools_handled:
            return self
        info = self.info_unhandled if self.handled else self.info
        return replace(self, info=info, handled=False, tools_handled=False)


def handles_failures(handler: ast.ExceptHandler, failures: frozenset[str]) -> bool:
    """The ``except`` clause catches one of ``failures`` (by its name, ``FileNotFoundError`` or
    ``subprocess.CalledProcessError``), or anything, and carries on: it does not end by
    raising."""
    if reraises(handler):
        return False
    if handler.type is None:
        return True
    names = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return any(_last_name(name) in failures for name in names)


def reraises(handler: ast.ExceptHandler) -> bool:
    """The ``except`` clause ends by raising."""
    return bool(handler.body) and isinstance(handler.body[-1], ast.Raise)


@dataclass
class Vendors:
    """What names a vendor in a branch test: the target markers of rules/targets.toml and the
    vendor words of rules/device.toml, plus the local names that hold a vendor check."""

    markers: dict[str, tuple[str, ...]]
    #: vendor word -> vendor key (a target, ``cuda``, or another vendor)
    words: Mapping[str, str]
    #: name -> targets, for ``use_npu = is_npu_available()`` and try-imports of torch_npu
    flags: dict[str, frozenset[str]] = field(default_factory=dict)
    #: name -> targets, for a name that holds a test every target but those passes
    #: (``accelerated = dev.type != "cpu"``): its branch sends them elsewhere
    excluding_flags: dict[str, frozenset[str]] = field(default_factory=dict)
    #: words of hosted notebook services that offer no target's accelerator (``colab``)
    hosted: tuple[str, ...] = ()
    #: Words of runtimes that no target is (rules/device.toml ``[backend.runtimes]``).
    runtimes: tuple[str, ...] = ()
    #: Operating system (``linux``, ``windows``, ``darwin``) -> the targets with a build there
    #: (rules/targets.toml ``systems``).
    systems: Mapping[str, frozenset[str]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        #: marker -> the targets it is a marker of, for ``marked_targets``
        self._marked: dict[str, set[str]] = {}
        for target, names in self.markers.items():
            for name in names:
                self._marked.setdefault(name, set()).add(target)

    def marked_targets(self, name: str) -> set[str]:
        """The targets one of whose markers is ``name`` or a dotted prefix of it
        (``torch.npu.synchronize`` -> npu)."""
        found: set[str] = set()
        end = len(name)
        while end > 0:
            found.update(self._marked.get(name[:end], ()))
            end = name.rfind(".", 0, end)
        return found

    def hosted_only(self, node: ast.AST) -> bool:
        """``in_colab``, ``is_kaggle()``: a name that holds only on a hosted notebook service
        whose accelerators are NVIDIA GPUs and TPUs (rules/device.toml ``hosted_notebooks``)."""
        func = node.func if isinstance(node, ast.Call) else node
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
        return name is not None and any(word in name.lower() for word in self.hosted)

    def package_target(self, module: str) -> str | None:
        """``torch_npu`` -> npu: a marker that is a top-level package name."""
        for target, names in self.markers.items():
            if module in names or module.split(".")[0] in names:
                return target
        return None

    def predicate_vendor(self, node: ast.AST) -> str | None:
        """The vendor a predicate call or name asks about: ``is_npu_available()`` -> npu,
        ``current_platform.is_rocm()`` -> rocm, ``MPSAccelerator.is_available()`` -> mps."""
        func = node.func if isinstance(node, ast.Call) else node
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
        if not name:
            return None
        name = name.lstrip("_") or name  # ``envs._is_npu()``: a module's private predicate
        match = PREDICATE.fullmatch(name)
        if match:
            return self.words.get(match.group(1).lower())
        named = self._named_predicate(name)
        if named is not None:
            return named
        if name == "is_available" and isinstance(func, ast.Attribute):
            receiver = func.value
            owner = receiver.attr if isinstance(receiver, ast.Attribute) else None
            owner = owner or getattr(receiver, "id", None)
            if owner:
                return vendor_of(owner, self.words)
        return None

    def _named_predicate(self, name: str) -> str | None:
        """``is_intel_xpu()``, ``is_device_mps(device)``, ``mps_mode()``, ``_xpu_is_available()``:
        a predicate named ``is_`` (``has_``) then words that name one vendor, or a vendor's
        ``_mode``, ``_available`` or ``_is_available``."""
        words = name.lower().split("_")
        if len(words) >= 2 and words[0] in ("is", "has"):
            named = words[1:]
        elif len(words) == 2 and words[1] in ("mode", "available"):
            named = words[:1]  # ``mps_mode()``, ``xpu_available()``
        elif len(words) == 3 and words[1:] == ["is", "available"]:
            named = words[:1]  # ``_xpu_is_available()``: the vendor first
        else:
            return None
        vendors = {self.words.get(word) for word in named if word not in PREDICATE_FILLERS}
        return vendors.pop() if len(vendors) == 1 and None not in vendors else None


#: Words a vendor predicate's name may hold beside the vendor's (``is_device_mps``).
PREDICATE_FILLERS = frozenset({"device", "torch"})


NO_GUARD = Guard()


@dataclass(frozen=True)
class Branch:
    test: ast.expr | None  # None for the final else
    body: list[ast.AST]


def if_chain(node: ast.If) -> list[Branch]:
    """``if``/``elif``/``else`` as a flat list of branches."""
    branches = []
    current: ast.If | None = node
    while current is not None:
        branches.append(Branch(current.test, list(current.body)))
        orelse = current.orelse
        if len(orelse) == 1 and isinstance(orelse[0], ast.If):
            current = orelse[0]
        else:
            if orelse:
                branches.append(Branch(None, list(orelse)))
            current = None
    return branches


def ifexp_chain(node: ast.IfExp) -> list[Branch]:
    """``a if t1 else b if t2 else c`` as a flat list of branches."""
    branches = []
    current: ast.expr = node
    while isinstance(current, ast.IfExp):
        branches.append(Branch(current.test, [current.body]))
        current = current.orelse
    branches.append(Branch(None, [current]))
    return branches


Resolve = Callable[[ast.expr], "str | None"]


@dataclass(frozen=True)
class MultiDevice:
    """What only matters where several devices are (rules/targets.toml ``[multi_device]``): a
    branch about it is none of a single-device target's concern (mps has one GPU)."""

    #: targets with a single device
    single: frozenset[str]
    #: collective backends: ``nccl``, ``hccl``, ``cncl``, ``xccl``
    backends: frozenset[str]
    enum_prefixes: tuple[str, ...]
    variable_suffixes: tuple[str, ...]
    #: words of class, function and module names for multi-device features (``fsdp``,
    #: ``tensorparallel``), matched without underscores
    scope_words: tuple[str, ...] = ()
    #: their abbreviations, matched as whole words of a name of several words (``tp_rank``)
    scope_abbreviations: frozenset[str] = frozenset()
    #: words of a name that runs without the feature (``disable``)
    scope_negations: frozenset[str] = frozenset()
    #: enum members that mean "not distributed" (``DistributedType.NO``), as written
    single_process_members: frozenset[str] = frozenset()
    #: names of process counts (``world_size``)
    process_counts: frozenset[str] = frozenset()
    #: last words of the names of a process's rank (``local_rank``, ``get_rank``)
    rank_words: frozenset[str] = frozenset()
    #: calls that set up a group of processes (``init_process_group``)
    group_setups: frozenset[str] = frozenset()
    device_selections: frozenset[str] = frozenset()
    mode_words: frozenset[str] = frozenset()
    #: calls that split a batch over several devices in one process (``DataParallel``)
    batch_splits: frozenset[str] = frozenset()
    #: variables a launcher of several processes sets (``RANK``, ``SLURM_PROCID``)
    launch_variables: frozenset[str] = frozenset()
    #: names of a flag that says the run is distributed (``args.distributed``)
    distributed_flags: frozenset[str] = frozenset()
    #: callees that say a process group is set up (``dist.is_initialized``)
    group_checks: tuple[str, ...] = ()

    @classmethod
    def from_catalog(cls, catalog: Catalog) -> MultiDevice:
        facts = catalog.target_facts()
        table = catalog.table("targets").get("multi_device", {})
        single = catalog.single_device_targets
        backends = {row.get("backend") for t, row in facts.items() if t not in single}
        backends = (backends | {"nccl"}) - {None, "gloo"}
        return cls(
            single,
            frozenset(backends),
            tuple(table.get("enum_prefixes", ())),
            tuple(table.get("variable_suffixes", ())),
            tuple(word.lower() for word in table.get("scope_words", ())),
            frozenset(word.lower() for word in table.get("scope_abbreviations", ())),
            frozenset(word.lower() for word in table.get("scope_negations", ())),
            frozenset(table.get("single_process_members", ())),
            frozenset(table.get("process_counts", ())),
            frozenset(table.get("rank_words", ())),
            frozenset(table.get("group_setups", ())),
            frozenset(table.get("device_selections", ())),
            frozenset(word.lower() for word in table.get("mode_words", ())),
            frozenset(table.get("batch_splits", ())),
            frozenset(table.get("launch_variables", ())),
            frozenset(table.get("distributed_flags", ())),
            tuple(table.get("group_checks", ())),
        )

    def nccl_group_scopes(self, module: ast.Module) -> list[tuple[int, int, frozenset[str]]]:
        """The lines that run only after a statement set up a process group over NCCL
        (``dist.init_process_group(backend="nccl")``): the rest of that statement's block, and
        where the statement is in a class's ``__init__``, the rest of the class (its methods
        run on an instance that set the group up). They run with several processes, one per
        GPU: none of a single-device target's concern."""
        scopes: list[tuple[int, int, frozenset[str]]] = []
        for node in walk(module):
            for block in _blocks(node):
                setup = next((s for s in block if self._sets_up_nccl(s)), None)
                if setup is not None and setup is not block[-1]:
                    last = block[-1].end_lineno or block[-1].lineno
                    scopes.append((_end(setup) + 1, last, self.single))
            if isinstance(node, ast.ClassDef):
                for method in node.body:
                    if not (isinstance(method, ast.FunctionDef) and method.name == "__init__"):
                        continue
                    setup = next((s for s in method.body if self._sets_up_nccl(s)), None)
                    if setup is not None:
                        last = node.end_lineno or node.lineno
                        scopes.append((_end(setup) + 1, last, self.single))
        return scopes

    def _sets_up_nccl(self, statement: ast.stmt) -> bool:
        """``dist.init_process_group("nccl", ...)``, ``init_process_group(backend=
        Backend.NCCL)``: a statement that is such a call (or assigns its result)."""
        if not isinstance(statement, ast.Expr | ast.Assign):
            return False
        call = statement.value
        if not (isinstance(call, ast.Call) and _call_name(call) in self.group_setups):
            return False
        given = [*call.args[:1], *(k.value for k in call.keywords if k.arg == "backend")]
        return any(
            (isinstance(value, ast.Constant) and str(value.value).lower() == "nccl")
            or (isinstance(value, ast.Attribute) and value.attr == "NCCL")
            for value in given
        )

    def names_scope(self, name: str) -> bool:
        """``FullyShardedDataParallelPlugin``, ``_setup_fsdp``, ``ColumnParallelLinear``,
        ``get_batch_on_this_tp_rank``: named for a multi-device feature, and not for running
        without it (``disable_context_parallel``)."""
        words = {word.lower() for word in WORD.findall(name)}
        if words & self.scope_negations:
            return False
        squashed = name.lower().replace("_", "")
        # an abbreviation alone (``tp.py``, ``def cp``) may stand for anything (throughput, copy)
        abbreviated = len(words) > 1 and bool(words & self.scope_abbreviations)
        return abbreviated or any(word in squashed for word in self.scope_words)

    def names_module(self, path: str) -> bool:
        """``megatron/core/tensor_parallel/layers.py``, ``sequence_parallel_fused_ops.py``: a
        module whose dotted name is named for a multi-device feature: its file, or a package
        it is in (a folder with an ``__init__.py``; not a folder above the project, which
        would make the answer depend on where the project was checked out)."""
        stem = os.path.splitext(os.path.basename(path))[0]
        names = (stem, *_package_names(os.path.dirname(os.path.abspath(path))))
        return any(self.names_scope(name) for name in names)

    def single_process(self, test: ast.expr) -> bool:
        """``distributed_type == DistributedType.NO``, ``world_size == 1``, ``dist.
        get_world_size() <= 1``, or an ``or`` with one of them (``not dist.is_initialized() or
        world_size <= 1``): the test holds without several processes (so what follows its early
        return runs with several)."""
        if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or):
            return any(self.single_process(value) for value in test.values)
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            return self._checks_group(test.operand)  # ``not dist.is_initialized()``
        if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
            return False
        op = test.ops[0]
        sides = (test.left, test.comparators[0])
        for side, other in (sides, sides[::-1]):
            if isinstance(side, ast.Attribute) and any(
                ast.unparse(side).endswith(member) for member in self.single_process_members
            ):
                return isinstance(op, ast.Eq) and isinstance(other, ast.Attribute | ast.Name)
            if _count_name(side) in self.process_counts and isinstance(other, ast.Constant):
                if isinstance(op, ast.Eq):
                    return other.value == 1
                # ``world_size <= 1``, ``world_size < 2``: the count on the left
                on_left = other is test.comparators[0]
                if isinstance(op, ast.LtE):
                    return on_left and other.value == 1
                if isinstance(op, ast.Lt):
                    return on_left and other.value == 2
                return False
        return False

    def _checks_group(self, node: ast.expr) -> bool:
        """``dist.is_initialized()``, ``is_dist_avail_and_initialized()``: a call that says a
        process group is set up."""
        if not (isinstance(node, ast.Call) and not node.args):
            return False
        callee = ast.unparse(node.func)
        return any(callee == name or callee.endswith("." + name) for name in self.group_checks)

    def asks_several_processes(self, test: ast.expr) -> bool:
        """``world_size > 1``, ``dist.get_world_size() >= 2``, ``num_gpus > 1`` somewhere in
        the test: a count of processes or devices above one. Or a process other than the
        first (see ``_other_rank``)."""
        if self._other_rank(test):
            return True
        for node in walk(test):
            if not (isinstance(node, ast.Compare) and len(node.ops) == 1):
                continue
            side, op, value = node.left, node.ops[0], _integer(node.comparators[0])
            if _count_name(side) in self.process_counts and (
                (isinstance(op, ast.Gt) and value == 1) or (isinstance(op, ast.GtE) and value == 2)
            ):
                return True
        return False

    def _other_rank(self, test: ast.expr) -> bool:
        """``local_rank != 0``, ``dist.get_rank() > 0``, ``args.local_rank != -1`` (-1 meaning
        no launcher), alone or in an ``and``: the test holds only for a process other than the
        first, or for a rank a launcher set. The rank's name ends with a word of
        ``rank_words``. Not in an ``or``, whose other operands let one process through."""
        if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
            return any(self._other_rank(value) for value in test.values)
        if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
            return False
        name = _count_name(test.left)
        if name is None or name.lower().rsplit("_", 1)[-1] not in self.rank_words:
            return False
        op, value = test.ops[0], _integer(test.comparators[0])
        return (
            (isinstance(op, ast.NotEq) and value in (0, -1))
            or (isinstance(op, ast.Gt) and value == 0)
            or (isinstance(op, ast.GtE) and value == 1)
        )

    def launched(self, test: ast.expr) -> bool:
        """``"RANK" in os.environ`` (or an ``and`` with such a test): the process was started by
        a launcher of several processes."""
        if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
            return any(self.launched(value) for value in test.values)
        if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
            return False
        left, right = test.left, test.comparators[0]
        environ = right.attr if isinstance(right, ast.Attribute) else getattr(right, "id", None)
        return (
            isinstance(test.ops[0], ast.In)
            and isinstance(left, ast.Constant)
            and left.value in self.launch_variables
            and environ == "environ"
        )

    def declares_single(self, body: list[ast.stmt]) -> bool:
        """``args.distributed = False`` in the block: it says the run is not distributed."""
        for statement in body:
            if not (
                isinstance(statement, ast.Assign)
                and isinstance(statement.value, ast.Constant)
                and statement.value.value is False
            ):
                continue
            for target in statement.targets:
                if (_last_name(target) or "").lower() in self.distributed_flags:
                    return True
        return False

    def concerns(self, branch: Branch) -> bool:
        """The branch test asks for more than one device (``torch.cuda.device_count() > 1``),
        or its body only sets a collective backend, a visible-devices variable or a multi-device
        mode (``backend = "nccl"``, ``env["CUDA_VISIBLE_DEVICES"] = ids``). A fallback arm
        (``else:``) also runs on the single-device target: there only a visible-devices variable
        counts, since setting it changes nothing where there is one device."""
        if branch.test is not None and any(_asks_several(n) for n in walk(branch.test)):
            return True
        if branch.test is not None and self._asks_for_mode(branch.test):
            # ``if use_ddp:``, ``elif args.fsdp:``: an arm for a data-parallel mode, which needs a
            # process group over several devices
            return True
        if branch.test is not None and self.launched(branch.test):
            # ``elif "SLURM_PROCID" in os.environ:``: the arm of a launch of several processes
            return True
        if branch.test is not None and self.asks_several_processes(branch.test):
            # ``if world_size > 1:``, ``... if num_gpus > 1 else None``
            return True
        if branch.test is not None and self._sets_up_group(branch.body, _is_main_test(branch.test)):
            # ``if ddp and device_type == "cuda": ... init_process_group("nccl")``: a branch
            # that starts several processes, one per device
            return True
        statements = _statements(branch.body)
        assigns = [s for s in statements if isinstance(s, ast.Assign)]
        if not assigns or any(not isinstance(s, ast.Assign | ast.Pass) for s in statements):
            return False
        return all(self._multi_device_value(s, branch.test is None) for s in assigns)

    def _asks_for_mode(self, test: ast.expr) -> bool:
        """The test holds only in a data-parallel mode: a name with a word of ``mode_words``
        (``use_ddp``, ``self.is_fsdp``, ``is_fsdp_enabled()``; whole words, so ``DDPMScheduler``
        is no DDP), alone or in an ``and``; not negated (``not args.use_fsdp``)."""
        if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
            return any(self._asks_for_mode(value) for value in test.values)
        if isinstance(test, ast.Call) and not test.args:
            test = test.func
        if not isinstance(test, ast.Name | ast.Attribute):
            return False
        last = test.attr if isinstance(test, ast.Attribute) else test.id
        return bool(self.mode_words & {word.lower() for word in WORD.findall(last)})

    def only_selects_device(self, branch: Branch) -> bool:
        """The body only picks one of several devices (``torch.cuda.set_device(device)``). In
        the arm of a CUDA test a single-device target loses nothing by skipping it; elsewhere
        (``if local_rank != -1:``) it may get there, and the call fails."""
        statements = _statements(branch.body)
        return bool(statements) and all(
            isinstance(s, ast.Expr)
            and isinstance(s.value, ast.Call)
            and _call_name(s.value) in self.device_selections
            for s in statements
        )

    def splits_batches(self, branch: Branch) -> bool:
        """The body splits a batch over several devices (``model = nn.DataParallel(model)``,
        ``nn.parallel.data_parallel(self.main, input, range(ngpu))``): where there is one
        device, the ``else`` beside it runs the model as it is, and nothing is lost."""
        return any(
            isinstance(node, ast.Call) and _call_name(node) in self.batch_splits
            for statement in branch.body
            for node in walk(statement)
        )

    def _sets_up_group(self, body: list[ast.AST], script: bool) -> bool:
        """A call of ``group_setups`` in the branch. In a script's ``if __name__ ==
        "__main__":`` block, only one that runs whenever the block does: the block is the whole
        script, and where an ``if args.use_usp:`` arm in it sets up the group, the rest runs with
        one process unless the option is given."""
        return any(
            isinstance(node, ast.Call) and _call_name(node) in self.group_setups
            for statement in (_always_run(body) if script else body)
            for node in walk(statement)
        )

    def _multi_device_value(self, statement: ast.Assign, fallback: bool) -> bool:
        value = statement.value
        if isinstance(value, ast.Constant) and value.value in self.backends and not fallback:
            return True
        if isinstance(value, ast.Attribute) and value.attr.startswith(self.enum_prefixes):
            return not fallback
        if isinstance(value, ast.Attribute) and value.attr.lower() in self.backends:
            return not fallback  # ``backend = Backend.NCCL``
        return any(
            isinstance(target, ast.Subscript)
            and isinstance(target.slice, ast.Constant)
            and str(target.slice.value).endswith(self.variable_suffixes)
            for target in statement.targets
        )


def _is_main_test(test: ast.expr) -> bool:
    """``__name__ == "__main__"``, either way round."""
    if not (
        isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)
    ):
        return False
    sides = (test.left, test.comparators[0])
    return any(isinstance(s, ast.Name) and s.id == "__name__" for s in sides) and any(
        isinstance(s, ast.Constant) and s.value == "__main__" for s in sides
    )


#: Statements whose body may run or not, or more than once, or later: their calls do not run
#: whenever the block does.
NOT_ALWAYS_RUN = (
    ast.If,
    ast.For,
    ast.AsyncFor,
    ast.While,
    ast.Match,
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.ClassDef,
)


#: ``try: ... except* E:`` (Python 3.11+).
TRY_STAR = getattr(ast, "TryStar", ast.Try)


def _always_run(body: list[ast.AST]) -> list[ast.AST]:
    """The statements of a block that run whenever it does, those of ``with`` blocks and of a
    ``try`` block (up to a failure) in place of the ``with`` or ``try``."""
    found: list[ast.AST] = []
    for statement in body:
        if isinstance(statement, ast.With | ast.AsyncWith | ast.Try | TRY_STAR):
            found += _always_run(statement.body)
        elif not isinstance(statement, NOT_ALWAYS_RUN):
            found.append(statement)
    return found


def _blocks(node: ast.AST) -> list[list[ast.stmt]]:
    """The blocks of statements right below ``node``: its body, ``else`` and ``finally``
    blocks, and its ``except`` handlers' bodies."""
    found = [
        block
        for field in ("body", "orelse", "finalbody")
        if isinstance(block := getattr(node, field, None), list)
        and block
        and isinstance(block[0], ast.stmt)
    ]
    found += [handler.body for handler in getattr(node, "handlers", ()) or ()]
    return found


def _end(node: ast.AST) -> int:
    return getattr(node, "end_lineno", None) or getattr(node, "lineno", 0)


def _statements(body: list[ast.AST]) -> list[ast.AST]:
    """The statements of a block, those of nested ``if`` blocks in place of the ``if``."""
    found: list[ast.AST] = []
    for statement in body:
        if isinstance(statement, ast.If):
            found += _statements([*statement.body, *statement.orelse])
        else:
            found.append(statement)
    return found


def _asks_several(node: ast.AST) -> bool:
    """``X.device_count() > 1`` or ``X.device_count() >= 2``."""
    if not (isinstance(node, ast.Compare) and len(node.ops) == 1):
        return False
    left, op, right = node.left, node.ops[0], node.comparators[0]
    if not (isinstance(left, ast.Call) and _call_name(left) == "device_count"):
        return False
    if not (isinstance(right, ast.Constant) and isinstance(right.value, int)):
        return False
    return (isinstance(op, ast.Gt) and right.value >= 1) or (
        isinstance(op, ast.GtE) and right.value >= 2
    )


#: The comparisons a device count meets, by operator.
COUNT_COMPARISONS: dict[type[ast.cmpop], Callable[[int, int], bool]] = {
    ast.Lt: lambda a, b: a < b,
    ast.LtE: lambda a, b: a <= b,
    ast.Gt: lambda a, b: a > b,
    ast.GtE: lambda a, b: a >= b,
    ast.Eq: lambda a, b: a == b,
    ast.NotEq: lambda a, b: a != b,
}


def same_for_one_device(compare: ast.Compare, count: ast.Call) -> bool:
    """``torch.cuda.device_count() < 2``, ``2 > device_count()``, ``device_count() > 1``: a
    comparison of ``count`` with a whole number that answers the same for no device and for
    one, so a single-device target, which has at most one, gets the answer its own count would
    give. Not ``device_count() > 0`` or ``== 1``, where one device changes the answer."""
    if len(compare.ops) != 1:
        return False
    compared = COUNT_COMPARISONS.get(type(compare.ops[0]))
    left, right = compare.left, compare.comparators[0]
    number = right if left is count else left
    if compared is None or not (isinstance(number, ast.Constant) and type(number.value) is int):
        return False
    if left is count:
        return compared(0, number.value) == compared(1, number.value)
    return compared(number.value, 0) == compared(number.value, 1)


def cuda_polarity(test: ast.expr, resolve: Resolve, cuda_flags: set[str]) -> int:
    """+1 if the test is true on a CUDA machine, -1 if it is the negation of such a test, else 0."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return -cuda_polarity(test.operand, resolve, cuda_flags)
    if isinstance(test, ast.IfExp) and boolean_choice(test):
        # ``True if torch.cuda.is_available() else False``: the test itself, or its negation
        return boolean_choice(test) * cuda_polarity(test.test, resolve, cuda_flags)
    if isinstance(test, ast.BoolOp):
        each = [cuda_polarity(value, resolve, cuda_flags) for value in test.values]
        polarities = set(each)
        if isinstance(test.op, ast.And) and 1 in polarities:
            return 1
        if isinstance(test.op, ast.Or):
            # ``_is_cuda() or _is_hip()``: true on CUDA and ROCm builds alike, a CUDA test;
            # ``not torch.cuda.is_available() or _is_hip()``: false on NVIDIA alone, the negation
            # of one (ROCm leaves with the other targets)
            rocm = [
                p == 0 and asks_rocm(v, resolve) for p, v in zip(each, test.values, strict=True)
            ]
            others = {p for p, r in zip(each, rocm, strict=True) if not r}
            if any(rocm) and others in ({1}, {-1}):
                return others.pop()
        if isinstance(test.op, ast.And) and polarities == {-1, 0}:
            # ``not torch.cuda.is_available() and not IS_MUSA_AVAILABLE``: False on CUDA
            return -1
        return 0
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        return _compare_polarity(test, resolve, cuda_flags)
    if isinstance(test, ast.Name | ast.Attribute) and flag_name(test) in cuda_flags:
        return 1  # ``use_cuda``, ``self.cuda_available`` given ``device.type == "cuda"``
    if isinstance(test, ast.Name) and negated_flag(test.id) in cuda_flags:
        return -1  # ``_CUDA_UNAVAILABLE`` given ``not torch.cuda.is_available()``
    if isinstance(test, ast.Call) and flag_name(test.func) in cuda_flags:
        return 1  # ``self._should_use_streaming(x)``, a predicate that is True only on CUDA
    if cuda_prefix(test) is not None:
        return 1  # str(device).startswith("cuda")
    return 1 if _is_cuda_check(test, resolve) else 0


def boolean_choice(node: ast.IfExp) -> int:
    """``True if X else False``: 1 (the value is X's truth), ``False if X else True``: -1 (its
    negation), any other choice: 0."""
    arms = [a.value if isinstance(a, ast.Constant) else None for a in (node.body, node.orelse)]
    return {(True, False): 1, (False, True): -1}.get((arms[0], arms[1]), 0)


def asks_rocm(test: ast.expr, resolve: Resolve) -> bool:
    """``torch.version.hip``, ``is_hip()``, ``_is_rocm()``: a test true on ROCm builds only
    (the vendor words of rules/device.toml ``[backend.vendors]``)."""
    if rocm_build_test(test, resolve):
        return True
    if not (isinstance(test, ast.Call) and not test.args):
        return False
    from portlint.python.backend_packages import catalogue_words

    match = PREDICATE.fullmatch(_predicate_name(test))
    return match is not None and catalogue_words().get(match.group(1).lower()) == "rocm"


def negated(test: ast.expr) -> ast.expr | None:
    """``not X`` -> X, ``dev != "npu"`` -> ``dev == "npu"``: the positive test of a negated one
    (whose truth lets the code after an early return go on); None when the test is not negated."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return test.operand
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        if isinstance(test.ops[0], ast.NotEq):
            return ast.Compare(test.left, [ast.Eq()], test.comparators)
        if isinstance(test.ops[0], ast.NotIn):  # ``dev not in ("cuda", "xpu")``
            return ast.Compare(test.left, [ast.In()], test.comparators)
    return None


def negated_flag(name: str) -> str:
    """How a name that holds the negation of a CUDA check (``_CUDA_UNAVAILABLE = not
    torch.cuda.is_available()``) is kept among the CUDA flags: ``not _CUDA_UNAVAILABLE``, which
    no name or attribute is, so only ``cuda_polarity`` reads it."""
    return f"not {name}"


def flag_name(node: ast.AST) -> str:
    """How a name or ``self`` attribute that may hold a CUDA check is kept (``use_cuda``,
    ``self.on_cuda``); "" for anything else."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return f"{node.value.id}.{node.attr}"
    return ""


def cuda_prefix(node: ast.AST) -> ast.Constant | None:
    """``dev.startswith("cuda")``, ``dev.startswith("cuda:")``, ``str(device).startswith(("cuda",
    "xpu"))``: a device-type test written as a prefix test; the ``"cuda"`` literal it names, or
    None."""
    if not (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "startswith"
        and len(node.args) == 1
        and not node.keywords
    ):
        return None
    prefix = node.args[0]
    elements = prefix.elts if isinstance(prefix, ast.Tuple) else [prefix]
    return next(
        (e for e in elements if isinstance(e, ast.Constant) and e.value in ("cuda", "cuda:")), None
    )


def asks_availability(test: ast.expr, resolve: Resolve, cuda_flags: set[str]) -> bool:
    """The test asks whether CUDA is there (``torch.cuda.is_available()``,
    ``is_torch_cuda_available()``, a name holding such a check), alone, negated or in an
    ``and``; not a device-type comparison."""
    for node in walk(test):
        if isinstance(node, ast.Name) and node.id in cuda_flags:
            return True
        if isinstance(node, ast.Call) and (
            resolve(node.func) == "torch.cuda.is_available"
            or CUDA_PREDICATE.fullmatch(_predicate_name(node))
        ):
            return True
    return False


def availability_before(
    node: ast.AST, parents: Mapping[int, ast.AST], resolve: Resolve, cuda_flags: set[str]
) -> ast.expr | None:
    """``sync and torch.cuda.is_available() and torch.cuda.synchronize()``, ``device.type ==
    "cuda" and torch.cuda.is_available()``: the operand of an ``and`` that found CUDA before
    the node is evaluated, or None."""
    child, current = node, parents.get(id(node))
    while current is not None and not isinstance(current, ast.stmt):
        if isinstance(current, ast.BoolOp):
            position = next(i for i, v in enumerate(current.values) if v is child)
            # in an ``and``, after a CUDA test; in an ``or``, after a negated one (``not
            # torch.cuda.is_available() or torch.version.cuda < "10.2"``)
            wanted = 1 if isinstance(current.op, ast.And) else -1
            for value in current.values[:position]:
                if cuda_polarity(value, resolve, cuda_flags) == wanted and not _lists_others(value):
                    return value.operand if isinstance(value, ast.UnaryOp) else value
        child, current = current, parents.get(id(current))
    return None


def operands_before(node: ast.AST, parents: Mapping[int, ast.AST]) -> list[ast.expr]:
    """The operands of the ``or`` expressions around ``node`` that are evaluated before it."""
    found: list[ast.expr] = []
    child, current = node, parents.get(id(node))
    while current is not None and not isinstance(current, ast.stmt):
        if isinstance(current, ast.BoolOp) and isinstance(current.op, ast.Or):
            position = next(i for i, v in enumerate(current.values) if v is child)
            found += current.values[:position]
        child, current = current, parents.get(id(current))
    return found


def _lists_others(test: ast.expr) -> bool:
    """``dev in ("cuda", "xpu")``: a device-type test that other device types pass too."""
    return isinstance(test, ast.Compare) and any(
        isinstance(element, ast.Constant)
        and isinstance(element.value, str)
        and not CUDA_DEVICE_TEXT.fullmatch(element.value)
        for operand in (test.left, *test.comparators)
        if isinstance(operand, ast.Tuple | ast.List | ast.Set)
        for element in operand.elts
    )


def nccl_backend_test(
    test: ast.expr, flags: set[str], backends: frozenset[str] = frozenset({"nccl"})
) -> bool:
    """``backend == "nccl"``, ``get_backend(group) == Backend.NCCL``, or a name that holds such
    a test (``is_nccl = backend == Backend.NCCL``): true only where the process group runs on
    NCCL, which needs a CUDA (or ROCm) build. ``backends`` are the NVIDIA-only backend names
    (rules/distributed.toml ``[backends]``: also SageMaker's ``"smddp"``)."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return any(nccl_backend_test(value, flags, backends) for value in test.values)
    if isinstance(test, ast.Name):
        return test.id in flags
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return False
    if not isinstance(test.ops[0], ast.Eq):
        return False
    for side in (test.left, test.comparators[0]):
        if isinstance(side, ast.Constant) and str(side.value).lower() in backends:
            return True
        if isinstance(side, ast.Attribute) and side.attr == "NCCL":
            return True
    return False


def admits_cuda(test: ast.expr, resolve: Resolve, cuda_flags: set[str]) -> bool:
    """The test holds on CUDA: a CUDA test, or one arm of an ``or`` is
    (``accelerator == "cuda" or accelerator == "mps"``)."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or):
        return any(admits_cuda(value, resolve, cuda_flags) for value in test.values)
    return cuda_polarity(test, resolve, cuda_flags) == 1


def _is_cuda_check(expr: ast.expr, resolve: Resolve) -> bool:
    if _is_len_call(expr):
        expr = expr.args[0]  # ``len(torch.cuda.default_generators) > 0``
    target = expr.func if isinstance(expr, ast.Call) else expr
    if isinstance(target, ast.Attribute) and target.attr == "is_cuda":
        return True
    if isinstance(expr, ast.Call) and CUDA_PREDICATE.fullmatch(_predicate_name(expr)):
        return True  # is_cuda_available(), current_platform.is_cuda()
    if isinstance(expr, ast.Name) and CUDA_FLAG.fullmatch(expr.id):
        return True  # IS_CUDA_AVAILABLE, a module constant that holds such a check
    return resolve(target) in CUDA_CHECKS


def names_switch(expr: ast.expr) -> bool:
    """``use_cuda``, ``self.use_cuda``, ``args.cuda``: a name or attribute named for a switch
    that turns CUDA on (rules/device.toml ``[device.cuda_switches]``)."""
    if isinstance(expr, ast.Name):
        return expr.id in cuda_switches()
    return isinstance(expr, ast.Attribute) and expr.attr in cuda_switches()


@functools.cache
def cuda_switches() -> frozenset[str]:
    """The names of ``[device.cuda_switches]``, read once per process."""
    from portlint.catalog import read_toml, rules_dir

    table = read_toml(rules_dir() / "device.toml").get("device", {}).get("cuda_switches", {})
    return frozenset(table.get("names", ()))


#: ``is_cuda_available()``, ``current_platform.is_cuda()``; ``is_cuda_alike()`` (vLLM's platforms:
#: CUDA or ROCm) holds where ``torch.cuda`` works, like the others.
CUDA_PREDICATE = re.compile(r"is_(?:torch_)?(?:cuda|nvidia)(?:_available|_alike)?")
#: ``IS_CUDA_AVAILABLE`` (mmengine.device, imported by mmcv): a constant named for the check.
CUDA_FLAG = re.compile(r"IS_(?:TORCH_)?CUDA_AVAILABLE")


def _is_len_call(expr: ast.expr) -> TypeGuard[ast.Call]:
    return (
        isinstance(expr, ast.Call)
        and isinstance(expr.func, ast.Name)
        and expr.func.id == "len"
        and len(expr.args) == 1
        and not expr.keywords
    )


def _call_name(call: ast.Call) -> str | None:
    return _last_name(call.func)


@functools.cache
def _package_names(folder: str) -> tuple[str, ...]:
    """The names of the packages that hold a module in ``folder``, innermost first: the folder
    and those above it, as long as each has an ``__init__.py``."""
    if not os.path.isfile(os.path.join(folder, "__init__.py")):
        return ()
    parent = os.path.dirname(folder)
    above = _package_names(parent) if parent != folder else ()
    return (os.path.basename(folder), *above)


def _last_name(node: ast.AST) -> str | None:
    """``a.b.c`` -> ``c``; ``c`` -> ``c``; None for anything else."""
    return node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", None)


def _integer(node: ast.expr) -> int | None:
    """The integer a literal writes: ``1``, ``-1`` (a minus sign before a constant)."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _integer(node.operand)
        return None if inner is None else -inner
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    return None


def _count_name(side: ast.expr) -> str | None:
    """The name of a count: ``world_size``, ``args.world_size``, ``dist.get_world_size()``."""
    if isinstance(side, ast.Call) and not side.args:
        side = side.func
    return _last_name(side)


def _predicate_name(call: ast.Call) -> str:
    """The called name without leading underscores: a module's private predicate
    (``envs._is_npu()``, ``_is_cuda()``) asks what the public one would."""
    return (_call_name(call) or "").lstrip("_")


def _compare_polarity(test: ast.Compare, resolve: Resolve, cuda_flags: set[str]) -> int:
    left, op, right = test.left, test.ops[0], test.comparators[0]
    if _is_cuda_string(right) or _is_cuda_string(left) or _names_nvidia_vendor(left, right):
        if isinstance(op, ast.Eq | ast.In):
            return 1
        if isinstance(op, ast.NotEq | ast.NotIn):
            return -1
    if _counts_cuda_devices(left, op, right, cuda_flags):
        return 1  # ``device_count > 0`` after ``device_count = torch.cuda.device_count()``
    if _counts_no_cuda_device(left, op, right, cuda_flags):
        return -1  # ``num_gpus == 0`` after ``num_gpus = torch.cuda.device_count()``
    if isinstance(op, ast.Gt | ast.GtE | ast.NotEq) and _is_cuda_check(left, resolve):
        return 1  # torch.cuda.device_count() > 0
    if isinstance(op, ast.IsNot) and _is_cuda_check(left, resolve):
        return 1  # torch.version.cuda is not None
    if isinstance(op, ast.Is | ast.Eq | ast.Lt | ast.LtE) and _is_cuda_check(left, resolve):
        return -1  # torch.cuda.device_count() < 2: true without CUDA
    return 0


def _counts_cuda_devices(
    left: ast.expr, op: ast.cmpop, right: ast.expr, cuda_flags: set[str]
) -> bool:
    """A name that holds a CUDA check (here its device count) compared so that only a CUDA
    machine passes: ``> 0``, ``> 1`` or ``>= 1``."""
    if not (isinstance(left, ast.Name | ast.Attribute) and flag_name(left) in cuda_flags):
        return False
    if not isinstance(right, ast.Constant) or isinstance(right.value, bool):
        return False
    return (isinstance(op, ast.Gt) and right.value in (0, 1)) or (
        isinstance(op, ast.GtE) and right.value == 1
    )


def _counts_no_cuda_device(
    left: ast.expr, op: ast.cmpop, right: ast.expr, cuda_flags: set[str]
) -> bool:
    """A name that holds a CUDA check (here its device count) compared so that only a machine
    without CUDA passes: ``== 0``, ``< 1`` or ``<= 0``."""
    if not (isinstance(left, ast.Name | ast.Attribute) and flag_name(left) in cuda_flags):
        return False
    if not isinstance(right, ast.Constant) or isinstance(right.value, bool):
        return False
    return (isinstance(op, ast.Eq | ast.LtE) and right.value == 0) or (
        isinstance(op, ast.Lt) and right.value == 1
    )


def device_type_literal(node: ast.AST) -> ast.Constant | None:
    """``torch.device("cuda").type``: the device string itself, written as a device's type (the
    string, or None for anything else)."""
    if not (isinstance(node, ast.Attribute) and node.attr == "type"):
        return None
    call = node.value
    if not (isinstance(call, ast.Call) and _call_name(call) == "device"):
        return None
    first = call.args[0] if len(call.args) == 1 and not call.keywords else None
    return first if isinstance(first, ast.Constant) and isinstance(first.value, str) else None


def _names_nvidia_vendor(left: ast.expr, right: ast.expr) -> bool:
    """``vendor_info.vendor_name == "nvidia"``: a name that says vendor compared with NVIDIA's
    name, a test of the vendor layer for CUDA (FlagGems' runtime backends)."""
    for named, other in ((left, right), (right, left)):
        if (
            isinstance(other, ast.Constant)
            and isinstance(other.value, str)
            and other.value.lower() == "nvidia"
            and "vendor" in ast.unparse(named).lower()
        ):
            return True
    return False


def _is_cuda_string(node: ast.expr) -> bool:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return CUDA_DEVICE_TEXT.fullmatch(node.value) is not None
    literal = device_type_literal(node)
    if literal is not None:
        return _is_cuda_string(literal)  # ``torch.device("cuda").type``: "cuda"
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return any(_is_cuda_string(element) for element in node.elts)
    return False


def handled_targets(expr: ast.AST, resolve: Resolve, vendors: Vendors) -> frozenset[str]:
    """Targets that a branch test, or a fallback value, takes care of."""
    markers = vendors.markers
    handled: set[str] = set()
    for node in walk(expr):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            device = node.value.split(":")[0]
            if device in markers:
                handled.add(device)
            elif (target := vendors.package_target(node.value)) is not None:
                handled.add(target)  # find_spec("torch_npu"), hasattr(torch, "npu")
        elif isinstance(node, ast.Call):
            vendor = vendors.predicate_vendor(node)
            if vendor in markers:
                handled.add(vendor)
            continue
        elif isinstance(node, ast.Compare):
            handled.update(_compared_vendors(node, vendors))
        if isinstance(node, ast.Name) and node.id in vendors.flags:
            handled.update(vendors.flags[node.id])
        elif isinstance(node, ast.Name) and node.id in vendors.excluding_flags:
            handled.update(vendors.excluding_flags[node.id])
        elif isinstance(node, ast.Name) and PREDICATE.fullmatch(node.id):
            # ``if is_npu_available: return``: a module-level flag named for the vendor check
            vendor = vendors.predicate_vendor(node)
            if vendor in markers:
                handled.add(vendor)
        elif isinstance(node, ast.Attribute) and PREDICATE.fullmatch(node.attr):
            # ``x.is_cuda or x.is_xpu``: a tensor's own vendor flag (``is_xpu``, ``is_mps``,
            # torch_npu's ``is_npu``), or a flag attribute named for the vendor check. Not
            # ``x.is_cpu``: a tensor is on the CPU on every machine, not only a CPU-only one
            vendor = vendors.predicate_vendor(node)
            if vendor in markers and vendor != "cpu":
                handled.add(vendor)

        if isinstance(node, ast.Attribute | ast.Name):
            name = resolve(node)
            if name is None:
                continue
            if name.startswith(GENERIC_MARKERS):
                handled.update(markers)
            handled.update(vendors.marked_targets(name))
    return frozenset(handled)


def _compared_vendors(node: ast.Compare, vendors: Vendors) -> set[str]:
    """``"amd" in gpu_name``, ``backend == "hccl"``: vendor words compared against."""
    found = set()
    for operand in (node.left, *node.comparators):
        several = isinstance(operand, ast.Tuple | ast.List | ast.Set)
        for element in operand.elts if several else [operand]:
            vendor = None
            if isinstance(element, ast.Constant) and isinstance(element.value, str):
                vendor = vendors.words.get(element.value.lower())
            elif isinstance(element, ast.Attribute) and element.attr[:1].isupper():
                # enum members: RNGType.NPU, DistributedType.MULTI_XPU
                vendor = vendor_of(element.attr, vendors.words)
            if vendor in vendors.markers:
                found.add(vendor)
    return found


def compared_with_none(node: ast.AST | None, ops: tuple[type[ast.cmpop], ...]) -> bool:
    """``x is not None`` (or another of ``ops``, one comparison with None)."""
    return (
        isinstance(node, ast.Compare)
        and len(node.ops) == 1
        and isinstance(node.ops[0], ops)
        and isinstance(node.comparators[0], ast.Constant)
        and node.comparators[0].value is None
    )


def rocm_build_test(test: ast.expr, resolve: Resolve) -> bool:
    """``torch.version.hip``, ``torch.version.hip is not None`` (also through ``getattr``),
    ``"AMD" in torch.cuda.get_device_name()`` (a ROCm vendor word of rules/device.toml
    ``[backend.vendors]`` in the device's name): true on ROCm builds only."""
    if isinstance(test, ast.Compare) and compared_with_none(test, (ast.IsNot, ast.NotEq)):
        test = test.left
    if _names_amd_device(test, resolve):
        return True
    if (
        isinstance(test, ast.Call)
        and isinstance(test.func, ast.Name)
        and test.func.id == "getattr"
        and len(test.args) >= 2
        and isinstance(test.args[1], ast.Constant)
        and test.args[1].value == "hip"
        and resolve(test.args[0]) == "torch.version"
    ):
        return True  # ``getattr(torch.version, "hip", None)``: the same attribute, read safely
    return isinstance(test, ast.Attribute | ast.Name) and resolve(test) == "torch.version.hip"


def _names_amd_device(test: ast.expr, resolve: Resolve) -> bool:
    """``"AMD" in torch.cuda.get_device_name()``: the device's name holds a word of ROCm's."""
    if not (
        isinstance(test, ast.Compare)
        and len(test.ops) == 1
        and isinstance(test.ops[0], ast.In)
        and isinstance(test.left, ast.Constant)
        and isinstance(test.left.value, str)
        and isinstance(test.comparators[0], ast.Call)
        and resolve(test.comparators[0].func) == "torch.cuda.get_device_name"
    ):
        return False
    from portlint.python.backend_packages import catalogue_words

    return catalogue_words().get(test.left.value.lower()) == "rocm"


def only_targets(test: ast.expr, resolve: Resolve, vendors: Vendors) -> frozenset[str] | None:
    """The targets that can pass a positive vendor test other than CUDA's: ``is_npu_available()``
    -> npu, ``current_platform.is_rocm()`` -> rocm; None when the test is not one."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        found = [only_targets(value, resolve, vendors) for value in test.values]
        known = [f for f in found if f is not None]
        return frozenset.intersection(*known) if known else None
    if rocm_build_test(test, resolve):
        return frozenset({"rocm"})
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or):
        # ``torch.cuda.is_available() or torch.xpu.is_available()``: where one of the vendor
        # tests holds (a CUDA test holds on ROCm builds too). No bound if any term is no such
        # test, or if all are CUDA or ROCm tests (``_is_cuda() or _is_hip()``): their arm is
        # the CUDA path, judged as such.
        admitted: set[str] = set()
        others = False
        for value in test.values:
            if cuda_polarity(value, resolve, set()) == 1:
                admitted.add("rocm")
                continue
            only = only_targets(value, resolve, vendors)
            if only is None:
                return None
            admitted |= only
            others = others or bool(only - {"rocm"})
        return frozenset(admitted) if others else None
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq):
        # ``rng_type == RNGType.NPU``: dispatch on an enum of device types
        for operand in (test.left, test.comparators[0]):
            if isinstance(operand, ast.Attribute) and operand.attr[:1].isupper():
                vendor = vendor_of(operand.attr, vendors.words)
                if vendor == "cuda":
                    return frozenset({"rocm"})  # selected for CUDA, which ROCm builds are
                if vendor in vendors.markers:
                    return frozenset({vendor})
            if isinstance(operand, ast.Constant) and isinstance(operand.value, str):
                # ``if device_name == "npu":``, ``if DEVICE_TYPE == "hip":`` (a vendor word,
                # as the other comparisons read them)
                named = _word_targets(operand.value, vendors)
                if named is not None:
                    return named
        return None
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.In):
        named = _named_in(test.left, test.comparators[0], vendors)
        if named is not None:
            return named  # ``"npu" in config.vendor``; ``"iluvatar" in ...``: no target's
        return _listed_targets(test.comparators[0], vendors)  # ``dev in ("cuda", "xpu")``
    if isinstance(test, ast.Name | ast.Attribute | ast.Call) and vendors.hosted_only(test):
        return frozenset({"cpu"})  # ``elif in_colab and ...``: NVIDIA, TPU or CPU machines only
    if isinstance(test, ast.Name) and test.id not in vendors.flags and PREDICATE.fullmatch(test.id):
        # ``is_npu_available``: a module-level flag named for the vendor check
        vendor = vendors.predicate_vendor(test)
        if vendor in vendors.markers and vendor != "cpu":
            return frozenset({vendor})
        return None
    if isinstance(test, ast.Call) or (isinstance(test, ast.Name) and test.id in vendors.flags):
        if isinstance(test, ast.Name):
            return vendors.flags[test.id] or None
        vendor = vendors.predicate_vendor(test)
        if vendor in vendors.markers and vendor != "cpu":
            return frozenset({vendor})
        if vendor is not None and vendor not in ("cuda", "cpu") and vendor not in vendors.markers:
            return frozenset()  # another vendor (hpu, tpu): no portlint target gets here
        name = resolve(test.func)
        if name and name.endswith(".is_available"):
            return vendors.flags.get(name) or _module_target(name, vendors)
    return None


#: How ``sys.platform``, ``platform.system()`` and ``os.name`` name the operating systems.
SYSTEM_NAMES = {
    "win32": "windows",
    "cygwin": "windows",
    "windows": "windows",
    "nt": "windows",
    "darwin": "darwin",
    "linux": "linux",
    "linux2": "linux",
}
#: The names whose value says the operating system.
SYSTEM_VALUES = frozenset({"sys.platform", "os.name"})


def system_targets(test: ast.expr, resolve: Resolve, vendors: Vendors) -> frozenset[str] | None:
    """``sys.platform == "win32"`` -> the targets with a build on Windows: those that can reach
    the arm of the test (no npu, mlu or mps there); None when the test is no such test. (Not
    who leaves at an exit on it: xpu leaves ``if sys.platform == "linux": return`` only on
    Linux, and goes on on Windows.)"""
    system = operating_system(test, resolve)
    return None if system is None else vendors.systems.get(system)


def operating_system(test: ast.expr, resolve: Resolve) -> str | None:
    """``sys.platform == "win32"``, ``sys.platform.startswith("linux")``, ``platform.system()
    == "Darwin"``, ``os.name == "nt"``: the operating system the test holds on, or None."""
    if (
        isinstance(test, ast.Call)
        and isinstance(test.func, ast.Attribute)
        and test.func.attr == "startswith"
        and resolve(test.func.value) == "sys.platform"
        and len(test.args) == 1
        and isinstance(test.args[0], ast.Constant)
        and isinstance(test.args[0].value, str)
    ):
        prefix = test.args[0].value.lower()
        systems = {system for name, system in SYSTEM_NAMES.items() if name.startswith(prefix)}
        return systems.pop() if len(systems) == 1 else None
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return None
    if not isinstance(test.ops[0], ast.Eq):
        return None
    left, right = test.left, test.comparators[0]
    if isinstance(left, ast.Constant):
        left, right = right, left
    if not (isinstance(right, ast.Constant) and isinstance(right.value, str)):
        return None
    asked = resolve(left.func) if isinstance(left, ast.Call) and not left.args else resolve(left)
    if asked not in SYSTEM_VALUES and asked != "platform.system":
        return None
    return SYSTEM_NAMES.get(right.value.lower())


def _named_in(word: ast.expr, name: ast.expr, vendors: Vendors) -> frozenset[str] | None:
    """``"npu" in config.vendor`` -> npu: a name tested for a vendor's word, read as an equality
    with it is (``_word_targets``). None for a literal on the right (a collection of names, or
    a text)."""
    if not (isinstance(word, ast.Constant) and isinstance(word.value, str)):
        return None
    if isinstance(name, ast.Tuple | ast.List | ast.Set | ast.Dict | ast.Constant):
        return None
    return _word_targets(word.value, vendors)


def _word_targets(word: str, vendors: Vendors) -> frozenset[str] | None:
    """The targets whose arm a test against a vendor's word selects: that target (``"npu"``,
    ``"hip"``); none for a runtime that no target is (``"directml"``), for another vendor's
    device (``"kunlunxin"``, ``"hpu"``), or for NVIDIA by name (``"nvidia"``, not the "cuda"
    device type that ROCm builds share: NVIDIA's own arm). None for CUDA's own words and the
    CPU's, and for a word that names no vendor."""
    text = word.lower()
    vendor = vendors.words.get(text)
    if vendor in vendors.markers and vendor != "cpu":
        return frozenset({vendor})
    other = vendor is not None and vendor not in ("cuda", "cpu")
    return frozenset() if other or text in vendors.runtimes or text == "nvidia" else None


def _listed_targets(listed: ast.expr, vendors: Vendors) -> frozenset[str] | None:
    """``("cuda", "xpu")`` -> rocm, xpu: the targets a list of device types admits (a CUDA
    device type holds on ROCm builds too); None unless every element is a device type and one
    is another target's."""
    if not isinstance(listed, ast.Tuple | ast.List | ast.Set) or not listed.elts:
        return None
    admitted = set()
    for element in listed.elts:
        if not (isinstance(element, ast.Constant) and isinstance(element.value, str)):
            return None
        vendor = vendors.words.get(element.value.split(":")[0].lower())
        if vendor == "cuda":
            admitted.add("rocm")
        elif vendor in vendors.markers:
            admitted.add(vendor)
        else:
            return None
    return frozenset(admitted) if admitted - {"rocm"} else None


def _module_target(name: str, vendors: Vendors) -> frozenset[str] | None:
    for target, names in vendors.markers.items():
        if target != "rocm" and any(name.startswith(m + ".") for m in names):
            return frozenset({target})
    return None


#: ``_TORCH_GREATER_EQUAL_2_4``, ``TORCH_VERSION_AT_LEAST_2_3``; ``TORCH_LESS_THAN_2``.
NEWER_FLAG = re.compile(r"(?i)torch\w*(greater|_ge_|_gte_|at_least|newer|after)")
OLDER_FLAG = re.compile(r"(?i)torch\w*(less|_lt_|older|before)")


def newer_torch_arm(test: ast.expr) -> bool | None:
    """For a torch-version test: True when its body runs on the newer torch, False when on the
    older one; None when the test is not a version test."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = newer_torch_arm(test.operand)
        return None if inner is None else not inner
    if isinstance(test, ast.Name | ast.Attribute):
        name = test.id if isinstance(test, ast.Name) else test.attr
        if NEWER_FLAG.search(name):
            return True
        return False if OLDER_FLAG.search(name) else None
    if isinstance(test, ast.Call):
        name = _call_name(test) or ""
        ops = [a.value for a in test.args if isinstance(a, ast.Constant)]
        if "version" in name.lower() and "torch" in name.lower() and ops:
            return _newer_operator(str(ops[0]), version_on_left=True)
        return None
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        left = "version" in ast.unparse(test.left).lower()
        right = "version" in ast.unparse(test.comparators[0]).lower()
        if left == right or "torch" not in ast.unparse(test).lower():
            return None
        symbol = {ast.Gt: ">", ast.GtE: ">=", ast.Lt: "<", ast.LtE: "<="}.get(type(test.ops[0]))
        return _newer_operator(symbol, version_on_left=left) if symbol else None
    return None


def _newer_operator(symbol: str, version_on_left: bool) -> bool | None:
    if symbol not in (">", ">=", "<", "<="):
        return None
    return symbol.startswith(">") == version_on_left


#: ``"1.10.0"``, ``"1.10"``: a version string a torch-version test compares with.
VERSION_TEXT = re.compile(r"(\d+)\.(\d+)(?:\.\d+)?")


def older_torch_bound(test: ast.expr) -> tuple[int, int] | None:
    """``digit_version("1.5") <= digit_version(TORCH_VERSION) < digit_version("1.10")``,
    ``torch_version < "1.12"``: the arm runs only on a torch older than the returned version;
    None when the test sets no such upper bound."""
    if not isinstance(test, ast.Compare) or "torch" not in ast.unparse(test).lower():
        return None
    operands = [test.left, *test.comparators]
    for position, op in enumerate(test.ops):
        left, right = operands[position], operands[position + 1]
        if isinstance(op, ast.Lt):
            version, bound = left, right
        elif isinstance(op, ast.Gt):
            version, bound = right, left
        else:
            continue
        if "version" not in ast.unparse(version).lower():
            continue
        texts = [
            n.value for n in walk(bound) if isinstance(n, ast.Constant) and isinstance(n.value, str)
        ]
        match = VERSION_TEXT.fullmatch(texts[0]) if len(texts) == 1 else None
        if match:
            return int(match.group(1)), int(match.group(2))
    return None


def cuda_sentinels(module: ast.Module, resolve: Resolve) -> dict[str, ast.expr]:
    """Names and ``self`` attributes that hold either None or what a ``torch.cuda`` call gave
    (``state = torch.cuda.get_rng_state() if torch.cuda.is_available() else None``, or ``stream
    = None`` then ``stream = torch.cuda.Stream()`` in a CUDA arm): every store of them in the
    module is None, such a call, a choice between the two, or one element of an unpacking, with
    at least one None and one call. Each is kept with the call's store: ``if state is not
    None:`` is then true only where that call ran, which never was without CUDA."""
    stores: dict[str, list[ast.expr | None]] = {}
    for node in walk(module):
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        else:
            continue
        for target in targets:
            if isinstance(target, ast.Tuple | ast.List):
                for element in target.elts:  # ``cpu_state, gpu_state = states[0]``: unknown
                    stores.setdefault(flag_name(element), []).append(None)
            elif flag_name(target):
                stores.setdefault(flag_name(target), []).append(value)
    found: dict[str, ast.expr] = {}
    for name, values in stores.items():
        calls = [v for v in values if v is not None and _cuda_value(v, resolve)]
        nones = [v for v in values if v is not None and _is_none(v)]
        unknown = [v for v in values if v is None]
        if not name or not calls or len(calls) + len(nones) + len(unknown) != len(values):
            continue  # some store holds something else
        if nones or any(isinstance(call, ast.IfExp) for call in calls):
            found[name] = calls[0]
    return found


def _cuda_value(value: ast.expr, resolve: Resolve) -> bool:
    """``torch.cuda.X(...)``, or ``torch.cuda.X(...) if <test> else None``."""
    if isinstance(value, ast.IfExp):
        return _cuda_value(value.body, resolve) and _is_none(value.orelse)
    if not isinstance(value, ast.Call):
        return False
    return (resolve(value.func) or "").startswith("torch.cuda.")


def _is_none(value: ast.expr) -> bool:
    return isinstance(value, ast.Constant) and value.value is None

"""Fixes for Python findings: rewrite CUDA device handling into device-generic code.

Detection runs on ``ast``; the fix builder decides, per finding, whether a fix is right and what it
writes. This module holds what all fixes share (``FixBase``: the module's layout and device, the
edits every device-using fix needs, where no fix may go); each rule family's own fixes live
beside its check (``DeviceFixes`` in ``device_checks``, ``TorchCudaFixes`` in ``api_checks``,
``BackendFixes`` in ``distributed_checks``), and ``portlint.python.fix_builder`` combines them.
A *script* (a ``__main__`` block, a shebang, ``__main__.py``) gets one device, chosen at
run time and named once after all its imports (``DEVICE``, or its own ``device = ...`` variable).
A *library* module never gets a module-level device variable: importing it must not touch the
accelerator (a later ``import torch_npu`` registers Ascend), so its fixes use an existing device
variable or the device expression itself at the use site. What is written depends on the
project's ``min-torch`` (``rules/fixes.toml``).

A fix is described by text edits of three kinds, which ``portlint.python.transform`` turns into
libcst node replacements in fix mode (libcst is imported only there):

- a *replacement*: the span of an expression, and the expression that replaces it. The new text
  may quote sub-expressions verbatim; their own fixes are kept;
- a *guard*: an insertion of ``if COND:`` at the start of a statement that stands alone on its
  lines; the statement goes under it;
- a *module insertion*: whole lines (``import torch``, the device) inserted between top-level
  statements, shared by every fix that needs them and written once.

The contract: a safe fix leaves what runs on an NVIDIA machine exactly as it was and makes the
other targets work. Where that cannot be shown here, the fix is unsafe or there is none.
"""

from __future__ import annotations

import ast
import functools
import re
from dataclasses import dataclass
from pathlib import Path

from portlint.config import version_tuple
from portlint.model import Applicability, Edit, Fix, Span
from portlint.python.guards import CUDA_CHECKS, boolean_choice, flag_name
from portlint.python.names import import_bindings
from portlint.python.slices import whole
from portlint.python.tree import LazyParents, statements_walk

#: A test that looks at the torch version or at what torch provides: both arms are left alone,
#: since each is written for the torch it runs under.
VERSION_TEST = re.compile(
    r"version|hasattr\s*\(|\bgetattr\s*\(|GREATER|LESS_THAN|_(GE|GT|LE|LT)_\d|\bsince\b",
    re.IGNORECASE,
)
#: Device types of the vendors portlint knows, as they appear in comparisons of sibling branches.
VENDOR_TYPES = frozenset({"npu", "mlu", "xpu", "mps", "hpu", "musa", "privateuseone"})
#: Names of functions and classes that say they are for CUDA.
CUDA_NAMED = re.compile(r"cuda", re.IGNORECASE)
#: Tests of other vendors' availability in a dispatch chain (``elif is_xpu_available():``).
VENDOR_TEST = re.compile(
    r"npu|mlu|xpu|mps|hpu|musa|sdaa|neuron|xla|tpu|ipu|gaudi|habana|ascend|cambricon|intel",
    re.IGNORECASE,
)
#: Calls of the project's own functions that say they are for NVIDIA only.
NVIDIA_ONLY_CALL = re.compile(r"cuda|nccl|nvml|nvidia|cudnn|cublas|triton", re.IGNORECASE)


@dataclass(frozen=True)
class ModuleLayout:
    """What the fixes need to know about the module as a whole."""

    torch_name: str | None
    distributed_name: str | None
    #: An existing module-level device variable: its name, and its value when it must be rewritten.
    device_name: str | None
    device_value: ast.expr | None
    #: The line of that variable's assignment (or of the new one): module-level code above it
    #: cannot use it.
    device_line: int
    #: Where the device definition goes: (line, column) of the start of the line after the imports.
    insert_at: tuple[int, int]
    bound_names: frozenset[str]
    #: A script may get a module-level device; a library module never does.
    is_script: bool


def _top_level_bindings(tree: ast.Module) -> dict[str, str | None]:
    bindings: dict[str, str | None] = {}
    for statement in tree.body:
        for node in _import_statements(statement):
            bindings.update(import_bindings(node))
        if isinstance(statement, ast.Assign):
            for target in statement.targets:
                if isinstance(target, ast.Name):
                    bindings.setdefault(target.id, None)
        elif isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            bindings.setdefault(statement.name, None)
    return bindings


def _import_statements(statement: ast.stmt) -> list[ast.Import | ast.ImportFrom]:
    """The imports a top-level statement makes: itself, or those of a try/if block of imports."""
    if isinstance(statement, ast.Import | ast.ImportFrom):
        return [statement]
    if isinstance(statement, ast.Try | ast.If):
        return [
            node
            for node in statements_walk(statement)
            if isinstance(node, ast.Import | ast.ImportFrom)
        ]
    return []


#: Imports the device definition must follow: torch itself, and the packages that register
#: their device with torch when imported.
DEVICE_PACKAGES = frozenset({"torch", "torch_npu", "torch_mlu"})


def _insertion_point(tree: ast.Module) -> tuple[int, int]:
    """The start of the line after the module's leading docstring and imports, or after its
    ``import torch`` / ``import torch_npu`` / ``import torch_mlu`` when one comes later (after a
    ``sys.path`` or ``os.environ`` line), and after the imports that directly follow that one
    (the rest of its block of imports). Imports after other code do not move it, so that code
    between them can already use the device."""
    after, leading, run = 0, True, False
    for position, statement in enumerate(tree.body):
        is_docstring = (
            position == 0
            and isinstance(statement, ast.Expr)
            and isinstance(statement.value, ast.Constant)
            and isinstance(statement.value.value, str)
        )
        imports = _import_statements(statement)
        is_future = isinstance(statement, ast.ImportFrom) and statement.module == "__future__"
        if leading and (is_docstring or is_future or imports):
            after = statement.end_lineno or statement.lineno
            continue
        leading = False
        if any(_imported_packages(node) & DEVICE_PACKAGES for node in imports):
            run = True
        run = run and bool(imports)
        if run:
            after = statement.end_lineno or statement.lineno
    return after + 1, 0


def _imported_packages(node: ast.Import | ast.ImportFrom) -> set[str]:
    if isinstance(node, ast.Import):
        return {alias.name.split(".")[0] for alias in node.names}
    return {node.module.split(".")[0]} if node.module and not node.level else set()


def is_script(tree: ast.Module, path: str, text: str) -> bool:
    """A program run directly (``__main__`` block, shebang, ``__main__.py``, or work done at
    the top level: calls, loops, ``with`` blocks), not a library of definitions.

    A module of a package (one that imports relatively) is a library unless it has a
    ``__main__`` block: its top-level calls (``deprecate(...)``, ``logger.warning(...)``) run
    when another module imports it. So is a script that imports torch only under a condition
    (``if is_torch_available(): import torch``): a device defined at its top level would need
    torch where the script runs without it."""
    name = Path(path).name
    if name == "__main__.py":
        return True
    if name == "__init__.py" or _torch_is_optional(tree):
        return False
    if any(is_main_block(statement) for statement in tree.body):
        return True
    if any(isinstance(s, ast.ImportFrom) and s.level for s in tree.body):
        return False  # in a package
    if text.startswith("#!"):
        return True
    for statement in tree.body:
        if isinstance(statement, ast.For | ast.While | ast.With | ast.AsyncWith):
            return True
        if isinstance(statement, ast.Expr) and not isinstance(statement.value, ast.Constant):
            return True  # a call; a string anywhere (a note between definitions) does nothing
    return False


def is_main_block(statement: ast.stmt) -> bool:
    """``if __name__ == "__main__":``"""
    if not (isinstance(statement, ast.If) and isinstance(statement.test, ast.Compare)):
        return False
    names = [statement.test.left, *statement.test.comparators]
    return any(isinstance(n, ast.Name) and n.id == "__name__" for n in names)


def _torch_is_optional(tree: ast.Module) -> bool:
    """torch is imported only inside a top-level ``if`` or ``try`` block."""
    plain, guarded = False, False
    for statement in tree.body:
        for node in _import_statements(statement):
            if "torch" in _imported_packages(node):
                if node is statement:
                    plain = True
                else:
                    guarded = True
    return guarded and not plain


def layout_of(tree: ast.Module, is_device_selection, script: bool) -> ModuleLayout:
    bindings = _top_level_bindings(tree)
    by_value = {qualified: local for local, qualified in bindings.items() if qualified}
    device_name, device_value, device_line = None, None, 0
    for statement in tree.body:
        if (
            isinstance(statement, ast.Assign)
            and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Name)
        ):
            verdict = is_device_selection(statement.value)
            if verdict is not None:
                device_name = statement.targets[0].id
                device_value = statement.value if verdict == "rewrite" else None
                device_line = statement.lineno
                break
    insert_at = _insertion_point(tree)
    if device_name is None and script:
        device_line = insert_at[0]
    return ModuleLayout(
        torch_name=by_value.get("torch"),
        distributed_name=by_value.get("torch.distributed"),
        device_name=device_name,
        device_value=device_value,
        device_line=device_line,
        insert_at=insert_at,
        bound_names=frozenset(bindings),
        is_script=script,
    )


#: How many CUDA tests deep, each in the code another guards, ``_branch_keeps_cuda_calls``
#: judges before it answers True (no fix). Real code nests two or three.
JUDGED_DEPTH = 16


class FixBase:
    """What the fixes of one module share: the module's layout and device, the edits every
    device-using fix needs, and where no fix may go. Each rule family's fixes live beside its
    check (``DeviceFixes`` in device_checks, ``TorchCudaFixes`` in api_checks, ``BackendFixes``
    in distributed_checks); ``portlint.python.fix_builder.FixBuilder`` combines them. Their
    methods return None wherever a fix would not be right."""

    def __init__(self, ctx, tree: ast.Module, min_torch: str, newline: str) -> None:
        self.ctx = ctx
        self.tree = tree
        self.table = ctx.catalog.table("fixes")
        self.min_torch = version_tuple(min_torch)
        self.newline = newline
        #: How many ``_branch_keeps_cuda_calls`` judgements are in progress, one inside another.
        self.judging = 0

    # The module's layout is read on first use, when the walk has bound the module's imports.
    @functools.cached_property
    def layout(self) -> ModuleLayout:
        script = is_script(self.tree, self.ctx.path, self.ctx.text)
        return layout_of(self.tree, self._device_selection_verdict, script)

    @functools.cached_property
    def torch(self) -> str:
        return self.layout.torch_name or "torch"

    @functools.cached_property
    def device(self) -> str:
        """The module's device: its variable, or in a library the expression itself."""
        if self.layout.device_name:
            return self.layout.device_name
        if not self.layout.is_script:
            return self.table["device"]["helper_call"]
        return self._free_device_name()

    @functools.cached_property
    def device_word(self) -> re.Pattern[str]:
        """The device's name as a word of its own: ``device``, not ``set_device_index``."""
        return re.compile(rf"(?<![\w.]){re.escape(self.device.removesuffix('()'))}\b")

    @functools.cached_property
    def defines_device(self) -> bool:
        return self.layout.device_name is None and self.layout.is_script

    # -- the module's device -------------------------------------------------------------------

    def _free_device_name(self) -> str:
        for name in self.table["device"]["names"]:
            if name not in self.layout.bound_names:
                return name
        return "PORTLINT_DEVICE_"

    def _device_selection_verdict(self, value: ast.expr) -> str | None:
        """``"rewrite"`` for a CUDA device selection, ``"keep"`` for a generic one, else None.

        Only a ``torch.device`` value is adopted as the module's device: ``torch.device("cuda")``
        or ``torch.device("cuda" if torch.cuda.is_available() else "cpu")``. A string
        (``device_type = "cuda" if "cuda" in device else "cpu"``) or a device with an index
        would change type or meaning if it were rewritten into the accelerator expression.
        """
        source = self.ctx.source(value)
        helper = self.table["device"]["helper_call"]
        if "current_accelerator(" in source or source == helper:
            return "keep"
        if not (
            isinstance(value, ast.Call)
            and self.ctx.qualified_name(value.func) == "torch.device"
            and len(value.args) == 1
            and not value.keywords
        ):
            return None
        argument = value.args[0]
        if isinstance(argument, ast.Constant) and argument.value == "cuda":
            return "rewrite"
        return "rewrite" if self._availability_selection(argument) else None

    def _availability_selection(self, expr: ast.expr) -> bool:
        """``"cuda" if torch.cuda.is_available() else "cpu"``: a choice made on availability."""
        from portlint.python.device_checks import is_cpu_fallback

        return (
            isinstance(expr, ast.IfExp)
            and isinstance(expr.body, ast.Constant)
            and expr.body.value == "cuda"
            and is_cpu_fallback(expr.orelse, self.ctx)
            and any(
                isinstance(node, ast.Call) and self.ctx.qualified_name(node.func) in CUDA_CHECKS
                for node in ast.walk(expr.test)
            )
        )

    def uses_accelerator(self) -> bool:
        return self.min_torch >= version_tuple(self.table["device"]["accelerator_since"])

    def device_definition_value(self) -> str:
        device = self.table["device"]
        if self.uses_accelerator():
            return device["accelerator_expression"].format(torch=self.torch)
        return device["helper_call"]

    def import_edits(self, edits) -> tuple[Edit, ...] | None:
        """``import torch`` when the fix writes ``torch.`` and the module has no such binding
        (``import torch.cuda as tc`` alone, ``from torch.cuda import synchronize``)."""
        if self.layout.torch_name is not None or not any("torch." in e.content for e in edits):
            return ()
        if self._torch_used_unbound:
            return None  # ``torch`` means something else here; an import would change that
        line, column = self.layout.insert_at
        return (Edit(Span(line, column, line, column), f"import torch{self.newline}"),)

    @functools.cached_property
    def _torch_used_unbound(self) -> bool:
        every = whole(self.tree)  # statements the check did not need are in it too
        return any(isinstance(n, ast.Name) and n.id == "torch" for n in ast.walk(every))

    def shared_edits(self) -> tuple[Edit, ...]:
        """The edits every device-using fix needs: the helper or the definition."""
        line, column = self.layout.insert_at
        nl = self.newline
        parts = []
        library = self.layout.device_name is None and not self.layout.is_script
        needs_helper = library or not self.uses_accelerator()
        if needs_helper and self.table["device"]["helper_name"] not in self.layout.bound_names:
            which = "helper" if not self.uses_accelerator() else "accelerator_helper"
            helper = self.table["device"][which].format(torch=self.torch).strip("\n")
            parts.append(nl + nl + helper.replace("\n", nl) + nl + nl)
        if self.defines_device:
            parts.append(f"{nl}{self.device} = {self.device_definition_value()}{nl}")
        elif self.layout.device_value is not None:
            span = self.ctx.span(self.layout.device_value)
            edits = [Edit(span, self.device_definition_value())]
            if parts:
                edits.append(Edit(Span(line, column, line, column), "".join(parts)))
            return tuple(edits)
        if not parts:
            return ()
        text = "".join(parts)
        return (Edit(Span(line, column, line, column), text),)

    def names_usable_at(self, *names: str) -> bool:
        """False if a scope here (function, comprehension, the class body itself) hides one of
        the module-level names a fix refers to."""
        resolver = self.ctx.resolver
        hiding = resolver.visible()[:-1]  # every scope but the module's
        return not any(name in scope.bindings for scope in hiding for name in names)

    # -- where no fix may go ------------------------------------------------------------------

    @functools.cached_property
    def parents(self) -> LazyParents:
        """Every node's parent. The walk records parents only down to where it is, and a fix
        is often judged from deeper (a device string inside a call)."""
        return LazyParents(self.ctx.walk_stack, self.tree)

    def ancestors(self, node: ast.AST):
        parent = self.parents.get(id(node))
        while parent is not None:
            yield parent
            parent = self.parents.get(id(parent))

    def left_alone(self, node: ast.AST) -> bool:
        """Sites the contract never rewrites: the arms (and test) of a version check, a branch
        whose siblings already handle other vendors, code in a function or class named for
        CUDA, and self-documenting f-string expressions.

        Judged from the source text, not from what the fixes change: a second ``--fix`` must
        see the same sites as the first. Each ancestor remembers the answer for what is below
        it, so a file of deeply nested ``elif`` arms asks each ``if`` once."""
        facts, path, answer = self.ctx.scope_facts, [], False
        for ancestor in self.ancestors(node):
            known = facts.get(("left alone", id(ancestor)))
            if known is not None:
                answer = known
                break
            path.append(ancestor)
            if self._leaves_alone(ancestor):
                answer = True
                break
        facts.update((("left alone", id(ancestor)), answer) for ancestor in path)
        return answer

    def _leaves_alone(self, ancestor: ast.AST) -> bool:
        """``left_alone`` for what is inside ``ancestor``, from ``ancestor`` alone."""
        if isinstance(ancestor, ast.If | ast.IfExp | ast.While) and VERSION_TEST.search(
            self.ctx.source(ancestor.test)
        ):
            return True
        if isinstance(
            ancestor, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef
        ) and CUDA_NAMED.search(ancestor.name):
            # ``def cuda`` overrides, ``def is_cuda_available``, ``class CudaAccelerator``:
            # code that says it is for CUDA keeps meaning CUDA.
            return True
        if isinstance(ancestor, ast.If) and self._in_vendor_chain(ancestor):
            return True
        # f"{x.is_cuda=}" prints its own source: it must stay as written
        return isinstance(ancestor, ast.FormattedValue) and self._self_documenting(ancestor)

    def _self_documenting(self, value: ast.FormattedValue) -> bool:
        span = self.ctx.span(value.value)
        rest = self.ctx.index.line(span.end_line)[span.end_column :].lstrip()
        return rest.startswith("=") and not rest.startswith("==")

    # -- fixes (each rule family's own are defined beside its check) ---------------------------

    def torch_cuda(self, node: ast.expr, entry, call: ast.Call | None) -> Fix | None:
        raise NotImplementedError  # TorchCudaFixes, in api_checks

    def cuda_method(self, call: ast.Call, tail: Span) -> Fix | None:
        raise NotImplementedError  # DeviceFixes, in device_checks

    # -- building a fix ------------------------------------------------------------------------

    def _fix(
        self, edits, description: str, unsafe: bool = False, shared: bool = True
    ) -> Fix | None:
        if not self.names_usable_at(self.torch, self.device.removesuffix("()")):
            return None
        at_module_level = self.ctx.resolver.runs_at_import()
        uses_device = shared and edits
        if uses_device and at_module_level and edits[0].span.line < self.layout.device_line:
            return None  # the module's device variable is assigned further down
        all_edits = tuple(edits) + (self.shared_edits() if shared else ())
        imports = self.import_edits(all_edits)
        if imports is None:
            return None
        all_edits += imports
        applicability = Applicability.UNSAFE if unsafe else Applicability.SAFE
        return Fix(applicability, all_edits, description)

    def _branch_keeps_cuda_calls(self, test: ast.expr) -> bool:
        """True when ``test`` is (part of) a condition whose guarded code keeps CUDA-only calls
        that get no safe fix, or whose sibling branches test for other vendors: rewriting the
        test would let another accelerator reach those calls, or skip its own branch.

        The guarded code is the rest of an ``and``/``or`` chain and the body of the ``if``,
        ``while`` or conditional expression the test belongs to. Judging it judges the CUDA tests
        in it in turn (``a and b and c``: whether b keeps CUDA calls depends on c); past
        ``JUDGED_DEPTH`` tests deep the answer is True, no fix, rather than a recursion as deep
        as the chain is long.
        """
        known = self.ctx.scope_facts.get(("keeps CUDA calls", id(test)))
        if known is not None:
            return known
        if self.judging >= JUDGED_DEPTH:
            return True
        self.judging += 1
        try:
            answer = self._keeps_cuda_calls(test)
        finally:
            self.judging -= 1
        self.ctx.scope_facts["keeps CUDA calls", id(test)] = answer
        return answer

    def _keeps_cuda_calls(self, test: ast.expr) -> bool:
        guarded: list[ast.AST] = []
        orelse: list[ast.AST] = []
        child: ast.AST = test
        negated = _negative_comparison(test)
        for ancestor in self.ancestors(test):
            if isinstance(ancestor, ast.BoolOp):
                # ``a and b`` runs b when a holds; ``not a or b`` runs b when a holds too.
                position = ancestor.values.index(child)  # nodes compare by identity
                guarded.extend(ancestor.values[position + 1 :])
            elif (
                isinstance(ancestor, ast.IfExp)
                and ancestor.test is child
                and boolean_choice(ancestor)
            ):
                # ``use_gpu = True if torch.cuda.is_available() else False``: the test's own
                # truth, read where the name is tested
                negated = negated if boolean_choice(ancestor) == 1 else not negated
            elif isinstance(ancestor, ast.If | ast.IfExp | ast.While) and ancestor.test is child:
                body = ancestor.body if isinstance(ancestor.body, list) else [ancestor.body]
                other = ancestor.orelse
                other = other if isinstance(other, list) else [other]
                if negated:
                    # ``if not torch.cuda.is_available(): return ...``: the CUDA path is the
                    # else branch and whatever follows the early exit.
                    guarded.extend(other)
                    guarded.extend(self._following_statements(ancestor))
                else:
                    guarded.extend(body)
                    orelse.extend(other)
                break
            elif isinstance(ancestor, ast.UnaryOp) and isinstance(ancestor.op, ast.Not):
                negated = not negated
            elif _negative_comparison(ancestor):
                # ``if device.type != "cuda": return None``: the CUDA path follows the exit
                negated = not negated
            elif (flag := _assigned_flag(ancestor, child)) is not None:
                # ``pt_cuda_available = torch.cuda.is_available()``: the flag guards every
                # branch on it, either arm (``if pt_cuda_available: torch.cuda.get_device_name()``);
                # so does ``self.is_cuda = ...`` or ``args.cuda = ...``, read in other functions
                if self._decides_tests(flag, ancestor):
                    return True
                guarded.extend(self._branches_on(flag, ancestor))
                break
            elif not isinstance(ancestor, ast.UnaryOp | ast.Call | ast.Compare):
                break
            child = ancestor
        for node in (inner for part in guarded for inner in ast.walk(part)):
            if isinstance(node, ast.Attribute) and not self._safely_fixed(node):
                return True
            if isinstance(node, ast.Call) and NVIDIA_ONLY_CALL.search(_called_name(node)):
                return True  # check_cuda_fp8_capability(): the project's own CUDA-only code
            if (
                isinstance(node, ast.Constant)
                and _names_cuda_choice(node.value)
                and isinstance(self._arm_holding(node), KEPT_CHOICE)
            ):
                # ``device = "cuda" if torch.cuda.is_available() else "cpu"`` outside a device
                # position, or ``["cuda"] if torch.cuda.is_available() else []`` (a list of
                # devices to test on): the choice stays CUDA's. So does a name stored or returned
                # in the arm (``if torch.cuda.is_available(): device = "cuda"``, ``return
                # "cuda:0"``, ``return f"cuda:{rank}"``): rewriting the test alone would hand
                # "cuda" to the other accelerators.
                # Strings in device positions, tuples and comparisons are judged (and fixed) by
                # their own findings.
                return True
        return any(
            (isinstance(node, ast.Constant) and node.value in VENDOR_TYPES)
            or (isinstance(node, ast.Attribute) and node.attr in VENDOR_TYPES)
            for part in orelse
            for node in ast.walk(part)
        )

    def _arm_holding(self, node: ast.AST) -> ast.AST | None:
        """The parent of ``node``, or of the list or set literal it is an element of, or of the
        f-string it starts (``f"cuda:{rank}"``)."""
        parent = self.parents.get(id(node))
        if isinstance(parent, ast.List | ast.Set | ast.JoinedStr):
            return self.parents.get(id(parent))
        return parent

    def _in_vendor_chain(self, statement: ast.If) -> bool:
        """An ``if``/``elif`` chain that already dispatches on other vendors: a new accelerator
        test must not go in front of their branches, and their order is the project's."""
        # the same answer for every link of the chain: found once, from its first ``if``, and
        # each link remembers that ``if`` (a site is asked about every ``elif`` above it)
        facts, path, top = self.ctx.scope_facts, [], statement
        while ("chain top", id(top)) not in facts:
            path.append(top)
            parent = self.parents.get(id(top))
            if not (isinstance(parent, ast.If) and len(parent.orelse) == 1):
                break
            if parent.orelse[0] is not top:
                break
            top = parent
        else:
            top = facts[("chain top", id(top))]
        facts.update((("chain top", id(link)), top) for link in path)
        return self.ctx.scope_fact("vendor chain", top, self._dispatches_on_vendors)

    def _dispatches_on_vendors(self, top: ast.AST) -> bool:
        """``_in_vendor_chain`` for the chain that starts at ``top``."""
        assert isinstance(top, ast.If)
        chain, current = [top], top
        while len(current.orelse) == 1 and isinstance(current.orelse[0], ast.If):
            current = current.orelse[0]
            chain.append(current)
        tests = [self.ctx.source(link.test) for link in chain]
        # A final ``else:`` that picks another vendor is a sibling branch too.
        tests.extend(self.ctx.source(part) for part in current.orelse)
        return len(tests) > 1 and any(VENDOR_TEST.search(text) for text in tests)

    def _scope_of(self, statement: ast.stmt, flag: str = "") -> ast.AST:
        """The function that holds ``statement``, or the module; the module for an attribute
        ``flag`` (``self.is_cuda``), which other methods and functions read."""
        if "." in flag:
            return self.tree
        for ancestor in self.ancestors(statement):
            if isinstance(ancestor, ast.FunctionDef | ast.AsyncFunctionDef):
                return ancestor
        return self.tree

    def _branches_on(self, flag: str, assignment: ast.Assign | ast.AnnAssign) -> list[ast.AST]:
        """The arms of the ``if``, ``while`` and conditional expressions in the function (or
        module) of ``assignment`` whose test reads ``flag``."""
        scope = self._scope_of(assignment, flag)

        arms: list[ast.AST] = []
        for node in ast.walk(scope):
            if isinstance(node, ast.If | ast.IfExp | ast.While) and _reads(node.test, flag):
                for arm in (node.body, node.orelse):
                    arms.extend(arm if isinstance(arm, list) else [arm])
        return arms

    def _decides_tests(self, flag: str, assignment: ast.stmt) -> bool:
        """``@pytest.mark.skipif(not cuda_available, ...)``: the flag decides whether tests run
        (python.cuda_tests). Rewritten, it would run them on other accelerators, a change of
        what the test suite checks that is the project's to make: no fix."""
        scope = self._scope_of(assignment, flag)
        return any(
            _reads(decorator, flag)
            for node in ast.walk(scope)
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
            for decorator in node.decorator_list
        )

    def _asserts_cuda(self, node: ast.AST) -> bool:
        """``assert torch.cuda.is_available(), "Megatron requires CUDA."``: a requirement that
        really is CUDA, stated by the code; other accelerators must keep failing it."""
        for ancestor in self.ancestors(node):
            if isinstance(ancestor, ast.Assert):
                message = ancestor.msg
                return message is not None and "cuda" in self.ctx.source(message).lower()
            if isinstance(ancestor, ast.stmt):
                return False
        return False

    def _inside_cuda_keyed_branch(self, node: ast.AST) -> bool:
        r"""``match = re.match(r"cuda:(\d+)", key)`` then ``if match: if not
        torch.cuda.is_available(): continue`` ...: the test sits in a branch taken for data named
        for CUDA (a checkpoint's per-device RNG states). Another accelerator would pass the
        rewritten test and reach code for CUDA's data, which it used to skip: the test keeps
        CUDA. The branch's test holds a string that says "cuda", or reads a name the function
        stores from one."""
        scope: ast.AST | None = None
        branches: list[ast.expr] = []
        child = node
        for ancestor in self.ancestors(node):
            if isinstance(ancestor, ast.FunctionDef | ast.AsyncFunctionDef):
                scope = ancestor
                break
            if isinstance(ancestor, ast.If) and child in ancestor.body:
                branches.append(ancestor.test)
            child = ancestor
        if scope is None or not branches:
            return False
        names = {n.id for test in branches for n in ast.walk(test) if isinstance(n, ast.Name)}
        if any(_names_cuda_text(test) for test in branches):
            return True
        return any(
            isinstance(statement, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id in names for t in statement.targets)
            and _names_cuda_text(statement.value)
            for statement in ast.walk(scope)
        )

    def _following_statements(self, statement: ast.stmt) -> list[ast.stmt]:
        parent = self.parents.get(id(statement))
        for field in ("body", "orelse", "finalbody"):
            block = getattr(parent, field, None)
            if isinstance(block, list):
                for position, sibling in enumerate(block):
                    if sibling is statement:
                        return block[position + 1 :]
        return []

    def _safely_fixed(self, node: ast.Attribute) -> bool:
        """False for a CUDA-only name that this pass leaves as it is (no safe fix)."""
        from portlint.python.device_checks import attribute_tail_span
        from portlint.python.torch_api import torch_cuda_api

        name = self.ctx.qualified_name(node) or ""
        parent = self.parents.get(id(node))
        if isinstance(parent, ast.Attribute) and parent.value is node:
            return True  # ``torch.cuda`` in ``torch.cuda.synchronize``: judged with the whole
        call = parent if isinstance(parent, ast.Call) and parent.func is node else None
        if name.startswith("torch.cuda."):
            entry = torch_cuda_api(self.ctx.catalog).entry(name[len("torch.cuda.") :])
            fix = self.torch_cuda(node, entry, call)
        elif node.attr == "cuda" and not name:
            fix = self.cuda_method(call, attribute_tail_span(call, self.ctx)) if call else None
        else:
            return node.attr != "cuda" and not name.startswith("torch.cuda")
        return fix is not None and fix.applicability is Applicability.SAFE


def _names_cuda_text(expression: ast.expr) -> bool:
    r"""A string in ``expression`` that names CUDA (``r"cuda:(\d+)"``, ``"cuda"``)."""
    return any(
        isinstance(n, ast.Constant) and isinstance(n.value, str) and "cuda" in n.value.lower()
        for n in ast.walk(expression)
    )


def _names_cuda_choice(value: object) -> bool:
    """A string that names CUDA's device or NCCL whole: ``"cuda"``, ``"cuda:0"``, the
    ``"cuda:"`` that starts ``f"cuda:{rank}"``, ``"nccl"``."""
    return isinstance(value, str) and (value in ("cuda", "nccl") or value.startswith("cuda:"))


#: Where a "cuda" string in a CUDA test's arm is a choice the test's rewrite would hand to every
#: accelerator: an arm of a conditional expression, a value stored or returned, a dict's value.
KEPT_CHOICE = (ast.IfExp, ast.Return, ast.Assign, ast.AnnAssign, ast.Dict, ast.Yield)


def _called_name(call: ast.Call) -> str:
    func = call.func
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute) and not isinstance(func.value, ast.Name | ast.Attribute):
        return func.attr
    if isinstance(func, ast.Attribute):
        # ``torch.cuda.x()`` is judged by its own finding; a method by its own name.
        return "" if func.attr == "cuda" else func.attr
    return ""


def _contains(outer: ast.AST, inner: ast.AST) -> bool:
    return any(node is inner for node in ast.walk(outer))


def _reads(expr: ast.AST, name: str) -> bool:
    """``expr`` reads the flag ``name``: a name, or a dotted attribute (``self.is_cuda``)."""
    return any(flag_name(node) == name for node in ast.walk(expr))


def _assigned_flag(statement: ast.AST, value: ast.AST) -> str | None:
    """``flag = value``, ``flag: bool = value`` or ``self.flag = value``: the name or attribute
    ``value`` is stored in, or None."""
    if isinstance(statement, ast.Assign) and statement.value is value:
        targets = statement.targets
        if len(targets) == 1:
            return flag_name(targets[0]) or None
    if isinstance(statement, ast.AnnAssign) and statement.value is value:
        return flag_name(statement.target) or None
    return None


def _negative_comparison(node: ast.AST) -> bool:
    """``device.type != "cuda"``, ``dev not in ("cuda",)``: true where the CUDA test is not."""
    return (
        isinstance(node, ast.Compare)
        and len(node.ops) == 1
        and isinstance(node.ops[0], ast.NotEq | ast.NotIn)
    )

"""Fixes for Python findings: rewrite CUDA device handling into device-generic code.

A module gets one device, chosen at run time and named once after its imports (``DEVICE``, or the
module's own ``device = ...`` variable when it already has one). Every fix that needs it carries
the definition as a *shared* edit, which is applied once however many fixes use it. What is
written depends on the project's ``min-torch`` (``rules/fixes.toml``).
"""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass

from portlint.config import version_tuple
from portlint.model import Applicability, Edit, Fix, Span


@dataclass(frozen=True)
class ModuleLayout:
    """What the fixes need to know about the module as a whole."""

    torch_name: str | None
    distributed_name: str | None
    #: An existing module-level device variable: its name, and its value when it must be rewritten.
    device_name: str | None
    device_value: ast.expr | None
    #: The line of that variable's assignment: module-level code above it cannot use it.
    device_line: int
    #: Where the device definition goes: (line, column) of the start of the line after the imports.
    insert_at: tuple[int, int]
    bound_names: frozenset[str]


def _top_level_bindings(tree: ast.Module) -> dict[str, str | None]:
    bindings: dict[str, str | None] = {}
    for statement in tree.body:
        if isinstance(statement, ast.Import):
            for alias in statement.names:
                if alias.asname:
                    bindings[alias.asname] = alias.name
                else:
                    bindings.setdefault(alias.name.split(".")[0], alias.name.split(".")[0])
        elif isinstance(statement, ast.ImportFrom) and statement.module and not statement.level:
            for alias in statement.names:
                bindings[alias.asname or alias.name] = f"{statement.module}.{alias.name}"
        elif isinstance(statement, ast.Assign):
            for target in statement.targets:
                if isinstance(target, ast.Name):
                    bindings.setdefault(target.id, None)
        elif isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            bindings.setdefault(statement.name, None)
    return bindings


def _insertion_point(tree: ast.Module) -> tuple[int, int]:
    """The start of the line after the module's leading docstring, imports and try-imports."""
    after = 0
    for position, statement in enumerate(tree.body):
        is_docstring = (
            position == 0
            and isinstance(statement, ast.Expr)
            and isinstance(statement.value, ast.Constant)
            and isinstance(statement.value.value, str)
        )
        is_import = isinstance(statement, ast.Import | ast.ImportFrom) or (
            isinstance(statement, ast.Try)
            and all(isinstance(s, ast.Import | ast.ImportFrom) for s in statement.body)
        )
        if is_docstring or is_import:
            after = statement.end_lineno or statement.lineno
        else:
            break
    return after + 1, 0


def layout_of(tree: ast.Module, is_device_selection) -> ModuleLayout:
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
    return ModuleLayout(
        torch_name=by_value.get("torch"),
        distributed_name=by_value.get("torch.distributed"),
        device_name=device_name,
        device_value=device_value,
        device_line=device_line,
        insert_at=_insertion_point(tree),
        bound_names=frozenset(bindings),
    )


class FixBuilder:
    """Builds the fixes of one module. Returns None wherever a fix would not be right."""

    def __init__(self, ctx, tree: ast.Module, min_torch: str, newline: str) -> None:
        self.ctx = ctx
        self.tree = tree
        self.table = ctx.catalog.table("fixes")
        self.min_torch = version_tuple(min_torch)
        self.newline = newline

    # The module's layout is read on first use, when the walk has bound the module's imports.
    @functools.cached_property
    def layout(self) -> ModuleLayout:
        return layout_of(self.tree, self._device_selection_verdict)

    @functools.cached_property
    def torch(self) -> str:
        return self.layout.torch_name or "torch"

    @functools.cached_property
    def device(self) -> str:
        return self.layout.device_name or self._free_device_name()

    # -- the module's device -------------------------------------------------------------------

    def _free_device_name(self) -> str:
        for name in self.table["device"]["names"]:
            if name not in self.layout.bound_names:
                return name
        return "PORTLINT_DEVICE_"

    def _device_selection_verdict(self, value: ast.expr) -> str | None:
        """``"rewrite"`` for a CUDA device selection, ``"keep"`` for a generic one, else None."""
        source = self.ctx.source(value)
        helper = self.table["device"]["helper_call"]
        if "current_accelerator(" in source or source == helper:
            return "keep"
        from portlint.python.device_checks import device_literals, is_selection

        is_device_call = (
            isinstance(value, ast.Call)
            and self.ctx.qualified_name(value.func) == "torch.device"
            and len(value.args) == 1
            and (device_literals(value.args[0], self.ctx) or is_selection(value.args[0], self.ctx))
        )
        return "rewrite" if is_device_call or is_selection(value, self.ctx) else None

    def uses_accelerator(self) -> bool:
        return self.min_torch >= version_tuple(self.table["device"]["accelerator_since"])

    def device_definition_value(self) -> str:
        device = self.table["device"]
        if self.uses_accelerator():
            return device["accelerator_expression"].format(torch=self.torch)
        return device["helper_call"]

    def shared_edits(self) -> tuple[Edit, ...]:
        """The edits every device-using fix needs: ``import torch``, the helper, the definition."""
        line, column = self.layout.insert_at
        nl = self.newline
        parts = []
        if self.layout.torch_name is None:
            parts.append(f"import torch{nl}")
        if not self.uses_accelerator() and self.table["device"]["helper_name"] not in (
            self.layout.bound_names
        ):
            helper = self.table["device"]["helper"].format(torch=self.torch).strip("\n")
            parts.append(nl + nl + helper.replace("\n", nl) + nl + nl)
        if self.layout.device_name is None:
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
        if line > len(self.ctx.index.lines) or (
            line == len(self.ctx.index.lines) and self.ctx.text and self.ctx.text[-1] not in "\r\n"
        ):
            text = nl + text
        return (Edit(Span(line, column, line, column), text),)

    def names_usable_at(self, *names: str) -> bool:
        """False if a function scope here hides one of the module-level names a fix refers to."""
        resolver = self.ctx.resolver
        return not any(name in scope.bindings for scope in resolver.scopes[1:] for name in names)

    # -- fixes ----------------------------------------------------------------------------------

    def _fix(
        self, edits, description: str, unsafe: bool = False, shared: bool = True
    ) -> Fix | None:
        if not self.names_usable_at(self.device, self.torch):
            return None
        at_module_level = len(self.ctx.resolver.scopes) == 1
        uses_device = shared and edits
        if uses_device and at_module_level and edits[0].span.line < self.layout.device_line:
            return None  # the module's device variable is assigned further down
        all_edits = tuple(edits) + (self.shared_edits() if shared else ())
        applicability = Applicability.UNSAFE if unsafe else Applicability.SAFE
        return Fix(applicability, all_edits, description)

    def device_literal(
        self,
        literal: ast.expr,
        wants_type: bool,
        via_variable: bool,
        replace: ast.expr | None = None,
    ) -> Fix | None:
        """``"cuda"`` -> DEVICE (or DEVICE.type); ``"cuda:1"`` -> torch.device(DEVICE.type, 1);
        ``f"cuda:{i}"`` -> ``f"{DEVICE.type}:{i}"``."""
        if self.layout.device_value is not None and _contains(self.layout.device_value, literal):
            return self._fix((), f"choose {self.device} at run time")
        kind = f"{self.device}.type"
        if isinstance(literal, ast.Constant):
            _, _, index = literal.value.partition(":")
            if wants_type:
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
        if self.layout.device_value is not None and _contains(self.layout.device_value, expression):
            return self._fix((), f"choose {self.device} at run time")
        replacement = f"{self.device}.type" if wants_type else self.device
        edit = Edit(self.ctx.span(expression), replacement)
        return self._fix([edit], f"use {self.device}", unsafe=unsafe)

    def cuda_method(self, call: ast.Call, tail: Span) -> Fix | None:
        """``.cuda()`` -> ``.to(DEVICE)``, keeping ``non_blocking=``; ``.cuda(i)`` -> an index."""
        arguments = [self.ctx.source(a) for a in call.args]
        keywords = {k.arg: self.ctx.source(k.value) for k in call.keywords if k.arg}
        if any(k.arg is None for k in call.keywords) or len(arguments) > 1:
            return None
        index = arguments[0] if arguments else keywords.pop("device", None)
        target = (
            self.device if index is None else f"{self.torch}.device({self.device}.type, {index})"
        )
        extra = "".join(f", {name}={value}" for name, value in keywords.items())
        return self._fix([Edit(tail, f".to({target}{extra})")], f".to({self.device})")

    def is_cuda(self, node: ast.Attribute, parenthesise: bool) -> Fix | None:
        """``x.is_cuda`` -> ``x.device.type != "cpu"``: "on the accelerator", whichever it is."""
        test = f'{self.ctx.source(node.value)}.device.type != "cpu"'
        if parenthesise:
            test = f"({test})"
        return self._fix(
            [Edit(self.ctx.span(node), test)], "test for any accelerator", shared=False
        )

    def device_type_comparison(self, compare: ast.Compare, literal: ast.Constant) -> Fix | None:
        """``t == "cuda"`` -> ``t != "cpu"`` (``!=`` -> ``==``); in a tuple -> DEVICE.type."""
        if len(compare.ops) == 1 and literal in (compare.left, compare.comparators[0]):
            operator = compare.ops[0]
            if isinstance(operator, ast.Eq | ast.NotEq):
                other = compare.comparators[0] if literal is compare.left else compare.left
                flipped = "!=" if isinstance(operator, ast.Eq) else "=="
                test = f'{self.ctx.source(other)} {flipped} "cpu"'
                edit = Edit(self.ctx.span(compare), test)
                return self._fix([edit], "test for any accelerator", shared=False)
        edit = Edit(self.ctx.span(literal), f"{self.device}.type")
        return self._fix([edit], f"compare with {self.device}.type")

    def torch_cuda(self, node: ast.expr, entry, call: ast.Call | None) -> Fix | None:
        """``torch.cuda.X`` -> its device-generic form where ``min-torch`` has one.

        Calls that a CPU-only machine cannot make (``synchronize``, ``empty_cache``) are put
        under ``if DEVICE.type != "cpu":`` unless a CUDA check already guards them, and memory
        counters read 0 there, so the fixed code runs on every machine.
        """
        if entry.generic and entry.since and self.min_torch >= version_tuple(entry.since):
            generic = self.torch + entry.generic[len("torch") :]
            edits = [Edit(self.ctx.span(node), generic)]
            if entry.generic_args:
                if call is None or call.func is not node:
                    return self._decorator_generic(node, entry, generic)
                edits.append(self._insert_device_argument(call, entry.generic_args))
        else:
            generic = self._generic_module_name(entry)
            if generic is None:
                return None
            edits = [Edit(self.ctx.span(node), generic)]
        uses_device = bool(entry.generic_args) or self.device in generic
        cpu_edits = self._cpu_guard(node, call, entry)
        if cpu_edits is None:
            return None
        if cpu_edits:
            edits.extend(cpu_edits)
            uses_device = True
        return self._fix(edits, f"use {generic}", unsafe=entry.unsafe, shared=uses_device)

    def _cpu_guard(self, node: ast.expr, call: ast.Call | None, entry) -> list[Edit] | None:
        """Edits that keep a CPU-only machine off the call; None when no safe form exists."""
        if self.ctx.guards.get(id(node)) is not None and self.ctx.guards[id(node)].cuda_only:
            return []
        if call is None or call.func is not node:
            return []
        cpu = self.table["cpu"]
        condition = cpu["condition"].format(device=self.device)
        if entry.cpu_value is not None:
            span = self.ctx.span(call)
            start = Span(span.line, span.column, span.line, span.column)
            end = Span(span.end_line, span.end_column, span.end_line, span.end_column)
            return [Edit(start, "("), Edit(end, f" if {condition} else {entry.cpu_value})")]
        if not entry.cpu_remove:
            return []
        statement = self.ctx.parents.get(id(call))
        if not isinstance(statement, ast.Expr) or not self._alone_on_its_lines(statement):
            return None
        span = self.ctx.span(statement)
        indent = self.ctx.index.line(span.line)[: span.column]
        text = f"if {condition}:{self.newline}{indent}    "
        return [Edit(Span(span.line, span.column, span.line, span.column), text)]

    def _alone_on_its_lines(self, statement: ast.stmt) -> bool:
        span = self.ctx.span(statement)
        before = self.ctx.index.line(span.line)[: span.column]
        after = self.ctx.index.line(span.end_line)[span.end_column :].strip()
        return not before.strip() and (not after or after.startswith("#"))

    def _decorator_generic(self, node: ast.expr, entry, generic: str) -> Fix | None:
        """A bare ``@torch.cuda.amp.custom_fwd`` decorator: give it the device argument."""
        parent = self.ctx.parents.get(id(node))
        if not isinstance(parent, ast.FunctionDef | ast.AsyncFunctionDef):
            return None
        replacement = f"{generic}({entry.generic_args}={self.device}.type)"
        return self._fix([Edit(self.ctx.span(node), replacement)], f"use {generic}")

    def _insert_device_argument(self, call: ast.Call, keyword: str) -> Edit:
        end = self.ctx.span(call)
        func_end = self.ctx.span(call.func)
        text = f"{keyword}={self.device}.type"
        if call.args or call.keywords:
            first = self.ctx.span(call.args[0] if call.args else call.keywords[0])
            return Edit(Span(first.line, first.column, first.line, first.column), text + ", ")
        # Empty call: the edit goes just before the closing parenthesis.
        del func_end
        return Edit(Span(end.end_line, end.end_column - 1, end.end_line, end.end_column - 1), text)

    def _generic_module_name(self, entry) -> str | None:
        """``torch.get_device_module(DEVICE).get_device_name`` for ``torch.cuda.get_device_name``
        when a vendor module has the name too (otherwise the rewrite would help nobody)."""
        module = self.table["generic_module"]
        if entry.rule != "PRT201" or not entry.vendors:
            return None
        recent = self.min_torch >= version_tuple(module["since"])
        template = module["expression"] if recent else module["fallback_expression"]
        return f"{template.format(torch=self.torch, device=self.device)}.{entry.name}"

    def backend(self, literal: ast.Constant, via_variable: bool) -> Fix | None:
        """``"nccl"`` -> the default backend of the module's device."""
        if literal.value != "nccl":
            return None  # "cpu:gloo,cuda:nccl" and other mixes: no automatic answer
        table = self.table["backend"]
        if self.min_torch >= version_tuple(table["api_since"]):
            distributed = self.layout.distributed_name or f"{self.torch}.distributed"
            replacement = table["api_expression"].format(
                distributed=distributed, device=self.device
            )
        else:
            replacement = table["mapping_expression"].format(device=self.device)
        edit = Edit(self.ctx.span(literal), replacement)
        return self._fix([edit], "use the device's default backend", unsafe=via_variable)


def _contains(outer: ast.AST, inner: ast.AST) -> bool:
    return any(node is inner for node in ast.walk(outer))

"""After fixes: drop the torch.cuda imports the fixes made unused, and check the result parses.

The imports are judged with libcst's scope metadata and removed with its codemod
``RemoveImportsVisitor``, so a name counts as used only where it resolves to the import (a local
of the same name does not keep it), and an import that shares its statement with others loses
only its own names. Only fix mode loads this module's libcst parts.
"""

from __future__ import annotations

import ast
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import libcst as cst

CUDA_MODULES = re.compile(r"^torch\.cuda(\.|$)")


def syntax_error(text: str) -> str | None:
    """None when ``text`` parses, else the parser's complaint."""
    try:
        ast.parse(text)
    except SyntaxError as error:
        return f"line {error.lineno}: {error.msg}"
    return None


def _dotted(node: cst.BaseExpression) -> str:
    import libcst as cst

    if isinstance(node, cst.Attribute):
        return f"{_dotted(node.value)}.{node.attr.value}"
    return node.value if isinstance(node, cst.Name) else ""


def _cuda_import_bindings(module: cst.Module) -> set[tuple[str, str, str | None]]:
    """``(module, name, asname)`` of each name that ``from torch.cuda... import X`` or
    ``from torch import cuda`` binds, and whether the module uses it: the used ones."""
    import libcst as cst
    from libcst.metadata import MetadataWrapper, ScopeProvider

    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    scopes = wrapper.resolve(ScopeProvider)
    used: set[tuple[str, str, str | None]] = set()
    for node, scope in scopes.items():
        if not isinstance(node, cst.ImportFrom) or node.relative or node.module is None:
            continue
        if isinstance(node.names, cst.ImportStar) or scope is None:
            continue
        dotted = _dotted(node.module)
        for alias in node.names:
            name = _dotted(alias.name)
            if not (CUDA_MODULES.match(dotted) or (dotted == "torch" and name == "cuda")):
                continue
            asname = _dotted(alias.asname.name) if alias.asname else None
            bound = asname or name
            if any(
                assignment.node is node and assignment.references
                for assignment in scope.assignments[bound]
            ):
                used.add((dotted, name, asname))
    return used


def tidy_after_fix(original: str, fixed: str) -> str:
    """Remove torch.cuda imports that the original used and the fixed text no longer does."""
    if "cuda" not in fixed:
        return fixed
    import libcst as cst
    from libcst.codemod import CodemodContext
    from libcst.codemod.visitors import RemoveImportsVisitor
    from libcst.metadata import MetadataWrapper

    try:
        before, after = cst.parse_module(original), cst.parse_module(fixed)
    except (cst.ParserSyntaxError, RecursionError):
        return fixed
    used_before = _cuda_import_bindings(before)
    if not used_before:
        return fixed
    wrapper = MetadataWrapper(after, unsafe_skip_copy=True)
    context = CodemodContext(wrapper=wrapper)
    for module_name, name, asname in sorted(used_before, key=str):
        RemoveImportsVisitor.remove_unused_import(context, module_name, name, asname)
    return wrapper.visit(RemoveImportsVisitor(context)).code

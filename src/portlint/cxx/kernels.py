"""PRT705: each ``__global__`` kernel once, for the targets with no CUDA C++ path; and the facts
about kernels (names, launch bounds) that the launch hazards need."""

from __future__ import annotations

import re
from dataclasses import dataclass

from tree_sitter import Node

from portlint.cxx.unit import Unit

GLOBAL = re.compile(rb"(?<![A-Za-z0-9_])__global__(?![A-Za-z0-9_])")
#: The kernel's name when tree-sitter could not parse its declaration (unknown macros around it).
NAME_AFTER_GLOBAL = re.compile(rb"([A-Za-z_][A-Za-z0-9_]*)\s*(?:<[^<>()]*>\s*)?\(")
DECLARATOR_KINDS = ("function_declarator", "pointer_declarator", "reference_declarator")


@dataclass(frozen=True)
class Kernel:
    name: str
    defined: bool
    launch_bounds: bool
    #: Byte range of the name in the file.
    start: int
    end: int
    node: Node


def find_kernels(unit: Unit) -> list[Kernel]:
    """Every ``__global__`` function declared or defined in the file."""
    kernels = []
    if not unit.contains(b"__global__"):
        return kernels
    for match in unit.finditer(GLOBAL):
        keyword = unit.code_node(match.start(), match.end())
        if keyword is None:
            continue
        owner = keyword.parent
        if owner is not None and owner.type in ("function_definition", "declaration"):
            name = declared_name(owner)
            if name is not None:
                kernels.append(
                    Kernel(
                        unit.text(name),
                        owner.type == "function_definition",
                        any(c.type == "launch_bounds" for c in owner.children),
                        name.start_byte,
                        name.end_byte,
                        name,
                    )
                )
                continue
        kernel = kernel_from_text(unit, match.end(), keyword)
        if kernel is not None:
            kernels.append(kernel)
    return kernels


def declared_name(owner: Node) -> Node | None:
    declarator = owner.child_by_field_name("declarator")
    while declarator is not None and declarator.type in DECLARATOR_KINDS:
        declarator = declarator.child_by_field_name("declarator")
    if declarator is None:
        return None
    if declarator.type in ("qualified_identifier", "template_function"):
        inner = declarator.child_by_field_name("name")
        return inner if inner is not None else declarator
    return declarator if declarator.type in ("identifier", "field_identifier") else None


def kernel_from_text(unit: Unit, after: int, keyword: Node) -> Kernel | None:
    """A kernel whose declaration tree-sitter broke up: the first ``name(`` after ``__global__``,
    skipping ``__launch_bounds__(...)``."""
    window = unit.data[after : after + 400]
    bounds = re.match(rb"\s*(?:\w+\s+)*?__launch_bounds__\s*\([^)]*\)", window)
    offset = bounds.end() if bounds else 0
    match = NAME_AFTER_GLOBAL.search(window, offset)
    if match is None or match.group(1) in (b"__launch_bounds__", b"__align__"):
        return None
    start, end = after + match.start(1), after + match.end(1)
    name_node = unit.node_at(start, end)
    defined = b"{" in window[match.end() :].split(b";", 1)[0]
    return Kernel(match.group(1).decode(), defined, bounds is not None, start, end, name_node)


def report_kernels(unit: Unit, kernels: list[Kernel]) -> None:
    for kernel in kernels:
        if not kernel.defined:
            continue
        unit.report(
            "PRT705",
            kernel.start,
            kernel.end,
            f"CUDA kernel `{kernel.name}` has no source-to-source path to Ascend, Cambricon, "
            "Intel, Apple or CPU: rewrite it in the target's kernel language",
            node=kernel.node,
        )

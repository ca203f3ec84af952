"""PRT801-PRT807: CUDA code that renaming leaves broken on AMD GPUs.

Each check is one function. Data (the words that make an expression lane arithmetic, the
warp-level intrinsics, the texture API) is in ``rules/cxx_hazards.toml``.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from tree_sitter import Node

from portlint.cxx.kernels import Kernel
from portlint.cxx.unit import Unit

WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
CAMEL_PART = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")
WARP_LITERAL = re.compile(rb"(?<![A-Za-z0-9_.])(32|31|5|16|0x1[fF]|0x20)[uUlL]*(?![A-Za-z0-9_.])")
WARP_SIZE_DEFINITION = re.compile(
    rb"(?:#[ \t]*define[ \t]+|(?<![A-Za-z0-9_]))([A-Za-z_][A-Za-z0-9_]*)"
    rb"(?:[ \t]+\(?|\s*=\s*|\s*\{\s*)(32|0x20)[uUlL]*\)?(?![A-Za-z0-9_.])"
)
WARP_SIZE_NAME = re.compile(r"warp.?(size|sz|width)|(threads|lanes).?per.?warp", re.IGNORECASE)
WARP_SIZE_VARIABLE = re.compile(rb"(?<![A-Za-z0-9_])warpSize(?![A-Za-z0-9_])")
ASM = re.compile(rb"(?<![A-Za-z0-9_])(?:asm|__asm__|__asm)(?![A-Za-z0-9_])")
PTX_TEXT = re.compile(r"%%?(laneid|warpid|tid|ctaid|nctaid|clock|smid)\b|\b[a-z]+\.[a-z0-9]+\b")
CUDA_ARCH = re.compile(rb"(?<![A-Za-z0-9_])__CUDA_ARCH__(?![A-Za-z0-9_])")
CAPABILITY_FIELD = re.compile(rb"(?:\.|->)\s*(major|minor)(?![A-Za-z0-9_])")
LAUNCH = re.compile(rb"<<<")
DEVICE_SYNC = re.compile(rb"(?<![A-Za-z0-9_])cudaDeviceSynchronize(?![A-Za-z0-9_])")
TEMPLATE_TEXTURE = re.compile(rb"(?<![A-Za-z0-9_])(texture|surface)\s*<")
TEXTURE_FETCH = re.compile(rb"(?<![A-Za-z0-9_])(tex1Dfetch|tex1D|tex2D|tex3D|texCubemap)\s*\(")
INTEGER_CONSTANT = re.compile(
    rb"(?:#[ \t]*define[ \t]+([A-Za-z_]\w*)[ \t]+\(?(\d+)[uUlL]*\)?[ \t]*$"
    rb"|(?:constexpr|const)\s+(?:static\s+)?(?:unsigned\s+)?(?:int|long|size_t|unsigned|uint32_t|"
    rb"int32_t|int64_t|auto)\s+([A-Za-z_]\w*)\s*=\s*(\d+)[uUlL]*\s*;)",
    re.MULTILINE,
)
COMPILE_TIME_CONTEXTS = frozenset(
    {"template_argument_list", "static_assert_declaration", "case_statement", "enumerator"}
)
BLOCK_LIMIT = 256


@dataclass(frozen=True)
class HazardData:
    warp_words: frozenset[str]
    size_operators: frozenset[str]
    mask_operators: frozenset[str]
    shift_operators: frozenset[str]
    mask_functions: frozenset[str]
    ballot_functions: frozenset[str]
    full_masks: frozenset[str]
    narrow_types: frozenset[str]
    texture_names: frozenset[str]
    texture_prefixes: tuple[str, ...]

    @classmethod
    def from_catalog(cls, catalog) -> HazardData:
        table = catalog.table("cxx_hazards")
        warp, lanes, texture = table["warp"], table["lane_mask"], table["texture"]
        return cls(
            warp_words=frozenset(w.lower() for w in warp["words"]),
            size_operators=frozenset(warp["size_operators"]),
            mask_operators=frozenset(warp["mask_operators"]),
            shift_operators=frozenset(warp["shift_operators"]),
            mask_functions=frozenset(lanes["mask_functions"]),
            ballot_functions=frozenset(lanes["ballot_functions"]),
            full_masks=frozenset(m.lower() for m in lanes["full_masks"]),
            narrow_types=frozenset(lanes["narrow_types"]),
            texture_names=frozenset(texture["names"]),
            texture_prefixes=tuple(texture["prefixes"]),
        )


def find_hazards(unit: Unit, kernels: list[Kernel]) -> None:
    data = HazardData.from_catalog(unit.catalog)
    find_warp_size_constants(unit)
    find_warp_arithmetic(unit, data)
    find_warp_size_in_constant_expressions(unit)
    find_lane_masks(unit, data)
    find_inline_ptx(unit)
    find_arch_checks(unit)
    find_large_blocks(unit, kernels)
    find_dynamic_parallelism(unit)
    find_texture_and_interop(unit, data)


# -- PRT801 warp size 32 ---------------------------------------------------------------------


def find_warp_size_constants(unit: Unit) -> None:
    """``#define WARP_SIZE 32``, ``constexpr int kWarpSize = 32``, ``enum { WARP_SIZE = 32 }``."""
    if not unit.contains_folded(b"warp"):
        return
    for match in unit.finditer(WARP_SIZE_DEFINITION):
        name = match.group(1).decode()
        if not WARP_SIZE_NAME.search(name):
            continue
        node = unit.code_node(match.start(2), match.end(2))
        if node is None and not _in_macro_body(unit, match.start(2)):
            continue
        unit.report(
            "PRT801",
            match.start(2),
            match.end(2),
            f"`{name}` fixes the warp size at 32; AMD CDNA GPUs run 64 lanes per wavefront",
        )


def find_warp_arithmetic(unit: Unit, data: HazardData) -> None:
    """32, 31 or a shift by 5 applied to a lane/warp/thread index, a shuffle width of 32, and a
    shuffle reduction loop that starts at offset 16."""
    if not unit.contains_folded(*(w.encode() for w in data.warp_words)):
        return
    for match in unit.finditer(WARP_LITERAL):
        node = unit.code_node(match.start(), match.end())
        if node is None or node.type != "number_literal":
            continue
        value = int(match.group(1), 0)
        message = warp_literal_problem(unit, node, value, data)
        if message:
            unit.report("PRT801", node.start_byte, node.end_byte, message, node=node)


def warp_literal_problem(unit: Unit, literal: Node, value: int, data: HazardData) -> str | None:
    parent = literal.parent
    if parent is None:
        return None
    if parent.type == "argument_list" and value == 32:
        return _shuffle_width(unit, literal, parent)
    if value == 16:
        return _reduction_start(unit, literal)
    if parent.type != "binary_expression":
        return None
    operator = parent.child_by_field_name("operator")
    other = parent.child_by_field_name("left")
    if other is None or operator is None or other == literal:
        return None
    op = operator.type
    allowed = {
        32: data.size_operators,
        31: data.mask_operators,
        5: data.shift_operators,
    }.get(value, frozenset())
    if op not in allowed or not mentions_warp(unit.text(other), data.warp_words):
        return None
    return f"`{unit.text(parent)}` assumes 32 lanes per warp; AMD CDNA GPUs run 64 (use warpSize)"


def _shuffle_width(unit: Unit, literal: Node, arguments: Node) -> str | None:
    call = arguments.parent
    function = call.child_by_field_name("function") if call is not None else None
    if function is None or not unit.text(function).startswith("__shfl"):
        return None
    if arguments.named_children[-1] != literal or len(arguments.named_children) < 3:
        return None
    return f"shuffle width 32 in `{unit.text(function)}` covers half of a 64-lane wavefront"


def _reduction_start(unit: Unit, literal: Node) -> str | None:
    """``for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(...)``."""
    declarator = literal.parent
    declaration = declarator.parent if declarator is not None else None
    loop = declaration.parent if declaration is not None else None
    if declarator.type != "init_declarator" or loop is None or loop.type != "for_statement":
        return None
    if loop.child_by_field_name("initializer") != declaration:
        return None
    body = loop.child_by_field_name("body")
    if body is None or "__shfl" not in unit.text(body):
        return None
    return "shuffle reduction starting at offset 16 covers 32 lanes; a wavefront has 64"


def mentions_warp(expression: str, words: frozenset[str]) -> bool:
    """Whether an expression names a lane, warp or thread index (``threadIdx.x``, ``lane_id``,
    ``warpId``, ``tid``), by whole identifiers and by their ``_``/camelCase parts."""
    for identifier in WORD.findall(expression):
        if identifier.lower() in words:
            return True
        for part in identifier.split("_"):
            if part.lower() in words:
                return True
            if any(piece.lower() in words for piece in CAMEL_PART.findall(part)):
                return True
    return False


def find_warp_size_in_constant_expressions(unit: Unit) -> None:
    """``warpSize`` where C++ needs a constant: array sizes, template arguments, static_assert,
    constexpr initialisers. It is a run-time value in HIP."""
    if not unit.contains(b"warpSize"):
        return
    for match in unit.finditer(WARP_SIZE_VARIABLE):
        node = unit.code_node(match.start(), match.end())
        if node is None or not needs_constant(node):
            continue
        unit.report(
            "PRT801",
            match.start(),
            match.end(),
            "`warpSize` used where a compile-time constant is needed: it is a run-time value "
            "in HIP (32 or 64)",
        )


def needs_constant(node: Node) -> bool:
    child, current = node, node.parent
    while current is not None and current.type not in ("compound_statement", "translation_unit"):
        if current.type in COMPILE_TIME_CONTEXTS:
            return True
        if current.type == "array_declarator" and current.child_by_field_name("size") == child:
            return True
        if current.type == "declaration" and any(
            c.type == "type_qualifier" and c.text == b"constexpr" for c in current.children
        ):
            return True
        child, current = current, current.parent
    return False


# -- PRT802 32-bit lane masks -------------------------------------------------------------------

LANE_FUNCTION = re.compile(
    rb"(?<![A-Za-z0-9_])(__shfl\w*|__ballot\w*|__any_sync|__all_sync|__uni_sync|__match_\w+|"
    rb"__reduce_\w+_sync|__syncwarp|__activemask)(?![A-Za-z0-9_])"
)
LANE_LITERALS = (
    b"__shfl",
    b"__ballot",
    b"__any_sync",
    b"__all_sync",
    b"__uni_sync",
    b"__match_",
    b"__reduce_",
    b"__syncwarp",
    b"__activemask",
)
MASK_CONSTANT = re.compile(
    rb"(?:#[ \t]*define[ \t]+([A-Za-z_]\w*)[ \t]+\(?(0x[fF]{8}[uU]?|~0[uU])\)?[ \t]*$"
    rb"|(?:constexpr|const)\s+(?:unsigned|uint32_t|unsigned\s+int)\s+([A-Za-z_]\w*)\s*=\s*"
    rb"(0x[fF]{8}[uU]?|~0[uU]))",
    re.MULTILINE,
)


def find_lane_masks(unit: Unit, data: HazardData) -> None:
    if not unit.contains(*LANE_LITERALS):
        return
    mask_names = {(m.group(1) or m.group(3)).decode() for m in unit.finditer(MASK_CONSTANT)}
    for match in unit.finditer(LANE_FUNCTION):
        node = unit.code_node(match.start(), match.end())
        if node is None or node.type != "identifier":
            continue
        call = node.parent
        if call is None or call.type != "call_expression":
            continue
        name = match.group(1).decode()
        if name in data.mask_functions:
            _check_mask_argument(unit, call, name, data, mask_names)
        if name in data.ballot_functions:
            _check_ballot_result(unit, call, name, data)


def _check_mask_argument(unit, call: Node, name: str, data: HazardData, mask_names) -> None:
    arguments = call.child_by_field_name("arguments")
    if arguments is None or not arguments.named_children:
        return
    mask = arguments.named_children[0]
    text = "".join(unit.text(mask).split())
    if text.lower() in data.full_masks or text in mask_names:
        unit.report(
            "PRT802",
            mask.start_byte,
            mask.end_byte,
            f"32-bit full-warp mask `{text}` in `{name}`: a 64-lane wavefront needs a 64-bit mask",
            node=mask,
        )


def _check_ballot_result(unit: Unit, call: Node, name: str, data: HazardData) -> None:
    declarator = call.parent
    if declarator is None or declarator.type != "init_declarator":
        return
    declaration = declarator.parent
    if declaration is None or declaration.type != "declaration":
        return
    kind = declaration.child_by_field_name("type")
    if kind is None or " ".join(unit.text(kind).split()) not in data.narrow_types:
        return
    unit.report(
        "PRT802",
        kind.start_byte,
        kind.end_byte,
        f"`{name}` result stored in 32-bit `{unit.text(kind)}`: lane masks have 64 bits on "
        "AMD GPUs",
        node=kind,
    )


# -- PRT803 inline PTX ---------------------------------------------------------------------------


def find_inline_ptx(unit: Unit) -> None:
    if not unit.contains(b"asm"):
        return
    for match in unit.finditer(ASM):
        node = unit.node_at(match.start(), match.end())
        statement = node.parent
        if statement is None or statement.type != "gnu_asm_expression":
            continue
        code = statement.child_by_field_name("assembly_code")
        template = unit.text(code) if code is not None else ""
        # Host code may hold x86/Arm assembly; device code can only hold PTX.
        if not (unit.in_device_code(node) or PTX_TEXT.search(template)):
            continue
        unit.report(
            "PRT803",
            match.start(),
            match.end(),
            "inline PTX assembly does not build for AMD GPUs: use a HIP intrinsic or builtin",
        )


# -- PRT804 __CUDA_ARCH__ and compute capability ------------------------------------------------


def find_arch_checks(unit: Unit) -> None:
    if unit.contains(b"__CUDA_ARCH__"):
        find_cuda_arch_tests(unit)
    if unit.contains(b"major", b"minor") and unit.contains_folded(b"prop"):
        find_capability_fields(unit)


def find_cuda_arch_tests(unit: Unit) -> None:
    for match in unit.finditer(CUDA_ARCH):
        node = unit.code_node(match.start(), match.end())
        if node is None and not _in_macro_body(unit, match.start()):
            continue
        parent = node.parent if node is not None else None
        if parent is not None and parent.type == "binary_expression":
            message = (
                f"`{unit.text(parent)}` compares an NVIDIA compute capability; hip-clang does "
                "not define __CUDA_ARCH__: test a __HIP_ARCH_HAS_* feature macro"
            )
        else:
            message = (
                "hip-clang does not define __CUDA_ARCH__: this test is false on AMD GPUs "
                "(use __HIP_DEVICE_COMPILE__ for device compilation)"
            )
        unit.report("PRT804", match.start(), match.end(), message)


def find_capability_fields(unit: Unit) -> None:
    for match in unit.finditer(CAPABILITY_FIELD):
        node = unit.code_node(match.start(1), match.end(1))
        if node is None or node.type != "field_identifier":
            continue
        field = node.parent
        owner = field.child_by_field_name("argument") if field is not None else None
        if owner is None or "prop" not in unit.text(owner).lower():
            continue
        unit.report(
            "PRT804",
            field.start_byte,
            field.end_byte,
            f"`{unit.text(field)}` is an NVIDIA compute capability; HIP reports gfx-derived "
            "numbers: test the feature (hipDeviceProp_t.gcnArchName, device attributes)",
            node=field,
        )


# -- PRT805 large blocks, PRT806 dynamic parallelism ---------------------------------------------


def find_large_blocks(unit: Unit, kernels: list[Kernel]) -> None:
    if not unit.contains(b"<<<"):
        return
    bounded = {k.name for k in kernels if k.launch_bounds}
    defined = {k.name for k in kernels}
    constants = None
    for match in unit.finditer(LAUNCH):
        launch = unit.node_at(match.start(), match.end()).parent
        if launch is None or launch.type != "kernel_call_syntax":
            continue
        arguments = launch.named_children
        if len(arguments) < 2:
            continue
        if constants is None:
            constants = integer_constants(unit)
        threads = block_threads(unit, arguments[1], constants)
        if threads is None or threads <= BLOCK_LIMIT:
            continue
        call = launch.parent
        function = call.child_by_field_name("function") if call is not None else None
        name = _kernel_name(unit, function)
        if name in bounded:
            continue
        where = "has no `__launch_bounds__`" if name in defined else "is defined elsewhere"
        unit.report(
            "PRT805",
            arguments[1].start_byte,
            arguments[1].end_byte,
            f"launch of `{name}` with {threads} threads per block; the kernel {where}: declare "
            f"`__launch_bounds__({threads})` so hip-clang compiles it for that size",
            node=arguments[1],
        )


def integer_constants(unit: Unit) -> dict[str, int]:
    constants = {}
    for match in unit.finditer(INTEGER_CONSTANT):
        name = match.group(1) or match.group(3)
        value = match.group(2) or match.group(4)
        constants[name.decode()] = int(value)
    return constants


def block_threads(unit: Unit, block: Node, constants: dict[str, int]) -> int | None:
    """Threads per block when the launch's block argument is a constant the file defines."""
    if block.type == "number_literal":
        return _integer(unit.text(block))
    if block.type == "identifier":
        return constants.get(unit.text(block))
    if block.type == "call_expression" and unit.text(block).startswith("dim3"):
        total = 1
        for argument in block.child_by_field_name("arguments").named_children:
            value = block_threads(unit, argument, constants)
            if value is None:
                return None
            total *= value
        return total
    if block.type == "binary_expression":
        left = block_threads(unit, block.child_by_field_name("left"), constants)
        right = block_threads(unit, block.child_by_field_name("right"), constants)
        operator = block.child_by_field_name("operator").type
        if left is not None and right is not None and operator == "*":
            return left * right
    return None


def _integer(text: str) -> int | None:
    try:
        return int(text.rstrip("uUlL"), 0)
    except ValueError:
        return None


def _kernel_name(unit: Unit, function: Node | None) -> str:
    if function is None:
        return "?"
    if function.type in ("template_function", "qualified_identifier"):
        name = function.child_by_field_name("name")
        if name is not None:
            return _kernel_name(unit, name)
    return unit.text(function)


def find_dynamic_parallelism(unit: Unit) -> None:
    if not unit.contains(b"<<<", b"cudaDeviceSynchronize"):
        return
    for match in unit.finditer(LAUNCH):
        launch = unit.node_at(match.start(), match.end()).parent
        if launch is None or launch.type != "kernel_call_syntax":
            continue
        if not unit.in_device_code(launch):
            continue
        call = launch.parent
        unit.report(
            "PRT806",
            call.start_byte,
            launch.end_byte,
            "kernel launched from device code (dynamic parallelism): HIP cannot launch kernels "
            "from the GPU",
            node=call,
        )
    for match in unit.finditer(DEVICE_SYNC):
        node = unit.code_node(match.start(), match.end())
        if node is None or not unit.in_device_code(node):
            continue
        unit.report(
            "PRT806",
            match.start(),
            match.end(),
            "`cudaDeviceSynchronize` in device code is dynamic parallelism: HIP has none",
        )


# -- PRT807 textures, surfaces, graphics interop -------------------------------------------------


def find_texture_and_interop(unit: Unit, data: HazardData) -> None:
    if not unit.contains(b"tex", b"surf", *(p.encode() for p in data.texture_prefixes)):
        return
    for match in unit.finditer(TEMPLATE_TEXTURE):
        node = unit.code_node(match.start(1), match.end(1))
        if node is None or node.parent is None or node.parent.type != "template_type":
            continue
        kind = match.group(1).decode()
        unit.report(
            "PRT807",
            match.start(1),
            match.end(1),
            f"{kind} reference `{unit.text(node.parent)}`: HIP has removed {kind} references; "
            f"use {kind} objects",
        )
    for match in unit.finditer(TEXTURE_FETCH):
        node = unit.code_node(match.start(1), match.end(1))
        if node is None or node.parent is None or node.parent.type != "call_expression":
            continue
        unit.report(
            "PRT807",
            match.start(1),
            match.end(1),
            f"`{match.group(1).decode()}` without a template argument reads a texture "
            "reference, which HIP no longer has: pass a texture object",
        )
    interop = _interop_pattern(data)
    for match in unit.finditer(interop):
        node = unit.code_node(match.start(), match.end())
        # Types and called functions; their enumerators and flags add nothing to the report.
        if node is None or not (node.type == "type_identifier" or _is_called(node)):
            continue
        name = match.group().decode()
        unit.report(
            "PRT807",
            match.start(),
            match.end(),
            f"`{name}` is texture-reference or graphics-interop API, which HIP lacks or covers "
            "only in part",
        )


@functools.cache
def _interop_pattern(data: HazardData) -> re.Pattern[bytes]:
    names = sorted(data.texture_names - {"texture", "surface"})
    return re.compile(
        rb"(?<![A-Za-z0-9_])(?:"
        + b"|".join(re.escape(n.encode()) for n in names)
        + rb"|(?:"
        + b"|".join(re.escape(p.encode()) for p in data.texture_prefixes)
        + rb")[A-Za-z0-9_]*)(?![A-Za-z0-9_])"
    )


def _is_called(node: Node) -> bool:
    parent = node.parent
    return parent is not None and parent.type == "call_expression" and parent.children[0] == node


def _in_macro_body(unit: Unit, offset: int) -> bool:
    return unit.node_at(offset, offset + 1).type == "preproc_arg"

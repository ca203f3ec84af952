"""PRT801-PRT808: CUDA code that renaming leaves broken on AMD GPUs.

Each check is one function. Data (the words that make an expression lane arithmetic, the
warp-level intrinsics, the texture API, the cooperative-groups names) is in
``rules/cxx_hazards.toml``.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from tree_sitter import Node

from portlint.cxx.api_sites import is_torch_extension
from portlint.cxx.arch_arms import CONTINUATION, answers_as_reference, needs_no_port
from portlint.cxx.kernels import Kernel
from portlint.cxx.unit import Unit
from portlint.model import Severity

WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
CAMEL_PART = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")
WARP_LITERAL = re.compile(rb"(?<![A-Za-z0-9_.])(32|31|5|16|0x1[fF]|0x20)[uUlL]*(?![A-Za-z0-9_.])")
#: A call of a warp shuffle (``__shfl_xor_sync(``, ``__shfl_down (``), and comments, which hold
#: no call.
SHUFFLE_CALL = re.compile(rb"(?<![A-Za-z0-9_])(__shfl\w*)\s*\(")
COMMENT = re.compile(rb"//[^\n]*|/\*.*?\*/", re.DOTALL)
WARP_SIZE_DEFINITION = re.compile(
    rb"(?:#[ \t]*define[ \t]+|(?<![A-Za-z0-9_]))([A-Za-z_][A-Za-z0-9_]*)"
    rb"(?:[ \t]+\(?|\s*=\s*|\s*\{\s*)(32|0x20)[uUlL]*\)?(?![A-Za-z0-9_.])"
)
WARP_SIZE_NAME = re.compile(r"warp.?(size|sz|width)|(threads|lanes).?per.?warp", re.IGNORECASE)
#: ``threadIdx.y`` and ``threadIdx.z`` number rows and slices of a block, not lanes.
OTHER_AXES = re.compile(r"threadIdx\s*\.\s*[yz]\b")
#: The operand and operator just before a literal in a macro body: ``(threadIdx.x & `` ``31``.
MACRO_OPERAND = re.compile(
    r"([A-Za-z_]\w*(?:\s*(?:\.|->)\s*[A-Za-z_]\w*)*|\([^()]*\))\s*(%|&|/|>>|<<|\*|==|!=)\s*$"
)
WARP_SIZE_VARIABLE = re.compile(rb"(?<![A-Za-z0-9_])warpSize(?![A-Za-z0-9_])")
ASM = re.compile(rb"(?<![A-Za-z0-9_])(?:asm|__asm__|__asm)(?![A-Za-z0-9_])")
PTX_TEXT = re.compile(r"%%?(laneid|warpid|tid|ctaid|nctaid|clock|smid)\b|\b[a-z]+\.[a-z0-9]+\b")
CUDA_ARCH = re.compile(rb"(?<![A-Za-z0-9_])__CUDA_ARCH__(?![A-Za-z0-9_])")
CAPABILITY_FIELD = re.compile(rb"(?:\.|->)\s*(major|minor)(?![A-Za-z0-9_])")
CAPABILITY_ATTRIBUTE = re.compile(
    rb"DeviceGetAttribute\s*\(\s*&\s*([A-Za-z_]\w*)\s*,\s*\w*ComputeCapability(?:Major|Minor)"
)
#: Where a value is stored: the value's field and the target's field per node type.
SET_VALUE = {"init_declarator": "value", "assignment_expression": "right"}
SET_TARGET = {"init_declarator": "declarator", "assignment_expression": "left"}
#: ``!defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 600``: true where __CUDA_ARCH__ is undefined, so
#: hip-clang takes the branch meant for the host and for new GPUs, which is right for AMD GPUs.
HOST_OR_ARCH = re.compile(
    r"!\s*defined\s*\(?\s*__CUDA_ARCH__\s*\)?\s*\|\||\|\|\s*!\s*defined\s*\(?\s*__CUDA_ARCH__\b"
)
COMPARISONS = frozenset({"<", "<=", ">", ">=", "==", "!="})
#: Expression nodes a condition is made of, from an operand up to the whole condition.
CONDITION_PARTS = frozenset(
    {"binary_expression", "parenthesized_expression", "unary_expression", "preproc_defined"}
)
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
PARAMETERS = ("parameter_declaration", "optional_parameter_declaration")
LOCAL_BINDINGS = ("init_declarator", "assignment_expression", "update_expression")


@dataclass(frozen=True)
class HazardData:
    warp_words: frozenset[str]
    thread_words: frozenset[str]
    tile_words: frozenset[str]
    size_operators: frozenset[str]
    mask_operators: frozenset[str]
    shift_operators: frozenset[str]
    mask_functions: frozenset[str]
    ballot_functions: frozenset[str]
    full_masks: frozenset[str]
    narrow_types: frozenset[str]
    narrow_result_severity: Severity
    texture_names: frozenset[str]
    texture_prefixes: tuple[str, ...]
    interop_in_hip: frozenset[str]
    cg_deprecated: tuple[str, ...]
    cg_missing: tuple[str, ...]
    cg_warp_sync: tuple[str, ...]
    cg_max_tile: int

    @classmethod
    def from_catalog(cls, catalog) -> HazardData:
        table = catalog.table("cxx_hazards")
        warp, lanes, texture = table["warp"], table["lane_mask"], table["texture"]
        groups = table["cooperative_groups"]
        return cls(
            warp_words=frozenset(w.lower() for w in warp["words"]),
            thread_words=frozenset(w.lower() for w in warp["thread_words"]),
            tile_words=frozenset(w.lower() for w in warp["tile_words"]),
            size_operators=frozenset(warp["size_operators"]),
            mask_operators=frozenset(warp["mask_operators"]),
            shift_operators=frozenset(warp["shift_operators"]),
            mask_functions=frozenset(lanes["mask_functions"]),
            ballot_functions=frozenset(lanes["ballot_functions"]),
            full_masks=frozenset(m.lower() for m in lanes["full_masks"]),
            narrow_types=frozenset(lanes["narrow_types"]),
            narrow_result_severity=Severity(lanes["narrow_result_severity"]),
            texture_names=frozenset(texture["names"]),
            texture_prefixes=tuple(texture["prefixes"]),
            interop_in_hip=frozenset(texture["interop_in_hip"]),
            cg_deprecated=tuple(groups["deprecated"]),
            cg_missing=tuple(groups["missing"]),
            cg_warp_sync=tuple(groups["warp_sync_builtins"]),
            cg_max_tile=groups["max_portable_tile"],
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
    find_cooperative_groups(unit, data)


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
    """32, 31 or a shift by 5 applied to a lane/warp/thread index, and a shuffle reduction loop
    that starts at offset 16. Not in a file whose every shuffle passes a width of 32
    (``logical_warps``): its lanes are counted in groups of 32 on purpose."""
    if not unit.contains_folded(*(w.encode() for w in data.warp_words)):
        return
    if logical_warps(unit):
        return
    for match in unit.finditer(WARP_LITERAL):
        node = unit.code_node(match.start(), match.end())
        if node is None:
            continue
        value = int(match.group(1), 0)
        if node.type == "preproc_arg":
            message = macro_warp_problem(unit, match.start(), value, data)
            if message:
                unit.report("PRT801", match.start(1), match.end(1), message)
            continue
        if node.type != "number_literal":
            continue
        message = warp_literal_problem(unit, node, value, data)
        if message:
            unit.report("PRT801", node.start_byte, node.end_byte, message, node=node)


def warp_literal_problem(unit: Unit, literal: Node, value: int, data: HazardData) -> str | None:
    parent = literal.parent
    if parent is None:
        return None
    if parent.type == "argument_list" and value == 32:
        # a 32 given to a call: a shuffle width of 32 too is no finding, as HIP splits a 64-lane
        # wavefront into segments of the width given, and the shuffle reads the 32 lanes it
        # reads on NVIDIA's GPUs
        return None
    if value == 16:
        return _reduction_start(unit, literal)
    if parent.type != "binary_expression":
        return None
    operator = parent.child_by_field_name("operator")
    other = parent.child_by_field_name("left")
    if other is None or operator is None or other == literal:
        return None
    operand = unit.text(other)
    if not lane_operator(operator.type, value, operand, data):
        return None
    if operator.type in ("%", "&") and _is_tile_index(unit, parent, other, data):
        return None
    return lane_message(unit.text(parent), operand, operator.type, value)


def lane_operator(op: str, value: int, operand: str, data: HazardData) -> bool:
    """Whether ``operand op value`` is lane or warp arithmetic: the operator suits the value
    (``/ 32``, ``& 31``, ``>> 5``), the operand names a lane, warp or x thread index, and a
    product by 32 scales a warp or lane number, not a thread index."""
    allowed = {
        32: data.size_operators,
        31: data.mask_operators,
        5: data.shift_operators,
    }.get(value, frozenset())
    if op not in allowed:
        return False
    words = data.warp_words - data.thread_words if op == "*" else data.warp_words
    return mentions_warp(OTHER_AXES.sub("", operand), words, data.tile_words)


def lane_message(expression: str, operand: str, op: str, value: int) -> str:
    suggestion = {
        ("&", 31): f"{operand} & (warpSize - 1)",
        ("==", 31): f"{operand} == warpSize - 1",
        ("!=", 31): f"{operand} != warpSize - 1",
        (">>", 5): f"{operand} / warpSize",
        ("<<", 5): f"{operand} * warpSize",
    }.get((op, value), f"{operand} {op} warpSize")
    return (
        f"`{' '.join(expression.split())}` assumes 32 lanes per warp; AMD CDNA GPUs run 64: "
        f"use `{' '.join(suggestion.split())}`"
    )


def _is_tile_index(unit: Unit, expression: Node, operand: Node, data: HazardData) -> bool:
    """``tile[row][(k + threadIdx.x) % 32]``: a shared-memory tile index that wraps a sum of a
    thread index and a loop counter at the tile width. It is about the tile, not about lanes."""
    parent = expression.parent
    while parent is not None and parent.type == "parenthesized_expression":
        parent = parent.parent
    if parent is None or parent.type not in ("subscript_argument_list", "subscript_expression"):
        return False
    while operand.type == "parenthesized_expression" and operand.named_children:
        operand = operand.named_children[0]
    if operand.type != "binary_expression":
        return False
    operator = operand.child_by_field_name("operator")
    if operator is None or operator.type not in ("+", "-"):
        return False
    terms = (operand.child_by_field_name("left"), operand.child_by_field_name("right"))
    return any(t is not None and not mentions_warp(unit.text(t), data.warp_words) for t in terms)


def logical_warps(unit: Unit) -> bool:
    """The file shuffles, and every shuffle passes a width of 32 (``__shfl_xor_sync(mask, v,
    offset, 32)``): the code counts its lanes in groups of 32 on purpose, and HIP gives such a
    shuffle a 32-lane segment of the 64-lane wavefront, so its 32-lane arithmetic (``tid &
    0x1f``, ``tid >> 5``, a reduction from offset 16) holds on AMD GPUs too. Read in the whole
    file's text, so that each part of a large file gets the file's answer."""
    if not unit.contains(b"__shfl"):
        return False
    return bool(unit.file_fact("logical warps", shuffles_32_wide))


def shuffles_32_wide(data: bytes) -> bool:
    """Whether the text calls a shuffle, and every call's last argument is the literal 32, after
    the value and the lane (and the mask of a ``_sync`` shuffle)."""
    code = COMMENT.sub(b" ", data)
    calls = 0
    for match in SHUFFLE_CALL.finditer(code):
        arguments = _arguments(code, match.end())
        least = 4 if match.group(1).endswith(b"_sync") else 3
        if arguments is None or len(arguments) < least:
            return False
        if arguments[-1].strip().rstrip(b"uUlL") != b"32":
            return False
        calls += 1
    return calls > 0


def _arguments(code: bytes, start: int) -> list[bytes] | None:
    """The arguments of the call whose ``(`` ends just before ``start``, split at its own
    commas; None where its ``)`` is not found."""
    depth = 0
    pieces: list[bytes] = []
    begin = start
    for at in range(start, len(code)):
        byte = code[at]
        if byte in b"([{":
            depth += 1
        elif byte in b")]}":
            if depth == 0:
                return [*pieces, code[begin:at]]
            depth -= 1
        elif byte == ord(",") and depth == 0:
            pieces.append(code[begin:at])
            begin = at + 1
    return None


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
    return (
        "shuffle reduction starting at offset 16 covers 32 lanes; a wavefront has 64: "
        "start at `warpSize / 2`"
    )


def macro_warp_problem(unit: Unit, start: int, value: int, data: HazardData) -> str | None:
    """Lane arithmetic in a ``#define`` body, which the parser keeps as text:
    ``#define LANE_ID (threadIdx.x & 31)``, ``#define WARP_ID(t) ((t) >> 5)``."""
    body = unit.node_at(start, start + 1)
    before = unit.data[body.start_byte : start].decode("utf-8", "surrogateescape")
    match = MACRO_OPERAND.search(before)
    if match is None:
        return None
    operand, op = match.group(1), match.group(2)
    # The macro's name speaks for a parameter: ``WARP_ID(t) ((t) >> 5)``.
    definition = body.parent
    name = definition.child_by_field_name("name") if definition is not None else None
    named = unit.text(name) + " " if name is not None else ""
    if not lane_operator(op, value, named + operand, data):
        return None
    return lane_message(f"{operand} {op} {value}", operand, op, value)


def mentions_warp(
    expression: str, words: frozenset[str], tile_words: frozenset[str] = frozenset()
) -> bool:
    """Whether an expression names a lane, warp or thread index (``threadIdx.x``, ``lane_id``,
    ``warpId``, ``tid``), by whole identifiers and by their ``_``/camelCase parts. A name that
    also has a tile part (``warp_row``, ``WarpTile``) is a coordinate in a warp's tile, not an
    index of lanes or warps."""
    for identifier in WORD.findall(expression):
        if identifier.lower() in words:
            return True
        parts = {
            piece.lower()
            for part in identifier.split("_")
            for piece in [part, *CAMEL_PART.findall(part)]
        }
        if parts & words and not parts & tile_words:
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
            f"32-bit full-warp mask `{text}` in `{name}`: HIP requires a 64-bit mask "
            "(a 64-lane wavefront), so this does not compile for AMD GPUs",
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
        severity=data.narrow_result_severity,
    )


# -- PRT803 inline PTX ---------------------------------------------------------------------------


def find_inline_ptx(unit: Unit) -> None:
    if not unit.contains(b"asm"):
        return
    for match in unit.finditer(ASM):
        node = unit.node_at(match.start(), match.end())
        statement = node.parent
        if statement is None or not is_inline_ptx(unit, statement):
            continue
        unit.report(
            "PRT803",
            match.start(),
            match.end(),
            "inline PTX assembly does not build for AMD GPUs: use a HIP intrinsic or builtin",
        )


def is_inline_ptx(unit: Unit, statement: Node) -> bool:
    """Whether ``statement`` is an ``asm(...)`` of PTX (PRT803's site): host code may hold
    x86/Arm assembly, device code can only hold PTX."""
    if statement.type != "gnu_asm_expression":
        return False
    code = statement.child_by_field_name("assembly_code")
    template = unit.text(code) if code is not None else ""
    return unit.in_device_code(statement) or PTX_TEXT.search(template) is not None


def inside_inline_ptx(unit: Unit, node: Node) -> bool:
    """Whether ``node`` is part of an ``asm(...)`` of PTX (``__cvta_generic_to_shared(p)`` as
    its operand): porting the assembly, PRT803's site, ports the operand with it."""
    current = node.parent
    while current is not None and current.type not in ("compound_statement", "translation_unit"):
        if current.type == "gnu_asm_expression":
            return is_inline_ptx(unit, current)
        current = current.parent
    return False


# -- PRT804 __CUDA_ARCH__ and compute capability ------------------------------------------------


def find_arch_checks(unit: Unit) -> None:
    """One finding per condition that tests the architecture: a ``__CUDA_ARCH__`` test, or a
    comparison or branch on a device property's ``major``/``minor`` (directly or through a
    variable set from them). Printing the fields or indexing a table with them is no test."""
    seen: set[int] = set()
    if unit.contains(b"__CUDA_ARCH__"):
        find_cuda_arch_tests(unit, seen)
    if unit.contains(b"major", b"minor", b"ComputeCapability"):
        find_capability_tests(unit, seen)


def find_cuda_arch_tests(unit: Unit, seen: set[int]) -> None:
    hip_macros = _hip_macros(unit)
    for match in unit.finditer(CUDA_ARCH):
        node = unit.code_node(match.start(), match.end())
        if node is None:
            continue
        if node.type == "preproc_arg":
            # A macro body is text: one finding per macro that tests the architecture.
            root, compared = node, True
        else:
            root, compared = condition_root(node)
            if not (compared or _is_branch(root)):
                continue
            compared = compared or any(True for _ in _comparisons(root))
        text = unit.text(root)
        if root.start_byte in seen or any(m in text for m in hip_macros):
            continue
        seen.add(root.start_byte)
        if HOST_OR_ARCH.search(text) or (
            node.type != "preproc_arg"
            and (answers_as_reference(unit, root) or needs_no_port(unit, root, compared))
        ):
            continue
        if compared:
            message = (
                f"`{' '.join(CONTINUATION.sub(' ', text).split())}` compares an NVIDIA compute "
                "capability; hip-clang does not define __CUDA_ARCH__: test a __HIP_ARCH_HAS_* "
                "feature macro"
            )
        else:
            message = (
                "hip-clang does not define __CUDA_ARCH__: this test is false on AMD GPUs "
                "(use __HIP_DEVICE_COMPILE__ for device compilation)"
            )
        unit.report("PRT804", match.start(), match.end(), message)


def find_capability_tests(unit: Unit, seen: set[int]) -> None:
    operands = capability_fields(unit)
    derived = derived_capability_names(unit, operands)
    if derived:
        pattern = re.compile(
            rb"(?<![A-Za-z0-9_])(?:" + b"|".join(re.escape(n.encode()) for n in derived) + rb")"
            rb"(?![A-Za-z0-9_])"
        )
        for match in unit.finditer(pattern):
            node = unit.code_node(match.start(), match.end())
            if node is None or node.type != "identifier":
                continue
            scope = derived[unit.text(node)]
            if scope is None or scope[0] <= node.start_byte < scope[1]:
                operands.append(node)
    for operand in sorted(operands, key=lambda n: n.start_byte):
        root, compared = condition_root(operand)
        if not (compared or _is_branch(root)) or root.start_byte in seen:
            continue
        seen.add(root.start_byte)
        if compared and _only_pre_maxwell(unit, root):
            continue
        unit.report(
            "PRT804",
            operand.start_byte,
            operand.end_byte,
            f"`{' '.join(unit.text(root).split())}` tests an NVIDIA compute capability; HIP "
            "reports gfx-derived numbers (9.x on MI300): test the feature "
            "(hipDeviceProp_t.gcnArchName, device attributes)",
            node=operand,
        )


def capability_fields(unit: Unit) -> list[Node]:
    """``prop.major``, ``props->minor``, ``getCurrentDeviceProperties()->major``."""
    fields = []
    for match in unit.finditer(CAPABILITY_FIELD):
        node = unit.code_node(match.start(1), match.end(1))
        if node is None or node.type != "field_identifier":
            continue
        field = node.parent
        owner = field.child_by_field_name("argument") if field is not None else None
        if owner is not None and "prop" in unit.text(owner).lower():
            fields.append(field)
    return fields


def derived_capability_names(unit: Unit, fields: list[Node]) -> dict[str, tuple[int, int] | None]:
    """Variables set from a capability, with the function they belong to (None: a variable
    outside any function): ``int cc = prop.major * 10 + prop.minor``, ``arch_major =
    prop.major``, ``cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev)``."""
    targets = []
    for field in fields:
        value, parent = field, field.parent
        while parent is not None and _is_arithmetic(parent):
            value, parent = parent, parent.parent
        if (
            parent is not None
            and parent.child_by_field_name(SET_VALUE.get(parent.type, "")) == value
        ):
            target = parent.child_by_field_name(SET_TARGET[parent.type])
            targets.append((target, parent.type == "init_declarator"))
    for match in unit.finditer(CAPABILITY_ATTRIBUTE):
        targets.append((unit.code_node(match.start(1), match.end(1)), False))
    names: dict[str, tuple[int, int] | None] = {}
    for target, declared in targets:
        if target is None or target.type != "identifier":
            continue
        name = unit.text(target)
        function = unit.enclosing_function(target)
        if function is not None and not declared:
            declared = name in local_constants(unit, function)
        local = function is not None and declared
        names[name] = (function.start_byte, function.end_byte) if local else None
    return names


def _is_arithmetic(node: Node) -> bool:
    if node.type == "parenthesized_expression":
        return True
    operator = node.child_by_field_name("operator") if node.type == "binary_expression" else None
    return operator is not None and operator.type in ("+", "-", "*", "/")


def condition_root(node: Node) -> tuple[Node, bool]:
    """The whole condition an operand belongs to (climbing through ``&&``, ``||``, ``!``,
    parentheses, arithmetic and ``defined``), and whether a comparison was passed on the way."""
    compared = False
    current = node
    while current.parent is not None and current.parent.type in CONDITION_PARTS:
        parent = current.parent
        if parent.type == "binary_expression":
            operator = parent.child_by_field_name("operator")
            compared = compared or (operator is not None and operator.type in COMPARISONS)
        current = parent
    return current, compared


def _is_branch(root: Node) -> bool:
    parent = root.parent
    if root.type == "identifier" and parent is not None and parent.type == "preproc_ifdef":
        return True
    if parent is None:
        return False
    if parent.type in ("preproc_if", "preproc_elif"):
        return parent.child_by_field_name("condition") == root
    if parent.type == "condition_clause":
        return True
    if parent.type == "conditional_expression":
        return parent.child_by_field_name("condition") == root
    return False


def _comparisons(root: Node):
    stack = [root]
    while stack:
        node = stack.pop()
        stack.extend(node.named_children)
        if node.type != "binary_expression":
            continue
        operator = node.child_by_field_name("operator")
        if operator is not None and operator.type in COMPARISONS:
            yield node


def _only_pre_maxwell(unit: Unit, root: Node) -> bool:
    """Whether every comparison in the condition is against a capability below 5.0 (``major <
    2``, ``cc >= 35``) or the no-device marker 9999: CUDA 12 supports nothing older than 5.0 and
    AMD GPUs report 9 or more, so such a test answers alike everywhere. Thresholds of ``minor``
    do not count."""
    thresholds = []
    for comparison in _comparisons(root):
        left = comparison.child_by_field_name("left")
        right = comparison.child_by_field_name("right")
        for side, other in ((left, right), (right, left)):
            if side is None or side.type != "number_literal" or other is None:
                continue
            minor = other.type in ("field_expression", "identifier")
            if not (minor and unit.text(other).lower().endswith("minor")):
                thresholds.append(_integer(unit.text(side)))
    known = [t for t in thresholds if t is not None]
    if not thresholds or len(known) != len(thresholds):
        return False
    return all(t == 9999 or t < 5 or 10 <= t < 50 or 100 <= t < 500 for t in known)


def _hip_macros(unit: Unit) -> tuple[str, ...]:
    return tuple(unit.catalog.table("cxx").get("guards", {}).get("hip_macros", ()))


# -- PRT805 large blocks, PRT806 dynamic parallelism ---------------------------------------------


def find_large_blocks(unit: Unit, kernels: list[Kernel]) -> None:
    if not unit.contains(b"<<<"):
        return
    bounded = {k.name for k in kernels if k.launch_bounds}
    defined = {k.name for k in kernels}
    limit = BLOCK_LIMIT
    if is_torch_extension(unit):
        # PyTorch's extension build passes hip-clang no lower bound: its default holds
        extension = unit.catalog.table("cxx").get("torch_extension", {})
        limit = extension.get("max_threads_per_block", BLOCK_LIMIT)
    scope = None
    for match in unit.finditer(LAUNCH):
        launch = unit.node_at(match.start(), match.end()).parent
        if launch is None or launch.type != "kernel_call_syntax":
            continue
        arguments = launch.named_children
        if len(arguments) < 2:
            continue
        if scope is None:
            scope = BlockScope(unit)
        threads = block_threads(unit, arguments[1], scope.constants_for(launch))
        if threads is None or threads <= limit:
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


class BlockScope:
    """The integer constants a launch in a given function can see: the function's own
    declarations first (a parameter or a template parameter of that name hides the file's
    constant), then the file's ``#define``s and namespace-scope ``const``/``constexpr``s."""

    def __init__(self, unit: Unit):
        self.unit = unit
        self.file_constants = {}
        for match in unit.finditer(INTEGER_CONSTANT):
            node = unit.node_at(match.start(), match.end())
            if match.group(3) is not None and unit.enclosing_function(node) is not None:
                continue
            name = match.group(1) or match.group(3)
            self.file_constants[name.decode()] = int(match.group(2) or match.group(4))
        self._by_function: dict[int, dict[str, int | None]] = {}

    def constants_for(self, launch: Node) -> _Scoped:
        function = self.unit.enclosing_function(launch)
        if function is None:
            return _Scoped(self.file_constants, {})
        local = self._by_function.get(function.start_byte)
        if local is None:
            local = local_constants(self.unit, function)
            self._by_function[function.start_byte] = local
        return _Scoped(self.file_constants, local)


@dataclass(frozen=True)
class _Scoped:
    file: dict[str, int]
    local: dict[str, int | None]

    def get(self, name: str) -> int | None:
        if name in self.local:
            return self.local[name]
        return self.file.get(name)


def local_constants(unit: Unit, function: Node) -> dict[str, int | None]:
    """Names a function declares (parameters, template parameters, locals) -> their value when
    it is an integer literal that the function never assigns again, else None."""
    names: dict[str, int | None] = {}
    holders = [function.child_by_field_name("declarator")]
    if function.parent is not None and function.parent.type == "template_declaration":
        holders.append(function.parent.child_by_field_name("parameters"))
    for holder in filter(None, holders):
        for node in _descendants(holder, PARAMETERS):
            name = node.child_by_field_name("declarator")
            while name is not None and name.type != "identifier" and name.named_children:
                name = name.child_by_field_name("declarator") or name.named_children[0]
            if name is not None and name.type == "identifier":
                names[unit.text(name)] = None
    body = function.child_by_field_name("body")
    if body is None:
        return names
    assigned = set()
    for node in _descendants(body, LOCAL_BINDINGS):
        if node.type == "init_declarator":
            name = node.child_by_field_name("declarator")
            value = node.child_by_field_name("value")
            if name is None or name.type != "identifier":
                continue
            key = unit.text(name)
            literal = value is not None and value.type == "number_literal"
            names[key] = _integer(unit.text(value)) if literal and key not in names else None
        else:
            target = node.child_by_field_name("left") or node.child_by_field_name("argument")
            if target is not None and target.type == "identifier":
                assigned.add(unit.text(target))
    for name in assigned:
        names[name] = None
    return names


def _descendants(node: Node, types: tuple[str, ...]):
    stack = [node]
    while stack:
        current = stack.pop()
        if current.type in types:
            yield current
        stack.extend(reversed(current.named_children))


def block_threads(unit: Unit, block: Node, constants) -> int | None:
    """Threads per block when the launch's block argument is a constant its scope defines."""
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
        if name in data.interop_in_hip:
            continue
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


# -- PRT808 cooperative groups that HIP covers in part -------------------------------------------

COOPERATIVE_TEXT = (b"cooperative_groups", b"multi_grid", b"thread_block_tile", b"tiled_partition")
CG_ALIAS = re.compile(rb"namespace\s+([A-Za-z_]\w*)\s*=\s*(?:::)?cooperative_groups\s*;")
CG_TILE = re.compile(rb"(?<![A-Za-z0-9_])(?:thread_block_tile|tiled_partition)\s*<\s*(\d+)")


def find_cooperative_groups(unit: Unit, data: HazardData) -> None:
    """Multi-grid groups (deprecated in HIP), cooperative-groups functions HIP does not declare
    (``cg::memcpy_async``, ``cg::this_cluster``, ...), ``binary_partition`` (needs
    ``HIP_ENABLE_WARP_SYNC_BUILTINS``) and tiles wider than a 32-lane wavefront."""
    if not unit.contains(*COOPERATIVE_TEXT):
        return
    for match in unit.finditer(_cg_pattern(data, _cg_qualifiers(unit))):
        name = (match.group(1) or match.group(2)).decode()
        start = match.start(1) if match.group(1) else match.start(2)
        if unit.code_node(start, start + len(name)) is None:
            continue
        if name in data.cg_deprecated:
            message = (
                f"`{name}`: multi-grid cooperative groups are deprecated in HIP since ROCm 5.0; "
                "launch one cooperative grid per device and synchronise the devices from the host"
            )
        elif name in data.cg_warp_sync:
            message = (
                f"`{name}` exists in HIP only when `HIP_ENABLE_WARP_SYNC_BUILTINS` is defined, "
                "and its lane masks have 64 bits"
            )
        else:
            message = f"cooperative_groups::{name} has no HIP counterpart: rewrite it in plain HIP"
        unit.report("PRT808", start, start + len(name), message)
    for match in unit.finditer(CG_TILE):
        size = int(match.group(1))
        if size <= data.cg_max_tile or unit.code_node(match.start(1), match.end(1)) is None:
            continue
        unit.report(
            "PRT808",
            match.start(1),
            match.end(1),
            f"tile of {size} threads: HIP tiles cannot be wider than a wavefront (64 on CDNA, "
            "32 on RDNA GPUs)",
        )


def _cg_qualifiers(unit: Unit) -> tuple[bytes, ...]:
    return (b"cooperative_groups", *(m.group(1) for m in unit.finditer(CG_ALIAS)))


@functools.cache
def _cg_pattern(data: HazardData, qualifiers: tuple[bytes, ...]) -> re.Pattern[bytes]:
    """Deprecated multi-grid names anywhere; the other names only after a cooperative-groups
    namespace (``cg::memcpy_async``), since they are common words."""

    def alternatives(names):
        return b"|".join(re.escape(n.encode()) for n in names)

    return re.compile(
        rb"(?<![A-Za-z0-9_])(?:("
        + alternatives(data.cg_deprecated)
        + rb")|(?:"
        + b"|".join(re.escape(q) for q in qualifiers)
        + rb")\s*::\s*("
        + alternatives(data.cg_missing + data.cg_warp_sync)
        + rb"))"
        rb"(?![A-Za-z0-9_])"
    )

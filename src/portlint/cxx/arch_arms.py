"""The two arms of a ``#if __CUDA_ARCH__ ...`` group, for PRT804: the one hip-clang skips (it
does not define ``__CUDA_ARCH__``) and the one it compiles, and whether the choice between them
leaves ROCm anything to port.

It does not where

- the test answers on NVIDIA's A100 (``[arch_tests] reference_architecture``) as on hip-clang
  (``#if __CUDA_ARCH__ >= 900``): AMD GPUs compile the arm an A100 compiles
  (``answers_as_reference``, checked before the arms are read);
- the arm hip-clang skips only refuses (``#if __CUDA_ARCH__ < 800`` / ``trap_unsupported_arch();``):
  AMD GPUs run the code as NVIDIA's newer GPUs do; or it only gives Hopper's programmatic
  dependent launch its hint (``cudaGridDependencySynchronize();``), which GPUs without it, AMD's
  as NVIDIA's older ones, do without;
- where the test compares ``__CUDA_ARCH__`` with a number, the arms only define flags
  (``#define KERUTILS_ENABLE_SM90``) that the rest of the file never reads: names for the
  architecture, whose uses in the files that read them are the sites;
- both arms only define the same macros, each as a way to fail (``__brkpt()`` where the test
  holds, ``assert(0 && x)`` where it does not), and the arm hip-clang compiles fails in a way its
  device code has (``assert``, not a host assert that throws): the test picks how a failed check
  stops;
- the arm hip-clang compiles only refuses, saying that the code is for an NVIDIA architecture
  (``DG_DEVICE_ASSERT(false and "This kernel only support sm_90a")``), or, where the test compares
  ``__CUDA_ARCH__`` with a number, in place of inline PTX: the project's own answer for every GPU
  without that architecture, AMD's included;
- inside a function, where the test compares ``__CUDA_ARCH__`` with a number, the arm hip-clang
  compiles is code of the project's without inline PTX and without a refusal, whatever the arm it
  skips holds (inline PTX, or a newer GPU's intrinsic such as ``__ffma2_rn``): AMD GPUs take that
  generic code, as NVIDIA's older GPUs do. (With no ``#else`` they would take nothing in the
  skipped code's place, and the ``#else`` of a bare ``#ifdef __CUDA_ARCH__`` is host code: both
  stay findings.)

The words that make a statement a refusal are data (rules/cxx_hazards.toml ``[arch_tests]``).
"""

from __future__ import annotations

import functools
import re
from typing import NamedTuple

from tree_sitter import Node

from portlint.catalog import Catalog
from portlint.cxx.preprocessor import directive_holds
from portlint.cxx.unit import Unit

GROUPS = frozenset({"preproc_if", "preproc_ifdef", "preproc_elif"})
#: A directive's text, through the lines a backslash continues it on.
DIRECTIVE_LINE = re.compile(rb"(?:\\[ \t]*\r?\n|[^\n])*")
ASM = re.compile(
    r"(?<![A-Za-z0-9_])(?:asm|__asm__|__asm)(?![A-Za-z0-9_])\s*(?:volatile|__volatile__)?\s*\("
)
#: A backslash that continues a directive on the next line.
CONTINUATION = re.compile(r"\\[ \t]*\r?\n")
TRAP_ASM = re.compile(r"(?<![A-Za-z0-9_])(?:asm|__asm__|__asm)\b[^;]*\"\s*trap\s*;")
#: Nodes that are no statement of an arm.
IGNORED = frozenset({"comment", "{", "}", ";"})


class ArchTests(NamedTuple):
    """rules/cxx_hazards.toml ``[arch_tests]``, read once."""

    refusal_words: tuple[str, ...]
    reporting_calls: frozenset[str]
    nvidia_architecture: re.Pattern[str]
    hints: frozenset[str]
    hint_instructions: tuple[str, ...]
    #: A call to one of these names refuses in HIP's device code too.
    device_refusal: re.Pattern[str]
    #: The ``__CUDA_ARCH__`` of the NVIDIA GPUs AMD's are measured against (None: no such test).
    reference_architecture: int | None


@functools.cache
def arch_tests(catalog: Catalog) -> ArchTests:
    table = catalog.table("cxx_hazards").get("arch_tests", {})
    return ArchTests(
        tuple(word.lower() for word in table.get("refusal_words", ())),
        frozenset(table.get("reporting_calls", ())),
        re.compile(table.get("nvidia_architecture", r"(?!)")),
        frozenset(table.get("hints", ())),
        tuple(table.get("hint_instructions", ())),
        _calls_to(table.get("device_refusals", ())),
        table.get("reference_architecture"),
    )


def _calls_to(names: list[str]) -> re.Pattern[str]:
    """A call to one of ``names`` (none: never matches)."""
    if not names:
        return re.compile(r"(?!)")
    alternatives = "|".join(map(re.escape, names))
    return re.compile(rf"(?<![A-Za-z0-9_])(?:{alternatives})\s*\(")


def needs_no_port(unit: Unit, condition: Node, compares: bool) -> bool:
    """Whether the ``#if``/``#elif``/``#ifdef`` whose condition is ``condition`` leaves ROCm
    nothing to port (the module docstring's cases). ``compares``: the condition compares
    ``__CUDA_ARCH__`` with a number, so its other arm is for NVIDIA's older GPUs; a bare
    ``#ifdef __CUDA_ARCH__`` tells the device pass from the host's, and its ``#else`` is host code
    that hip-clang's device pass would take, so only the refusals that name an architecture, or
    that hip-clang skips, count there."""
    arms = _arms(unit, condition)
    if arms is None:
        return False
    skipped, compiled = arms
    tests = arch_tests(unit.catalog)
    if _only_refuses(unit, skipped, tests) or _only_hints(unit, skipped, tests):
        return True
    if _same_failing_macros(unit, skipped, compiled, tests):
        return True
    if compares and _flags_used_elsewhere(unit, skipped, compiled):
        return True
    skipped_text = "".join(unit.text(node) for node in skipped)
    compiled_text = "".join(unit.text(node) for node in compiled)
    if _only_refuses(unit, compiled, tests) and (
        (compares and ASM.search(skipped_text)) or tests.nvidia_architecture.search(compiled_text)
    ):
        return True
    return (
        compares
        and _in_function(condition)
        and bool(compiled)
        and ASM.search(compiled_text) is None
        and not _refuses(unit, compiled, tests)
    )


def answers_as_reference(unit: Unit, condition: Node) -> bool:
    """Whether the ``#if``/``#elif`` whose condition is ``condition`` answers alike where
    ``__CUDA_ARCH__`` is undefined (hip-clang) and where it is the reference architecture
    (``[arch_tests] reference_architecture``, sm_80): AMD GPUs then compile the arm NVIDIA's
    A100 compiles, and the test is not what tells them apart (``#if __CUDA_ARCH__ >= 900``, a
    Hopper feature, is false on both). A condition whose answer depends on another macro the file
    does not fix (``CUDA_VERSION < 8000``) is not known to answer alike."""
    reference = arch_tests(unit.catalog).reference_architecture
    group = _group_of(unit, condition)
    if reference is None or group is None:
        return False
    text = unit.data[group.start_byte : _directive_end(unit, group)].decode(errors="replace")
    directive = CONTINUATION.sub(" ", text)
    ide = unit.catalog.table("cxx").get("guards", {}).get("ide_macros", ())
    absent = {name: (False, None) for name in ide}
    on_amd = directive_holds(directive, {**absent, "__CUDA_ARCH__": (False, None)})
    on_reference = directive_holds(directive, {**absent, "__CUDA_ARCH__": (True, reference)})
    return on_amd is not None and on_amd == on_reference


def _arms(unit: Unit, condition: Node) -> tuple[list[Node], list[Node]] | None:
    """(the code of the arms hip-clang skips, the code of the arm it compiles), for a group
    whose arm ``condition`` opens is skipped; later ``#elif`` arms it skips too join the first.
    None where hip-clang compiles the arm, or where the skipping is not known."""
    group = _group_of(unit, condition)
    if group is None:
        return None
    skipped: list[Node] = []
    current: Node | None = group
    while current is not None and current.type in GROUPS:
        code = _code(unit, current)
        if not _is_skipped(unit, current, code):
            if current is group:
                return None
            return skipped, code
        skipped += code
        current = current.child_by_field_name("alternative")
    if current is None:
        return skipped, []
    return skipped, _code(unit, current)  # the #else


def _group_of(unit: Unit, condition: Node) -> Node | None:
    """The ``#if``/``#elif``/``#ifdef`` whose directive holds ``condition`` (its condition, or a
    part of one that tree-sitter did not read whole)."""
    group = condition.parent
    while group is not None and group.type not in GROUPS:
        if group.type in ("compound_statement", "translation_unit"):
            return None
        group = group.parent
    if group is None or condition.start_byte > _directive_end(unit, group):
        return None
    return group


def _directive_end(unit: Unit, group: Node) -> int:
    directive = DIRECTIVE_LINE.match(unit.data, group.start_byte)
    return directive.end() if directive is not None else group.start_byte


def _code(unit: Unit, group: Node) -> list[Node]:
    """The statements or declarations of one arm (a group node's own children, or an #else's),
    after its directive's line and the lines that continue it (tree-sitter reads ``#if defined(X)
    and (Y)`` as more than one node)."""
    end = _directive_end(unit, group)
    alternative = group.child_by_field_name("alternative")
    return [
        child
        for child in group.named_children
        if child.start_byte > end and (alternative is None or child.id != alternative.id)
    ]


def _is_skipped(unit: Unit, group: Node, code: list[Node]) -> bool:
    """Whether hip-clang skips the arm: its first line of code, or the line after its directive
    where it has none."""
    if code:
        line = code[0].start_point[0] + 1
    else:
        head = group.child_by_field_name("condition") or group.child_by_field_name("name")
        line = (head.end_point[0] if head is not None else group.start_point[0]) + 2
    return unit.is_hip_skipped(line)


def _only_refuses(unit: Unit, nodes: list[Node], tests: ArchTests) -> bool:
    """The arm holds a refusal (an assert, a trap) and nothing else but messages."""
    kinds = [_refusal(unit, node, tests) for node in nodes if node.type not in IGNORED]
    return bool(kinds) and None not in kinds and any(kinds)


def _refuses(unit: Unit, nodes: list[Node], tests: ArchTests) -> bool:
    """The arm holds a refusal among its statements, or in a block of them."""
    return any(
        _refuses(unit, node.named_children, tests)
        if node.type == "compound_statement"
        else _refusal(unit, node, tests)
        for node in nodes
    )


def _refusal(unit: Unit, node: Node, tests: ArchTests) -> bool | None:
    """True for a refusal, False for a message (``printf``) or a ``return``, None for anything
    else."""
    if node.type == "static_assert_declaration":
        return True
    if node.type == "compound_statement":
        kinds = [
            _refusal(unit, child, tests)
            for child in node.named_children
            if child.type not in IGNORED
        ]
        return None if None in kinds else any(kinds)
    if node.type == "if_statement":
        body = node.child_by_field_name("consequence")
        if node.child_by_field_name("alternative") is not None or body is None:
            return None
        return _refusal(unit, body, tests)
    if node.type in ("return_statement", "break_statement"):
        return False  # leaving after the refusal
    if node.type != "expression_statement":
        return None
    if TRAP_ASM.search(unit.text(node)):
        return True
    name = _called_name(unit, node)
    if name is None:
        return None
    if any(word in name.lower() for word in tests.refusal_words):
        return True
    return False if name in tests.reporting_calls else None


def _same_failing_macros(
    unit: Unit, skipped: list[Node], compiled: list[Node], tests: ArchTests
) -> bool:
    """Both arms only define the same macros, each as a way to fail (``#if
    defined(__CUDA_ARCH__)`` / ``#define RUNTIME_ASSERT(x) __brkpt()`` / ``#else`` / ``#define
    RUNTIME_ASSERT(x) assert(0 && x)``): the test picks how a failed check stops, and the arm
    hip-clang compiles stops as well."""
    skipped_macros = _failing_macros(unit, skipped, tests.refusal_words)
    compiled_macros = _failing_macros(unit, compiled, tests.refusal_words, tests.device_refusal)
    return bool(skipped_macros) and skipped_macros == compiled_macros


def _flags_used_elsewhere(unit: Unit, skipped: list[Node], compiled: list[Node]) -> bool:
    """The arms only define flags (``#define KERUTILS_ENABLE_SM90``, ``#define HAS_TMA 1``):
    names for the architecture, which the rest of the file never reads. Their uses, in the
    files that read them, are the sites. (A file that reads one itself, ``#if
    defined(ARCH_SUPPORTS_FLASH)``, makes the choice here: the test stays its site.)"""
    names = _flags(unit, skipped)
    if not names or (compiled and _flags(unit, compiled) is None):
        return False
    spans = [(node.start_byte, node.end_byte) for node in skipped + compiled]
    for name in names:
        word = re.compile(rb"(?<![A-Za-z0-9_])" + re.escape(name.encode()) + rb"(?![A-Za-z0-9_])")
        for match in word.finditer(unit.data):
            at = match.start()
            if any(start <= at < end for start, end in spans):
                continue
            if not unit.is_inactive(unit.point(at)[0]):
                return False  # (an editor's stub, ``#ifdef __CLION_IDE__``, reads nothing)
    return True


def _flags(unit: Unit, nodes: list[Node]) -> set[str] | None:
    """The names an arm defines, where it only defines object-like macros to nothing or to a
    number; None where it holds anything else."""
    found = _definitions(unit, nodes, ("preproc_def",), headers=False)
    if found is None or any(body.strip() and not body.strip().isdigit() for _, body in found):
        return None
    return {name for name, _ in found}


def _failing_macros(
    unit: Unit,
    nodes: list[Node],
    words: tuple[str, ...],
    device: re.Pattern[str] | None = None,
) -> frozenset[str] | None:
    """The names an arm defines, where it only defines macros whose bodies call a refusal
    (one of ``words``; with ``device``, one that HIP's device code has); None where it holds
    anything else."""
    # (``#include <assert.h>`` may come with the definition)
    found = _definitions(unit, nodes, ("preproc_def", "preproc_function_def"), headers=True)
    if found is None:
        return None
    for _, body in found:
        if not any(word in body.lower() for word in words):
            return None
        if device is not None and device.search(body) is None:
            return None
    return frozenset(name for name, _ in found)


def _definitions(
    unit: Unit, nodes: list[Node], kinds: tuple[str, ...], headers: bool
) -> list[tuple[str, str]] | None:
    """(name, body) of each macro an arm defines, where it holds only definitions of ``kinds``
    (and includes, with ``headers``); None where it holds anything else."""
    found: list[tuple[str, str]] = []
    for node in nodes:
        if node.type in IGNORED or (headers and node.type == "preproc_include"):
            continue
        name = node.child_by_field_name("name")
        if node.type not in kinds or name is None:
            return None
        value = node.child_by_field_name("value")
        found.append((unit.text(name), unit.text(value) if value is not None else ""))
    return found


def _only_hints(unit: Unit, nodes: list[Node], tests: ArchTests) -> bool:
    """The arm only calls Programmatic Dependent Launch's functions (``[arch_tests] hints``), or
    their PTX: a hint to overlap two kernels that GPUs without it do without."""
    statements = [node for node in nodes if node.type not in IGNORED]
    for node in statements:
        if node.type != "expression_statement":
            return False
        text = unit.text(node)
        if ASM.search(text) and any(word in text for word in tests.hint_instructions):
            continue
        if _called_name(unit, node) not in tests.hints:
            return False
    return bool(statements)


def _called_name(unit: Unit, statement: Node) -> str | None:
    """The function an expression statement calls, without its namespace
    (``cute::thread0()`` -> ``thread0``); None for a statement that is no call."""
    call = statement.named_children[0] if statement.named_children else None
    if call is None or call.type != "call_expression":
        return None
    function = call.child_by_field_name("function")
    return unit.text(function).rsplit("::", 1)[-1].strip() if function is not None else ""


def _in_function(node: Node) -> bool:
    current = node.parent
    while current is not None:
        if current.type == "function_definition":
            return True
        current = current.parent
    return False

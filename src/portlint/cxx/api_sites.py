"""PRT701-PRT704: CUDA names, namespaces and headers, with their HIP answer."""

from __future__ import annotations

import re
from typing import NamedTuple

from tree_sitter import Node

from portlint.catalog import parse_advice
from portlint.cxx.includes import torch_include_openings
from portlint.cxx.table import Entry, NameTable
from portlint.cxx.unit import Unit
from portlint.model import Advice, Status

CODE_BY_STATUS = {
    Status.RENAME: "PRT701",
    Status.PORTABLE: "PRT701",
    Status.UNSUPPORTED: "PRT702",
    Status.MANUAL: "PRT703",
}
INCLUDE = re.compile(rb"^[ \t]*#[ \t]*include[ \t]*([<\"])([^>\"\n]+)[>\"]", re.MULTILINE)
NAMESPACE_USE = re.compile(rb"(?<![A-Za-z0-9_])(cub|thrust|cooperative_groups)(?=\s*::|\s*;)")
#: Tree node types a CUDA name may have in code (fields of user structs are not CUDA's names).
NAME_NODES = frozenset(
    {"identifier", "type_identifier", "namespace_identifier", "preproc_arg", "ERROR"}
)
NAMESPACE_NODES = frozenset({"namespace_identifier", "identifier", "ERROR"})
LIBRARY_OF_API = {
    "runtime": "the CUDA runtime",
    "driver": "the CUDA driver API",
    "device": "CUDA device code",
    "complex": "cuComplex",
    "cublas": "cuBLAS",
    "cublaslt": "cuBLASLt",
    "curand": "cuRAND",
    "cufft": "cuFFT",
    "cusparse": "cuSPARSE",
    "cusolver": "cuSOLVER",
    "cudnn": "cuDNN",
    "nvrtc": "NVRTC",
    "nccl": "NCCL",
    "nvtx": "NVTX",
    "cub": "CUB",
    "other": "CUDA",
}


#: The AMD-only library below each portable hip* library (HIPIFY's ROC column).
ROC_LIBRARY = {
    "cublas": "rocBLAS",
    "cublaslt": "rocBLAS",
    "curand": "rocRAND",
    "cusparse": "rocSPARSE",
    "cusolver": "rocSOLVER",
}


def find_api_sites(unit: Unit, table: NameTable, rocm_version: str | None = None) -> None:
    hipified = torch_hipify(unit)
    find_names(unit, table, table.rocm_key(rocm_version), hipified)
    find_namespaces(unit, table, hipified)
    find_headers(unit, table, hipified)
    if hipified:
        find_torch_cuda_api(unit, table)


#: The rocm answer for a name PyTorch's hipify rewrites in an extension source.
HIPIFIED_BY_TORCH = "rewritten by PyTorch's hipify when PyTorch builds the extension for ROCm"


def torch_hipify(unit: Unit) -> dict[str, dict[str, str]]:
    """The names and includes PyTorch's hipify rewrites (rules/cxx/torch_hipify.toml), for a
    source that includes a PyTorch header (rules/cxx.toml ``[torch_extension]``, as ``<torch/``
    or ``"torch/``): PyTorch builds it, and on ROCm hipifies it first. Empty for any other
    source."""
    if not is_torch_extension(unit):
        return {}
    document = unit.catalog.data("cxx/torch_hipify.toml")
    return {"names": document.get("names", {}), "headers": document.get("headers", {})}


def is_torch_extension(unit: Unit) -> bool:
    """The source includes a PyTorch header (rules/cxx.toml ``[torch_extension]``, as ``<torch/``
    or ``"torch/``), itself or through the project's own headers (``cxx.includes``): PyTorch's
    extension tooling (or PyTorch's own build) compiles it."""
    if unit.torch_built:
        return True
    prefixes = unit.catalog.table("cxx").get("torch_extension", {}).get("include_prefixes", ())
    # asked of the whole file's text (a part of a large file holds its includes or not)
    return unit.contains(*torch_include_openings(prefixes))


def find_names(
    unit: Unit, table: NameTable, rocm: tuple[int, ...], hipified: dict[str, dict[str, str]]
) -> None:
    from portlint.cxx.hazards import inside_inline_ptx  # (hazards imports this module)

    version_macros = frozenset(
        unit.catalog.table("cxx").get("guards", {}).get("version_macros", ())
    )
    asm_checked = unit.contains(b"asm")
    for match in unit.finditer(table.candidates):
        entry = table.lookup(match.group().decode("ascii", "replace"))
        if entry is None:
            continue
        if not entry.listed and defined_here(unit, entry.cuda):
            continue
        node = unit.code_node(match.start(), match.end())
        # a CUDA keyword the grammar knows is a node of its own type (``__grid_constant__``)
        if node is None or (node.type not in NAME_NODES and node.type != entry.cuda):
            continue
        if entry.cuda in version_macros and _tested_with_alternative(node):
            continue  # ``#if CUDA_VERSION >= 9000 ... #else``: ROCm takes the ``#else``
        if asm_checked and inside_inline_ptx(unit, node):
            continue  # an operand of inline PTX, which PRT803 reports: one port
        renamed = hipified.get("names", {}).get(entry.cuda)
        report_entry(unit, entry, match.start(), match.end(), node, rocm, renamed)


#: The rocm answer for PyTorch's own CUDA C++ API in a source PyTorch builds.
TORCH_PROVIDES = "a ROCm build of PyTorch provides it to the extensions it builds"
#: Nodes that end the search for the statement a name is in (a macro body is one).
STATEMENT_KINDS = frozenset(
    {
        "expression_statement",
        "declaration",
        "field_declaration",
        "return_statement",
        "preproc_def",
        "preproc_function_def",
    }
)


class TorchCudaApi(NamedTuple):
    """rules/cxx.toml ``[torch_cuda_api]``: a pattern for names in PyTorch's CUDA namespaces,
    the other targets' advice, the header folders, and PyTorch's version macros."""

    names: re.Pattern[bytes]
    targets: dict[str, Advice]
    header_folders: tuple[str, ...]
    version_macros: tuple[str, ...]

    def in_old_torch_arm(self, unit: Unit, node: Node) -> bool:
        """Whether ``node`` is in an arm of an ``#if`` on PyTorch's version while another arm
        of it names none of the API (the arm of an older PyTorch: the current one compiles the
        other)."""
        current: Node | None = node
        while current is not None and current.type not in (
            "translation_unit",
            "function_definition",
        ):
            if current.type in ("preproc_if", "preproc_elif"):
                condition = current.child_by_field_name("condition")
                if condition is not None and any(
                    word in unit.text(condition) for word in self.version_macros
                ):
                    return any(not self._names_api(unit, arm) for arm in _arms(current, node))
            current = current.parent
        return False

    def _names_api(self, unit: Unit, span: tuple[int, int]) -> bool:
        text = unit.data[span[0] : span[1]]
        return self.names.search(text) is not None or any(
            folder.encode() in text for folder in self.header_folders
        )


def _arms(conditional: Node, node: Node) -> list[tuple[int, int]]:
    """The byte spans of the arms of an ``#if`` chain other than the one holding ``node``."""
    spans = []
    current: Node | None = conditional
    while current is not None and current.type in ("preproc_if", "preproc_elif", "preproc_else"):
        alternative = current.child_by_field_name("alternative")
        condition = current.child_by_field_name("condition")
        start = condition.end_byte if condition is not None else current.start_byte
        end = alternative.start_byte if alternative is not None else current.end_byte
        if not start <= node.start_byte < end:
            spans.append((start, end))
        current = alternative
    return spans


#: ``torch_cuda_api`` per rules folder: read once, not once per source.
_TORCH_CUDA_API: dict[str, TorchCudaApi] = {}


def torch_cuda_api(unit: Unit) -> TorchCudaApi:
    """PyTorch's CUDA C++ API as rules/cxx.toml ``[torch_cuda_api]`` describes it."""
    key = str(unit.catalog.directory)
    if key not in _TORCH_CUDA_API:
        _TORCH_CUDA_API[key] = _read_torch_cuda_api(unit.catalog.table("cxx"))
    return _TORCH_CUDA_API[key]


def _read_torch_cuda_api(cxx: dict) -> TorchCudaApi:
    table = cxx.get("torch_cuda_api", {})
    spaces = [
        r"\s*::\s*".join(re.escape(part) for part in space.split("::"))
        for space in table.get("namespaces", ())
    ]
    pattern = re.compile(
        (r"(?<![A-Za-z0-9_:])(?:" + "|".join(spaces) + r")\s*::\s*(?:\w+\s*::\s*)*\w+").encode()
    )
    targets = {t: parse_advice(a) for t, a in table.get("targets", {}).items()}
    return TorchCudaApi(
        pattern,
        targets,
        tuple(table.get("header_folders", ())),
        tuple(table.get("version_macros", ())),
    )


def find_torch_cuda_api(unit: Unit, table: NameTable) -> None:
    """PRT701 for the names of PyTorch's CUDA C++ API in a source PyTorch builds
    (``at::cuda::getCurrentCUDAStream``): portable on ROCm, a port to each other target's own
    C++ API. Not in device code (the kernel is those targets' site, PRT705), nor in a statement
    that already holds a CUDA name of the table, whose port takes this one along."""
    if not unit.contains(b"cuda"):
        return
    api = torch_cuda_api(unit)
    advice = {"rocm": Advice(Status.PORTABLE, note=TORCH_PROVIDES), **api.targets}
    for match in unit.finditer(api.names):
        last = re.search(rb"\w+$", match.group())
        start, end = match.start(), match.start() + (last.end() if last else 0)
        node = unit.code_node(match.start() + (last.start() if last else 0), end)
        if node is None or unit.in_device_code(node):
            continue
        if _statement_has_table_name(unit, table, node) or api.in_old_torch_arm(unit, node):
            continue
        name = re.sub(rb"\s+", b"", unit.data[start:end]).decode("ascii", "replace")
        unit.report(
            "PRT701",
            start,
            end,
            f"`{name}` (PyTorch's CUDA C++ API): {TORCH_PROVIDES}; other targets port it to "
            "their own backend's API",
            advice,
            node=node,
        )


def _statement_has_table_name(unit: Unit, table: NameTable, node: Node) -> bool:
    """Whether the statement around ``node`` names a CUDA API name of the table."""
    current = node
    while current is not None and current.type not in STATEMENT_KINDS:
        if current.type in ("compound_statement", "translation_unit"):
            return False
        current = current.parent
    if current is None:
        return False
    text = unit.data[current.start_byte : current.end_byte]
    return any(
        table.lookup(m.group().decode("ascii", "replace")) for m in table.candidates.finditer(text)
    )


#: Preprocessor conditionals, and the node types of their other branches.
CONDITIONALS = frozenset({"preproc_if", "preproc_elif"})
ALTERNATIVES = frozenset({"preproc_else", "preproc_elif", "preproc_elifdef"})
#: Where a condition's search for its conditional stops: a name in code, not in a condition.
STOPS = frozenset({"translation_unit", "compound_statement"})


def _tested_with_alternative(node) -> bool:
    """A name in the condition of an ``#if``/``#elif`` that has an ``#else`` or ``#elif``: for a
    macro HIP does not define, the condition reads 0 (or not defined) and ROCm builds take a
    branch the project wrote, which is checked on its own. (``cxx.parts`` never cuts such a
    group of a version macro, so a part holds its other branch too.)"""
    child, current = node, node.parent
    while current is not None and current.type not in CONDITIONALS:
        if current.type in ALTERNATIVES or current.type in (
            "translation_unit",
            "compound_statement",
        ):
            return False
        child, current = current, current.parent
    if current is None or current.child_by_field_name("condition") != child:
        return False
    alternative = current.child_by_field_name("alternative")
    return alternative is not None and alternative.type in ALTERNATIVES


def defined_here(unit: Unit, name: str) -> bool:
    """Whether the file #defines ``name`` itself (a user's CUDNN_CALL-style macro)."""
    pattern = rb"#[ \t]*define[ \t]+" + re.escape(name.encode()) + rb"\b"
    return re.search(pattern, unit.data) is not None


def report_entry(
    unit: Unit, entry: Entry, start: int, end: int, node, rocm, renamed: str | None = None
) -> None:
    """``renamed``: what PyTorch's hipify writes for the name in an extension source."""
    status = entry.status_on(rocm)
    code = CODE_BY_STATUS[status]
    rule = unit.catalog.rules[code]
    usable = status is not Status.UNSUPPORTED
    rocm_advice = Advice(
        status,
        entry.hip if usable and entry.hip else None,
        since=entry.since or None,
        roc=entry.roc or None,
    )
    if status is Status.RENAME and renamed == entry.hip:
        # the rename PyTorch's build makes itself
        rocm_advice = Advice(Status.PORTABLE, note=HIPIFIED_BY_TORCH)
        status = Status.PORTABLE
    targets = {"rocm": rocm_advice}
    # Device code is reported for the targets without CUDA once per kernel (PRT705).
    if entry.api != "device" and not unit.in_device_code(node):
        targets.update({t: a for t, a in rule.targets.items() if t != "rocm"})
    replacement = entry.hip if status is Status.RENAME else None
    message = name_message(entry, entry.status_on(rocm), rocm)
    if rocm_advice.note == HIPIFIED_BY_TORCH:
        message += f"; {HIPIFIED_BY_TORCH}"
    unit.report(code, start, end, message, targets, replacement=replacement, node=node)


#: The note for a HIP name only development headers date (``Entry.release_unknown``).
UNKNOWN_RELEASE = (
    "declared by current HIP development headers; the first release is not known to portlint"
)


def version_text(key: tuple[int, ...]) -> str:
    return ".".join(str(p) for p in key)


def name_message(entry: Entry, status: Status, rocm: tuple[int, ...]) -> str:
    library = LIBRARY_OF_API.get(entry.api, "CUDA")
    head = f"`{entry.cuda}` ({library})"
    instead = entry.instead
    if entry.hip and entry.removed_by(rocm):
        return f"{head} was `{entry.hip}` in HIP, removed in ROCm {entry.removed}{instead}"
    if entry.hip and entry.added_after(rocm):
        return (
            f"{head} is `{entry.hip}` in HIP, added in ROCm {entry.since}: not available on "
            f"ROCm {version_text(rocm)} (rocm-version)"
        )
    since = f" (ROCm {entry.since}+)" if entry.since else ""
    if entry.release_unknown:
        since = f" ({UNKNOWN_RELEASE})"
    later = ""
    if entry.deprecated_by(rocm):
        later = f"; deprecated since ROCm {entry.deprecated}{instead}"
    elif entry.experimental:
        later = f"; experimental in ROCm {entry.experimental}"
    if status is Status.RENAME:
        return f"{head} is `{entry.hip}` in HIP{since}{later}"
    if status is Status.PORTABLE:
        return f"{head} keeps its name on ROCm{since}; other targets have no CUDA{later}"
    if status is Status.MANUAL and not entry.listed:
        return (
            f"{head} is not in portlint's table: look up its ROCm counterpart and port the call "
            "by hand"
        )
    if status is Status.MANUAL:
        why = f" ({entry.note})" if entry.note else ""
        return (
            f"{head} corresponds to `{entry.hip}`{since}, which is not a drop-in replacement: "
            f"port the call by hand{why}{later}"
        )
    if entry.roc:
        below = ROC_LIBRARY.get(entry.api, "the ROC library")
        return f"{head} has no HIP equivalent; {below} (AMD GPUs only) has `{entry.roc}`"
    return f"{head} has no HIP equivalent"


def find_namespaces(unit: Unit, table: NameTable, hipified: dict[str, dict[str, str]]) -> None:
    if not unit.contains(*(name.encode() for name in table.namespaces)):
        return
    renamed = hipified.get("names", {})
    for match in unit.finditer(NAMESPACE_USE):
        node = unit.code_node(match.start(), match.end())
        if node is None or node.type not in NAMESPACE_NODES:
            continue
        cuda = match.group(1).decode()
        hip = table.namespaces.get(cuda, "")
        entry = Entry(cuda, hip, "namespace")
        status = entry.status
        rule = unit.catalog.rules["PRT701"]
        targets = {"rocm": Advice(status, hip or None)}
        if not unit.in_device_code(node):
            targets.update({t: a for t, a in rule.targets.items() if t != "rocm"})
        if status is Status.RENAME:
            message = f"namespace `{cuda}` is `{hip}` on ROCm"
        else:
            message = f"namespace `{cuda}` keeps its name on ROCm; other targets have no CUDA"
        replacement = hip if status is Status.RENAME else None
        if hip and renamed.get(f"{cuda}::") == f"{hip}::":
            # ``cub::`` in an extension source: PyTorch's hipify writes ``hipcub::`` itself
            targets["rocm"] = Advice(Status.PORTABLE, note=HIPIFIED_BY_TORCH)
            message = f"namespace `{cuda}`: {HIPIFIED_BY_TORCH}"
            replacement = None
        unit.report("PRT701", match.start(), match.end(), message, targets, replacement, node)


def find_headers(unit: Unit, table: NameTable, hipified: dict[str, dict[str, str]]) -> None:
    if not unit.contains(b"include"):
        return
    api = torch_cuda_api(unit) if hipified else None
    libraries = unit.catalog.table("cxx").get("nvidia_libraries", {})
    library_prefixes = tuple(libraries.get("header_prefixes", ()))
    for match in unit.finditer(INCLUDE):
        header = match.group(2).decode("utf-8", "surrogateescape")
        if header not in table.headers:
            if api is not None and header.startswith(api.header_folders):
                report_torch_header(unit, api, header, match.start(2), match.end(2))
            elif header.startswith(library_prefixes):
                report_library_header(unit, libraries, header, match.start(2), match.end(2))
            continue
        start, end = match.start(2), match.end(2)
        node = unit.node_at(start, end)
        if node.type == "comment":
            continue
        hip = table.headers[header]
        rule = unit.catalog.rules["PRT704"]
        targets = dict(rule.targets)
        if hip and hipified.get("headers", {}).get(header) == hip:
            targets["rocm"] = Advice(Status.PORTABLE, note=HIPIFIED_BY_TORCH)
            message = f"CUDA header `{header}`: {HIPIFIED_BY_TORCH}"
            hip = ""
        elif hip:
            targets["rocm"] = Advice(Status.RENAME, hip)
            message = f"CUDA header `{header}`: include `{hip}` on ROCm"
        else:
            targets["rocm"] = Advice(Status.UNSUPPORTED)
            message = f"CUDA header `{header}` has no HIP counterpart"
        unit.report("PRT704", start, end, message, targets, hip or None, node)


def report_torch_header(unit: Unit, api: TorchCudaApi, header: str, start: int, end: int) -> None:
    """PRT704 for a header of PyTorch's CUDA C++ API (``<ATen/cuda/CUDAContext.h>``) in a
    source PyTorch builds: its hipify rewrites the path on ROCm; the other targets include
    their own backend's headers. Not in the arm of an older PyTorch."""
    node = unit.node_at(start, end)
    if node.type == "comment" or api.in_old_torch_arm(unit, node):
        return
    targets = {"rocm": Advice(Status.PORTABLE, note=HIPIFIED_BY_TORCH), **api.targets}
    message = (
        f"PyTorch's CUDA header `{header}`: {HIPIFIED_BY_TORCH}; other targets include their "
        "own backend's"
    )
    unit.report("PRT704", start, end, message, targets, node=node)


def report_library_header(unit: Unit, libraries: dict, header: str, start: int, end: int) -> None:
    """PRT704 for the first include of NVIDIA's CUTLASS or CuTe in the file (rules/cxx.toml
    ``[nvidia_libraries]``), for every target: no other vendor has a build of them."""
    prefixes = tuple(libraries.get("header_prefixes", ()))
    first = unit.file_fact("nvidia_library_include", lambda data: _first_include(data, prefixes))
    if first != unit.file_line(unit.point(start)[0]):
        return
    node = unit.node_at(start, end)
    if node.type == "comment":
        return
    targets = {t: parse_advice(a) for t, a in libraries.get("targets", {}).items()}
    message = (
        f"NVIDIA's CUTLASS/CuTe header `{header}`: no build for AMD GPUs, a SYCL port for "
        "Intel's; the file's use of it is ported to the target's own libraries (the first such "
        "include of the file stands for the rest)"
    )
    unit.report("PRT704", start, end, message, targets, node=node)


def _first_include(data: bytes, prefixes: tuple[str, ...]) -> int:
    """The line of the file's first ``#include`` of a header under one of ``prefixes``, 0 when
    there is none."""
    for match in INCLUDE.finditer(data):
        if match.group(2).decode("utf-8", "surrogateescape").startswith(prefixes):
            return data.count(b"\n", 0, match.start(2)) + 1
    return 0

"""PRT701-PRT704: CUDA names, namespaces and headers, with their HIP answer."""

from __future__ import annotations

import re

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
    "other": "CUDA",
}


def find_api_sites(unit: Unit, table: NameTable) -> None:
    find_names(unit, table)
    find_namespaces(unit, table)
    find_headers(unit, table)


def find_names(unit: Unit, table: NameTable) -> None:
    for match in unit.finditer(table.candidates):
        entry = table.lookup(match.group().decode("ascii", "replace"))
        if entry is None:
            continue
        node = unit.code_node(match.start(), match.end())
        if node is None or node.type not in NAME_NODES:
            continue
        report_entry(unit, entry, match.start(), match.end(), node)


def report_entry(unit: Unit, entry: Entry, start: int, end: int, node) -> None:
    status = entry.status
    code = CODE_BY_STATUS[status]
    rule = unit.catalog.rules[code]
    rocm = Advice(status, entry.hip or None)
    targets = {"rocm": rocm}
    # Device code is reported for the targets without CUDA once per kernel (PRT705).
    if entry.api != "device" and not unit.in_device_code(node):
        targets.update({t: a for t, a in rule.targets.items() if t != "rocm"})
    replacement = entry.hip if status is Status.RENAME else None
    unit.report(code, start, end, name_message(entry), targets, replacement=replacement, node=node)


def name_message(entry: Entry) -> str:
    library = LIBRARY_OF_API.get(entry.api, "CUDA")
    status = entry.status
    if status is Status.RENAME:
        return f"`{entry.cuda}` ({library}) is `{entry.hip}` in HIP"
    if status is Status.PORTABLE:
        return f"`{entry.cuda}` ({library}) keeps its name on ROCm; other targets have no CUDA"
    if status is Status.MANUAL and not entry.listed:
        return (
            f"`{entry.cuda}` ({library}) is not in portlint's table: look up its ROCm "
            "counterpart and port the call by hand"
        )
    if status is Status.MANUAL:
        return (
            f"`{entry.cuda}` ({library}) corresponds to `{entry.hip}`, which is not a drop-in "
            "replacement: port the call by hand"
        )
    return f"`{entry.cuda}` ({library}) has no HIP equivalent"


def find_namespaces(unit: Unit, table: NameTable) -> None:
    if not unit.contains(*(name.encode() for name in table.namespaces)):
        return
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
        unit.report("PRT701", match.start(), match.end(), message, targets, replacement, node)


def find_headers(unit: Unit, table: NameTable) -> None:
    if not unit.contains(b"include"):
        return
    for match in unit.finditer(INCLUDE):
        header = match.group(2).decode("utf-8", "surrogateescape")
        if header not in table.headers:
            continue
        start, end = match.start(2), match.end(2)
        node = unit.node_at(start, end)
        if node.type == "comment":
            continue
        hip = table.headers[header]
        rule = unit.catalog.rules["PRT704"]
        targets = dict(rule.targets)
        if hip:
            targets["rocm"] = Advice(Status.RENAME, hip)
            message = f"CUDA header `{header}`: include `{hip}` on ROCm"
        else:
            targets["rocm"] = Advice(Status.UNSUPPORTED)
            message = f"CUDA header `{header}` has no HIP counterpart"
        unit.report("PRT704", start, end, message, targets, hip or None, node)

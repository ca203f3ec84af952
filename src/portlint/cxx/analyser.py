"""C++/CUDA analysis: parse with tree-sitter, find CUDA API sites, kernels and hazards.

No compiler, no CUDA install and no compilation database: each file is read on its own. Macros
are not expanded, so code that only a macro turns into valid C++ leaves ERROR nodes; findings are
still reported there, but without a fix, since the edit could land in the wrong construct.

This module is imported to run the prefilter on every C++ file, so it imports no parser; the
tree-sitter modules load on the first file that passes it.
"""

from __future__ import annotations

import functools
import os
import re
from typing import TYPE_CHECKING

from portlint.catalog import Catalog
from portlint.model import SourceFile
from portlint.wordsearch import WordSet

if TYPE_CHECKING:
    from collections.abc import Callable

    from portlint.config import Settings
    from portlint.cxx.unit import Unit
    from portlint.sink import FindingSink

#: Text at least one of which a file must contain for any C++ rule to fire. Checked against every
#: name of the table in tests/test_cxx_analyser.py. One regular expression over all of them took
#: ten times as long as these words and patterns grouped by ``portlint.wordsearch``.
CANDIDATE_WORDS = (
    "cuda",
    "CUDA",
    "__global__",
    "__device__",
    "<<<",
    "cudnn",
    "CUDNN",
    "cublas",
    "CUBLAS",
    "curand",
    "CURAND",
    "cufft",
    "CUFFT",
    "cusparse",
    "CUSPARSE",
    "cusolver",
    "CUSOLVER",
    "cuuint",
    "nvml",
    "NVML",
    "nvrtc",
    "NVRTC",
    "nccl",
    "NCCL",
    "nvtx",
    "NVTX",
    "nvToolsExt",
    "thrust",
    "cub::",
    "cooperative_groups",
    "__shared__",
    "__shfl",
    "__ballot",
    "__activemask",
    "__syncwarp",
    "__syncthreads",
    "warpSize",
    "Warp",
    "warp",
    "WARP",
    "__half",
    "__nv_",
    "mtgp32",
    "gesvdj",
    "syevj",
    "libraryPropertyType",
    "surfaceReference",
    "textureReference",
    "channel_descriptor.h",
    "vector_types.h",
    "driver_types.h",
    "device_functions.h",
    "library_types.h",
    "math_constants.h",
    "NVCL_",
    "NVFFT_",
    "CUB_",
    "make_cu",
    "device_launch_parameters.h",
    "cutlass/",
    "cute/",
)
#: Text that counts only at the start of a word, or followed by something: literal text -> a
#: pattern that starts with it.
CANDIDATE_CONTEXTS = {
    "cu": re.compile(r"cu[A-Z](?<!\wcu[A-Z])"),
    "CU": re.compile(r"CU[A-Za-z_](?<!\wCU[A-Za-z_])"),
    "tex": re.compile(r"tex[123C](?<!\wtex[123C])"),
    "surf": re.compile(r"surf[123C](?<!\wsurf[123C])"),
    "texture": re.compile(r"texture(?<!\wtexture)\s*<"),
    "surface": re.compile(r"surface(?<!\wsurface)\s*<"),
    ".cuh": re.compile(r"\.cuh(?!\w)"),
    "Cub": re.compile(r"Cub[A-Z]"),
}
WORDS = WordSet(CANDIDATE_WORDS, CANDIDATE_CONTEXTS)


def is_candidate(text: str) -> bool:
    """Cheap test run on every C++ file: could any C++ rule fire here?"""
    return WORDS.holds_any(text)


def analyse_cxx(
    source: SourceFile, catalog: Catalog, settings: Settings | None, sink: FindingSink
) -> None:
    """Emit the findings of one C++/CUDA file into ``sink``: API sites, then kernels, then
    hazards (the engine sorts them into file order)."""
    torch_built = settings is not None and settings.torch_built
    analyse_unit(make_unit(source, catalog, sink, torch_built=torch_built), settings)


def make_unit(
    source: SourceFile,
    catalog: Catalog,
    sink: FindingSink,
    unit_type: Callable[..., Unit] | None = None,
    torch_built: bool = False,
) -> Unit:
    """The file parsed, with what every check reads of it (``unit_type``: a ``Unit`` that reads
    one part of a larger file, ``cxx.parts``, which leaves out the lines the whole file makes
    inactive itself; ``torch_built``: PyTorch's build compiles it, as the project's includes
    show, ``cxx.includes``)."""
    from portlint.cxx.arch_arms import arch_tests
    from portlint.cxx.parsing import parse
    from portlint.cxx.preprocessor import (
        NO_BRANCHES,
        hip_guarded_lines,
        read_branches,
        spell_qualifiers,
    )
    from portlint.cxx.unit import Unit
    from portlint.textindex import LineIndex

    # Undecodable bytes were read as lone surrogates; surrogateescape gives the bytes back.
    data = spell_qualifiers(
        source.text.encode("utf-8", "surrogateescape"),
        catalog.table("cxx").get("qualifier_macros", {}),
    )
    index = LineIndex(source.text)
    guards = catalog.table("cxx").get("guards", {})
    hip_macros = guards.get("hip_macros", ())
    suffix = os.path.splitext(source.path)[1].lower()
    return (unit_type or Unit)(
        path=source.path,
        suffix=suffix,
        data=data,
        tree=parse(data, suffix),
        index=index,
        catalog=catalog,
        guarded=hip_guarded_lines(index.lines, hip_macros),
        sink=sink,
        covered=covered_targets(source.path),
        torch_built=torch_built,
        branches=(
            read_branches(
                index.lines,
                guards.get("nvcc_macros", ()),
                guards.get("ide_macros", ()),
                arch_tests(catalog).refusal_words,
            )
            if unit_type is None
            else NO_BRANCHES
        ),
    )


def covered_targets(path: str) -> frozenset[str]:
    """The targets a C++/CUDA file needs no site for: those its backend package or its twins
    answer for (``backend_targets``, ``twin_targets``)."""
    return backend_targets(path) | twin_targets(path)


def backend_targets(path: str) -> frozenset[str]:
    """The targets a C++/CUDA file of a backend package needs no site for
    (``python.backend_packages``: ``extensions/cuda/`` beside ``extensions/hip/``): the package
    is one vendor's build of the project's kernels (CUDA's or ROCm's). Where the package has an
    ``__init__.py``, its PRT105 summary speaks for the targets without CUDA; where a CUDA
    package's sibling is ROCm's own, ROCm builds that one instead."""
    from portlint.model import TARGETS
    from portlint.python.backend_packages import BACKEND_VENDORS, catalogue_words, package_of

    package = package_of(path, catalogue_words(), BACKEND_VENDORS)
    if package is None:
        return frozenset()
    covered = set()
    if os.path.exists(os.path.join(package.folder, "__init__.py")):
        covered |= set(TARGETS) - {"rocm"}
    if package.vendor == "cuda" and "rocm" in package.siblings:
        covered.add("rocm")
    return frozenset(covered)


#: Sources a twin may be: what a build compiles for another target in place of a CUDA source.
TWIN_SUFFIXES = frozenset({".c", ".cc", ".cpp", ".cxx", ".c++", ".cu", ".hip", ".mm"})


def twin_targets(path: str) -> frozenset[str]:
    """The targets a C++/CUDA source's twins are built for instead of it:
    ``nms_rotated_cuda.cu`` beside ``nms_rotated_cpu.cpp`` (the same name with another vendor's
    word in place of CUDA's), or ``cuda/nms_kernel.cu`` beside ``cpu/nms_kernel.cpp`` (a folder
    named for another vendor beside the file's own, holding the same name or its twin). The
    extension's CPU build compiles the twin and never this file, so the CPU needs no port of
    it. The vendor words are ``rules/device.toml`` ``[backend.vendors]``."""
    from portlint.model import TARGETS
    from portlint.python.backend_packages import catalogue_words, folder_vendor

    words = catalogue_words()
    folder, name = os.path.split(os.path.abspath(path))
    stem, suffix = os.path.splitext(name)
    if suffix.lower() not in TWIN_SUFFIXES:
        return frozenset()
    parts = stem.lower().split("_")
    places = [i for i, part in enumerate(parts) if words.get(part) == "cuda"]
    own = [(folder, places)] if places else []
    parent, folder_name = os.path.split(folder)
    if folder_vendor(folder_name, words) == "cuda":
        # a CUDA folder: its sibling folders named for a vendor may hold the same name
        own += [
            (os.path.join(parent, other), places)
            for other in _sources_in(parent)[0]
            if other != folder_name and folder_vendor(other, words) not in (None, "cuda")
        ]
    covered = set()
    for place, positions in own:
        for other in _sources_in(place)[1]:
            other_stem, other_suffix = os.path.splitext(other)
            if other_suffix.lower() not in TWIN_SUFFIXES or other == name:
                continue
            vendor = _twin_vendor(parts, positions, other_stem.lower().split("_"), words)
            if vendor is None and place != folder and other_stem.lower() == stem.lower():
                vendor = folder_vendor(os.path.basename(place), words)
            if vendor in TARGETS:
                covered.add(vendor)
    return frozenset(covered)


def _twin_vendor(
    parts: list[str], places: list[int], other: list[str], words: dict[str, str]
) -> str | None:
    """The vendor whose word stands where ``parts`` has CUDA's (at one of ``places``) and which
    is otherwise the same name, else None."""
    if len(other) != len(parts):
        return None
    for place in places:
        vendor = words.get(other[place])
        if vendor not in (None, "cuda") and other[:place] + other[place + 1 :] == (
            parts[:place] + parts[place + 1 :]
        ):
            return vendor
    return None


@functools.lru_cache(maxsize=256)
def _sources_in(folder: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(sub-folders, files) of a folder, sorted; empty when it cannot be read."""
    from portlint.python.backend_packages import read_folder

    return read_folder(folder)


def analyse_unit(unit: Unit, settings: Settings | None) -> None:
    from portlint.cxx.api_sites import find_api_sites
    from portlint.cxx.devices import find_cuda_devices
    from portlint.cxx.hazards import find_hazards
    from portlint.cxx.kernels import find_kernels, report_kernels
    from portlint.cxx.table import load_table

    kernels = find_kernels(unit)
    find_api_sites(unit, load_table(unit.catalog), settings.rocm_version if settings else None)
    find_cuda_devices(unit)
    report_kernels(unit, kernels)
    find_hazards(unit, kernels)
    unit.flush()

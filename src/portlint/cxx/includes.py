"""Which C++/CUDA files PyTorch's extension tooling compiles, seen through the project's own
includes.

A source is compiled by PyTorch (``torch.utils.cpp_extension``, or PyTorch's own build) when it
includes one of PyTorch's headers (rules/cxx.toml ``[torch_extension]``), and on ROCm PyTorch
hipifies it first. Many extensions include PyTorch through a header of their own: ``graph.cu``
includes ``"graph.cuh"``, which includes ``"util.cuh"``, which includes
``<ATen/cuda/CUDAContext.h>``. This module follows the quoted includes a file makes (``#include
"x.h"``, found next to the file that names it) to tell such a source from a plain CUDA program,
and gives the headers such a source includes the same answer: PyTorch's build compiles and
hipifies them with it.

A run's fact: the engine reads each C++ file's includes once (cached with the file's
modification time), follows them on disk, and hands the answer to each file in its settings.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable
from typing import Any

QUOTED_INCLUDE = re.compile(rb'^[ \t]*#[ \t]*include[ \t]*"([^"\r\n]+)"', re.MULTILINE)

Facts = list  # [includes PyTorch itself (bool), the quoted includes it makes (list of str)]


def file_facts(raw: bytes, prefixes: Iterable[str]) -> Facts:
    """What a file says about its includes: whether it includes a PyTorch header itself (as
    ``<torch/`` or ``"torch/``, the test ``cxx.api_sites.is_torch_extension`` makes), and the
    quoted includes it makes, in order."""
    opened = [f"{quote}{prefix}".encode() for prefix in prefixes for quote in '<"']
    direct = any(literal in raw for literal in opened)
    named = [m.group(1).decode("utf-8", "replace") for m in QUOTED_INCLUDE.finditer(raw)]
    return [direct, list(dict.fromkeys(named))]


def valid_facts(facts: Any) -> bool:
    """Whether ``facts`` has the shape ``file_facts`` gives (a cache entry may not)."""
    return (
        isinstance(facts, list)
        and len(facts) == 2
        and isinstance(facts[0], bool)
        and isinstance(facts[1], list)
        and all(isinstance(name, str) for name in facts[1])
    )


def resolve(including: str, name: str) -> str | None:
    """The file ``#include "name"`` in ``including`` opens when it sits next to it, or None."""
    path = os.path.normpath(os.path.join(os.path.dirname(including), name))
    return path if os.path.isfile(path) else None


def torch_built(paths: Iterable[str], facts_of: Callable[[str], Facts | None]) -> frozenset[str]:
    """The files among ``paths`` (normalised) that PyTorch's build compiles: those that include
    a PyTorch header, themselves or through a chain of their own quoted includes, and the files
    such a file includes. ``facts_of`` gives a file's ``file_facts`` (None when it cannot be
    read); each file is asked once."""
    wanted = list(dict.fromkeys(os.path.normpath(path) for path in paths))
    # the include graph of the files and of the headers they reach
    includes: dict[str, list[str]] = {}
    direct: set[str] = set()
    pending = list(wanted)
    while pending:
        path = pending.pop()
        if path in includes:
            continue
        found = facts_of(path)
        includes[path] = []
        if found is None:
            continue
        if found[0]:
            direct.add(path)
        for name in found[1]:
            header = resolve(path, name)
            if header is not None:
                includes[path].append(header)
                pending.append(header)
    # the files that reach a PyTorch header: the direct ones, and whatever includes one of them
    included_by: dict[str, list[str]] = {}
    for path, headers in includes.items():
        for header in headers:
            included_by.setdefault(header, []).append(path)
    reaching = _closure(direct, included_by)
    # and what they include is compiled with them
    built = _closure(reaching, includes)
    return frozenset(path for path in wanted if path in built)


def _closure(start: set[str], edges: dict[str, list[str]]) -> set[str]:
    """``start`` and every file reached from it along ``edges``."""
    reached = set(start)
    pending = list(start)
    while pending:
        for other in edges.get(pending.pop(), ()):
            if other not in reached:
                reached.add(other)
                pending.append(other)
    return reached

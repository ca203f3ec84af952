"""Which C++/CUDA files PyTorch's extension tooling compiles, seen through the project's own
includes.

A source is compiled by PyTorch (``torch.utils.cpp_extension``, or PyTorch's own build) when it
includes one of PyTorch's headers (rules/cxx.toml ``[torch_extension]``), and on ROCm PyTorch
hipifies it first. Many extensions include PyTorch through a header of their own: ``graph.cu``
includes ``"graph.cuh"``, which includes ``"util.cuh"``, which includes
``<ATen/cuda/CUDAContext.h>``. This module follows the quoted includes a file makes (``#include
"x.h"``, found next to the file that names it) to tell such a source from a plain CUDA program,
and gives the headers such a source includes the same answer: PyTorch's build compiles and
hipifies them with it. The sources a ``setup.py`` lists in its ``CUDAExtension(...)`` are
PyTorch's to build too, whatever they include (``extension_sources``).

A run's fact: the engine reads each C++ file's includes once (cached with the file's
modification time), follows them on disk, and hands the answer to each file in its settings.
"""

from __future__ import annotations

import ast
import os
import re
from collections.abc import Callable, Iterable
from typing import Any

#: What a setup.py calls to build an extension whose sources PyTorch compiles (and hipifies on
#: ROCm): torch.utils.cpp_extension's CUDAExtension.
EXTENSION_CALLS = frozenset({"CUDAExtension"})
#: The suffixes of the C/C++/CUDA sources an extension lists.
SOURCE_SUFFIXES = (".cu", ".cpp", ".cc", ".cxx", ".c")

QUOTED_INCLUDE = re.compile(rb'^[ \t]*#[ \t]*include[ \t]*"([^"\r\n]+)"', re.MULTILINE)

Facts = list  # [includes PyTorch itself (bool), the quoted includes it makes (list of str)]


def torch_include_openings(prefixes: Iterable[str]) -> list[bytes]:
    """How an include of a PyTorch header opens (``<torch/``, ``"torch/``): rules/cxx.toml
    ``[torch_extension] include_prefixes``, in either quote."""
    return [f"{quote}{prefix}".encode() for prefix in prefixes for quote in '<"']


def file_facts(raw: bytes, prefixes: Iterable[str]) -> Facts:
    """What a file says about its includes: whether it includes a PyTorch header itself (the
    test ``cxx.api_sites.is_torch_extension`` makes), and the quoted includes it makes, in
    order."""
    direct = any(literal in raw for literal in torch_include_openings(prefixes))
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


def torch_built(
    paths: Iterable[str],
    facts_of: Callable[[str], Facts | None],
    sources: Iterable[str] = (),
) -> frozenset[str]:
    """The files among ``paths`` (normalised) that PyTorch's build compiles: the ``sources`` of
    the project's extensions (``extension_sources``), those that include a PyTorch header,
    themselves or through a chain of their own quoted includes, and the files such a file
    includes. ``facts_of`` gives a file's ``file_facts`` (None when it cannot be read); each
    file is asked once."""
    wanted = list(dict.fromkeys(os.path.normpath(path) for path in paths))
    # the include graph of the files and of the headers they reach
    includes: dict[str, list[str]] = {}
    direct: set[str] = {os.path.normpath(source) for source in sources}
    pending = list(wanted) + sorted(direct)
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


def extension_sources(text: str, setup_path: str) -> list[str]:
    """The C/C++/CUDA files a ``setup.py`` names in its ``CUDAExtension(...)`` calls: each string
    with a source suffix inside such a call, found next to the script, else the one file of that
    name below the script's folder (``os.path.join(src, "x.cu")``, ``str(src / "x.cu")``)."""
    if not any(name in text for name in EXTENSION_CALLS):
        return []
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return []
    named: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _call_name(node.func) in EXTENSION_CALLS:
            named.extend(
                inner.value
                for inner in ast.walk(node)
                if isinstance(inner, ast.Constant)
                and isinstance(inner.value, str)
                and inner.value.endswith(SOURCE_SUFFIXES)
            )
    folder = os.path.dirname(setup_path)
    below: dict[str, list[str]] | None = None
    found: list[str] = []
    for name in dict.fromkeys(named):
        beside = os.path.normpath(os.path.join(folder, name))
        if os.path.isfile(beside):
            found.append(beside)
            continue
        if below is None:
            below = _files_below(folder)
        matches = below.get(os.path.basename(name), [])
        if len(matches) == 1:  # ``os.path.join(src, "x.cu")``: the one file of that name
            found.append(matches[0])
    return list(dict.fromkeys(found))


def _files_below(folder: str) -> dict[str, list[str]]:
    """The C/C++/CUDA sources below ``folder`` by base name (hidden folders left out)."""
    files: dict[str, list[str]] = {}
    for root, dirs, names in os.walk(folder or "."):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for name in names:
            if name.endswith(SOURCE_SUFFIXES):
                files.setdefault(name, []).append(os.path.normpath(os.path.join(root, name)))
    return files


def _call_name(func: ast.expr) -> str:
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else ""

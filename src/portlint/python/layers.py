"""CUDA-API layers of a project: code that points the CUDA API at another vendor's device.

Two kinds are found, among the Python files of one run, before any file is analysed:

- a vendor's migration tool imported anywhere in a module (``from torch_npu.contrib import
  transfer_to_npu``, also inside a function or an ``if``; rules/device.toml
  ``[backend.migration]``). Once imported it patches torch for the whole process: the CUDA API,
  ``.cuda()``, "cuda" devices and the NCCL backend then run on that vendor's device.
- a module of the project's own that rebinds at least ``REBINDINGS`` names of ``torch.cuda``,
  most of them to one target's (``torch.cuda.is_available = torch.xpu.is_available``: sdnext's
  Intel layer). Only the names rebound there, and in the modules beside it (a layer split over a
  package), run on that target.

A layer is loaded by the code of its own top-level package, so it counts for the files that
import that package (``from opensora.models import ...`` for ``opensora/npu_config.py``), or
import relatively inside it, and for the layer's own file; a stand-alone script that imports none
of it (an evaluation script beside the package's modules) runs without the layer. A rebinding
layer counts for every module of its package too (sdnext's ``modules/intel`` for a model file
vendored in ``modules/``): the application that rebinds the names at start-up is the one that
loads them. A migration tool is imported by the code that wants it: a module of the package
that imports nothing of it may run without it. The rules each
kind covers are data (rules/device.toml ``[backend.project_layers]``); the analysis lists no
layered target at such a site (``Context``).

Everything is read from the text, line by line (an import or an assignment at the start of a
line), so that a file costs one read and no parse; what a file holds (``file_facts``) is cached
with the file's modification time and size (``portlint.cache.Cache.facts``).
"""

from __future__ import annotations

import os
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from stat import S_ISREG
from typing import Any, NamedTuple

from portlint.python.import_refusals import Tests, refusal_facts
from portlint.python.package_loads import (
    builds_cuda_at_import,
    import_choices,
    module_name,
    top_imports,
)

#: How many names of ``torch.cuda`` a module rebinds before it is a layer that redirects the
#: CUDA API (one rebinding is a workaround for one function).
REBINDINGS = 3

#: A line that may assign to a name of ``torch.cuda`` (read from the text before any tree).
REBINDING = re.compile(r"^[ \t]*torch\.cuda\.[\w.]+[ \t]*=(?!=)", re.MULTILINE)
#: The same line with the name rebound and the value's second part (``xpu`` of ``torch.xpu``).
REBINDING_VALUE = re.compile(
    rb"^[ \t]*torch\.cuda\.([\w.]+)[ \t]*=(?!=)[ \t]*(?:torch\.(\w+))?", re.MULTILINE
)
#: An import statement's first module: its top-level package, or the dots of a relative import.
IMPORTED = re.compile(rb"[ \t]*(?:from|import)[ \t]+(\.+|\w+)")


class Layer(NamedTuple):
    """The part of the CUDA API that runs on ``target`` through a layer of the project."""

    target: str
    #: "migration" or "rebinding": the key of ``[backend.project_layers]``
    kind: str
    #: The ``torch.cuda`` names rebound (``torch.cuda.empty_cache``); empty: every name.
    names: tuple[str, ...] = ()

    def covers(self, code: str, symbol: str, rules: Mapping[str, Iterable[str]]) -> bool:
        """Whether the site of rule ``code`` at ``symbol`` runs on the target through it."""
        if code not in rules.get(self.kind, ()):
            return False
        if not self.names:
            return True
        return any(symbol == name or symbol.startswith(name + ".") for name in self.names)


class Finder:
    """What each file holds that a layer is made of, and the layers of a set of files."""

    def __init__(
        self, tools: Mapping[str, Iterable[str]], targets: Iterable[str], tests: Tests
    ) -> None:
        self.targets = frozenset(targets)
        self.tests = tests
        tools = {t: list(names) for t, names in tools.items() if t in self.targets}
        self.importing = migration_imports(tools)
        self.markers = [
            name.rpartition(".")[2].encode() for names in tools.values() for name in names
        ]

    def file_facts(self, raw: bytes) -> list[Any]:
        """[migration targets, rebound names, {namespace: how many names it is given},
        imported top-level packages (``.`` for a relative import), the modules its unindented
        imports may load (``package_loads.top_imports``), the imports its unindented ``if``
        chains choose between (``package_loads.import_choices``), whether it compiles a CUDA
        extension when it loads (``package_loads.builds_cuda_at_import``), the targets its top
        level refuses and the modules it imports before (``import_refusals.refusal_facts``)] of
        a file's bytes; lists,
        dictionaries and booleans only (the cache stores them as JSON)."""
        migrated = []
        if any(marker in raw for marker in self.markers):
            migrated = sorted(
                {
                    target
                    for match in self.importing.finditer(raw)
                    for target, text in match.groupdict().items()
                    if text
                }
            )
        names: list[str] = []
        namespaces: dict[str, int] = {}
        if b"torch.cuda." in raw:
            names, counted = rebound_names(raw)
            namespaces = dict(counted)
        imported = imported_packages(raw)
        return [
            migrated,
            names,
            namespaces,
            imported,
            top_imports(raw),
            import_choices(raw),
            builds_cuda_at_import(raw),
            *refusal_facts(raw, self.tests),
        ]


def valid_facts(facts: Any) -> bool:
    """Whether ``facts`` has the shape ``Finder.file_facts`` gives (a cache entry may not)."""
    if not isinstance(facts, list) or len(facts) != 9:
        return False
    migrated, names, namespaces, imported, loaded, choices, builds, refused, before = facts
    parts = (migrated, names, imported, loaded, choices, refused, before)
    return (
        isinstance(builds, bool)
        and all(isinstance(part, list) for part in parts)
        and isinstance(namespaces, dict)
        and all(
            isinstance(item, str)
            for item in (*migrated, *names, *imported, *loaded, *refused, *before)
        )
        and all(isinstance(count, int) for count in namespaces.values())
        and all(
            isinstance(chain, list)
            and all(
                isinstance(arm, list) and all(isinstance(spec, str) for spec in arm)
                for arm in chain
            )
            for chain in choices
        )
    )


class Reach(NamedTuple):
    """Where a layer comes from: the top-level packages that load it and its files."""

    packages: frozenset[str]
    files: tuple[str, ...]


def layers_of(facts: Mapping[str, list[Any]], targets: Iterable[str]) -> dict[Layer, Reach]:
    """The layers among files (path -> ``file_facts``), each with the top-level packages
    that load it and the files it is made in."""
    wanted = frozenset(targets)
    found: dict[Layer, set[str]] = defaultdict(set)
    files: dict[Layer, list[str]] = defaultdict(list)
    by_folder: dict[str, list[str]] = defaultdict(list)
    for path, (_, names, *_) in facts.items():
        if names:
            by_folder[os.path.dirname(os.path.abspath(path))].append(path)
    for path, (migrated, names, namespaces, *_) in sorted(facts.items()):
        for target in migrated:
            found[Layer(target, "migration")].add(top_package(path))
            files[Layer(target, "migration")].append(path)
        if len(names) < REBINDINGS or not namespaces:
            continue
        namespace, count = Counter(namespaces).most_common(1)[0]
        if namespace not in wanted or 2 * count <= len(names):
            continue
        # the modules beside it carry the rest of the layer (a hijack module of the package)
        beside = by_folder[os.path.dirname(os.path.abspath(path))]
        rebound = sorted({name for other in beside for name in facts[other][1]})
        layer = Layer(namespace, "rebinding", tuple(rebound))
        found[layer].add(top_package(path))
        files[layer].append(path)
    migrated_targets = {layer.target for layer in found if layer.kind == "migration"}
    return {
        layer: Reach(frozenset(packages), tuple(files[layer]))
        for layer, packages in found.items()
        if layer.kind == "migration" or layer.target not in migrated_targets
    }


def describe(layer: Layer, reach: Reach) -> str:
    """One line that says what a layer makes run on its target, and where (a note of the run)."""
    made = ", ".join(reach.files[:3]) + (
        f" and {len(reach.files) - 3} more" if len(reach.files) > 3 else ""
    )
    packages = ", ".join(sorted(reach.packages))
    if layer.kind == "migration":
        what = f"{layer.target} migration tool imported in {made}"
        covered = 'the `torch.cuda` API, `.cuda()`, "cuda" devices and NCCL'
    else:
        rebound = f"{len(layer.names)} `torch.cuda` names rebound there and beside it"
        what = f"{layer.target} layer in {made} ({rebound})"
        return (
            f"{what}: the modules of {packages} and the files that import it list no"
            f" {layer.target} site for those names"
        )
    return f"{what}: files that import {packages} list no {layer.target} site for {covered}"


def imported_packages(raw: bytes) -> list[str]:
    """The top-level packages a file's import lines name; "." for a relative import (one
    inside the file's own package). Every ``import`` word is looked at on its line (quicker
    than a multi-line pattern over the whole text: a file has few)."""
    found = set()
    seen_lines = set()
    at = raw.find(b"import")
    while at >= 0:
        start = raw.rfind(b"\n", 0, at) + 1
        if start not in seen_lines:
            seen_lines.add(start)
            end = raw.find(b"\n", at)
            match = IMPORTED.match(raw, start, len(raw) if end < 0 else end)
            if match:
                first = match.group(1).decode()
                found.add("." if first.startswith(".") else first)
        at = raw.find(b"import", at + 6)
    return sorted(found)


def imports_only(raw: bytes) -> list[Any]:
    """``Finder.file_facts`` of a file that does not mention torch: its imports alone."""
    return [
        [],
        [],
        {},
        imported_packages(raw),
        top_imports(raw),
        import_choices(raw),
        False,
        [],
        [],
    ]


def reached(path: str, facts: list[Any], layers: Mapping[Layer, Reach]) -> tuple[Layer, ...]:
    """The layers a file with these ``file_facts`` loads: a layer whose top-level package it
    imports, or imports relatively inside, or, for a rebinding layer, belongs to; and a
    migration tool it imports itself; a module outside packages that is the layer loads it
    too."""
    migrated, _, _, imported, *_ = facts
    names = frozenset(imported)
    home = top_package(path)
    inside = "." in names or home == os.path.splitext(os.path.basename(path))[0]
    return tuple(
        layer
        for layer, (packages, _) in layers.items()
        if packages & names
        or (home in packages and (inside or layer.kind == "rebinding"))
        or (layer.kind == "migration" and layer.target in migrated)
    )


def top_package(path: str) -> str:
    """The top-level package a Python file belongs to: its outermost folder with an
    ``__init__.py``, or the module itself outside any package."""
    return module_name(path).split(".")[0]


def migration_imports(tools: Mapping[str, Iterable[str]]) -> re.Pattern[bytes]:
    """A line that imports one of the migration ``tools`` (target -> dotted module names), in
    any of the three spellings; the group named for the target matches."""
    arms = []
    for target, names in tools.items():
        spellings = []
        for name in names:
            parent, _, leaf = name.rpartition(".")
            spellings += [
                rf"import[ \t]+{re.escape(name)}\b",
                rf"from[ \t]+{re.escape(name)}[ \t]+import\b",
                rf"from[ \t]+{re.escape(parent)}[ \t]+import[\s(\\]+(?:[\w\s,\\]*,\s*)?{leaf}\b",
            ]
        arms.append(rf"(?P<{target}>{'|'.join(spellings)})")
    if not arms:
        return re.compile(rb"(?!)")
    return re.compile(rf"^[ \t]*(?:{'|'.join(arms)})".encode(), re.MULTILINE)


def rebound_names(text: bytes) -> tuple[list[str], Counter[str]]:
    """The ``torch.cuda`` names a module's lines rebind, and how many of them are given each
    ``torch.<namespace>`` value (``xpu``)."""
    names, namespaces = [], Counter[str]()
    seen = set()
    for match in REBINDING_VALUE.finditer(text):
        name = "torch.cuda." + match.group(1).decode()
        if name in seen:
            continue
        seen.add(name)
        names.append(name)
        if match.group(2):
            namespaces[match.group(2).decode()] += 1
    return names, namespaces


def read_file(path: str, max_size: int) -> bytes | None:
    """A file's bytes, or None when it is not a regular file, cannot be read or is larger than
    ``max_size`` (left to the analysis, which reports it; a named pipe is never opened)."""
    try:
        status = os.stat(path)
        if not S_ISREG(status.st_mode) or status.st_size > max_size:
            return None
        with open(path, "rb") as stream:
            return stream.read()
    except OSError:
        return None

"""Modules that cannot load on a target because of what their package imports when it loads.

A module that imports, at its top level and outside any ``try`` or ``if``, a package published
for some operating systems only (``import triton``; rules/device.toml ``[backend.absent_on]``:
Triton's wheels are Linux-only, so no Apple GPU loads it) cannot itself load there; the analysis
of that one file knows it. Python runs every package's ``__init__.py`` before any module inside
it, and every module a top-level import names, so the same holds for each module whose package,
or whose own top-level imports, reach such a module through the project's files:
``mamba_ssm/__init__.py`` imports ``mamba_ssm.ops.triton.layer_norm``, which imports ``triton``,
so no module of ``mamba_ssm`` loads on mps.

The project's own CUDA extensions are such packages too: a module that the run's ``setup.py``
builds with ``CUDAExtension`` (``flash_attn_2_cuda``, ``pkg._C``) exists where PyTorch built it,
on CUDA and, hipified, on ROCm (``extension_tests.cuda_extension_names``). So is a module that
builds one when it loads (``_C = load(name=..., sources=[..."k.cu"])`` at its top,
``builds_cuda_at_import``) for the modules that import it; its own build stays its site.

A module that picks one of two such packages at its top level cannot load either where neither
is: in an unindented ``if``/``elif``/``else`` chain that ends in ``else``, or a ``try`` whose
handlers catch a failed import, each arm of which imports one (``if USE_TRITON_ROCM: from
aiter... import ... else: import flash_attn_2_cuda``), one arm runs, and its import fails on a
target that lacks every arm's package (``import_choices``).

Everything is read from the text, as the layers are (``python.layers``): an import statement
at the start of a line is a top-level one outside any block (a block's body is indented), and a
file's list of them is part of its cached facts (``layers.Finder.file_facts``).
"""

from __future__ import annotations

import bisect
import functools
import os
import re
import sys
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

#: An unindented import statement: ``from X import names`` (names in parentheses may span
#: lines) or ``import X, Y``.
TOP_IMPORT = re.compile(
    rb"^(?:from[ \t]+(\.*[\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n#;]*)|import[ \t]+([^\n#;]+))",
    re.MULTILINE,
)


class Unloadable(NamedTuple):
    """Targets that cannot load a module, the file whose import makes it so, and the package
    that file imports (the first of ``reasons``: each file and package, with the targets it
    makes the module lack)."""

    targets: tuple[str, ...]
    origin: str
    package: str
    reasons: tuple[tuple[str, str, tuple[str, ...]], ...] = ()


def top_imports(raw: bytes) -> list[str]:
    """The modules a file's unindented import statements may load: ``import a.b`` -> ``a.b``;
    ``from a import b, c`` -> ``a``, ``a.b``, ``a.c`` (a name may be a submodule); relative
    ones keep their dots (``from .x import y`` -> ``.x``, ``.x.y``)."""
    found: list[str] = []
    strings = long_strings(raw)
    for match in TOP_IMPORT.finditer(raw):
        if strings and inside_spans(match.start(), strings):
            continue  # an example in a docstring
        found.extend(_loaded(match))
    return sorted(set(found))


def _loaded(match: re.Match[bytes]) -> list[str]:
    """The modules one import statement (a ``TOP_IMPORT`` match) may load."""
    source, names, plain = match.groups()
    if plain is not None:
        parts = (
            part.split(" as ")[0].strip().rstrip("\\").strip()
            for part in plain.decode(errors="replace").split(",")
        )
        return [name for name in parts if name]
    module = source.decode(errors="replace")
    found = [module]
    listed = names.decode(errors="replace").strip("()\\ \t\r\n")
    for part in listed.replace("\\", " ").split(","):
        name = part.split(" as ")[0].strip()
        if name and name != "*" and name.isidentifier():
            found.append(f"{module}{name}" if module.endswith(".") else f"{module}.{name}")
    return found


#: An unindented call of PyTorch's JIT extension builder (``_C = load(name=..., sources=[...])``).
JIT_LOAD = re.compile(
    rb"^(?:[\w.]+[ \t]*=[ \t]*)?((?:torch\.utils\.)?cpp_extension\.)?load[ \t]*\(", re.MULTILINE
)
#: ``load`` imported from ``torch.utils.cpp_extension``, under its own name.
LOAD_IMPORTED = re.compile(
    rb"^from[ \t]+torch\.utils\.cpp_extension[ \t]+import[^\n]*\bload\b(?![ \t]+as)", re.MULTILINE
)
#: A CUDA source file named in a call's text.
CUDA_SOURCE = re.compile(rb"""\.cu['"]""")


def builds_cuda_at_import(raw: bytes) -> bool:
    """Whether a module compiles a CUDA extension when it loads: an unindented call of
    ``torch.utils.cpp_extension.load`` whose sources name a ``.cu`` file. PyTorch builds it
    where CUDA's compiler is and, hipified, on ROCm; elsewhere the call raises (no CUDA_HOME),
    and so does every import of the module."""
    if b"cpp_extension" not in raw or b".cu" not in raw:
        return False
    imported = LOAD_IMPORTED.search(raw) is not None
    strings = long_strings(raw)
    for match in JIT_LOAD.finditer(raw):
        if strings and inside_spans(match.start(), strings):
            continue
        if match.group(1) is None and not imported:
            continue  # another ``load`` (json's, a checkpoint loader)
        if CUDA_SOURCE.search(_call_text(raw, match.end() - 1)):
            return True
    return False


#: Byte -> how it changes the depth of brackets: ``(``, ``[``, ``{`` open, their pairs close.
BRACKETS = {ord(b): 1 for b in "([{"} | {ord(b): -1 for b in ")]}"}


def _call_text(raw: bytes, opening: int) -> bytes:
    """The text of a call from its ``(`` at ``opening`` to the ``)`` that closes it (or the
    file's end), brackets inside strings counted too."""
    depth = 0
    for position in range(opening, len(raw)):
        depth += BRACKETS.get(raw[position], 0)
        if depth == 0:
            return raw[opening : position + 1]
    return raw[opening:]


#: The header of an arm of an unindented ``if`` chain, on one line: ``if X:``, ``elif X:``,
#: ``else:``, a comment after the colon allowed.
ARM_HEAD = re.compile(rb"(if|elif)[ \t(][^\n]*:|else[ \t]*:")
#: The header of an unindented ``try`` statement's block or of a handler that catches a failed
#: import (``except ImportError:``, ``except (ImportError, OSError) as e:``, ``except:``).
TRY_HEAD = re.compile(rb"try[ \t]*:")
EXCEPT_HEAD = re.compile(rb"except\b([^\n:]*):")
CATCHES_IMPORT = re.compile(rb"\b(?:ImportError|ModuleNotFoundError|Exception|BaseException)\b")


def import_choices(raw: bytes) -> list[list[list[str]]]:
    """The unindented ``if``/``elif``/``else`` chains, ending in ``else``, and ``try``
    statements whose handlers catch a failed import, each of whose arms imports something as
    its own statement (not inside a nested block): per chain, per arm, the modules its imports
    may load. One arm runs when the module loads (a handler when the ``try`` block's import
    fails), so the module loads only where some arm's imports can (``unloadable``)."""
    chains: list[list[list[str]]] = []
    arms: list[list[str]] = []  # the chain being read
    kind = b""  # what the chain is: ``if`` or ``try``
    closed = False  # it has its ``else``, or a handler
    depth: int | None = None  # the indentation of the current arm's statements
    strings = long_strings(raw)
    start = 0
    for line in raw.splitlines(keepends=True):
        at, start = start, start + len(line)
        text = line.split(b"#", 1)[0].rstrip() if b"#" in line else line.rstrip()
        if not text.strip() or (strings and inside_spans(at, strings)):
            continue
        indent = len(line) - len(line.lstrip(b" \t"))
        if indent:
            if arms and (depth is None or indent == depth):
                depth = indent
                match = TOP_IMPORT.match(text.lstrip())
                if match:
                    arms[-1].extend(_loaded(match))
            continue
        head = ARM_HEAD.fullmatch(text)
        if kind == b"if" and head and not head.group(0).startswith(b"if") and not closed:
            arms.append([])  # ``elif``/``else`` of the chain being read
            closed = head.group(0).startswith(b"else")
            depth = None
            continue
        handler = EXCEPT_HEAD.fullmatch(text) if kind == b"try" else None
        if handler is not None:
            catches = not handler.group(1).strip() or CATCHES_IMPORT.search(handler.group(1))
            arms = [*arms, []] if catches and arms else []  # else the import fails the module
            closed, depth = bool(arms), None
            continue
        if closed and all(arms) and not (kind == b"try" and head):
            chains.append(arms)  # (a ``try`` with an ``else`` runs more than one arm)
        opens = head is not None and head.group(0).startswith(b"if")
        kind = b"if" if opens else b"try" if TRY_HEAD.fullmatch(text) else b""
        arms = [[]] if kind else []  # a new chain, or none
        closed, depth = False, None
    if closed and all(arms):
        chains.append(arms)
    return chains


def with_vendor_stacks(
    absent_on: Mapping[str, Iterable[str]],
    stacks: Mapping[str, Iterable[str]],
    targets: Iterable[str],
) -> dict[str, list[str]]:
    """``absent_on`` (package -> the targets it is absent on) completed with each vendor's own
    PyTorch stack (rules/device.toml ``[backend.packages]``, vendor -> its packages): a module
    that loads ``torch_npu`` loads only where Ascend's stack is, and one that loads
    ``habana_frameworks`` on no target at all."""
    merged = {package: sorted(on) for package, on in absent_on.items()}
    for vendor, packages in stacks.items():
        elsewhere = {target for target in targets if target != vendor}
        for package in packages:
            merged[package] = sorted(elsewhere | set(merged.get(package, ())))
    return merged


def unloadable(
    imports: Mapping[str, list[str]],
    absent_on: Mapping[str, Iterable[str]],
    choices: Mapping[str, list[list[list[str]]]] | None = None,
    builders: Iterable[str] = (),
    refusing: Mapping[str, tuple[Iterable[str], Iterable[str]]] | None = None,
) -> dict[str, Unloadable]:
    """Path -> the targets that cannot load it, for the files among ``imports`` (path -> its
    ``top_imports``) that import, or whose packages import, through the project's own modules,
    a package of ``absent_on`` (package -> the targets it is absent on), or whose ``choices``
    (path -> its ``import_choices``) import one in every arm. The ``builders``, modules that
    are in ``absent_on`` because they build a CUDA extension when they load
    (``builds_cuda_at_import``), are not among them: the build is their site. Nor are the
    ``refusing`` modules (path -> the targets their top level refuses: ``import_refusals``)
    for those targets, where what else refuses them may come later than their own refusal:
    what they import themselves after it (``attn_weight.py`` refuses at its line 26 and imports
    a refusing package at line 40; ``refusing``: path -> (the targets, the imports before the
    refusal)), and what a package above them loads that loads them
    (``models/__init__.py`` imports ``dense.py``, which refuses npu, but ``dense.py`` first
    imports ``models/utils.py``, whose own chain refuses npu before). Anything else a package
    above them loads refuses first (the package's ``__init__.py`` loads ``platform.py``, which
    refuses cpu, before any module of the package).

    A project module is found by its dotted name where one file of the run has that name, and a
    script outside any package (``app/t2i/run.py``) also finds the module beside it by its bare
    name (``import utils``: ``app/t2i/utils.py``), as Python does, its own folder coming first
    on the path. Two such scripts may share a name (``run.py`` in two folders): each still
    cannot load what its own imports cannot. A module inside a package whose absolute import
    names no top-level module of the run, but one beside it (``ops/test.py``: ``from
    functions.attn import f``, ``ops/functions/``), is run as a script from its folder, and
    finds that one."""
    choices = choices or {}
    builders = frozenset(builders)
    refusing = refusing or {}
    tops_absent = {package.split(".", 1)[0] for package in absent_on}
    specs_seen = [
        *imports.values(),
        *(arm for chains in choices.values() for c in chains for arm in c),
    ]
    # a project module of absent_on (``pkg._C``, ``pkg.csrc.load``) may be imported relatively
    relative = any("." in package for package in absent_on)
    if not any(
        spec.split(".")[0] in tops_absent or (relative and spec.startswith("."))
        for specs in specs_seen
        for spec in specs
    ):
        return {}  # no file imports one
    names = {path: module_name(path) for path in imports}
    by_name: dict[str, list[str]] = defaultdict(list)
    for path, name in names.items():
        by_name[name].append(path)
    # a name that two files of the run share (two projects in one run) is nobody's
    modules = {name: paths[0] for name, paths in by_name.items() if len(paths) == 1}
    neighbours = _folders(names)
    beside = _scripts_beside(names, neighbours)
    # path -> target -> (the file that imports the package, the package)
    absent: dict[str, dict[str, tuple[str, str]]] = {}
    importers: dict[str, set[str]] = defaultdict(set)
    tops = {name.split(".", 1)[0] for name in modules}  # the run's own top-level modules
    for path, name in names.items():
        own: dict[str, tuple[str, str]] = {}
        for spec in imports[path]:
            target_name = resolve(spec, name, path.endswith("__init__.py"))
            if target_name is None:
                continue
            if path in beside and target_name.split(".", 1)[0] in beside[path]:
                for loaded in beside[path][target_name.split(".", 1)[0]].loads(target_name):
                    importers[loaded].add(path)
                continue  # the script's own folder comes first on the path
            top = target_name.split(".", 1)[0]
            for loaded in _with_parents(target_name):  # ``triton``, ``pkg._C``
                for target in absent_on.get(loaded, ()):
                    own.setdefault(target, (path, loaded))
            if top not in tops:
                # a module inside a package that imports its neighbour by the bare name is run
                # as a script from its folder (``ops/test.py``: ``from functions.x import f``)
                neighbour = neighbours.get(_folder(path), {}).get(top)
                if neighbour is not None and not spec.startswith(".") and top not in absent_on:
                    for loaded in neighbour.loads(target_name):
                        if loaded != path:
                            importers[loaded].add(path)
                continue  # else another project's module (torch, numpy)
            for loaded in _with_parents(target_name):
                if loaded in modules and modules[loaded] != path:
                    importers[modules[loaded]].add(path)
        for chain in choices.get(path, ()):
            for target, origin in _absent_in_every_arm(chain, name, path, absent_on).items():
                own.setdefault(target, origin)
        if own:
            absent[path] = own
    # what a module cannot load, its importers cannot either
    queue = list(absent)
    while queue:
        loaded = queue.pop()
        for importer in importers.get(loaded, ()):
            mine = absent.setdefault(importer, {})
            grown = False
            for target, origin in absent[loaded].items():
                if target not in mine:
                    mine[target] = origin
                    grown = True
            if grown:
                queue.append(importer)
    found: dict[str, Unloadable] = {}
    for path, name in names.items():
        if path in builders:
            continue  # it builds an extension itself: its own sites are where it fails
        refused, early = refusing.get(path, ((), ()))
        own = frozenset(refused)
        loading = _loaders(path, importers) if own else set()
        # what it imports after its refusal does not refuse the targets it refuses: its own
        # refusal is the site there
        reached = {t: o for t, o in absent.get(path, {}).items() if t not in own}
        if own:
            first = _reached_by(early, path, name, modules, absent, absent_on)
            reached.update((t, o) for t, o in first.items() if t in own)
        for loaded in _with_parents(name)[:-1]:  # the packages above it load first
            package = modules.get(loaded)
            for target, origin in absent.get(package, {}).items() if package else ():
                if target in own and modules.get(origin[1]) in loading:
                    continue  # a module the package loads that loads this one first
                reached.setdefault(target, origin)
        if reached:
            by_origin: dict[tuple[str, str], list[str]] = defaultdict(list)
            for target, cause in sorted(reached.items()):
                by_origin[cause].append(target)
            reasons = tuple((o, p, tuple(t)) for (o, p), t in sorted(by_origin.items()))
            origin, package, _ = reasons[0]
            found[path] = Unloadable(tuple(sorted(reached)), origin, package, reasons)
    return found


def _reached_by(
    specs: Iterable[str],
    path: str,
    name: str,
    modules: Mapping[str, str],
    absent: Mapping[str, dict[str, tuple[str, str]]],
    absent_on: Mapping[str, Iterable[str]],
) -> dict[str, tuple[str, str]]:
    """Target -> (file, package) for the targets that what the imports ``specs`` of ``path``
    (module ``name``) load cannot load on: the packages they name, and what the project's
    modules among them cannot load."""
    found: dict[str, tuple[str, str]] = {}
    for spec in specs:
        target_name = resolve(spec, name, path.endswith("__init__.py"))
        for loaded in _with_parents(target_name) if target_name else ():
            for target in absent_on.get(loaded, ()):
                found.setdefault(target, (path, loaded))
            module = modules.get(loaded)
            if module is not None and module != path:
                for target, origin in absent.get(module, {}).items():
                    found.setdefault(target, origin)
    return found


def _loaders(path: str, importers: Mapping[str, set[str]]) -> set[str]:
    """The files whose loading loads ``path`` (``importers``: file -> the files that import it),
    ``path`` among them."""
    found = {path}
    queue = [path]
    while queue:
        for importer in importers.get(queue.pop(), ()):
            if importer not in found:
                found.add(importer)
                queue.append(importer)
    return found


class _Neighbour(NamedTuple):
    """A module or package beside a script, found by its bare name."""

    path: str  # the module's file, or the package's ``__init__.py``
    files: Mapping[str, str]  # the run's files by their absolute paths

    def loads(self, dotted: str) -> list[str]:
        """The run's files that importing ``dotted`` from the script runs: the neighbour, and
        the package's modules it names (``data.x``: ``data/x.py``)."""
        found = [self.path]
        folder = os.path.dirname(os.path.abspath(self.path))
        for part in dotted.split(".")[1:]:
            if not self.path.endswith("__init__.py"):
                break
            folder = os.path.join(folder, part)
            for candidate in (folder + ".py", os.path.join(folder, "__init__.py")):
                if candidate in self.files:
                    found.append(self.files[candidate])
                    break
            else:
                break
        return found


def _scripts_beside(
    names: Mapping[str, str], folders: Mapping[str, dict[str, _Neighbour]]
) -> dict[str, dict[str, _Neighbour]]:
    """Script -> bare module name -> what that name finds in the script's folder, for the files
    outside any package (a dotted name without a dot): a module, or a package's
    ``__init__.py``, among the run's files (``folders``: what ``_folders`` finds)."""
    return {
        path: folders.get(_folder(path), {})
        for path, name in names.items()
        if "." not in name and not path.endswith("__init__.py")
    }


def _folders(names: Mapping[str, str]) -> dict[str, dict[str, _Neighbour]]:
    """Folder -> bare module name -> what that name finds there: a module, or a package's
    ``__init__.py``, among the run's files (``names``: path -> dotted module name)."""
    files = {os.path.abspath(path): path for path in names}
    folders: dict[str, dict[str, _Neighbour]] = defaultdict(dict)
    for path, name in names.items():
        folder = _folder(path)
        if path.endswith("__init__.py"):
            folder = os.path.dirname(folder)
        folders[folder][name.rsplit(".", 1)[-1]] = _Neighbour(path, files)
    return folders


def _folder(path: str) -> str:
    return os.path.dirname(os.path.abspath(path))


def _absent_in_every_arm(
    chain: list[list[str]], name: str, path: str, absent_on: Mapping[str, Iterable[str]]
) -> dict[str, tuple[str, str]]:
    """Target -> (``path``, the packages) for the targets that lack a package some import of
    each arm of an ``import_choices`` chain loads: whichever arm runs, its import fails there."""
    per_arm: list[dict[str, str]] = []
    for arm in chain:
        lacking: dict[str, str] = {}
        for spec in arm:
            target_name = resolve(spec, name, path.endswith("__init__.py"))
            for loaded in _with_parents(target_name) if target_name else ():
                for target in absent_on.get(loaded, ()):
                    lacking.setdefault(target, loaded)
        per_arm.append(lacking)
    common = set.intersection(*(set(lacking) for lacking in per_arm)) if per_arm else set()
    return {
        target: (path, " or ".join(dict.fromkeys(lacking[target] for lacking in per_arm)))
        for target in common
    }


def package_inits(paths: Iterable[str]) -> list[str]:
    """The ``__init__.py`` of every package that holds one of ``paths`` (a file's own folder
    and the folders above it, while they hold one), in the form the paths are written in."""
    found: dict[str, None] = {}
    walked: set[str] = set()  # folders looked at already, with the folders above them
    for path in paths:
        folder = os.path.dirname(path)
        while folder not in walked:
            walked.add(folder)
            init = os.path.join(folder, "__init__.py")
            if not os.path.isfile(init):
                break
            found[init] = None
            if not folder or folder == os.path.dirname(folder):
                break
            folder = os.path.dirname(folder)
    return list(found)


def package_homes(paths: Iterable[str], names: Iterable[str]) -> dict[str, frozenset[str]]:
    """Package -> the folders that hold it as a top-level package, for the ``names`` that some
    file of the run sits inside (``mii/api.py`` sits inside ``mii``, held by the project's root
    folder; a ``src/`` layout is held by the folder above ``src``)."""
    wanted = set(names)
    homes: dict[str, set[str]] = defaultdict(set)
    for path in paths:
        folder = os.path.dirname(os.path.abspath(path))
        parts = _packages(folder)
        if not parts or parts[0] not in wanted:
            continue
        top = folder
        for _ in parts[1:]:
            top = os.path.dirname(top)
        holder = os.path.dirname(top)
        if os.path.basename(holder) == "src":
            holder = os.path.dirname(holder)
        homes[parts[0]].add(holder)
    return {name: frozenset(folders) for name, folders in homes.items()}


def own_packages(path: str, homes: Mapping[str, frozenset[str]]) -> tuple[str, ...]:
    """The packages of ``homes`` whose project holds ``path``: its tests, examples and scripts
    import the project's own package (``tests/conftest.py`` beside ``mii/``)."""
    here = os.path.abspath(path)
    return tuple(
        sorted(
            name
            for name, folders in homes.items()
            if any(here.startswith(os.path.join(folder, "")) for folder in folders)
        )
    )


#: The quotes of a long string.
LONG_QUOTES = re.compile(rb'"""' + rb"|'''")


def long_strings(raw: bytes) -> list[tuple[int, int]]:
    """(start, end) of the text's triple-quoted strings, in order (an unclosed one runs to the
    end): a line inside one is no statement."""
    spans: list[tuple[int, int]] = []
    opened: bytes | None = None
    start = 0
    for match in LONG_QUOTES.finditer(raw):
        quote = match.group(0)
        if opened is None:
            opened, start = quote, match.start()
        elif quote == opened:
            spans.append((start, match.end()))
            opened = None
    if opened is not None:
        spans.append((start, len(raw)))
    return spans


def inside_spans(position: int, spans: list[tuple[int, int]]) -> bool:
    """Whether ``position`` falls in one of the ordered, disjoint ``spans``."""
    at = bisect.bisect_right(spans, (position, sys.maxsize)) - 1
    return at >= 0 and spans[at][0] <= position < spans[at][1]


def builder_names(paths: Iterable[str], among: Iterable[str]) -> list[str]:
    """The dotted names the modules ``paths`` are imported by, namespace folders (without an
    ``__init__.py``) inside a package included (``pkg/csrc/load.py``: ``pkg.csrc.load``), but
    not a name another file ``among`` the run's has."""
    counts = Counter(module_name(path) for path in among)
    found = []
    for path in paths:
        name = _name_through_namespaces(path)
        if counts[name] == (1 if name == module_name(path) else 0):
            found.append(name)
    return found


#: How many folders up ``_name_through_namespaces`` looks for a package.
NAMESPACE_DEPTH = 8


def _name_through_namespaces(path: str) -> str:
    """``module_name``, with the namespace folders between the file and the outermost package
    above it (at most ``NAMESPACE_DEPTH`` folders up) in the name."""
    folder, filename = os.path.split(os.path.abspath(path))
    stem = os.path.splitext(filename)[0]
    folders: list[str] = []
    outermost = 0
    for _ in range(NAMESPACE_DEPTH):
        if not os.path.basename(folder).isidentifier():
            break
        folders.append(os.path.basename(folder))
        if os.path.isfile(os.path.join(folder, "__init__.py")):
            outermost = len(folders)
        folder = os.path.dirname(folder)
    packages = folders[:outermost][::-1]
    return ".".join(packages if stem == "__init__" else [*packages, stem]) or stem


def imports_third_party(imports: Iterable[list[str]]) -> bool:
    """Whether any file imports, at its top level, a package outside the standard library (only
    such a package can be absent on a target)."""
    return any(
        not spec.startswith(".") and spec.split(".")[0] not in sys.stdlib_module_names
        for specs in imports
        for spec in specs
    )


def packages_described(found: Mapping[str, Unloadable], refusing: Iterable[str] = ()) -> list[str]:
    """One line per top-level package whose every module cannot load on some targets (its
    ``__init__.py`` cannot), for the notes of a run; ``refusing``: the modules among the
    packages they load that refuse those targets themselves (``import_refusals``)."""
    refusing = frozenset(refusing)
    lines = []
    for path, unloadable in sorted(found.items()):
        name = module_name(path)
        if "." in name or not path.endswith("__init__.py"):
            continue
        reasons = unloadable.reasons or (
            (unloadable.origin, unloadable.package, unloadable.targets),
        )
        clauses = []
        for origin, package, targets in reasons:
            on = ", ".join(targets)
            if package in refusing:
                clauses.append(f"loads {package} (in {origin}), which refuses {on} when it loads")
            else:
                clauses.append(
                    f"imports {package} when it loads (in {origin}), which no {on} machine has"
                )
        every = ", ".join(unloadable.targets)
        lines.append(f"package {name} {', and '.join(clauses)}: its modules list no {every} site")
    return lines


def resolve(spec: str, module: str, is_package: bool) -> str | None:
    """The absolute name an import ``spec`` of ``module`` names (relative ones resolved in its
    package), or None where the dots climb above the outermost package."""
    level = len(spec) - len(spec.lstrip("."))
    if not level:
        return spec
    package = module.split(".") if is_package else module.split(".")[:-1]
    if level - 1 > len(package) or (level - 1 == len(package) and not spec[level:]):
        return None
    base = package[: len(package) - (level - 1)]
    rest = spec[level:]
    return ".".join([*base, rest] if rest else base) or None


def module_name(path: str) -> str:
    """The dotted name a file is imported by: its packages (the folders above it that hold an
    ``__init__.py``) and its own name (none for a package's ``__init__.py``)."""
    folder, filename = os.path.split(os.path.abspath(path))
    stem = os.path.splitext(filename)[0]
    parts = _packages(folder)
    return ".".join([*parts, stem] if stem != "__init__" else parts) or stem


@functools.lru_cache(maxsize=4096)
def _packages(folder: str) -> tuple[str, ...]:
    """The package names from the outermost package down to ``folder`` (empty outside one)."""
    if not os.path.isfile(os.path.join(folder, "__init__.py")):
        return ()
    return (*_packages(os.path.dirname(folder)), os.path.basename(folder))


def _with_parents(name: str) -> list[str]:
    """``a.b.c`` -> ``a``, ``a.b``, ``a.b.c``: what importing it runs."""
    parts = name.split(".")
    return [".".join(parts[: end + 1]) for end in range(len(parts))]


def valid_imports(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)

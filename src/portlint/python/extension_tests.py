"""A project's own CUDA extensions: the modules its ``setup.py`` builds with ``CUDAExtension``
(``CUDAExtension(name="amp_C", ...)``), and the tests of one, a test folder inside a folder of
CUDA sources (``fused_kernels/tests/test_fused_kernels.py`` beside
``fused_kernels/scaled_softmax_cuda.cu``). The extension is built only for CUDA and, hipified, for
ROCm: like the code after an import of one (``[extension_modules]`` in rules/packages.toml), its
tests run only there, and nothing in them is another target's site; the kernels are (PRT7xx).

Found from paths, folder listings and the text of ``setup.py`` (read with a pattern, and parsed
only where it holds the class in a name, ``extension = CUDAExtension``), so that the cache can
tell whether what a file's findings depend on has changed (``facts``) without parsing the
project's modules.
"""

from __future__ import annotations

import ast
import functools
import os
import re


@functools.cache
def test_folders() -> frozenset[str]:
    """``[extension_modules] test_folders`` of rules/packages.toml, read once per process."""
    from portlint.catalog import read_toml, rules_dir

    table = read_toml(rules_dir() / "packages.toml").get("extension_modules", {})
    return frozenset(table.get("test_folders", ()))


def extension_folder(path: str) -> str | None:
    """The folder of CUDA sources whose tests the file is, or None (most files)."""
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.basename(folder) not in test_folders():
        return None
    parent = os.path.dirname(folder)
    return parent if extension_sources(parent) else None


@functools.lru_cache(maxsize=256)
def extension_sources(folder: str) -> tuple[str, ...]:
    """The CUDA sources of a folder when none of them has a twin for another target (then the
    folder holds one CUDA extension, and its tests run only where that was built); else none."""
    from portlint.cxx.analyser import twin_targets
    from portlint.python.backend_packages import read_folder

    sources = tuple(name for name in read_folder(folder)[1] if name.endswith((".cu", ".cuh")))
    if any(twin_targets(os.path.join(folder, name)) for name in sources):
        return ()
    return sources


#: How many folders up from a file its project's ``setup.py`` is looked for.
SETUP_DEPTH = 6
#: A module ``setup.py`` builds for CUDA: ``CUDAExtension(name="amp_C", ...)``,
#: ``CUDAExtension("fused_dense_cuda", [...])`` (torch.utils.cpp_extension; a name held in a
#: variable is not read).
CUDA_EXTENSION = re.compile(r"\bCUDAExtension\(\s*(?:name\s*=\s*)?([\"'])([\w.]+)\1")


def setup_extensions(path: str) -> frozenset[str]:
    """The modules that the nearest ``setup.py`` above the file (at most ``SETUP_DEPTH``
    folders up) builds with ``CUDAExtension``, by their full dotted names; none for most
    projects."""
    return _extensions_from(os.path.dirname(os.path.abspath(path)))


@functools.lru_cache(maxsize=1024)
def _extensions_from(folder: str) -> frozenset[str]:
    for _ in range(SETUP_DEPTH):
        names = _setup_names(folder)
        if names is not None:
            return names
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    return frozenset()


@functools.lru_cache(maxsize=256)
def _setup_names(folder: str) -> frozenset[str] | None:
    """The ``CUDAExtension`` names of the folder's ``setup.py``; None where it has none."""
    try:
        with open(os.path.join(folder, "setup.py"), encoding="utf-8", errors="replace") as file:
            text = file.read()
    except OSError:
        return None
    return cuda_extension_names(text)


#: ``extension = CUDAExtension`` on a line of its own: the class held in a name, called later.
CLASS_HELD = re.compile(r"^[ \t]*\w+[ \t]*=[ \t]*CUDAExtension[ \t]*(?:#.*)?$", re.MULTILINE)


def cuda_extension_names(text: str) -> frozenset[str]:
    """The modules a ``setup.py``'s text builds with ``CUDAExtension``, by their dotted names."""
    if "CUDAExtension" not in text:
        return frozenset()
    found = {match.group(2) for match in CUDA_EXTENSION.finditer(text)}
    if CLASS_HELD.search(text):
        found.update(_built_by_held_class(text))
    return frozenset(found)


def _built_by_held_class(text: str) -> set[str]:
    """The modules built by a name that holds ``CUDAExtension`` in an ``if`` whose other arm
    refuses to build (Deformable DETR's ops: ``extension = CppExtension``, then ``if
    torch.cuda.is_available() and CUDA_HOME is not None: extension = CUDAExtension`` ``else:
    raise NotImplementedError(...)``, then ``extension("MultiScaleDeformableAttention", ...)``).
    Where the other arm builds with ``CppExtension`` instead, the module exists on every target
    and none is read."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return set()
    holders: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and node.orelse and isinstance(node.orelse[-1], ast.Raise):
            for statement in node.body:
                if (
                    isinstance(statement, ast.Assign)
                    and isinstance(statement.value, ast.Name)
                    and statement.value.id == "CUDAExtension"
                ):
                    holders.update(t.id for t in statement.targets if isinstance(t, ast.Name))
    names: set[str] = set()
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
            continue
        if node.func.id in holders:
            named = [k.value for k in node.keywords if k.arg == "name"]
            first = node.args[0] if node.args else (named[0] if named else None)
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                names.add(first.value)
    return names


def facts(path: str) -> str:
    """What ``extension_folder`` and ``setup_extensions`` read for the file, as text for the
    cache key."""
    folder = extension_folder(path)
    built = setup_extensions(path)
    found = "" if folder is None else repr((folder, extension_sources(folder)))
    return found + (repr(sorted(built)) if built else "")

"""Backend packages (PRT105): a folder named for CUDA or ROCm beside folders or modules named for
other vendors, as ``ops/cuda/`` beside ``ops/npu/`` or ``backends/cuda/`` beside
``backends/dlinfer/ascend/`` and ``backends/dlinfer/camb/`` (a folder that groups several
vendors' backends). Every file in such a package is the backend: its CUDA calls are correct by
construction.

A package whose ``__init__.py`` registers it for CUDA devices alone (``register_impl(ImplInfo(
name="cutile", devices=("cuda",)))``, as Liger-Kernel's opt-in cuTile and CuTe DSL kernels do) is a
CUDA backend too: one implementation of a registry that holds others for other devices.

Found from paths and folder listings, and the text of ``__init__.py`` files (parsed only when it
holds both "register" and "cuda"), so that the cache can tell, without the rule catalogue's
parser, whether what a file's findings depend on has changed (``facts``). The vendor words come
from ``rules/device.toml`` ``[backend.vendors]``.
"""

from __future__ import annotations

import functools
import os
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    import ast

#: How far up from a file a folder named for a vendor is looked for (``cuda/attention/x.py``).
MAX_DEPTH = 4


class Package(NamedTuple):
    vendor: str
    #: The package folder, absolute.
    folder: str
    #: Vendor keys of the sibling backends.
    siblings: frozenset[str]
    #: Files of the package (relative, without ``.py``, ``/``-separated) that a sibling backend
    #: imports (``from ...backends.cuda.graph_runner import CUDAGraphRunner`` in the Cambricon
    #: backend): shared code, not the CUDA backend's own.
    shared: frozenset[str] = frozenset()

    def is_init(self, path: str) -> bool:
        """The file is the package's own ``__init__.py``, which carries its summary."""
        return os.path.abspath(path) == os.path.join(self.folder, "__init__.py")

    def owns(self, path: str) -> bool:
        """The file is the backend's own: in the package and imported by no sibling."""
        relative = os.path.relpath(os.path.abspath(path), self.folder)
        stem = relative[:-3] if relative.endswith(".py") else relative
        return stem.replace(os.sep, "/") not in self.shared


#: The vendors whose backends PRT105 recognises; the others only count as siblings.
BACKEND_VENDORS = ("cuda", "rocm")


def words_of(vendors: dict[str, list[str]]) -> dict[str, str]:
    """Lower-case word -> vendor key, from ``[backend.vendors]``."""
    return {word: vendor for vendor, words in vendors.items() for word in words}


#: Words of ``[backend.vendors]`` that do not name one vendor in a folder's or module's name:
#: ``docker/GPU/`` beside ``docker/NPU/``, ``patched_modeling_gpu.py`` beside ``..._npu.py``.
GENERIC_WORDS = frozenset({"gpu"})


@functools.cache
def catalogue_words() -> dict[str, str]:
    """``words_of`` the catalogue's ``[backend.vendors]``, read once per process without
    loading the rest of the catalogue."""
    from portlint.catalog import read_toml, rules_dir

    table = read_toml(rules_dir() / "device.toml").get("backend", {}).get("vendors", {})
    return words_of(table)


def catalogue_facts(path: str) -> str:
    """``facts`` with the catalogue's words, for the cache key of every Python file of a run."""
    return facts(path, catalogue_words(), BACKEND_VENDORS)


def is_package_init(path: str) -> bool:
    """The ``__init__.py`` of a backend package: analysed for the package's summary even when
    its text holds no word the prefilter looks for (``from .ops import CudaOps``)."""
    if os.path.basename(path) != "__init__.py":
        return False
    package = package_of(path, catalogue_words(), BACKEND_VENDORS)
    return package is not None and package.is_init(path)


def folder_vendor(name: str, words: dict[str, str]) -> str | None:
    """``cuda``, ``cuda_kernels``, ``rocm`` -> their vendor: the first of its ``_`` parts that
    names one, as for a module's stem."""
    for part in name.lower().split("_"):
        vendor = words.get(part)
        if vendor is not None:
            return vendor
    return None


def read_folder(folder: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(sub-folders, files) of a folder, sorted; empty when it cannot be read. Not cached: each
    caller keeps what it derives from it."""
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return (), ()
    folders, files = [], []
    for entry in entries:
        try:
            (folders if entry.is_dir() else files).append(entry.name)
        except OSError:
            continue
    return tuple(sorted(folders)), tuple(sorted(files))


@functools.lru_cache(maxsize=1024)
def _listing(folder: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(sub-folders, Python module stems) of a folder, sorted; empty when it cannot be read."""
    folders, files = read_folder(folder)
    return folders, tuple(name[:-3] for name in files if name.endswith(".py"))


def _sibling_backends(package: str, vendor: str, words: dict[str, str]) -> list[tuple[str, str]]:
    """(vendor, path) of the folders and modules beside ``package`` named for another vendor,
    and of the folders named for one inside a sibling folder that names none itself
    (``dlinfer/ascend``)."""
    parent, name = os.path.split(package)
    folders, modules = _listing(parent)
    found = []
    for other in folders:
        if other == name:
            continue
        path = os.path.join(parent, other)
        other_vendor = folder_vendor(other, words)
        if other_vendor is not None:
            found.append((other_vendor, path))
            continue
        for inner in _listing(path)[0]:
            inner_vendor = folder_vendor(inner, words)
            if inner_vendor is not None:
                found.append((inner_vendor, os.path.join(path, inner)))
    for module in modules:
        module_vendor = folder_vendor(module, words)
        if module_vendor is not None:
            found.append((module_vendor, os.path.join(parent, module + ".py")))
    return [(other, path) for other, path in found if other != vendor]


def package_of(
    path: str, words: dict[str, str], backend_vendors: tuple[str, ...]
) -> Package | None:
    """The backend package a file is in: its nearest folder (at most ``MAX_DEPTH`` up) named for
    one of ``backend_vendors``, when that folder has siblings named for other vendors; else the
    nearest package that registers itself for CUDA alone (``registered_package``)."""
    folder = _vendor_folder(path, words)
    found = None if folder is None else _package_at(folder, words, backend_vendors)
    return found or registered_package(path)


def other_vendor_folder(path: str, words: dict[str, str], own: frozenset[str]) -> str | None:
    """The vendor of the nearest folder above the file named for one (at most ``MAX_DEPTH``
    up), when that vendor is not one of ``own`` and the folder has siblings named for other
    vendors: ``backend/_ascend/ops/fill.py`` beside ``backend/_nvidia/`` is Ascend's backend,
    which only Ascend runs. None for most files. (``facts`` covers what this reads.)"""
    folder = _vendor_folder(path, words)
    if folder is None:
        return None
    vendor = folder_vendor(os.path.basename(folder), words)
    if vendor is None or vendor in own or not _sibling_backends(folder, vendor, words):
        return None
    return vendor


def registered_package(path: str) -> Package | None:
    """The nearest package above the file (at most ``MAX_DEPTH`` up, through folders with an
    ``__init__.py``) whose ``__init__.py`` registers it for CUDA devices alone
    (``register_impl(ImplInfo(name="cutile", devices=("cuda",), ...))``): one implementation of
    a registry that holds others for other devices, chosen only on CUDA."""
    return _registered_in(path[: path.rfind(os.sep)] if os.sep in path else ".")


@functools.lru_cache(maxsize=4096)
def _registered_in(folder: str) -> Package | None:
    """``registered_package`` for the files of ``folder``, as given: the cache asks for every
    file of a C++ tree, this answers once per folder."""
    folder = os.path.abspath(folder)
    for _ in range(MAX_DEPTH):
        if "__init__" not in _listing(folder)[1]:
            return None
        if _registers_cuda_alone(folder):
            return Package("cuda", folder, frozenset())
        folder = os.path.dirname(folder)
    return None


#: The keyword of a registration that names the devices an implementation is for. (torch's own
#: ``torch.library.register_kernel(op, device_types="cuda")`` registers one function, not the
#: package: it says ``device_types``, and is left out by name too.)
DEVICE_KEYWORDS = frozenset({"devices"})


@functools.lru_cache(maxsize=256)
def _registers_cuda_alone(folder: str) -> bool:
    """The folder's ``__init__.py`` calls a function named for registering (``register_impl``)
    with, in its arguments, a device keyword whose value names CUDA's devices and no other's."""
    try:
        with open(os.path.join(folder, "__init__.py"), encoding="utf-8", errors="replace") as h:
            text = h.read()
    except OSError:
        return False
    if "register" not in text or "cuda" not in text:
        return False  # most packages: read, not parsed
    import ast

    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return False
    vendors = catalogue_words()
    for statement in tree.body:
        if not isinstance(statement, ast.Expr) or not isinstance(statement.value, ast.Call):
            continue
        call = statement.value
        func = call.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if "register" not in name.lower() or ast.unparse(func).startswith("torch."):
            continue
        for node in ast.walk(call):
            for keyword in getattr(node, "keywords", ()) if isinstance(node, ast.Call) else ():
                if keyword.arg in DEVICE_KEYWORDS and _names_cuda_alone(keyword.value, vendors):
                    return True
    return False


def _names_cuda_alone(value: ast.expr, vendors: dict[str, str]) -> bool:
    """``"cuda"`` or ``("cuda",)``: device names, every one of them CUDA's."""
    listed = listed_vendors(value, vendors, attributes=False)
    return bool(listed) and all(vendor == "cuda" for vendor in listed)


def listed_vendors(
    value: ast.expr, words: dict[str, str], attributes: bool = True
) -> list[str | None]:
    """The vendor each device name of a literal list, tuple or set names (a string, ``"cuda:0"``
    read as ``"cuda"``; with ``attributes``, an enum member too: ``DEVICE.CUDA``), None for one
    that names none; a single string is a list of one. Empty for any other value."""
    import ast

    elements = value.elts if isinstance(value, ast.Tuple | ast.List | ast.Set) else [value]
    found: list[str | None] = []
    for element in elements:
        if isinstance(element, ast.Constant) and isinstance(element.value, str):
            found.append(words.get(element.value.split(":")[0].lower()))
        elif attributes and isinstance(element, ast.Attribute):
            found.append(words.get(element.attr.lower()))
        else:
            return []
    return found


def _package_at(
    folder: str, words: dict[str, str], backend_vendors: tuple[str, ...]
) -> Package | None:
    """``package_of`` for a file whose nearest folder named for a vendor is ``folder``."""
    vendor = folder_vendor(os.path.basename(folder), words)
    if vendor not in backend_vendors:
        return None  # inside another vendor's folder: not a CUDA backend
    backends = _sibling_backends(folder, vendor, words)
    if not backends:
        return None
    siblings = frozenset(other for other, _ in backends)
    return Package(vendor, folder, siblings, _shared(folder, tuple(path for _, path in backends)))


def _vendor_folder(path: str, words: dict[str, str]) -> str | None:
    """The nearest folder above the file, at most ``MAX_DEPTH`` up, named for a vendor."""
    # String operations: the cache asks this for every folder of a run. Only the folders
    # looked at are split off, and only a path found to need it is made absolute.
    names = path.rsplit(os.sep, MAX_DEPTH + 1)[-MAX_DEPTH - 1 : -1]
    named = any(word in words for name in names for word in name.lower().split("_"))
    if not named and not _dotted(path):
        return None
    parts = os.path.abspath(path).split(os.sep)[:-1]
    for depth in range(len(parts) - 1, max(len(parts) - 1 - MAX_DEPTH, 0), -1):
        for word in parts[depth].lower().split("_"):
            if word in words:
                return os.sep.join(parts[: depth + 1])
    return None


def _dotted(path: str) -> bool:
    """The path has a ``.`` or ``..`` folder: its last names are not the folders looked at."""
    folders = path.split(os.sep)[:-1]
    return "." in folders or ".." in folders


@functools.lru_cache(maxsize=64)
def _shared(package: str, backends: tuple[str, ...]) -> frozenset[str]:
    """The package's modules that the sibling backends (folders or modules) import by a dotted
    path through it: ``cuda.graph_runner`` in ``from lmdeploy.pytorch.backends.cuda.graph_runner
    import ...`` in ``dlinfer/camb/``. Only the siblings' own files are read, once per process."""
    name = os.path.basename(package)
    own = _modules_below(package)
    if not own:
        return frozenset()
    files = [path for path in backends if path.endswith(".py")]
    for folder in (path for path in backends if not path.endswith(".py")):
        for root, _, names in os.walk(folder):
            files.extend(os.path.join(root, file) for file in names if file.endswith(".py"))
    found: set[str] = set()
    for file in files:
        try:
            with open(file, encoding="utf-8", errors="replace") as handle:
                text = handle.read()
        except OSError:
            continue
        if f"{name}." in text:
            found.update(module for module in own if f"{name}.{module.replace('/', '.')}" in text)
    return frozenset(found)


def _modules_below(package: str) -> list[str]:
    """The package's modules, relative, ``/``-separated, without ``.py`` (``__init__`` left
    out: importing the package is not sharing one of its files)."""
    found = []
    for root, _, files in os.walk(package):
        relative = os.path.relpath(root, package)
        for file in files:
            if file.endswith(".py") and file != "__init__.py":
                stem = file[:-3] if relative == "." else os.path.join(relative, file[:-3])
                found.append(stem.replace(os.sep, "/"))
    return found


def facts(path: str, words: dict[str, str], backend_vendors: tuple[str, ...]) -> str:
    """What ``package_of`` read for the file, as text for the cache key: "" for a file in no
    folder named for a backend vendor."""
    registered = registered_package(path)
    folder = _vendor_folder(path, words)
    if folder is None:
        # most files: no folder above them names a vendor, and no package registers for CUDA
        return "" if registered is None else repr(registered)
    package = _package_at(folder, words, backend_vendors)
    if package is None:
        parent = os.path.dirname(folder)
        folders, modules = _listing(parent)
        inner = [_listing(os.path.join(parent, other))[0] for other in folders]
        # what a sibling added would change
        return repr((folder, folders, modules, inner, registered))
    return repr(package)

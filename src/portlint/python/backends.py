"""PRT105: code that *is* the CUDA (or ROCm) side of a multi-vendor abstraction.

A class ``CudaPlatform`` beside ``XPUPlatform`` on the same base class, a module ``cuda.py`` beside
``npu.py``, or a function registered for ``"cuda"`` beside one registered for ``"npu"``: inside
it, CUDA calls are correct by construction. Such a backend gets one summary finding naming the
targets that have a sibling backend and those that have none, and no finding per call.

The vendor words that names are matched against live in ``rules/device.toml`` ``[backend]``.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import os
import re
from dataclasses import dataclass

from portlint.catalog import Catalog
from portlint.model import PORTABLE, Advice, Finding, Span, Status
from portlint.python.backend_packages import (
    BACKEND_VENDORS,
    GENERIC_WORDS,
    Package,
    listed_vendors,
    package_of,
)

#: ``CUDA_Accelerator`` -> CUDA, Accelerator; ``XPUPlatform`` -> XPU, Platform; ``cuda_v2`` -> ...;
#: ``FastLinearROCm`` -> Fast, Linear, ROCm (AMD's own spelling, kept whole).
WORD = re.compile(r"ROCm|[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
TITLES = {"cuda": "CUDA", "rocm": "ROCm"}
TARGETS = ("rocm", "npu", "mlu", "xpu", "mps", "cpu")
#: Device-type strings: ``"cuda"`` in a backend's body says what it drives; ``"nsight"`` does not.
TARGET_DEVICES = frozenset({"cuda", *TARGETS})


@dataclass(frozen=True)
class Backend:
    vendor: str  # "cuda" or "rocm"
    kind: str  # "class", "module", "package", "function"
    name: str
    siblings: frozenset[str]  # vendor keys of the sibling backends
    span: Span
    #: Lines the backend spans; the whole file for a module.
    first_line: int
    last_line: int
    #: False for a subclass of another backend: it is part of that backend's summary.
    summarised: bool = True
    #: A class named for CUDA or ROCm with no sibling for another vendor (``CUDAGraphWrapper``).
    lone: bool = False
    #: For a lone class, the class attribute by which it declares the devices it supports
    #: (``SUPPORTS_DEVICES = [DEVICE.CUDA]``), when that, not its name, says it is CUDA's.
    declared: str | None = None


@functools.cache
def vendor_words(catalog: Catalog) -> dict[str, str]:
    """Lower-case word -> vendor key (a target, ``cuda``, or another vendor's name)."""
    table = catalog.table("device").get("backend", {}).get("vendors", {})
    return {word: vendor for vendor, words in table.items() for word in words}


def nvidia_feature_words(catalog: Catalog) -> tuple[str, ...]:
    """Lower-case words that name an NVIDIA-only feature (``nvlink``, ``fa3``)."""
    table = catalog.table("device").get("backend", {}).get("nvidia_features", {})
    return tuple(word.lower() for word in table.get("words", ()))


def names_nvidia(name: str) -> bool:
    """The name holds the word NVIDIA (``IS_NVIDIA``, ``is_nvidia_blackwell``)."""
    return any(word.lower() == "nvidia" for word in WORD.findall(name))


def generic_module(backend: Backend, words: dict[str, str]) -> bool:
    """A module backend named for its vendor by a word that names no one vendor
    (``patched_modeling_gpu.py`` beside ``patched_modeling_npu.py``)."""
    if backend.kind != "module":
        return False
    parts = os.path.splitext(backend.name)[0].lower().split("_")
    named = [part for part in parts if words.get(part) in BACKEND_VENDORS]
    return bool(named) and named[0] in GENERIC_WORDS


def vendor_of(name: str, words: dict[str, str]) -> str | None:
    """The vendor a name names, from its first vendor word (``CudaPlatformBase`` -> cuda)."""
    for word in WORD.findall(name):
        vendor = words.get(word.lower())
        if vendor is not None:
            return vendor
    return None


def find_backends(tree: ast.Module, path: str, text_lines: int, catalog: Catalog) -> list[Backend]:
    words = vendor_words(catalog)
    table = catalog.table("device").get("backend", {})
    package = package_of(path, words, BACKEND_VENDORS)
    module = _module_backend(path, text_lines, words, table.get("sibling_also_serves", {}))
    module = module or _package_backend(package, path, text_lines)
    if module is not None:
        return [module]
    # in a CUDA package's module that a sibling backend imports (``_package_backend`` left it
    # out), CUDA code runs for that vendor too: neither the module nor a class in it is
    # CUDA-only by its name
    lone_module = None
    if package is None:
        lone_module = _lone_module(path, text_lines, table.get("lone_module", {}).get("pattern"))
    if lone_module is not None:
        return [lone_module]
    lone_words = frozenset(table.get("lone_class", {}).get("words", ()) if package is None else ())
    return _class_backends(tree, words, lone_words) + _registered_backends(tree, words)


def _package_backend(package: Package | None, path: str, text_lines: int) -> Backend | None:
    """A file of a package named for CUDA or ROCm beside other vendors' (``backend_packages``):
    the whole file is the backend. The package's ``__init__.py`` carries its summary."""
    if package is None or not package.owns(path):
        return None
    name = os.path.basename(package.folder) + "/"
    span = Span(1, 0, 1, 0)
    summarised = package.is_init(path)
    return Backend(
        package.vendor, "package", name, package.siblings, span, 1, text_lines, summarised
    )


# -- modules -------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=256)
def _python_stems(directory: str) -> frozenset[str]:
    try:
        names = os.listdir(directory or ".")
    except OSError:
        return frozenset()
    return frozenset(name[:-3] for name in names if name.endswith(".py"))


def _module_backend(
    path: str, text_lines: int, words: dict[str, str], also: dict[str, list[str]]
) -> Backend | None:
    """``cuda.py`` beside ``npu.py``, or ``cuda_accelerator.py`` beside ``xpu_accelerator.py``.
    A sibling named by a word of ``also`` (``ipex.py``) serves those targets too."""
    directory, filename = os.path.split(path)
    if not filename.endswith(".py"):
        return None
    stem = filename[:-3]
    parts = stem.split("_")
    positions = [i for i, part in enumerate(parts) if words.get(part.lower()) in BACKEND_VENDORS]
    if not positions:
        return None
    position = positions[0]
    vendor = words[parts[position].lower()]
    siblings = set()
    for other in _python_stems(directory):
        if other == stem:
            continue
        other_parts = other.split("_")
        # cuda_accelerator.py beside npu_accelerator.py, or cuda.py beside npu.py
        same_shape = len(other_parts) == len(parts) and all(
            a == b for i, (a, b) in enumerate(zip(parts, other_parts, strict=True)) if i != position
        )
        if same_shape or len(other_parts) == 1:
            word = other_parts[position if same_shape else 0].lower()
            sibling = words.get(word)
            if sibling is not None and sibling != vendor:
                siblings.add(sibling)
                siblings.update(also.get(word, ()))
        elif position == 0 and _vendor_named(parts, words) and _vendor_named(other_parts, words):
            # nvidia.py beside amd_rocm.py and ascend_npu.py: modules named for their vendor
            # alone (LightX2V's platform classes), each for its first word's vendor
            sibling = words[other_parts[0].lower()]
            if sibling != vendor:
                siblings.add(sibling)
    if not siblings:
        return None
    return Backend(vendor, "module", filename, frozenset(siblings), Span(1, 0, 1, 0), 1, text_lines)


def _lone_module(path: str, text_lines: int, pattern: str | None) -> Backend | None:
    """A module named for CUDA graphs (``[backend.lone_module] pattern``, matched against the
    file's folder and name without ``.py``): CUDA code with no sibling, one summary for the
    file like a lone class's."""
    directory, filename = os.path.split(path.replace("\\", "/"))
    if not pattern or not filename.endswith(".py"):
        return None
    named = f"{os.path.basename(directory)}/{filename[:-3]}"
    if re.search(pattern, named, re.IGNORECASE) is None:
        return None
    span = Span(1, 0, 1, 0)
    return Backend("cuda", "module", filename, frozenset(), span, 1, text_lines, lone=True)


def _vendor_named(parts: list[str], words: dict[str, str]) -> bool:
    """A module's name made of vendor words alone: ``nvidia``, ``amd_rocm``, ``ascend_npu``."""
    return all(part.lower() in words for part in parts)


# -- classes -------------------------------------------------------------------------------------


def _base_names(node: ast.ClassDef) -> frozenset[str]:
    return frozenset(ast.unparse(base) for base in node.bases) - {"object"}


def _class_backends(
    tree: ast.Module, words: dict[str, str], lone_words: frozenset[str]
) -> list[Backend]:
    classes = [node for node in tree.body if isinstance(node, ast.ClassDef)]
    named = [(node, vendor_of(node.name, words), _base_names(node)) for node in classes]
    # A sibling shares a base with the class, derives from it, or is one of its bases: the
    # vendors of the classes on each base, and of each class name, found once.
    on_base: dict[str, set[str | None]] = {}
    of_name: dict[str, set[str | None]] = {}
    for other, other_vendor, other_bases in named:
        of_name.setdefault(other.name, set()).add(other_vendor)
        for base in other_bases:
            on_base.setdefault(base, set()).add(other_vendor)
    found = []
    for node, vendor, bases in named:
        if vendor not in BACKEND_VENDORS or not bases:
            continue
        siblings = set(on_base.get(node.name, ()))
        for base in bases:
            siblings |= on_base.get(base, set()) | of_name.get(base, set())
        siblings -= {vendor, None}
        if siblings and _mentions_vendor(node, words):
            found.append(_backend_at(node, vendor, "class", siblings))
    # A CUDA class derived from a backend (``NvmlCudaPlatform(CudaPlatform)``) belongs to it.
    by_name = {backend.name: backend for backend in found}
    for node, vendor, bases in named:
        parents = [by_name[base] for base in bases if base in by_name]
        if vendor in BACKEND_VENDORS and node.name not in by_name and parents:
            part = _backend_at(node, vendor, "class", set(parents[0].siblings))
            found.append(dataclasses.replace(part, summarised=False))
    # A class named outright for CUDA or ROCm with no sibling (``CUDAGraphWrapper``,
    # ``FastLinearROCm``): CUDA-only code by its name, one summary like a backend's.
    taken = {backend.name for backend in found}
    for node, vendor, _ in named:
        if (
            vendor in BACKEND_VENDORS
            and node.name not in taken
            and any(word.lower() in lone_words for word in WORD.findall(node.name))
            and any(_mentions_vendor(statement, words) for statement in node.body)
        ):
            # the body only: a decorator (``@register(device="cuda")``) builds the class
            backend = _backend_at(node, vendor, "class", set())
            found.append(dataclasses.replace(backend, first_line=node.lineno, lone=True))
            taken.add(node.name)
    # A class that declares the devices it supports, CUDA's (or ROCm's) alone
    # (``SUPPORTS_DEVICES = [DEVICE.CUDA]``): the project selects it only there.
    for node, _, _ in named:
        declared = None if node.name in taken else _declared_devices(node, words)
        if declared is not None:
            attribute, vendor = declared
            backend = _backend_at(node, vendor, "class", set())
            found.append(
                dataclasses.replace(backend, first_line=node.lineno, lone=True, declared=attribute)
            )
    return found


def _declared_devices(node: ast.ClassDef, words: dict[str, str]) -> tuple[str, str] | None:
    """(attribute, vendor) where the class body assigns a name that says devices a list of
    devices, every one CUDA's or ROCm's (``SUPPORTS_DEVICES = [DEVICE.CUDA, DEVICE.ROCM]``,
    ``devices = ("cuda",)``); the vendor is cuda if CUDA is among them."""
    for statement in node.body:
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
            target, value = statement.targets[0], statement.value
        elif isinstance(statement, ast.AnnAssign) and statement.value is not None:
            target, value = statement.target, statement.value
        else:
            continue
        if not (isinstance(target, ast.Name) and "device" in target.id.lower()):
            continue
        if not isinstance(value, ast.List | ast.Tuple | ast.Set):
            continue
        vendors = set(listed_vendors(value, words))
        if vendors and vendors <= {"cuda", "rocm"}:
            return target.id, "cuda" if "cuda" in vendors else "rocm"
    return None


def _mentions_vendor(node: ast.AST, words: dict[str, str]) -> bool:
    """The class body uses something of its vendor's (a name or attribute with a vendor word,
    ``torch.cuda``, or its device string ``"cuda"``): a configuration class that only holds
    settings (``NsightToolConfig`` beside ``NPUToolConfig``, ``name = "nsight"``) has nothing
    to port."""
    for inner in ast.walk(node):
        if inner is node:
            continue
        if isinstance(inner, ast.Name):
            text = inner.id
        elif isinstance(inner, ast.Attribute):
            text = inner.attr
        elif isinstance(inner, ast.Constant) and isinstance(inner.value, str):
            text = inner.value.split(":")[0]  # a device string (``"cuda:0"``), not a tool name
            if text.lower() not in TARGET_DEVICES:
                continue
        else:
            continue
        if vendor_of(text, words) in BACKEND_VENDORS:  # a ROCm backend runs torch.cuda too
            return True
    return False


def _backend_at(node, vendor: str, kind: str, siblings: set[str]) -> Backend:
    line = node.lineno
    keyword = "class " if kind == "class" else "def "
    start = node.col_offset + (6 if isinstance(node, ast.AsyncFunctionDef) else 0)
    span = Span(line, start, line, start + len(keyword) + len(node.name))
    first = min([line, *(d.lineno for d in node.decorator_list)])
    last = node.end_lineno or line
    return Backend(vendor, kind, node.name, frozenset(siblings), span, first, last)


# -- registered functions ------------------------------------------------------------------------


def _registrations(node: ast.AST, words: dict[str, str]) -> list[tuple[str, str]]:
    """(decorator, vendor) for each decorator of ``node`` called with a device-type string."""
    found = []
    for decorator in getattr(node, "decorator_list", ()):
        if not isinstance(decorator, ast.Call):
            continue
        for argument in [*decorator.args, *(kw.value for kw in decorator.keywords)]:
            if isinstance(argument, ast.Constant) and isinstance(argument.value, str):
                vendor = words.get(argument.value.lower())
                if vendor is not None:
                    found.append((ast.unparse(decorator.func), vendor))
    return found


def _registered_backends(tree: ast.Module, words: dict[str, str]) -> list[Backend]:
    functions = [
        node
        for scope in [tree, *(n for n in tree.body if isinstance(n, ast.ClassDef))]
        for node in scope.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.decorator_list
    ]
    registered = [(node, _registrations(node, words)) for node in functions]
    found = []
    for node, registrations in registered:
        for decorator, vendor in registrations:
            if vendor not in BACKEND_VENDORS:
                continue
            siblings = {
                other_vendor
                for other, others in registered
                if other is not node
                for other_decorator, other_vendor in others
                if other_decorator == decorator and other_vendor != vendor
            }
            if siblings:
                found.append(_backend_at(node, vendor, "function", siblings))
                break
    return found


# -- the finding ---------------------------------------------------------------------------------


def backend_finding(
    backend: Backend, path: str, catalog: Catalog, sites: int = 0, rocm_runs_cuda: bool = True
) -> Finding:
    """The summary of a backend; ``sites``: for a lone class, how many findings it stands for.
    ``rocm_runs_cuda``: ROCm builds of PyTorch run a CUDA backend written in Python, so ROCm is
    never missing from one; a folder of CUDA C++ or of NVIDIA images (``vendor_folders``) needs
    a ROCm sibling of its own."""
    rule = catalog.rules["PRT105"]
    siblings = [t for t in TARGETS if t in backend.siblings]
    missing = [
        t
        for t in TARGETS
        if t not in backend.siblings
        and t != backend.vendor
        and not (rocm_runs_cuda and backend.vendor == "cuda" and t == "rocm")
    ]
    targets: dict[str, Advice] = {}
    for target in TARGETS:
        if target in missing:
            targets[target] = Advice(Status.MANUAL, None, f"no {target} backend beside it")
        elif target != backend.vendor:
            targets[target] = PORTABLE
    label = {"class": "", "module": " module", "function": " function", "package": " package"}[
        backend.kind
    ]
    message = f"{TITLES[backend.vendor]} backend{label} `{backend.name}`"
    if backend.lone:
        title = TITLES[backend.vendor]
        sites_run = f"{sites} {title} sites run" if sites != 1 else f"1 {title} site runs"
        said = f"named for {title}, with no sibling class for another vendor"
        if backend.declared:
            said = f"declares in `{backend.declared}` that it supports {title} devices alone"
        kind, builds = "class", "builds"
        if backend.kind == "module":
            kind, builds = "module", "imports"
            said = f"named for {title} graphs, with no sibling module for another vendor"
        message = (
            f"{title} {kind} `{backend.name}`: {said}; its {sites_run} wherever the code that"
            f" {builds} it lets them"
        )
    siblings += sorted(s for s in backend.siblings if s not in TARGETS)
    parts = []
    if siblings:
        parts.append("siblings " + ", ".join(siblings))
    if missing:
        parts.append("no backend for " + ", ".join(missing))
    if parts:
        message += ": " + "; ".join(parts)
    if not missing:  # every target has a backend: the summary has no target left to narrow to
        targets = {}
    return rule.finding(path, backend.span, message, backend.name, targets)

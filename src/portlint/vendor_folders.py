"""Build, deployment and C++/CUDA files in a project laid out by vendor (PRT105).

A multi-vendor benchmark or deployment suite keeps one folder per vendor, each run only on that
vendor's machines: ``toolkits/gemm/nvidia/A100/gemm.cu`` beside ``toolkits/gemm/ascend/A3/``,
``toolkits/gemm/cambricon/MLU/`` and ``toolkits/gemm/kunlunxin/R300/``. For such files:

- in a folder named for CUDA or ROCm beside folders named for another accelerator's vendor (not
  the CPU alone: ``csrc/cuda/`` beside ``csrc/cpu/`` is one extension's two builds) and with no
  ``__init__.py`` (a Python package's ``__init__.py`` carries its own summary), the file is that
  vendor's backend: its sites become one PRT105 summary at its first line, which names the
  targets with a sibling folder and those without, once per folder in a run (the folder's
  first file in path order that has sites carries it: ``FolderSummaries``);
- in a folder named for another vendor (``kunlunxin/``, ``ascend/``) beside other vendors'
  folders, the file is that vendor's: its sites list that vendor's target alone, and none where
  the vendor is no portlint target. So is a build or deployment file named for one
  (``Dockerfile.rocm``, ``requirements-xpu.txt``: ``named_scope``).

Python modules follow the same folders in ``python.backends`` and ``python.analyser``; this
module applies them to the findings of every other kind of file. Folder names are matched with
the words of ``rules/device.toml`` ``[backend.vendors]`` (``python.backend_packages``).
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING, NamedTuple

from portlint.model import TARGETS, Span
from portlint.python.backend_packages import (
    BACKEND_VENDORS,
    GENERIC_WORDS,
    Package,
    catalogue_words,
    other_vendor_folder,
    package_of,
)

if TYPE_CHECKING:
    from portlint.catalog import Catalog
    from portlint.model import FileResult, Finding

#: The rule of a backend's summary.
SUMMARY = "PRT105"

#: Vendors whose folders are no other vendor's code: CUDA's and ROCm's are backends, and a
#: ``cpu/`` folder holds what every machine may run.
OWN_VENDORS = frozenset({*BACKEND_VENDORS, "cpu"})


class FolderScope(NamedTuple):
    #: The CUDA or ROCm backend folder the file belongs to, when its sites become one summary.
    backend: Package | None = None
    #: For a file of another vendor's folder, the targets that run it (empty: none of ours).
    only: frozenset[str] | None = None


NO_SCOPE = FolderScope()


def named_scope(path: str) -> FolderScope:
    """What a build or deployment file's own name says of who runs it: ``Dockerfile.rocm``,
    ``requirements-xpu.txt``, ``Dockerfile.torch2100.vllm.AMD`` are those vendors' (the first
    word of the name that names a vendor other than CUDA or the CPU; a "GPU" names none)."""
    words = catalogue_words()
    for part in re.split(r"[._-]", os.path.basename(path).lower()):
        vendor = words.get(part)
        if vendor is None or part in GENERIC_WORDS:
            continue
        if vendor in ("cuda", "cpu"):
            return NO_SCOPE
        return FolderScope(only=frozenset({vendor}) & frozenset(TARGETS))
    return NO_SCOPE


def folder_scope(path: str) -> FolderScope:
    """What the folders above a (non-Python) file say of who runs it."""
    words = catalogue_words()
    package = package_of(path, words, BACKEND_VENDORS)
    if package is not None:
        if _named_generically(package.folder):
            return NO_SCOPE  # ``GPU/`` beside ``NPU/``: Intel's GPUs in ipex-llm's examples
        accelerators = package.siblings - {"cpu"}
        has_init = os.path.exists(os.path.join(package.folder, "__init__.py"))
        if accelerators and not has_init and package.owns(path):
            return FolderScope(backend=package)
        return NO_SCOPE
    vendor = other_vendor_folder(path, words, OWN_VENDORS)
    if vendor is None:
        return NO_SCOPE
    return FolderScope(only=frozenset({vendor}) & frozenset(TARGETS))


def _named_generically(folder: str) -> bool:
    """The folder says "GPU" and names no vendor (``GPU/``, ``gpu_kernels/``): any vendor's GPU
    may be meant."""
    words = catalogue_words()
    parts = os.path.basename(folder).lower().split("_")
    named = [part for part in parts if part in words]
    return all(part in GENERIC_WORDS for part in named)


def scope_key(path: str) -> str:
    """``folder_scope`` as text that is the same in every process, for the cache."""
    scope = folder_scope(path)
    backend = scope.backend
    if backend is not None:
        return repr((backend.vendor, backend.folder, sorted(backend.siblings)))
    return "" if scope.only is None else repr(sorted(scope.only))


def apply_scope(
    path: str, findings: list[Finding], catalog: Catalog, by_name: bool = False
) -> list[Finding]:
    """``findings`` of one file as its folders have them (``folder_scope``), and, ``by_name``
    (a build or deployment file), as its own name has them where its folders say nothing
    (``named_scope``). Findings that name no target (a parse error, an unreadable file) always
    stay."""
    scope = folder_scope(path)
    if scope == NO_SCOPE and by_name:
        scope = named_scope(path)
    if scope.only is not None:
        wanted = tuple(sorted(scope.only))
        narrowed = (finding.for_targets(wanted) for finding in findings)  # untargeted: kept
        return [finding for finding in narrowed if finding is not None]
    if scope.backend is None:
        return findings
    kept = [finding for finding in findings if not finding.targets]
    if len(kept) == len(findings):
        return findings
    return [_summary(scope.backend, path, catalog), *kept]


def _summary(package: Package, path: str, catalog: Catalog) -> Finding:
    """The backend folder's PRT105 summary, at the file's first line. Outside PyTorch's own
    build, ROCm does not run CUDA code: without a ROCm sibling, a CUDA folder lacks ROCm too."""
    from portlint.python.backends import Backend, backend_finding

    name = os.path.basename(package.folder) + "/"
    backend = Backend(package.vendor, "package", name, package.siblings, Span(1, 0, 1, 0), 1, 1)
    return backend_finding(backend, path, catalog, rocm_runs_cuda=False)


class FolderSummaries:
    """One summary per backend folder in a run. Each file of such a folder stands for the
    folder (``apply_scope``), and a run lists its files in path order, so the first of them
    with sites carries the folder's summary; the same summary on the folder's later files
    says nothing new and is left out. A file linted alone still carries it."""

    def __init__(self) -> None:
        self.summarised: set[str] = set()

    def once(self, result: FileResult) -> FileResult:
        findings = result.findings
        if not isinstance(findings, tuple) or not any(f.code == SUMMARY for f in findings):
            return result  # a file read in parts is no backend folder's: its findings stay
        backend = folder_scope(result.path).backend
        if backend is None:
            return result
        if backend.folder not in self.summarised:
            self.summarised.add(backend.folder)
            return result
        name = os.path.basename(backend.folder) + "/"

        def others(found: tuple[Finding, ...]) -> tuple[Finding, ...]:
            return tuple(f for f in found if not (f.code == SUMMARY and f.symbol == name))

        return result._replace(
            findings=others(findings), findings_before_fix=others(result.findings_before_fix)
        )

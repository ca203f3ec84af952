"""The tests of a project's own CUDA extension: a test folder inside a folder of CUDA sources
(``fused_kernels/tests/test_fused_kernels.py`` beside ``fused_kernels/scaled_softmax_cuda.cu``).
The extension is built only for CUDA and, hipified, for ROCm, and its tests run only there: like
the code after an import of the extension (``[extension_modules]`` in rules/packages.toml),
nothing in them is another target's site; the kernels are (PRT7xx).

Found from paths and folder listings alone, so that the cache can tell whether what a file's
findings depend on has changed (``facts``) without parsing anything.
"""

from __future__ import annotations

import functools
import os


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


def facts(path: str) -> str:
    """What ``extension_folder`` read for the file, as text for the cache key."""
    folder = extension_folder(path)
    return "" if folder is None else repr((folder, extension_sources(folder)))

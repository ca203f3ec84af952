"""Backend packages (PRT105): the folder lookup the cache runs for every folder of a run."""

from __future__ import annotations

import os
import random

from portlint.python.backend_packages import MAX_DEPTH, _vendor_folder, catalogue_words


def _vendor_folder_plainly(path: str, words: dict[str, str]) -> str | None:
    """The lookup written with os.path, walking up from the normalised absolute path."""
    folder = os.path.dirname(os.path.abspath(path))
    for _ in range(MAX_DEPTH):
        parent, name = os.path.split(folder)
        if not name or parent == folder:
            return None
        if any(part in words for part in name.lower().split("_")):
            return folder
        folder = parent
    return None


def test_the_string_lookup_finds_the_folder_os_path_finds():
    words = catalogue_words()
    names = ["a", "cuda", "npu_x", "x_gpu", "lib", "ops", "Cuda", "k", "..", ".", ".hidden"]
    chooser = random.Random(13)
    for _ in range(20_000):
        parts = [chooser.choice(names) for _ in range(chooser.randint(0, 9))]
        path = "/".join([*parts, "f.py"])
        if chooser.random() < 0.5:
            path = "/" + path
        assert _vendor_folder(path, words) == _vendor_folder_plainly(path, words), path

"""Which build and deployment files portlint lints, recognised by name and, for scripts without a
suffix, by their first line.

Kept free of parser imports: discovery calls ``deploy_language`` for every file it walks.
"""

from __future__ import annotations

import fnmatch
import re
from pathlib import Path

#: File-name globs (matched case-insensitively against the name alone) -> language.
#: The first match wins, so specific names come before suffix globs.
NAME_PATTERNS: tuple[tuple[str, str], ...] = (
    ("dockerfile", "dockerfile"),
    ("dockerfile.*", "dockerfile"),
    ("*.dockerfile", "dockerfile"),
    ("containerfile", "dockerfile"),
    ("containerfile.*", "dockerfile"),
    ("*.containerfile", "dockerfile"),
    ("setup.py", "python-setup"),
    ("setup.cfg", "setup-cfg"),
    ("pyproject.toml", "pyproject"),
    ("requirements*.txt", "requirements"),
    ("requirements*.in", "requirements"),
    ("*requirements.txt", "requirements"),
    ("constraints*.txt", "requirements"),
    ("cmakelists.txt", "cmake"),
    ("*.cmake", "cmake"),
    ("*.yml", "yaml"),
    ("*.yaml", "yaml"),
    ("*.sh", "shell"),
    ("*.bash", "shell"),
)
#: Folders whose ``*.txt`` files are requirement lists (``requirements/base.txt``).
REQUIREMENT_FOLDERS = frozenset({"requirements", "reqs"})
#: ``#!/bin/sh``, ``#!/usr/bin/env bash``, ``#!/bin/bash -e``, ...
SHELL_SHEBANG = re.compile(rb"^#![ \t]*\S*?(?:/|env[ \t]+(?:-\S+[ \t]+)*)(?:ba|da|k|z)?sh\b")
SHEBANG_BYTES = 128


def deploy_language(path: Path) -> str | None:
    """The deployment-file language of ``path``, or None when it is none of them."""
    name = path.name.lower()
    for pattern, language in NAME_PATTERNS:
        if fnmatch.fnmatchcase(name, pattern):
            return language
    if path.suffix.lower() == ".txt" and path.parent.name.lower() in REQUIREMENT_FOLDERS:
        return "requirements"
    if not path.suffix and has_shell_shebang(path):
        return "shell"
    return None


def has_shell_shebang(path: Path) -> bool:
    """Whether a file starts with a shell ``#!`` line; reads at most a few bytes."""
    try:
        if not path.is_file():  # a FIFO would block the open
            return False
        with path.open("rb") as handle:
            head = handle.read(SHEBANG_BYTES)
    except OSError:
        return False
    return SHELL_SHEBANG.match(head) is not None

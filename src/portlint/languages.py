"""Source languages by file suffix: one table that discovery, suppression comments, ``--add-noqa``,
the C++ parser and the pre-commit hooks all read, so that they cannot disagree about a file.

Build and deployment files (Dockerfiles, YAML, requirement lists, CMake, shell scripts) are
recognised by name or first line instead: ``portlint.deploy.files``.
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple


class Language(NamedTuple):
    #: The engine's analyser for the language (``engine.ANALYSERS``).
    analyser: str
    #: How a suppression comment is written: ``"#"`` (a ``noqa`` comment) or ``"//"``
    #: (``// NOLINT(portlint-PRT701)``).
    comment: str
    #: The tree-sitter grammar that parses it, if any (``portlint.cxx.parsing``).
    grammar: str | None
    #: The file-type tag pre-commit's ``identify`` gives the suffix; None when it has none, and
    #: the hook selects such files by name instead.
    hook_tag: str | None


PYTHON = "python"
CXX = "cxx"


def _python(tag: str) -> Language:
    return Language(PYTHON, "#", None, tag)


def _cxx(tag: str | None) -> Language:
    # tree-sitter-cuda is tree-sitter-cpp plus CUDA's syntax, and leaves fewer ERROR nodes on
    # plain C and C++ too (benchmarks/grammar_errors.py): one grammar for every suffix.
    return Language(CXX, "//", "cuda", tag)


#: suffix (lower case) -> language.
LANGUAGES: dict[str, Language] = {
    ".py": _python("python"),
    ".pyi": _python("pyi"),
    ".cu": _cxx("cuda"),
    ".cuh": _cxx("cuda"),
    ".hip": _cxx(None),
    ".c": _cxx("c"),
    ".h": _cxx("c++"),
    ".cc": _cxx("c++"),
    ".cpp": _cxx("c++"),
    ".cxx": _cxx("c++"),
    ".c++": _cxx("c++"),
    ".hpp": _cxx("c++"),
    ".hh": _cxx("c++"),
    ".hxx": _cxx("c++"),
    ".h++": _cxx(None),
    ".inl": _cxx("c++"),
}


def language_by_suffix(suffix: str) -> Language | None:
    return LANGUAGES.get(suffix.lower())


def is_python_path(path: str) -> bool:
    language = language_by_suffix(Path(path).suffix)
    return language is not None and language.analyser == PYTHON

"""Which files to lint: walk the given paths, honour .gitignore, default and configured excludes."""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from portlint.config import Configurations, Settings
from portlint.deploy.files import deploy_language
from portlint.languages import LANGUAGES

if TYPE_CHECKING:
    import pathspec

#: Folder names never entered unless given explicitly (virtual environments, build output,
#: vendored code and vendored CUDA SDK headers).
DEFAULT_EXCLUDES = (
    ".git",
    ".hg",
    ".svn",
    ".venv",
    "venv",
    ".tox",
    ".nox",
    ".mypy_cache",
    ".ruff_cache",
    ".pytest_cache",
    "__pycache__",
    "node_modules",
    "site-packages",
    "build",
    "dist",
    "third_party",
    "third-party",
    "thirdparty",
    "external",
    "vendor",
    # Vendored NVIDIA libraries and SDK samples: their CUDA code is not the project's to port.
    "cuda-samples",
    "cutlass",
    "cccl",
    "cub",
    "thrust",
)

#: File suffix -> language name (the analyser's), from the languages table.
LANGUAGE_BY_SUFFIX = {suffix: language.analyser for suffix, language in LANGUAGES.items()}


@dataclass(frozen=True)
class Candidate:
    path: Path
    language: str
    #: Given on the command line by name (not found by walking a folder).
    explicit: bool = False
    #: The settings this file uses (its closest configuration); None: the run's own.
    settings: Settings | None = None


def language_of(path: Path) -> str | None:
    """The language a file is linted as: by suffix, else by name or shebang (deployment files)."""
    if path.name.lower() == "setup.py":
        return deploy_language(path)
    return LANGUAGE_BY_SUFFIX.get(path.suffix.lower()) or deploy_language(path)


class Walker:
    """Files to lint under the given paths, each with the settings of its closest configuration
    (whose excludes apply to it, relative to that configuration's folder)."""

    def __init__(self, settings: Settings | Configurations, respect_gitignore: bool = True) -> None:
        self.configurations = settings if isinstance(settings, Configurations) else None
        self.settings = settings if isinstance(settings, Settings) else settings.default
        self.respect_gitignore = respect_gitignore
        self._explicit_root: Path | None = None
        self._ignore_cache: dict[Path, pathspec.GitIgnoreSpec | None] = {}
        self._exclude_cache: dict[int, pathspec.GitIgnoreSpec | None] = {}

    def settings_for(self, path: Path) -> Settings:
        if self.configurations is None:
            return self.settings
        return self.configurations.for_file(path)

    def _exclude_spec(self, settings: Settings) -> pathspec.GitIgnoreSpec | None:
        key = id(settings)
        if key not in self._exclude_cache:
            patterns = (*settings.exclude, *settings.extend_exclude)
            self._exclude_cache[key] = _gitignore_spec(patterns) if patterns else None
        return self._exclude_cache[key]

    def is_excluded(self, path: Path, is_dir: bool) -> bool:
        if is_dir and path.name in DEFAULT_EXCLUDES:
            return True
        settings = self.settings_for(path)
        exclude = self._exclude_spec(settings)
        if exclude is not None:
            relative = _relative_posix(path, settings.root)
            if relative and exclude.match_file(relative + ("/" if is_dir else "")):
                return True
        return self.respect_gitignore and self._gitignored(path, is_dir)

    def _gitignored(self, path: Path, is_dir: bool) -> bool:
        for folder in path.parents:
            if self._explicit_root is not None and self._explicit_root not in (
                folder,
                *folder.parents,
            ):
                break  # above a folder named on the command line, which is linted as asked
            spec = self._gitignore_spec(folder)
            if spec is not None:
                relative = path.relative_to(folder).as_posix() + ("/" if is_dir else "")
                if spec.match_file(relative):
                    return True
            if (folder / ".git").exists():
                break
        return False

    def _gitignore_spec(self, folder: Path) -> pathspec.GitIgnoreSpec | None:
        if folder not in self._ignore_cache:
            spec = None
            ignore_file = folder / ".gitignore"
            if ignore_file.is_file():
                try:
                    lines = ignore_file.read_text(encoding="utf-8", errors="replace").splitlines()
                    spec = _gitignore_spec(lines)
                except OSError:
                    spec = None
            self._ignore_cache[folder] = spec
        return self._ignore_cache[folder]

    def walk(self, paths: list[Path], force_exclude: bool = False) -> Iterator[Candidate]:
        seen: set[Path] = set()
        for given in paths:
            if given.is_dir():
                yield from self._walk_dir(given.absolute(), given, seen)
                continue
            language = language_of(given) or "unknown"
            if force_exclude and self.is_excluded(given.absolute(), is_dir=False):
                continue
            key = given.absolute()
            if key not in seen:
                seen.add(key)
                yield Candidate(given, language, explicit=True, settings=self.settings_for(key))

    def _walk_dir(self, absolute: Path, shown: Path, seen: set[Path]) -> Iterator[Candidate]:
        # A folder named on the command line is linted even if a .gitignore above it excludes it;
        # then only the .gitignore files inside it apply.
        self._explicit_root = absolute if self._gitignored(absolute, is_dir=True) else None
        try:
            yield from self._walk_tree(absolute, shown, seen)
        finally:
            self._explicit_root = None

    def _walk_tree(self, absolute: Path, shown: Path, seen: set[Path]) -> Iterator[Candidate]:
        for root, dirs, files in os.walk(absolute):
            root_path = Path(root)
            dirs[:] = sorted(d for d in dirs if not self.is_excluded(root_path / d, is_dir=True))
            for name in sorted(files):
                full = root_path / name
                language = language_of(full)
                if language is None or full in seen or self.is_excluded(full, is_dir=False):
                    continue
                seen.add(full)
                yield Candidate(
                    shown / full.relative_to(absolute), language, settings=self.settings_for(full)
                )


def _gitignore_spec(lines: list[str] | tuple[str, ...]) -> pathspec.GitIgnoreSpec:
    # Imported on first use: a hook run on named files without excludes never needs it.
    import pathspec

    return pathspec.GitIgnoreSpec.from_lines(lines)


def matches_glob(path: str, pattern: str) -> bool:
    """per-file-ignores matching: a glob against the path or its file name."""
    return fnmatch.fnmatch(path, pattern) or fnmatch.fnmatch(os.path.basename(path), pattern)


def _relative_posix(path: Path, root: Path) -> str | None:
    try:
        return path.relative_to(root.absolute()).as_posix()
    except ValueError:
        return None

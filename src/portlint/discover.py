"""Which files to lint: walk the given paths, honour .gitignore, default and configured excludes."""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from portlint.config import Configurations, Settings
from portlint.deploy.files import deploy_language
from portlint.languages import LANGUAGES

if TYPE_CHECKING:
    import pathspec

    #: (folder with a trailing separator, its .gitignore), nearest folder first.
    IgnoreChain = tuple[tuple[str, pathspec.GitIgnoreSpec], ...]

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


class Candidate(NamedTuple):
    #: The path as shown in reports: a string (a Path object for each of a large tree's files
    #: costs as much as the rest of the walk).
    path: str
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
        # --config and --isolated fix one settings for every file: nothing to look up per folder
        self.configurations = (
            settings if isinstance(settings, Configurations) and settings.fixed is None else None
        )
        self.settings = settings if isinstance(settings, Settings) else settings.default
        self.respect_gitignore = respect_gitignore
        self._explicit_root: Path | None = None
        self._ignore_cache: dict[Path, pathspec.GitIgnoreSpec | None] = {}
        self._exclude_cache: dict[int, tuple[pathspec.GitIgnoreSpec | None, str]] = {}
        self._settings_by_folder: dict[str, Settings] = {}
        #: Absolute folder -> the names of the files in it, as the walk listed them (the cache
        #: hashes a Python file's neighbours from them instead of listing the folder again).
        self.listings: dict[str, list[str]] = {}

    def settings_for(self, path: Path | str) -> Settings:
        """The settings of the file at ``path`` (absolute), found once per folder."""
        if self.configurations is None:
            return self.settings
        folder = os.path.dirname(str(path))
        settings = self._settings_by_folder.get(folder)
        if settings is None:
            settings = self.configurations.for_folder(Path(folder))
            self._settings_by_folder[folder] = settings
        return settings

    def _walked_settings(self, folder: str, files: list[str], top: str) -> Settings:
        """``settings_for`` a file in ``folder``, met while walking below ``top``: its parent's
        settings unless its listing has a configuration or a ``pyproject.toml`` (the folder of a
        project's own pins), which saves looking for those files in every folder."""
        if self.configurations is None:
            return self.settings
        if folder != top and "pyproject.toml" not in files and "portlint.toml" not in files:
            inherited = self._settings_by_folder.get(os.path.dirname(folder))
            if inherited is not None:
                self._settings_by_folder[folder] = inherited
                return inherited
        return self.settings_for(os.path.join(folder, ""))

    def _exclude_spec(self, settings: Settings) -> tuple[pathspec.GitIgnoreSpec | None, str]:
        """The excludes of ``settings`` and the folder (with a trailing separator) they are
        relative to."""
        key = id(settings)
        if key not in self._exclude_cache:
            patterns = (*settings.exclude, *settings.extend_exclude)
            spec = _gitignore_spec(patterns) if patterns else None
            self._exclude_cache[key] = (spec, os.path.join(str(settings.root.absolute()), ""))
        return self._exclude_cache[key]

    def is_excluded(self, path: Path, is_dir: bool) -> bool:
        return self._excluded(str(path), path.name, is_dir, None)

    def _excluded(self, full: str, name: str, is_dir: bool, ignores: IgnoreChain | None) -> bool:
        """``full`` is absolute; ``ignores`` are the .gitignore specs of its folder, when known."""
        if is_dir and name in DEFAULT_EXCLUDES:
            return True
        exclude, root = self._exclude_spec(self.settings_for(full))
        if exclude is not None:
            relative = _relative_posix(full, root)
            if relative and exclude.match_file(relative + ("/" if is_dir else "")):
                return True
        return self.respect_gitignore and self._gitignored(full, is_dir, ignores)

    def _gitignored(self, full: str, is_dir: bool, ignores: IgnoreChain | None = None) -> bool:
        if ignores is None:
            ignores = self._ignores_of(Path(full).parent)
        suffix = "/" if is_dir else ""
        return any(
            spec.match_file(full[len(folder) :].replace(os.sep, "/") + suffix)
            for folder, spec in ignores
        )

    def _ignores_of(self, folder: Path) -> IgnoreChain:
        """The .gitignore specs that apply in ``folder``: its own and its parents', up to the
        repository root (a folder with ``.git``) or the folder named on the command line."""
        chain: list[tuple[str, pathspec.GitIgnoreSpec]] = []
        for current in (folder, *folder.parents):
            spec = self._gitignore_spec(current)
            if spec is not None:
                chain.append((os.path.join(str(current), ""), spec))
            if current == self._explicit_root or (current / ".git").exists():
                break
        return tuple(chain)

    def _ignores_below(
        self, folder: str, names: list[str], files: list[str], above: IgnoreChain
    ) -> IgnoreChain:
        """``_ignores_of`` for a folder met while walking, from its parent's: nothing is
        looked up twice."""
        here = () if ".git" in names or ".git" in files else above
        if ".gitignore" not in files:
            return here
        spec = self._gitignore_spec(Path(folder))
        return ((os.path.join(folder, ""), spec), *here) if spec is not None else here

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
        seen: set[str] = set()
        for given in paths:
            if given.is_dir():
                yield from self._walk_dir(given.absolute(), given, seen)
                continue
            language = language_of(given) or "unknown"
            if force_exclude and self.is_excluded(given.absolute(), is_dir=False):
                continue
            key = str(given.absolute())
            if key not in seen:
                seen.add(key)
                yield Candidate(
                    str(given), language, explicit=True, settings=self.settings_for(key)
                )

    def _walk_dir(self, absolute: Path, shown: Path, seen: set[str]) -> Iterator[Candidate]:
        # A folder named on the command line is linted even if a .gitignore above it excludes it;
        # then only the .gitignore files inside it apply.
        ignored = self.respect_gitignore and self._gitignored(str(absolute), is_dir=True)
        self._explicit_root = absolute if ignored else None
        try:
            yield from self._walk_tree(absolute, shown, seen)
        finally:
            self._explicit_root = None

    def _walk_tree(self, absolute: Path, shown: Path, seen: set[str]) -> Iterator[Candidate]:
        # Strings, not Path objects, for every file: the walk is most of a cached run's time.
        top = str(absolute)
        # As pathlib shows the path (the paths are strings): "x/y.py" under ".", not "./x/y.py".
        shown_prefix = "" if str(shown) == "." else os.path.join(str(shown), "")
        outer = self.respect_gitignore and self._explicit_root is None
        ignores = {top: self._ignores_of(absolute.parent) if outer else ()}
        for root, dirs, files in os.walk(top):
            self.listings[root] = files
            above = ignores.pop(root)
            here = self._ignores_below(root, dirs, files, above) if self.respect_gitignore else ()
            inside = os.path.join(root, "")  # the folder with a separator: names are appended
            # The files of one folder share their settings, and so their excludes.
            settings = self._walked_settings(root, files, top)
            kept = sorted(d for d in dirs if not self._excluded(inside + d, d, True, here))
            dirs[:] = kept
            ignores.update((inside + d, here) for d in kept)
            prefix = inside[len(top) + 1 :]
            may_exclude = bool(here) or self._exclude_spec(settings)[0] is not None
            for name in sorted(files):
                language = LANGUAGE_BY_SUFFIX.get(_suffix(name).lower())
                if language is None or name.lower() == "setup.py":
                    language = language_of(Path(root, name))
                full = inside + name
                if language is None or (may_exclude and self._excluded(full, name, False, here)):
                    continue
                if full in seen:
                    continue
                seen.add(full)
                yield Candidate(shown_prefix + prefix + name, language, settings=settings)


def _suffix(name: str) -> str:
    """``os.path.splitext(name)[1]`` of a file name (no separator in it): the last dot and what
    follows, unless only dots come before it (``.bashrc`` has none)."""
    dot = name.rfind(".")
    return name[dot:] if dot > 0 and name[:dot].lstrip(".") else ""


def _gitignore_spec(lines: list[str] | tuple[str, ...]) -> pathspec.GitIgnoreSpec:
    # Imported on first use: a hook run on named files without excludes never needs it.
    import pathspec

    return pathspec.GitIgnoreSpec.from_lines(lines)


def matches_glob(path: str, pattern: str) -> bool:
    """per-file-ignores matching: a glob against the path or its file name."""
    return fnmatch.fnmatch(path, pattern) or fnmatch.fnmatch(os.path.basename(path), pattern)


def _relative_posix(path: str, root: str) -> str | None:
    if not path.startswith(root):
        return None
    return path[len(root) :].replace(os.sep, "/")

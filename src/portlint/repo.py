"""Where the repository is, and paths relative to it, as CI annotations need them."""

from __future__ import annotations

import functools
import os
from pathlib import Path


class GitError(Exception):
    """A git command failed; the message is one line for the user."""


def run_git(args: list[str], cwd: Path | None = None) -> str:
    """Run ``git ARGS`` with output that no user configuration can change."""
    import subprocess  # here: most runs never start git, and the import costs 7 ms

    command = ["git", "-c", "core.quotePath=false", *args]
    try:
        done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, check=False)
    except OSError as error:
        raise GitError(f"cannot run git: {error.strerror or error}") from None
    if done.returncode != 0:
        message = done.stderr.strip().splitlines()
        raise GitError(f"git {args[0]} failed: {message[-1] if message else done.returncode}")
    return done.stdout


def repository_root(start: Path | None = None) -> Path:
    """The top of the git work tree around ``start`` (default: the current folder), or that
    folder itself outside a repository."""
    return _repository_root((start or Path.cwd()).resolve())


@functools.cache
def _repository_root(folder: Path) -> Path:
    try:
        top = run_git(["rev-parse", "--show-toplevel"], cwd=folder).strip()
    except GitError:
        return folder
    return Path(top).resolve() if top else folder


def relative_path(path: str, root: Path) -> str:
    """``path`` relative to ``root`` with forward slashes; as given when it lies outside."""
    absolute = Path(os.path.realpath(path))
    try:
        return absolute.relative_to(root).as_posix()
    except ValueError:
        return Path(path).as_posix()

"""The command's entry point, with a fast path for the commonest pre-commit run: Python files
named on the command line, none of which holds a word any rule looks for.

Such a run reports nothing but ``All checks passed (N files checked).``. Before importing the
command line, the configuration and the catalogue (most of a run's start-up), this module reads
the named files and answers itself when every condition below holds; otherwise it hands the run,
untouched, to ``portlint.cli.main``:

- no option, no subcommand, and standard output is not a terminal (no colour to match);
- every argument is a distinct regular ``.py`` file of at most 10 MiB, UTF-8 without NUL bytes
  or an encoding declaration (anything else may be a PRT002 finding);
- no file has a candidate word (``portlint.python.prefilter``, the full run's own prefilter),
  nor a suppression comment's words (``noqa``, ``portlint``, ``NOLINT``: an unused one is a
  PRT003 finding);
- no configuration applies: neither the working folder nor any folder above a file holds a
  ``portlint.toml``, or a ``pyproject.toml`` that mentions portlint.

The full run would also write the files' cache entries; a later run that misses them only
reads the files again.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from stat import S_ISREG

#: The largest file the fast path reads: ``portlint.config.DEFAULT_MAX_FILE_SIZE``.
MAX_SIZE = 10 * 1024 * 1024
#: Words of suppression comments (``portlint.suppress``), looked for in lower-cased text.
SUPPRESSION_WORDS = ("noqa", "portlint", "nolint")


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    count = clean_run(args)
    if count is not None:
        sys.stdout.write(f"All checks passed ({count} files checked).\n")
        return 0
    from portlint.cli import main as full_run

    return full_run(args)


def clean_run(args: list[str]) -> int | None:
    """How many files the run checks, when it is one the fast path answers; else None."""
    if not args or args[0] in ("rule", "check") or sys.stdout.isatty():
        return None
    if any(arg.startswith("-") or not arg.endswith(".py") for arg in args):
        return None
    if any(os.path.basename(arg) == "__init__.py" for arg in args):
        return None  # a backend package's __init__.py carries its summary, whatever its text
    absolute = [os.path.abspath(arg) for arg in args]
    if len(set(absolute)) != len(absolute):
        return None
    folders = {os.getcwd(), *(os.path.dirname(path) for path in absolute)}
    if any(_configured(folder) for folder in folders):
        return None
    from portlint.python.prefilter import is_candidate

    for path in absolute:
        text = _plain_text(path)
        if text is None or is_candidate(text):
            return None
        lowered = text.lower()
        if any(word in lowered for word in SUPPRESSION_WORDS):
            return None
    return len(absolute)


def _plain_text(path: str) -> str | None:
    """The file's text when it is a regular UTF-8 file the full run reads the same way."""
    try:
        stat = os.stat(path)
        if not S_ISREG(stat.st_mode) or stat.st_size > MAX_SIZE:
            return None  # opening a pipe would wait for a writer
        with open(path, "rb") as stream:
            raw = stream.read()
    except OSError:
        return None
    head = raw[:512]
    if b"\0" in raw or head.startswith((b"\xff\xfe", b"\xfe\xff")) or b"coding" in head:
        return None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _configured(folder: str) -> bool:
    """``folder`` or a folder above it holds a configuration portlint may read."""
    while True:
        if os.path.isfile(os.path.join(folder, "portlint.toml")):
            return True
        pyproject = os.path.join(folder, "pyproject.toml")
        if os.path.isfile(pyproject):
            try:
                with open(pyproject, "rb") as stream:
                    if b"portlint" in stream.read():
                        return True
            except OSError:
                return True
        parent = os.path.dirname(folder)
        if parent == folder:
            return False
        folder = parent

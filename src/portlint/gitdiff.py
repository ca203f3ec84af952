"""``--diff-base``: which lines a branch adds, so that only findings on them are reported.

The lines come from ``git diff -U0 MERGE_BASE`` (the working tree against the merge base of the
given ref and ``HEAD``), so committed and uncommitted changes both count; untracked files that git
does not ignore count as new in full. Modes:

- ``added``: findings that start or end on an added or changed line;
- ``context``: also those within ``CONTEXT_LINES`` lines of a change (as a review shows them);
- ``file``: every finding in a file the branch touches.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path

from portlint.model import Finding
from portlint.repo import GitError, run_git

MODES = ("added", "context", "file")
CONTEXT_LINES = 3
HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(?P<start>\d+)(?:,(?P<count>\d+))? @@")
#: Escapes git uses in quoted path names ("a\tb.py").
C_ESCAPES = {"a": "\a", "b": "\b", "t": "\t", "n": "\n", "v": "\v", "f": "\f", "r": "\r"}


class ChangedLines:
    """Per path (relative to the repository root): the new-side lines a change added."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.lines: dict[str, set[int]] = {}
        #: Files new in full (untracked, or added since the base).
        self.new_files: set[str] = set()
        #: Per path, the new-side line after which lines were only deleted (for ``context``).
        self.deletions: dict[str, set[int]] = {}

    def touches(self, path: str, first: int, last: int, mode: str) -> bool:
        key = self.key(path)
        if key in self.new_files:
            return True
        changed = self.lines.get(key)
        if changed is None:
            return False
        if mode == "file":
            return True
        if mode == "context":
            near = changed | self.deletions.get(key, set())
            return any(n in near for n in range(first - CONTEXT_LINES, last + CONTEXT_LINES + 1))
        return any(line in changed for line in range(first, last + 1))

    def key(self, path: str) -> str:
        try:
            return Path(os.path.realpath(path)).relative_to(self.root).as_posix()
        except ValueError:
            return Path(path).as_posix()


def unquote_path(text: str) -> str:
    """A path as git prints it: C-quoted when it holds special characters."""
    if not (text.startswith('"') and text.endswith('"')):
        return text
    raw, out, position = text[1:-1], bytearray(), 0
    while position < len(raw):
        char = raw[position]
        if char != "\\":
            out += char.encode("utf-8")
            position += 1
            continue
        following = raw[position + 1]
        if following in "01234567":
            out.append(int(raw[position + 1 : position + 4], 8))
            position += 4
        else:
            out += C_ESCAPES.get(following, following).encode("utf-8")
            position += 2
    return out.decode("utf-8", "surrogateescape")


def parse_diff(diff: str) -> ChangedLines:
    """Added lines, deletion points and new files per path, from ``git diff -U0`` output."""
    changed = ChangedLines(Path("."))
    path: str | None = None
    from_nothing = False
    for row in diff.splitlines():
        if row.startswith("diff --git "):
            path, from_nothing = None, False
        elif row.startswith("--- "):
            from_nothing = row == "--- /dev/null"
        elif row.startswith("+++ "):
            path = None if row == "+++ /dev/null" else unquote_path(row[4:])
            if path is not None:
                path = path[2:] if path.startswith("b/") else path
                changed.lines.setdefault(path, set())
                if from_nothing:
                    changed.new_files.add(path)
        elif path is not None and (match := HUNK.match(row)):
            start, count = int(match.group("start")), int(match.group("count") or 1)
            if count:
                changed.lines[path].update(range(start, start + count))
            else:  # lines were deleted after new-side line `start`
                changed.deletions.setdefault(path, set()).update((start, start + 1))
    return changed


def changed_lines(base: str, root: Path) -> ChangedLines:
    """What the working tree adds relative to the merge base of ``base`` and HEAD."""
    try:
        merge_base = run_git(["merge-base", base, "HEAD"], cwd=root).strip()
    except GitError as error:
        raise GitError(
            f"--diff-base {base}: no merge base with HEAD ({error}); "
            "is the ref fetched (a shallow CI checkout needs fetch-depth: 0)?"
        ) from None
    diff = run_git(
        [
            "diff",
            "-U0",
            "--no-color",
            "--no-ext-diff",
            "--find-renames",
            "--src-prefix=a/",
            "--dst-prefix=b/",
            merge_base,
            "--",
        ],
        cwd=root,
    )
    changed = parse_diff(diff)
    changed.root = root
    untracked = run_git(["ls-files", "--others", "--exclude-standard", "-z"], cwd=root)
    changed.new_files.update(name for name in untracked.split("\0") if name)
    return changed


def only_changed(findings: Iterable[Finding], changed: ChangedLines, mode: str) -> list[Finding]:
    return [f for f in findings if changed.touches(f.path, f.span.line, f.span.end_line, mode)]

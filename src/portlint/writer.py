"""Writing a file back without losing anything: encoding, BOM, line endings, mode, owner, links.

Every command that changes files (``--fix``, ``--add-noqa``) goes through ``write_source``. A file
is rewritten only when its content is still what portlint read (compared by content, not by
modification time) and the user may write it. The new content goes to a temporary file in the
same folder, which then replaces the file in one rename, so that an interrupted run leaves either
the old file or the new one. Exceptions to the rename, each keeping what the rename would lose:

- a symbolic link is written through: its target is replaced, the link stays;
- a file with several hard links, or whose owner or group the temporary file cannot take, is
  rewritten in place (the same inode), after the same checks.

A temporary file that a killed run left behind is named ``.NAME.portlint-PID-XXXX.tmp``; the next
run that writes a file in that folder removes it (once process PID is gone). Such a file exists
only while NAME has not been replaced yet, so the next ``--fix`` run writes NAME again.
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
from pathlib import Path

from portlint.model import SourceFile

TEMP_MARK = ".portlint-"
#: ``.NAME.portlint-PID-RANDOM.tmp``, as ``write_source`` names its temporary files.
TEMP_NAME = re.compile(r"^\.(?P<name>.+)\.portlint-(?P<pid>\d+)-[A-Za-z0-9_]+\.tmp$")


class FileChanged(Exception):
    """The file changed on disk after portlint read it; it is left alone."""


class NotWritable(Exception):
    """The file may not be rewritten (permissions, a read-only folder); it is left alone."""


def content_digest(data: bytes) -> str:
    """What ``write_source`` compares to decide whether a file changed since it was read."""
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def encode_text(source: SourceFile, text: str) -> bytes:
    """``text`` in the file's encoding, with its BOM if it had one.

    Line endings are written as they are in ``text``: edits keep the file's own endings, and
    inserted lines use ``source.newline``, so a file with mixed endings stays as it was.
    """
    # surrogateescape: C++ files may hold undecodable bytes, read as lone surrogates (engine).
    data = text.encode(source.encoding, "surrogateescape")
    if source.bom and source.encoding.replace("_", "-").lower() in ("utf-8", "utf8"):
        data = b"\xef\xbb\xbf" + data
    return data


def write_source(source: SourceFile, text: str) -> None:
    """Replace the file's content with ``text``, keeping everything else about the file.

    Raises ``FileChanged`` when the file no longer holds what was read, ``NotWritable`` when the
    user may not write it, ``OSError`` when writing fails; the file is then unchanged.
    """
    path = Path(os.path.realpath(source.path))  # a symlink is written through to its target
    stat = path.stat()
    if source.digest and content_digest(path.read_bytes()) != source.digest:
        raise FileChanged("changed on disk since it was read")
    if not _may_write(path, stat.st_mode):
        raise NotWritable("permission denied: the file is read-only")
    if path.parent not in _cleaned_folders:
        _cleaned_folders.add(path.parent)
        remove_leftovers(path.parent)
    data = encode_text(source, text)
    if stat.st_nlink > 1:
        _write_in_place(path, data)  # a rename would split the hard links
        return
    if not _may_write(path.parent, os.stat(path.parent).st_mode):
        raise NotWritable("permission denied: the folder is read-only")
    handle, temporary = tempfile.mkstemp(
        dir=path.parent, prefix=f".{path.name}{TEMP_MARK}{os.getpid()}-", suffix=".tmp"
    )
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        if not _same_owner(temporary, stat):
            os.unlink(temporary)
            _write_in_place(path, data)  # keeps the owner and group the temporary file lacks
            return
        os.chmod(temporary, stat.st_mode & 0o7777)
        os.replace(temporary, path)
    except BaseException:
        if os.path.lexists(temporary):
            os.unlink(temporary)
        raise


def _may_write(path: Path, mode: int) -> bool:
    """Whether the user may write ``path``. For root, whom permissions do not stop, a file or
    folder without any write permission bit counts as read-only: someone made it so."""
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        return bool(mode & 0o222)
    return os.access(path, os.W_OK)


def _same_owner(temporary: str, stat: os.stat_result) -> bool:
    """Give ``temporary`` the file's owner and group; False when that is not allowed."""
    if not hasattr(os, "chown"):
        return True
    mine = os.stat(temporary)
    if (mine.st_uid, mine.st_gid) == (stat.st_uid, stat.st_gid):
        return True
    try:
        os.chown(temporary, stat.st_uid, stat.st_gid)
    except OSError:
        return False
    return True


def _write_in_place(path: Path, data: bytes) -> None:
    with open(path, "r+b") as stream:
        stream.write(data)
        stream.truncate()
        stream.flush()
        os.fsync(stream.fileno())


#: Folders this process has already cleaned of leftover temporary files.
_cleaned_folders: set[Path] = set()


def remove_leftovers(folder: Path) -> int:
    """Remove the temporary files that killed portlint runs left in ``folder``; how many."""
    try:
        names = [n for n in os.listdir(folder) if TEMP_MARK in n]
    except OSError:
        return 0
    removed = 0
    for name in names:
        match = TEMP_NAME.match(name)
        if match is None:
            continue
        if _process_alive(int(match["pid"])):
            continue  # another portlint run is writing it right now
        try:
            os.unlink(folder / name)
            removed += 1
        except OSError:
            pass
    return removed


def _process_alive(pid: int) -> bool:
    if pid == os.getpid():
        return False  # this run never leaves one behind while it runs
    if os.name != "posix":
        return True  # os.kill(pid, 0) would end the process on Windows: leave the file
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, OSError):
        return True
    return True

"""Writing a file back without losing anything: encoding, BOM, line endings, mode; atomically.

Every command that changes files (``--fix``, ``--add-noqa``) goes through ``write_source``.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from portlint.model import SourceFile


class FileChanged(Exception):
    """The file changed on disk after portlint read it; it is left alone."""


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
    """Replace the file's content with ``text``: temp file in the same folder, then rename."""
    path = Path(source.path)
    stat = path.stat()
    if source.mtime_ns and stat.st_mtime_ns != source.mtime_ns:
        raise FileChanged(f"{source.path} changed on disk since it was read; not written")
    data = encode_text(source, text)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temporary, stat.st_mode & 0o7777)
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise

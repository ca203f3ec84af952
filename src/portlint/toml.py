"""The TOML parser: ``tomllib``, or ``tomli`` before Python 3.11.

Imported inside the functions that parse TOML, not at the top of their modules: a run with no
configuration file and a compiled rule catalogue (``catalog.read_toml``) parses none, and the
import costs it about 8 ms."""

from __future__ import annotations

import sys

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

__all__ = ["tomllib"]

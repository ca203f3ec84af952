"""The CUDA -> HIP name table: ``rules/cxx/hip_map.toml`` with ``rules/cxx/cudnn_miopen.toml``
and ``rules/cxx/hip_overrides.toml`` merged over it, minus the names too generic to mean CUDA
(``[api_sites] ignore_names``)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from portlint.catalog import Catalog
from portlint.model import Status

TABLES = ("cxx/hip_map.toml", "cxx/cudnn_miopen.toml", "cxx/hip_overrides.toml")


@dataclass(frozen=True)
class Entry:
    """One CUDA name and what it is on ROCm."""

    cuda: str
    hip: str
    api: str
    manual: bool = False
    #: False for a name matched only by a library prefix (``[api_sites] manual_prefixes``).
    listed: bool = True

    @property
    def status(self) -> Status:
        if not self.listed:
            return Status.MANUAL
        if not self.hip:
            return Status.UNSUPPORTED
        if self.manual:
            return Status.MANUAL
        if self.hip == self.cuda:
            return Status.PORTABLE
        return Status.RENAME


@dataclass(frozen=True)
class NameTable:
    names: dict[str, Entry]
    headers: dict[str, str]
    namespaces: dict[str, str]
    #: Matches (as bytes) every token that may be a name of the table: the table's two-letter
    #: prefixes, so most identifiers of a file are never looked up.
    candidates: re.Pattern[bytes]
    #: Name prefix -> api of a library whose unlisted names are still that library's (cuDNN).
    manual_prefixes: dict[str, str]

    def lookup(self, name: str) -> Entry | None:
        entry = self.names.get(name)
        if entry is not None:
            return entry
        for prefix, api in self.manual_prefixes.items():
            if name.startswith(prefix) and len(name) > len(prefix):
                return Entry(name, "", api, manual=True, listed=False)
        return None


_CACHE: dict[str, NameTable] = {}


def load_table(catalog: Catalog) -> NameTable:
    key = str(catalog.directory)
    if key not in _CACHE:
        _CACHE[key] = _build(catalog)
    return _CACHE[key]


def _build(catalog: Catalog) -> NameTable:
    settings = catalog.table("cxx").get("api_sites", {})
    ignored = set(settings.get("ignore_names", ()))
    manual_prefixes = dict(settings.get("manual_prefixes", {}))
    names: dict[str, Entry] = {}
    headers: dict[str, str] = {}
    namespaces: dict[str, str] = {}
    for relative in TABLES:
        document = catalog.data(relative)
        headers.update(document.get("headers", {}))
        namespaces.update(document.get("namespaces", {}))
        for cuda, raw in document.get("names", {}).items():
            if cuda in ignored:
                continue
            entry = Entry(
                cuda, raw.get("hip", ""), raw.get("api", "other"), raw.get("manual", False)
            )
            # A device intrinsic HIP keeps under its name needs nothing on ROCm, and on the other
            # targets it is part of a kernel, which PRT705 reports once.
            if entry.api == "device" and entry.status is Status.PORTABLE:
                continue
            names[cuda] = entry
    prefixes = sorted({re.escape(name[:2]) for name in [*names, *manual_prefixes]})
    pattern = rb"(?<![A-Za-z0-9_])(?:" + "|".join(prefixes).encode() + rb")[A-Za-z0-9_]*"
    return NameTable(names, headers, namespaces, re.compile(pattern), manual_prefixes)

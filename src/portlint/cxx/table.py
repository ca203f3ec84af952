"""The CUDA -> HIP name table: ``rules/cxx/hip_map.toml`` (generated from HIPIFY's tables, torch's
hipify table and current HIP's declarations) with ``rules/cxx/hip_overrides.toml`` merged over it,
minus the names too generic to mean CUDA (``[api_sites] ignore_names``).

Each entry carries the ROCm versions HIPIFY records for its HIP name (added, deprecated, removed,
experimental), so that an answer can be given for the oldest ROCm a project supports
(``rocm-version``). A name declared only by a development build of HIP has no ``since`` but
``release_unknown``: it is a rename on every ``rocm-version``."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from portlint.catalog import Catalog
from portlint.model import Status

TABLES = ("cxx/hip_map.toml", "cxx/hip_overrides.toml")
VERSION_FIELDS = ("since", "deprecated", "removed", "experimental")


def version_key(text: str) -> tuple[int, ...]:
    """``"6.2"`` -> ``(6, 2, 0)``: versions compare as numbers, missing parts are zero."""
    parts = [int(p) for p in text.split(".")]
    return tuple(parts + [0] * (3 - len(parts)))


@dataclass(frozen=True)
class Entry:
    """One CUDA name and what it is on ROCm."""

    cuda: str
    hip: str
    api: str
    manual: bool = False
    #: False for a name matched only by a library pattern (``[api_sites] manual_patterns``).
    listed: bool = True
    #: ROCm versions of the HIP name: added, deprecated, removed, experimental ("" = unknown).
    since: str = ""
    deprecated: str = ""
    removed: str = ""
    experimental: str = ""
    #: The HIP name to use instead of a deprecated or removed ``hip``.
    replacement: str = ""
    #: What to do instead of a deprecated or removed ``hip`` that has no single successor.
    no_successor: str = ""
    #: The ROC library's name below the portable hip* layer (rocBLAS, rocSPARSE...): advice only.
    roc: str = ""
    #: Why a manual entry cannot be renamed, for the message.
    note: str = ""
    #: Declared only by current HIP development headers: the release that added it is not known.
    release_unknown: bool = False

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

    @property
    def instead(self) -> str:
        """The end of a deprecation message: the successor, or why there is none and what to do
        (with the ROC library's name where it keeps the call)."""
        if self.replacement:
            return f": use `{self.replacement}`"
        if self.no_successor:
            roc = f"; AMD's ROC library has `{self.roc}` (AMD GPUs only)" if self.roc else ""
            return f", no one-to-one replacement: {self.no_successor}{roc}"
        return ""

    def status_on(self, rocm: tuple[int, ...]) -> Status:
        """The status on ROCm ``rocm``: unsupported before the HIP name was added or once it was
        removed."""
        if self.hip and (self.added_after(rocm) or self.removed_by(rocm)):
            return Status.UNSUPPORTED
        return self.status

    def added_after(self, rocm: tuple[int, ...]) -> bool:
        return bool(self.since) and version_key(self.since) > rocm

    def removed_by(self, rocm: tuple[int, ...]) -> bool:
        return bool(self.removed) and version_key(self.removed) <= rocm

    def deprecated_by(self, rocm: tuple[int, ...]) -> bool:
        return bool(self.deprecated) and version_key(self.deprecated) <= rocm


#: HIP families whose names no declaration source portlint's checks read covers, by the key
#: ``[unchecked]`` in ``hip_overrides.toml`` gives their reason under.
UNCHECKED_FAMILIES = {
    "miopen": lambda e: e.api == "cudnn",
    "hipcub": lambda e: e.api == "cub",
    "hiprand_device": lambda e: re.match(r"^hiprand(_|State|Make|[0-9]*$)", e.hip) is not None,
    "hipfft_callbacks": lambda e: (
        re.match(r"^(hipfftXt|hipfftCallback|HIPFFT_CB_)", e.hip) is not None
    ),
    "roctx": lambda e: e.hip.startswith("roctx"),
    "device_same_name": lambda e: e.api == "device" and e.hip == e.cuda,
}


def unchecked_family(entry: Entry) -> str | None:
    """The ``[unchecked]`` family of an entry whose HIP name cannot be checked, else None."""
    return next((key for key, test in UNCHECKED_FAMILIES.items() if test(entry)), None)


@dataclass(frozen=True)
class NameTable:
    names: dict[str, Entry]
    headers: dict[str, str]
    namespaces: dict[str, str]
    #: Matches (as bytes) every token that may be a name of the table: the table's two-letter
    #: prefixes, so most identifiers of a file are never looked up.
    candidates: re.Pattern[bytes]
    #: Library name pattern -> api: a name of that spelling missing from the table is still that
    #: library's (cuDNN), and still needs porting by hand.
    manual_patterns: tuple[tuple[re.Pattern[str], str], ...]
    #: The newest ROCm release the table knows: the default ``rocm-version``.
    newest: str

    def lookup(self, name: str) -> Entry | None:
        entry = self.names.get(name)
        if entry is not None:
            return entry
        for pattern, api in self.manual_patterns:
            if pattern.fullmatch(name):
                return Entry(name, "", api, manual=True, listed=False)
        return None

    def rocm_key(self, rocm_version: str | None) -> tuple[int, ...]:
        return version_key(rocm_version or self.newest)


_CACHE: dict[str, NameTable] = {}


def load_table(catalog: Catalog) -> NameTable:
    key = str(catalog.directory)
    if key not in _CACHE:
        _CACHE[key] = _build(catalog)
    return _CACHE[key]


def _entry(cuda: str, raw: dict) -> Entry:
    return Entry(
        cuda,
        raw.get("hip", ""),
        raw.get("api", "other"),
        raw.get("manual", False),
        **{
            k: raw.get(k, "")
            for k in (*VERSION_FIELDS, "replacement", "no_successor", "roc", "note")
        },
        release_unknown=raw.get("release_unknown", False),
    )


def _build(catalog: Catalog) -> NameTable:
    settings = catalog.table("cxx").get("api_sites", {})
    ignored = set(settings.get("ignore_names", ()))
    patterns = tuple(
        (re.compile(pattern), api) for pattern, api in settings.get("manual_patterns", {}).items()
    )
    names: dict[str, Entry] = {}
    headers: dict[str, str] = {}
    namespaces: dict[str, str] = {}
    versions: set[str] = set()
    successors: dict[str, str] = {}
    successor_patterns: list[tuple[re.Pattern[str], str]] = []
    advice: dict[str, str] = {}
    #: The releases the generator dated hip_overrides.toml's HIP names with.
    dated: dict[str, str] = {}
    for relative in TABLES:
        document = catalog.data(relative)
        # The ROCm releases of the generator's sources (never a development build).
        versions.update(document.get("source", {}).get("releases", ()))
        successors.update(document.get("replacements", {}))
        advice.update(document.get("no_successor", {}))
        dated.update(document.get("override_since", {}))
        successor_patterns += [
            (re.compile(k), v) for k, v in document.get("replacement_patterns", {}).items()
        ]

    def successor(hip: str) -> str:
        if hip in successors:
            return successors[hip]
        return next((new for pattern, new in successor_patterns if pattern.match(hip)), "")

    for relative in TABLES:
        document = catalog.data(relative)
        headers.update(document.get("headers", {}))
        namespaces.update(document.get("namespaces", {}))
        for cuda, raw in document.get("names", {}).items():
            versions.update(raw[k] for k in VERSION_FIELDS if raw.get(k))
            if cuda in ignored:
                continue
            entry = _entry(cuda, raw)
            if not entry.replacement and (entry.deprecated or entry.removed) and entry.hip:
                entry = replace(entry, replacement=successor(entry.hip))
            if not entry.since and entry.hip in dated:
                # "" = declared only by a development build: the release is not known.
                since = dated[entry.hip]
                entry = replace(entry, since=since, release_unknown=not since)
            if entry.no_successor:
                # The generated table names the advice by its key in [no_successor].
                entry = replace(entry, no_successor=advice.get(entry.no_successor, ""))
            # A device intrinsic HIP keeps under its name needs nothing on ROCm, and on the other
            # targets it is part of a kernel, which PRT705 reports once.
            if entry.api == "device" and entry.status is Status.PORTABLE:
                continue
            names[cuda] = entry
    prefixes = sorted({re.escape(name[:2]) for name in names} | {"cu"})
    pattern = rb"(?<![A-Za-z0-9_])(?:" + "|".join(prefixes).encode() + rb")[A-Za-z0-9_]*"
    newest = max(versions, key=version_key, default="0.0.0")
    return NameTable(names, headers, namespaces, re.compile(pattern), patterns, newest)

"""Results of earlier runs, so that a run over unchanged files reads no file and parses nothing.

Like ruff's cache: one file per combination of portlint's code, the rule catalogue and the
effective settings of the files linted with them (``<cache-dir>/<key>.json``). Each maps a file's
absolute path to its modification time, size, content hash and final findings (after rule
selection, suppressions and the target filter). A file whose modification time and size match is
taken from the cache without being read; one whose time changed but whose content hash matches
is a hit too (a ``git checkout`` or ``touch``).

Writing is atomic (a temporary file in the same folder, then ``os.replace``), so concurrent runs
each leave a complete file and the last one wins; before writing, a run merges what another run
stored meanwhile. Entries of files that no longer exist are dropped when a file is written. A cache
file that cannot be read or decoded is ignored and rewritten: a broken cache never stops a run.

The cache is JSON (not pickle): a cache folder that came with a cloned repository must not be able
to run code.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

try:  # the BLAKE2 module itself: hashlib would load OpenSSL, a cost on every pre-commit run
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - Python builds without it
    from hashlib import blake2b

from portlint import __version__
from portlint.config import Settings
from portlint.model import (
    Advice,
    Applicability,
    Edit,
    Finding,
    Fix,
    Severity,
    Span,
    Status,
)

#: Default folder, relative to the project root (the configuration file's folder, else the
#: working directory).
DEFAULT_DIR = ".portlint_cache"
#: Bumped whenever the layout of a cache file changes.
FORMAT = 3
#: Settings fields that do not change what a file's findings are.
NOT_IN_KEY = frozenset({"cache_dir"})
PACKAGE = Path(__file__).resolve().parent


def cache_dir(settings: Settings, override: Path | None = None) -> Path:
    """Where the cache lives: ``--cache-dir``, else the ``cache-dir`` setting, else the default,
    relative to the project root."""
    chosen = override or getattr(settings, "cache_dir", None) or Path(DEFAULT_DIR)
    return chosen if chosen.is_absolute() else settings.root / chosen


def content_hash(raw: bytes) -> str:
    return blake2b(raw, digest_size=16).hexdigest()


def code_fingerprint() -> str:
    """portlint's version and its code: a changed module (in a checkout) is a new version."""
    digest = blake2b(f"{FORMAT}:{__version__}".encode(), digest_size=16)
    for relative, full in files_below(PACKAGE, ".py"):
        with contextlib.suppress(OSError):
            stat = os.stat(full)
            digest.update(f"{relative}:{stat.st_size}:{stat.st_mtime_ns}".encode())
    return digest.hexdigest()


def catalog_fingerprint(directory: Path) -> str:
    """The content of every file of the rule catalogue."""
    digest = blake2b(digest_size=16)
    for relative, full in files_below(directory, ".toml"):
        with contextlib.suppress(OSError), open(full, "rb") as handle:
            digest.update(relative.encode() + b"\0" + handle.read())
    return digest.hexdigest()


def files_below(directory: Path, suffix: str) -> list[tuple[str, str]]:
    """(path relative to ``directory``, full path) of its files named ``*suffix``, in sorted
    order, at any depth; as strings, because pathlib's ``rglob`` costs a cached run 10 ms."""
    top = os.path.join(str(directory), "")
    found = [
        (full[len(top) :], full)
        for folder, _, names in os.walk(top)
        for full in (os.path.join(folder, name) for name in names if name.endswith(suffix))
    ]
    return sorted(found)


def settings_fingerprint(settings: Settings) -> str:
    """The effective settings of a file (everything that can change its findings)."""
    parts = [(name, value) for name, value in settings._asdict().items() if name not in NOT_IN_KEY]
    return blake2b(repr(parts).encode(), digest_size=16).hexdigest()


class Shard:
    """The cache file for one combination of code, catalogue and settings."""

    def __init__(self, path: Path, entries: dict[str, list[Any]], length: int = 5) -> None:
        self.path = path
        self.entries = entries
        #: How many items an entry holds (findings: 5; a file's facts: 3).
        self.length = length
        #: Paths stored or confirmed by this run (the rest are checked for existence on save).
        self.touched: set[str] = set()
        self.changed = False


class Cache:
    """Looked up and filled by the engine; ``save`` writes what changed."""

    def __init__(self, directory: Path, catalog_directory: Path) -> None:
        self.directory = directory
        self._base = f"{code_fingerprint()}:{catalog_fingerprint(catalog_directory)}"
        self._shards: dict[str, Shard] = {}
        self._by_settings: dict[int, tuple[Settings, Shard]] = {}
        self._neighbours: dict[str, str] = {}
        self._listings: dict[str, list[str]] = {}
        self._cwd = os.getcwd()  # portlint never changes it: asked once, not for every file
        self._facts: Shard | None = None

    def key(self, path: str) -> str:
        """The absolute path a file is cached under (``os.path.abspath``, without asking for
        the working directory each time)."""
        if os.sep == "/":  # string operations: posixpath's own cost as much as the stat
            full = path if path.startswith("/") else f"{self._cwd}/{path}"
            if "/." in full or "//" in full or full.endswith("/"):
                return os.path.normpath(full)  # only then is there anything to normalise
            return full
        return os.path.abspath(path)

    def shard(self, settings: Settings) -> Shard:
        known = self._by_settings.get(id(settings))
        if known is not None and known[0] is settings:
            return known[1]
        key = f"{self._base}:{settings_fingerprint(settings)}"
        name = blake2b(key.encode(), digest_size=12).hexdigest()
        shard = self._shards.get(name)
        if shard is None:
            path = self.directory / f"{name}.json"
            shard = self._shards[name] = Shard(path, _read_entries(path))
        self._by_settings[id(settings)] = (settings, shard)
        return shard

    def is_empty(self, settings: Settings) -> bool:
        """No file is cached under ``settings`` (a first run, or one after a change of
        portlint, its rules or these settings)."""
        return not self.shard(settings).entries

    def lookup(
        self, path: str, settings: Settings
    ) -> tuple[tuple[Finding, ...] | None, str | None]:
        """The cached findings when the file's time and size match (no read needed), else the
        content hash stored for it (the caller compares it after reading), else nothing."""
        stored, known = self.stored(path, settings)
        if stored is None:
            return None, known
        try:
            return decode_findings(stored, path), None
        except (ValueError, TypeError, KeyError, IndexError):
            return None, None  # a damaged entry is a miss, and is replaced

    def stored(self, path: str, settings: Settings) -> tuple[list[Any] | None, str | None]:
        """``lookup`` with the findings as stored, not decoded: enough to tell a clean file
        (an empty list) from one with findings, which are decoded (and checked) when they are
        reported."""
        shard = self.shard(settings)
        key = self.key(path)
        entry = shard.entries.get(key)
        if entry is None:
            return None, None
        try:
            stat = os.stat(key)
            if not isinstance(entry[3], list) or entry[4:] != [self.neighbours(key)]:
                # damaged, or a module beside it came or went (it may now be a vendor backend)
                return None, None
            if [stat.st_mtime_ns, stat.st_size] == entry[:2]:
                shard.touched.add(key)
                return entry[3], None
            return None, str(entry[2])
        except (OSError, TypeError, IndexError):
            return None, None  # a damaged entry is a miss, and is replaced

    def know_listings(self, listings: dict[str, list[str]]) -> None:
        """The files of the folders a walk went through (absolute folder -> names), so that
        ``neighbours`` need not list them again."""
        self._listings = listings

    def neighbours(self, path: str) -> str | None:
        """For a Python file, the names of the modules beside it, hashed: whether it is a vendor
        backend (``portlint.python.backends``) depends on them, and for a file inside a folder
        named for CUDA or ROCm, on the folders beside that one (``backend_packages.facts``).
        None for other files."""
        if not path.endswith(".py"):
            # a C++/CUDA file of a backend package, or one with twins for other vendors: its
            # findings depend on the package's siblings and ``__init__.py`` and on the files
            # beside it (``cxx.analyser.covered_targets``); any file in a vendor's folder, on
            # the folders beside that one (``vendor_folders.folder_scope``)
            from portlint.cxx.analyser import covered_targets
            from portlint.vendor_folders import scope_key

            covered = covered_targets(path)
            if not covered and not _package_facts(path):
                return None  # most files: nothing beside them answers for a target
            return content_hash(os.fsencode(repr((sorted(covered), scope_key(path)))))
        folder = path[: path.rfind(os.sep)] or os.sep  # os.path.dirname of an absolute path
        known = self._neighbours.get(folder)
        if known is None:
            listed = self._listings.get(folder)
            try:
                files = os.listdir(folder) if listed is None else listed
            except OSError:
                files = []
            names = sorted(name for name in files if name.endswith(".py"))
            modules = b"\0".join(map(os.fsencode, names))
            package = _package_facts(path) + _extension_test_facts(path)
            known = content_hash(modules + os.fsencode(package) if package else modules)
            self._neighbours[folder] = known
        return known

    def hit_by_content(
        self, path: str, settings: Settings, stamp: list[Any]
    ) -> tuple[Finding, ...]:
        """The content hash matched: the stored findings, under the file's new time and size."""
        shard = self.shard(settings)
        key = self.key(path)
        entry = shard.entries[key]
        findings = decode_findings(entry[3], path)
        self.store(path, settings, stamp, entry[3])
        return findings

    def store(self, path: str, settings: Settings, stamp: list[Any], findings: Any) -> None:
        """Remember a file's findings; ``stamp`` is [mtime_ns, size, content hash]."""
        shard = self.shard(settings)
        key = self.key(path)
        encoded = findings if _is_encoded(findings) else encode_findings(findings)
        shard.entries[key] = [*stamp, encoded, self.neighbours(key)]
        shard.touched.add(key)
        shard.changed = True

    def facts(
        self,
        path: str,
        read: Callable[[str], list[Any] | None],
        valid: Callable[[Any], bool],
    ) -> list[Any] | None:
        """What ``read`` finds in a file (``python.layers.Finder.file_facts``), kept with the
        file's modification time and size: a file that has not changed is not read again. A
        stored answer that ``valid`` rejects (a damaged cache) is read again and replaced."""
        store = self._facts
        if store is None:
            name = blake2b(f"facts:{self._base}".encode(), digest_size=12).hexdigest()
            stored = self.directory / f"{name}.facts"
            store = self._facts = Shard(stored, _read_entries(stored, 3), 3)
        key = self.key(path)
        try:
            stat = os.stat(key)
        except OSError:
            return None
        entry = store.entries.get(key)
        if entry is not None and entry[:2] == [stat.st_mtime_ns, stat.st_size] and valid(entry[2]):
            store.touched.add(key)
            return entry[2]
        found = read(path)
        if found is not None:
            store.entries[key] = [stat.st_mtime_ns, stat.st_size, found]
            store.touched.add(key)
            store.changed = True
        return found

    def save(self) -> str | None:
        """Write the shards that changed; a one-line problem if the cache cannot be written."""
        shards = [*self._shards.values(), *([self._facts] if self._facts else [])]
        changed = [shard for shard in shards if shard.changed]
        if not changed:
            return None
        try:
            ensure_folder(self.directory)
            for shard in changed:
                _write_shard(shard)
        except OSError as error:
            return f"cannot write the cache in {self.directory}: {error.strerror or error}"
        return None


def _package_facts(path: str) -> str:
    return _facts_function()(path)


def _extension_test_facts(path: str) -> str:
    """``extension_tests.facts``: whether the file tests a CUDA extension of its project."""
    from portlint.python.extension_tests import facts

    return facts(path)


@functools.cache
def _facts_function() -> Callable[[str], str]:
    """``backend_packages.catalogue_facts``, imported once, on first use."""
    from portlint.python.backend_packages import catalogue_facts

    return catalogue_facts


def ensure_folder(directory: Path) -> None:
    """The cache folder, git-ignored by a ``.gitignore`` of its own (as ruff's)."""
    directory.mkdir(parents=True, exist_ok=True)
    ignore = directory / ".gitignore"
    if not ignore.exists():
        _atomic_write(ignore, "# Automatically created by portlint.\n*\n")


def _write_shard(shard: Shard) -> None:
    # Another run may have written this shard since it was read: keep its entries too.
    merged = {**_read_entries(shard.path, shard.length), **shard.entries}
    for key in list(merged):
        if key not in shard.touched and not os.path.exists(key):
            del merged[key]
    _atomic_write(shard.path, json.dumps(merged, separators=(",", ":")))
    shard.entries, shard.changed = merged, False


def _atomic_write(path: Path, text: str) -> None:
    # A name no other run picks (not tempfile: importing it costs a pre-commit run 5 ms).
    temporary = path.parent / f".tmp-{os.getpid()}-{os.urandom(6).hex()}"
    try:
        with open(temporary, "x", encoding="utf-8") as stream:
            stream.write(text)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def _read_entries(path: Path, length: int = 5) -> dict[str, list[Any]]:
    try:
        data = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {k: v for k, v in data.items() if isinstance(v, list) and len(v) == length}


# Findings as JSON arrays: the path is left out (it is the entry's key, and a run may name the
# same file differently: ``src`` against ``./src``).


def _is_encoded(findings: Any) -> bool:
    return isinstance(findings, list)


def encode_findings(findings: tuple[Finding, ...]) -> list[Any]:
    return [
        [
            list(f.span),
            f.code,
            f.name,
            f.severity.value,
            f.message,
            f.symbol,
            {t: _encode_advice(a) for t, a in f.targets.items()},
            _encode_fix(f.fix),
        ]
        for f in findings
    ]


#: Advice's fields after its status, in order: every one is stored, so a field added to Advice is
#: cached without a change here.
ADVICE_DETAILS = Advice._fields[1:]


def _encode_advice(advice: Advice) -> list[Any]:
    return [advice.status.value, *(getattr(advice, name) for name in ADVICE_DETAILS)]


def _encode_fix(fix: Fix | None) -> list[Any] | None:
    if fix is None:
        return None
    edits = [[list(edit.span), edit.content] for edit in fix.edits]
    return [fix.applicability.value, edits, fix.description, fix.target]


def decode_findings(encoded: list[Any], path: str) -> tuple[Finding, ...]:
    """The stored findings; raises ValueError, TypeError, KeyError or IndexError if damaged."""
    return tuple(
        Finding(
            path=path,
            span=Span(*span),
            code=str(code),
            name=str(name),
            severity=Severity(severity),
            message=str(message),
            symbol=str(symbol),
            targets={t: Advice(Status(a[0]), *a[1:]) for t, a in targets.items()},
            fix=_decode_fix(fix),
        )
        for span, code, name, severity, message, symbol, targets, fix in encoded
    )


def _decode_fix(fix: list[Any] | None) -> Fix | None:
    if fix is None:
        return None
    applicability, edits, description, target = fix
    return Fix(
        Applicability(applicability),
        tuple(Edit(Span(*span), content) for span, content in edits),
        description,
        target,
    )

"""The rule catalogue: loads ``rules/*.toml`` once and answers questions about it.

Every top-level TOML file in ``rules/`` may hold ``[[rule]]`` entries (a rule's code, name, docs and
default per-target advice) and any tables that the rule's analyser reads (``[api.*]``, ``[env.*]``,
...). Larger generated tables live in sub-folders and are loaded on first use with ``data()``.
"""

from __future__ import annotations

import functools
import marshal
import os
import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

from portlint.model import ALL_TARGETS, Advice, Finding, Fix, Severity, Span, Status

CODE_PATTERN = re.compile(r"^PRT\d{3}$")
FIX_KINDS = ("none", "safe", "unsafe", "sometimes")


class Rule(NamedTuple):
    code: str
    name: str
    severity: Severity
    summary: str
    fix: str
    what: str
    why: str
    example: str
    use_instead: str
    fix_safety: str
    #: Default advice per target; analysers may give a site more precise advice.
    targets: Mapping[str, Advice]
    #: The catalogue file the rule is defined in (its family).
    family: str = ""
    #: The language of the rule's examples, and the file suffix they are tested under.
    example_suffix: str = ".py"

    @property
    def fixable(self) -> bool:
        return self.fix != "none"

    def finding(
        self,
        path: str,
        span: Span,
        message: str,
        symbol: str = "",
        targets: Mapping[str, Advice] | None = None,
        severity: Severity | None = None,
        fix: Fix | None = None,
    ) -> Finding:
        """A finding of this rule; its own severity unless the site calls for another."""
        return Finding(
            path=path,
            span=span,
            code=self.code,
            name=self.name,
            severity=severity or self.severity,
            message=message,
            symbol=symbol,
            targets=targets or {},
            fix=fix,
        )


def rules_dir() -> Path:
    """The catalogue's folder: ``portlint/rules`` of an installed wheel, or ``rules/`` of a
    checkout (editable installs)."""
    # Not importlib.resources: rules/ has no __init__.py, and for such a namespace package
    # Python 3.10 and 3.11 return a MultiplexedPath whose str() is not a path.
    here = Path(__file__).resolve().parent
    checkout = here.parents[1] / "rules"
    for folder in (here / "rules", checkout):
        if folder.is_dir() and any(folder.glob("*.toml")):
            return folder
    return checkout


def parse_advice(raw: dict[str, Any]) -> Advice:
    return Advice(Status(raw["status"]), raw.get("replacement"), raw.get("note"))


class Catalog:
    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.rules: dict[str, Rule] = {}
        self.tables: dict[str, dict[str, Any]] = {}
        for path in sorted(directory.glob("*.toml")):
            document = read_toml(path)
            for raw in document.pop("rule", []):
                rule = _parse_rule(raw, family=path.stem)
                if rule.code in self.rules:
                    raise ValueError(f"{path}: rule {rule.code} is defined twice")
                self.rules[rule.code] = rule
            self.tables[path.stem] = document
        if not self.rules:
            raise RuntimeError(f"no rules found in {directory}: the installation is incomplete")
        self._by_name = {rule.name: rule for rule in self.rules.values()}

    def rule(self, code_or_name: str) -> Rule | None:
        return self.rules.get(code_or_name.upper()) or self._by_name.get(code_or_name)

    def table(self, stem: str) -> dict[str, Any]:
        return self.tables.get(stem, {})

    @functools.cache  # noqa: B019 - the catalogue lives for the whole process
    def data(self, relative: str) -> dict[str, Any]:
        """A TOML file below ``rules/``, loaded once on first use."""
        return read_toml(self.directory / relative)

    def target_facts(self) -> dict[str, dict[str, Any]]:
        return self.table("targets").get("target", {})

    @functools.cached_property
    def single_device_targets(self) -> frozenset[str]:
        """The targets with one device at most (``single_device`` in rules/targets.toml)."""
        return frozenset(t for t, row in self.target_facts().items() if row.get("single_device"))


#: Changes when what ``read_toml`` keeps of a file changes.
COMPILED_FORMAT = 1


def read_toml(path: Path) -> dict[str, Any]:
    """A TOML file of the catalogue, parsed.

    Parsing TOML is slow next to the rest of a run's start-up (the top-level files take about
    40 ms, ``cxx/hip_map.toml`` about 400 ms, in every worker process that needs them), so the
    parsed form is kept as Python keeps its compiled modules: in ``__pycache__`` beside the file,
    in ``marshal`` format (the format of ``.pyc`` files, with their trust: the folder is
    portlint's own), named for the interpreter, and valid while the file's size and
    modification time are those it was made from. Where the folder cannot be written, or with
    ``PYTHONDONTWRITEBYTECODE``, the file is parsed on every load."""
    stat = path.stat()
    key = (COMPILED_FORMAT, stat.st_size, stat.st_mtime_ns)
    tag = sys.implementation.cache_tag
    compiled = path.parent / "__pycache__" / f"{path.name}.{tag}.marshal" if tag else None
    if compiled is not None:
        try:
            # loads of the bytes: load from the file reads it in small pieces, 8 times slower
            stored, document = marshal.loads(compiled.read_bytes())
            if stored == key:
                return document
        except (OSError, EOFError, ValueError, TypeError):
            pass  # none yet, or unreadable: parsed and written again
    from portlint.toml import tomllib

    with path.open("rb") as handle:
        document = tomllib.load(handle)
    if compiled is not None and not sys.dont_write_bytecode:
        _write_compiled(compiled, (key, document), stat.st_mode & 0o666)
    return document


def _write_compiled(path: Path, value: Any, mode: int) -> None:
    """``value`` in marshal format at ``path`` (readable by whoever can read the file it was
    made from: ``mode``), written whole or not at all (several worker processes may write it
    at once); nothing when it cannot be."""
    import tempfile  # only a first run writes: the others need not import it

    try:
        data = marshal.dumps(value)  # ValueError for what marshal cannot hold (TOML datetimes)
        path.parent.mkdir(exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
        try:
            with os.fdopen(handle, "wb") as stream:
                stream.write(data)
            os.chmod(temporary, mode)
            os.replace(temporary, path)
        except BaseException:
            os.unlink(temporary)
            raise
    except (OSError, ValueError):
        pass


def _parse_rule(raw: dict[str, Any], family: str) -> Rule:
    code = raw["code"]
    if not CODE_PATTERN.match(code):
        raise ValueError(f"rule code {code!r} is not of the form PRTnnn")
    if raw.get("fix", "none") not in FIX_KINDS:
        raise ValueError(f"rule {code}: fix must be one of {', '.join(FIX_KINDS)}")
    targets = {t: parse_advice(a) for t, a in raw.get("targets", {}).items()}
    unknown = set(targets) - set(ALL_TARGETS)
    if unknown:
        raise ValueError(f"rule {code}: unknown targets {sorted(unknown)}")
    return Rule(
        code=code,
        name=raw["name"],
        severity=Severity(raw["severity"]),
        summary=raw["summary"],
        fix=raw.get("fix", "none"),
        what=raw.get("what", "").strip(),
        why=raw.get("why", "").strip(),
        example=raw.get("example", "").strip("\n"),
        use_instead=raw.get("use_instead", "").strip("\n"),
        fix_safety=raw.get("fix_safety", "").strip(),
        targets=targets,
        family=family,
        example_suffix=raw.get("example_suffix", ".py"),
    )


@functools.cache
def load_catalog() -> Catalog:
    return Catalog(rules_dir())


class LazyCatalog(Catalog):
    """The catalogue, loaded on first use: a run that reports nothing never parses it. Its
    methods are Catalog's; the data they read comes from the loaded catalogue."""

    def __init__(self) -> None:  # nothing loaded until an attribute is read
        pass

    def __getattr__(self, name: str) -> Any:
        return getattr(load_catalog(), name)

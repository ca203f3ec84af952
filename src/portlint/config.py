"""Settings: defaults, ``[tool.portlint]`` / ``portlint.toml``, and command-line overrides."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, NamedTuple

from portlint.model import ALL_TARGETS, TARGETS

CONFIG_KEYS = (
    "target",
    "select",
    "ignore",
    "extend-select",
    "exclude",
    "extend-exclude",
    "per-file-ignores",
    "min-torch",
    "rocm-version",
    "cache-dir",
    "max-file-size",
)
SELECTOR = re.compile(r"^(ALL|PRT\d{0,3})$")
VERSION = re.compile(r"^\d+\.\d+(\.\d+)?$")
DEFAULT_MIN_TORCH = "2.6"
#: Generated sources (hipified tables, protobuf modules, amalgamated headers) of a few MB pass.
DEFAULT_MAX_FILE_SIZE = 10 * 1024 * 1024
DEFAULT_MIN_PYTHON = "3.10"
SIZE = re.compile(r"^(\d+)\s*([kmg]?)b?$", re.IGNORECASE)


class ConfigError(Exception):
    """A problem with the user's configuration; the message is one line."""


class Settings(NamedTuple):
    targets: tuple[str, ...] = TARGETS
    select: tuple[str, ...] = ("PRT",)
    ignore: tuple[str, ...] = ()
    extend_select: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    extend_exclude: tuple[str, ...] = ()
    #: (glob, codes) pairs, in the order the configuration gives them.
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    min_torch: str = DEFAULT_MIN_TORCH
    #: Where ``min_torch`` came from: "default", the config file, or the torch requirement it
    #: was inferred from.
    min_torch_from: str = "default"
    #: The oldest ROCm release the project supports: a HIP name added later is reported as
    #: unsupported. None: the newest release portlint's HIP table knows.
    rocm_version: str | None = None
    #: The oldest Python the project supports (``requires-python``): fixed code must parse with it.
    min_python: str = DEFAULT_MIN_PYTHON
    #: The file the settings came from, if any; relative patterns are taken from its folder.
    config_path: Path | None = None
    #: Where results are cached (``portlint.cache``); relative to ``root``.
    cache_dir: Path | None = None
    #: ``[project] requires-python`` of the project the file belongs to, when it declares one.
    requires_python: str | None = None
    #: Files larger than this many bytes get one "too large" finding instead of being analysed.
    max_file_size: int = DEFAULT_MAX_FILE_SIZE
    #: The project's CUDA-API layers found among the run's files (``python.layers.Layer``s):
    #: what they make run on another target is no site of it. A run's fact, not configured.
    cuda_layers: tuple = ()
    #: The targets that cannot load the file because its package, or its own imports, load a
    #: package they have no build of (``python.package_loads``). A run's fact, not configured.
    absent_targets: tuple[str, ...] = ()
    #: The CUDA-only packages (rules/packages.toml) that are the file's own project: the run
    #: holds the package and the file sits in the folder that holds it
    #: (``python.package_loads.own_packages``). A run's fact, not configured.
    own_packages: tuple[str, ...] = ()
    #: The file is compiled by PyTorch's extension tooling because a chain of the project's own
    #: quoted includes reaches a PyTorch header, or such a file includes it
    #: (``cxx.includes.torch_built``). A run's fact, not configured.
    torch_built: bool = False

    @property
    def root(self) -> Path:
        return self.config_path.parent if self.config_path else Path.cwd()

    def is_enabled(self, code: str) -> bool:
        return rule_enabled(code, self.select + self.extend_select, self.ignore)


def with_project_facts(settings: Settings, project: Path | None = None) -> Settings:
    """Settings completed from the project's own declarations in ``project`` (default: the
    configuration's folder): ``min-torch``, when no configuration sets it, is the project's torch
    pin, and ``requires-python`` is read from its ``pyproject.toml``."""
    from portlint.torch_pin import infer_min_torch, min_python_of, requires_python

    folder = project if project is not None else settings.root
    requires = requires_python(folder)
    changes: dict[str, Any] = {
        "requires_python": requires,
        "min_python": min_python_of(requires) or DEFAULT_MIN_PYTHON,
    }
    if settings.min_torch_from == "default":
        inferred = infer_min_torch(folder)
        if inferred is not None:
            changes["min_torch"], changes["min_torch_from"] = inferred
    return settings._replace(**changes)


def version_tuple(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split(".")[:2])


def rule_enabled(code: str, select: tuple[str, ...], ignore: tuple[str, ...]) -> bool:
    """The most specific matching selector decides; on a tie, ignore wins (as in ruff)."""

    def specificity(selectors: tuple[str, ...]) -> int:
        lengths = [
            0 if s == "ALL" else len(s) for s in selectors if s == "ALL" or code.startswith(s)
        ]
        return max(lengths, default=-1)

    chosen, dropped = specificity(select), specificity(ignore)
    return chosen >= 0 and chosen > dropped


def config_in(folder: Path) -> Path | None:
    """``folder``'s own ``portlint.toml``, or its ``pyproject.toml`` with a ``[tool.portlint]``."""
    candidate = folder / "portlint.toml"
    if candidate.is_file():
        return candidate
    candidate = folder / "pyproject.toml"
    if not candidate.is_file():
        return None
    try:
        raw = candidate.read_bytes()
    except OSError:
        return None
    if b"portlint" not in raw:
        return None  # most projects: no need to parse
    from portlint.toml import tomllib

    try:
        document = tomllib.loads(raw.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError):
        # A broken pyproject.toml is a finding when linted; it is a configuration error only
        # when it means to configure portlint.
        if re.search(rb"^\s*\[\s*tool\s*\.\s*portlint\b", raw, re.MULTILINE):
            _read_toml(candidate)  # raises the one-line error
        return None
    return candidate if _portlint_table(candidate, document) is not None else None


def find_config(start: Path) -> Path | None:
    """The nearest ``portlint.toml``, or ``pyproject.toml`` that has a ``[tool.portlint]`` table."""
    for folder in (start, *start.parents):
        found = config_in(folder)
        if found is not None:
            return found
    return None


def load_settings(path: Path) -> Settings:
    document = _read_toml(path)
    table = _portlint_table(path, document) if path.name == "pyproject.toml" else document
    return apply_table(Settings(config_path=path.absolute()), table or {}, source=shown(path))


def shown(path: Path) -> str:
    """``path`` as messages show it: relative to the working folder when it is inside it."""
    try:
        return path.absolute().relative_to(Path.cwd()).as_posix()
    except ValueError:
        return str(path)


def _portlint_table(path: Path, document: dict[str, Any]) -> dict[str, Any] | None:
    """``[tool.portlint]`` of a ``pyproject.toml``; None when absent; an error when mistyped."""
    tool = document.get("tool")
    if tool is None:
        return None
    if not isinstance(tool, dict):
        raise ConfigError(f"{shown(path)}: 'tool' must be a table, got {_kind(tool)}")
    table = tool.get("portlint")
    if table is not None and not isinstance(table, dict):
        raise ConfigError(f"{shown(path)}: 'tool.portlint' must be a table, got {_kind(table)}")
    return table


def _kind(value: Any) -> str:
    names = {str: "a string", bool: "a boolean", int: "an integer", float: "a number"}
    return names.get(type(value), "an array" if isinstance(value, list) else type(value).__name__)


class Overrides(NamedTuple):
    """Command-line settings, applied on top of whichever configuration a file uses."""

    targets: tuple[str, ...] | None = None
    select: tuple[str, ...] | None = None
    ignore: tuple[str, ...] = ()
    extend_select: tuple[str, ...] = ()
    max_file_size: int | None = None
    rocm_version: str | None = None

    def apply(self, settings: Settings) -> Settings:
        changes: dict[str, Any] = {}
        if self.targets is not None:
            changes["targets"] = self.targets
        if self.select is not None:
            changes["select"] = self.select
        if self.ignore:
            changes["ignore"] = settings.ignore + self.ignore
        if self.extend_select:
            changes["extend_select"] = settings.extend_select + self.extend_select
        if self.max_file_size is not None:
            changes["max_file_size"] = self.max_file_size
        if self.rocm_version is not None:
            changes["rocm_version"] = self.rocm_version
        return settings._replace(**changes) if changes else settings


class Configurations:
    """The settings each file uses, found as ruff finds them.

    A file uses the closest ``portlint.toml`` or ``pyproject.toml`` with ``[tool.portlint]`` in
    its folder or above it; a file with none above it uses the one found from the working folder,
    else the defaults. ``config`` (``--config``) is used for every file instead, and ``isolated``
    (``--isolated``) reads no file at all. ``min-torch`` (when not configured) and
    ``requires-python`` come from the closest folder above the file that has a
    ``pyproject.toml`` or configuration: the file's project. Answers are cached per folder.
    """

    def __init__(
        self,
        config: Path | None = None,
        isolated: bool = False,
        overrides: Overrides | None = None,
        cwd: Path | None = None,
    ) -> None:
        self.overrides = overrides or Overrides()
        self.cwd = (cwd or Path.cwd()).absolute()
        self._by_folder: dict[Path, Settings] = {}
        self._closest_cache: dict[Path, tuple[Path | None, Path | None]] = {}
        self._loaded: dict[tuple[Path | None, Path | None], Settings] = {}
        self.fixed: Settings | None = None
        if isolated:
            self.fixed = self.overrides.apply(Settings())
        elif config is not None:
            if not config.is_file():
                raise ConfigError(f"{shown(config)}: config file not found")
            self.fixed = with_project_facts(self.overrides.apply(load_settings(config)))
        found = None if self.fixed is not None else find_config(self.cwd)
        self._fallback_path = found.absolute() if found else None

    @property
    def default(self) -> Settings:
        """The settings of the working folder: what the run's report is about."""
        return self.fixed if self.fixed is not None else self.for_folder(self.cwd)

    def for_file(self, path: Path) -> Settings:
        return self.for_folder(path.absolute().parent)

    def for_folder(self, folder: Path) -> Settings:
        if self.fixed is not None:
            return self.fixed
        folder = Path(os.path.normpath(folder.absolute()))
        settings = self._by_folder.get(folder)
        if settings is None:
            config, project = self._closest(folder)
            key = (config, project)
            settings = self._loaded.get(key)
            if settings is None:
                loaded = load_settings(config) if config else Settings()
                settings = with_project_facts(self.overrides.apply(loaded), project)
                self._loaded[key] = settings
            self._by_folder[folder] = settings
        return settings

    def _closest(self, folder: Path) -> tuple[Path | None, Path | None]:
        """(configuration file, project folder) for ``folder``."""
        answer = self._closest_cache.get(folder)
        if answer is None:
            answer = self._search(folder)
            self._closest_cache[folder] = answer
        return answer

    def _search(self, folder: Path) -> tuple[Path | None, Path | None]:
        config = config_in(folder)
        if config is not None:
            return config.absolute(), folder
        if folder.parent == folder:
            if self._fallback_path is not None:
                return self._fallback_path, self._fallback_path.parent
            return None, self.cwd
        config, project = self._closest(folder.parent)
        if (folder / "pyproject.toml").is_file():
            project = folder  # a project without portlint settings: its pins still apply
        return config, project

    def all(self) -> list[Settings]:
        """Every distinct settings used so far."""
        seen = list(self._loaded.values())
        return [self.fixed] if self.fixed is not None else seen


def apply_table(settings: Settings, table: dict[str, Any], source: str) -> Settings:
    where = "[tool.portlint]" if source.endswith("pyproject.toml") else "the file"
    changes: dict[str, Any] = {}
    for key, value in table.items():
        if key not in CONFIG_KEYS:
            raise ConfigError(
                f"{source}: unknown key '{key}' in {where}; allowed: {', '.join(CONFIG_KEYS)}"
            )
        attribute = key.replace("-", "_")
        if key in ("target", "select", "ignore", "extend-select") and not isinstance(value, list):
            example = '["rocm", "npu"]' if key == "target" else '["PRT2"]'
            raise ConfigError(
                f"{source}: '{key}' must be an array such as {example}, got {_kind(value)}"
            )
        if key == "target":
            changes["targets"] = parse_targets(value, f"{source}: 'target'")
        elif key in ("select", "ignore", "extend-select"):
            changes[attribute] = parse_selectors(value, f"{source}: '{key}'")
        elif key == "max-file-size":
            changes[attribute] = parse_size(value, f"{source}: 'max-file-size'")
        elif key in ("exclude", "extend-exclude"):
            changes[attribute] = _string_list(value, f"{source}: '{key}'")
        elif key == "per-file-ignores":
            changes[attribute] = parse_per_file_ignores(value, source)
        elif key == "min-torch":
            if not isinstance(value, str) or not VERSION.match(value):
                raise ConfigError(
                    f"{source}: 'min-torch' must be a version string such as \"2.6\", got {value!r}"
                )
            changes[attribute] = value
            changes["min_torch_from"] = source
        elif key == "rocm-version":
            changes[attribute] = parse_rocm_version(value, f"{source}: 'rocm-version'")
        elif key == "cache-dir":
            if not isinstance(value, str) or not value:
                raise ConfigError(f"{source}: 'cache-dir' must be a folder path string")
            changes[attribute] = Path(value)
    return settings._replace(**changes)


def parse_rocm_version(value: Any, context: str) -> str:
    if not isinstance(value, str) or not VERSION.match(value):
        raise ConfigError(f'{context} must be a version string such as "6.2", got {value!r}')
    return value


def parse_size(value: Any, context: str) -> int:
    """A size in bytes: an integer, or a string such as "20MB", "512k"."""
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    match = SIZE.match(value.strip()) if isinstance(value, str) else None
    if match is None or int(match.group(1)) <= 0:
        raise ConfigError(f'{context} must be a size such as "20MB" or a number of bytes')
    return int(match.group(1)) * 1024 ** " kmg".index(match.group(2).lower() or " ")


def parse_targets(value: Any, context: str) -> tuple[str, ...]:
    items = value.split(",") if isinstance(value, str) else value
    if not isinstance(items, list | tuple) or not items:
        raise ConfigError(f"{context} must be a list of targets from: {', '.join(ALL_TARGETS)}")
    chosen: list[str] = []
    for item in items:
        name = str(item).strip().lower()
        if name == "all":  # every accelerator; host targets (arm64) only when named
            chosen.extend(t for t in TARGETS if t not in chosen)
            continue
        if name not in ALL_TARGETS:
            raise ConfigError(
                f"{context}: unknown target {item!r}; allowed: {', '.join(ALL_TARGETS)}, all"
            )
        if name not in chosen:
            chosen.append(name)
    return tuple(t for t in ALL_TARGETS if t in chosen)


def parse_selectors(value: Any, context: str) -> tuple[str, ...]:
    items = value.split(",") if isinstance(value, str) else value
    if not isinstance(items, list | tuple):
        raise ConfigError(f'{context} must be a list of rule codes or prefixes such as "PRT1"')
    result = []
    for item in items:
        text = str(item).strip().upper()
        if not text:
            continue
        if not SELECTOR.match(text):
            raise ConfigError(
                f"{context}: {item!r} is not a rule code or prefix (PRT, PRT1, PRT101, ALL)"
            )
        result.append(text)
    return tuple(result)


def parse_per_file_ignores(value: Any, source: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    if not isinstance(value, dict):
        raise ConfigError(f"{source}: 'per-file-ignores' must be a table of glob = [codes]")
    for pattern, codes in value.items():
        if not isinstance(codes, list):
            raise ConfigError(
                f"{source}: 'per-file-ignores' {pattern!r} must be an array of rule codes, "
                f"got {_kind(codes)}"
            )
    return tuple(
        (str(pattern), parse_selectors(codes, f"{source}: 'per-file-ignores' {pattern!r}"))
        for pattern, codes in value.items()
    )


def _string_list(value: Any, context: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{context} must be a list of glob strings")
    return tuple(value)


def _read_toml(path: Path) -> dict[str, Any]:
    from portlint.toml import tomllib

    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except OSError as error:
        raise ConfigError(f"{shown(path)}: cannot read: {error.strerror}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise ConfigError(f"{shown(path)}: invalid TOML: {_one_line(error)}") from None


def _one_line(error: Exception) -> str:
    return " ".join(str(error).split())

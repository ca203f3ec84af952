"""Settings: defaults, ``[tool.portlint]`` / ``portlint.toml``, and command-line overrides."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from portlint.catalog import tomllib
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
)
SELECTOR = re.compile(r"^(ALL|PRT\d{0,3})$")
VERSION = re.compile(r"^\d+\.\d+(\.\d+)?$")
DEFAULT_MIN_TORCH = "2.6"


class ConfigError(Exception):
    """A problem with the user's configuration; the message is one line."""


@dataclass(frozen=True)
class Settings:
    targets: tuple[str, ...] = TARGETS
    select: tuple[str, ...] = ("PRT",)
    ignore: tuple[str, ...] = ()
    extend_select: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    extend_exclude: tuple[str, ...] = ()
    per_file_ignores: dict[str, tuple[str, ...]] = field(default_factory=dict)
    min_torch: str = DEFAULT_MIN_TORCH
    #: Where ``min_torch`` came from: "default", the config file, or the torch requirement it
    #: was inferred from.
    min_torch_from: str = "default"
    #: The oldest Python the project supports (``requires-python``): fixed code must parse with it.
    min_python: str = "3.10"
    #: The file the settings came from, if any; relative patterns are taken from its folder.
    config_path: Path | None = None

    @property
    def root(self) -> Path:
        return self.config_path.parent if self.config_path else Path.cwd()

    def is_enabled(self, code: str) -> bool:
        return rule_enabled(code, self.select + self.extend_select, self.ignore)

    def min_torch_tuple(self) -> tuple[int, ...]:
        return version_tuple(self.min_torch)


def with_inferred_min_torch(settings: Settings) -> Settings:
    """Settings whose ``min-torch``, when no configuration sets it, is the project's torch pin."""
    from portlint.torch_pin import infer_min_python, infer_min_torch

    python = infer_min_python(settings.root)
    if python is not None:
        settings = replace(settings, min_python=python)
    if settings.min_torch_from != "default":
        return settings
    inferred = infer_min_torch(settings.root)
    if inferred is None:
        return settings
    version, where = inferred
    return replace(settings, min_torch=version, min_torch_from=where)


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


def find_config(start: Path) -> Path | None:
    """The nearest ``portlint.toml``, or ``pyproject.toml`` that has a ``[tool.portlint]`` table."""
    for folder in (start, *start.parents):
        candidate = folder / "portlint.toml"
        if candidate.is_file():
            return candidate
        candidate = folder / "pyproject.toml"
        if candidate.is_file() and "portlint" in _read_toml(candidate).get("tool", {}):
            return candidate
    return None


def load_settings(path: Path) -> Settings:
    document = _read_toml(path)
    table = (
        document.get("tool", {}).get("portlint", {}) if path.name == "pyproject.toml" else document
    )
    return apply_table(Settings(config_path=path.resolve()), table, source=str(path))


def apply_table(settings: Settings, table: dict[str, Any], source: str) -> Settings:
    where = "[tool.portlint]" if source.endswith("pyproject.toml") else "the file"
    changes: dict[str, Any] = {}
    for key, value in table.items():
        if key not in CONFIG_KEYS:
            raise ConfigError(
                f"{source}: unknown key '{key}' in {where}; allowed: {', '.join(CONFIG_KEYS)}"
            )
        attribute = key.replace("-", "_")
        if key == "target":
            changes["targets"] = parse_targets(value, f"{source}: 'target'")
        elif key in ("select", "ignore", "extend-select"):
            changes[attribute] = parse_selectors(value, f"{source}: '{key}'")
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
    return replace(settings, **changes)


def parse_targets(value: Any, context: str) -> tuple[str, ...]:
    items = value.split(",") if isinstance(value, str) else value
    if not isinstance(items, list | tuple) or not items:
        raise ConfigError(f"{context} must be a list of targets from: {', '.join(ALL_TARGETS)}")
    chosen = []
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


def parse_per_file_ignores(value: Any, source: str) -> dict[str, tuple[str, ...]]:
    if not isinstance(value, dict):
        raise ConfigError(f"{source}: 'per-file-ignores' must be a table of glob = [codes]")
    return {
        str(pattern): parse_selectors(codes, f"{source}: 'per-file-ignores' {pattern!r}")
        for pattern, codes in value.items()
    }


def _string_list(value: Any, context: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{context} must be a list of glob strings")
    return tuple(value)


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except OSError as error:
        raise ConfigError(f"{path}: cannot read: {error.strerror}") from None
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path}: invalid TOML: {error}") from None

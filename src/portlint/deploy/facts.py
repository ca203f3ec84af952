"""Per-target advice from rules/deploy.toml and rules/deploy/*.toml, built once per catalogue."""

from __future__ import annotations

import fnmatch
import functools
import re
from collections.abc import Mapping
from typing import Any

from portlint.catalog import Catalog, parse_advice
from portlint.model import ALL_TARGETS, PORTABLE, Advice, Severity, Status

Targets = Mapping[str, Advice]


def advice_row(row: Mapping[str, Any], absent: Advice, status: Status = Status.MANUAL) -> Targets:
    """Advice from a table row of per-target strings: "ok" portable, "" unsupported, text = what
    to use instead (with ``status``); a target missing from the row gets ``absent``."""
    advice = {}
    for target in ALL_TARGETS:
        value = row.get(target)
        if value is None:
            advice[target] = absent
        elif value == "ok":
            advice[target] = PORTABLE
        elif value == "":
            advice[target] = Advice(Status.UNSUPPORTED)
        else:
            advice[target] = Advice(status, value)
    return advice


def _env_row(row: Mapping[str, Any]) -> Targets:
    advice = dict(advice_row(row, PORTABLE, Status.RENAME))
    if row.get("rocm_portable"):
        advice["rocm"] = PORTABLE
    return advice


@functools.cache
def deploy_table(catalog: Catalog) -> dict[str, Any]:
    return catalog.table("deploy")


@functools.cache
def env_advice(catalog: Catalog) -> dict[str, Targets]:
    """Variable -> advice: rules/environment.toml's [env.*] plus deploy.toml's additions."""
    rows = {**catalog.table("environment").get("env", {}), **deploy_table(catalog).get("env", {})}
    return {name: _env_row(row) for name, row in rows.items()}


@functools.cache
def _family_advice(catalog: Catalog) -> tuple[tuple[frozenset[str], str | None, Targets], ...]:
    """rules/environment.toml's [env_family.*]: (names, prefix, advice)."""
    rows = catalog.table("environment").get("env_family", {})
    return tuple(
        (frozenset(row.get("names", ())), row.get("prefix"), _env_row(row)) for row in rows.values()
    )


def variable_advice(name: str, catalog: Catalog) -> Targets | None:
    """The advice for a CUDA-only variable: its own row (``env_advice``), else its family's
    (``NCCL_ALGO``, ``TORCH_NCCL_DUMP_ON_TIMEOUT``); None for any other name."""
    advice = env_advice(catalog).get(name)
    if advice is not None:
        return advice
    for names, prefix, family in _family_advice(catalog):
        if name in names or (prefix and name.startswith(prefix) and len(name) > len(prefix)):
            return family
    return None


def variable_severity(name: str, catalog: Catalog) -> Severity | None:
    """The severity a CUDA-only variable's row gives (info: a knob that changes nothing
    elsewhere), as for the same variable in Python (PRT401); None: the rule's. A row of
    deploy.toml's ``[env.*]`` comes first, as in ``env_advice``."""
    from portlint.python.environment_checks import variable_row

    row = deploy_table(catalog).get("env", {}).get(name)
    if row is not None:
        return Severity(row["severity"]) if "severity" in row else None
    found = variable_row(name, catalog)
    return found[1] if found is not None else None


@functools.cache
def tool_advice(catalog: Catalog) -> dict[str, Targets]:
    rows = catalog.table("environment").get("tool", {})
    return {name: advice_row(row, PORTABLE, Status.RENAME) for name, row in rows.items()}


def targets_table(raw: Mapping[str, Any]) -> Targets:
    """A ``[x.targets]`` table whose values are advice tables or plain strings (manual)."""
    return {
        t: parse_advice(v) if isinstance(v, dict) else Advice(Status.MANUAL, v)
        for t, v in raw.items()
    }


@functools.cache
def resource_advice(catalog: Catalog) -> Targets:
    return targets_table(deploy_table(catalog)["resource"]["targets"])


@functools.cache
def device_advice(catalog: Catalog, style: str) -> Targets:
    """What replaces an NVIDIA GPU request; ``style`` is "docker" (run flags) or "compose"."""
    row = dict(deploy_table(catalog)["devices"][style])
    advice = dict(advice_row(row, Advice(Status.UNSUPPORTED)))
    advice["arm64"] = PORTABLE
    return advice


@functools.cache
def wheel_index_advice(catalog: Catalog) -> Targets:
    return targets_table(deploy_table(catalog)["wheel_index"]["targets"])


@functools.cache
def local_version_advice(catalog: Catalog) -> Targets:
    return targets_table(deploy_table(catalog)["local_version"]["targets"])


@functools.cache
def compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def matches_any(patterns: list[str], text: str) -> bool:
    return any(compiled(p).search(text) for p in patterns)


@functools.cache
def image_rows(catalog: Catalog) -> tuple[dict[str, Any], ...]:
    return tuple(catalog.data("deploy/images.toml").get("image", []))


def image_match(catalog: Catalog, reference: str) -> tuple[str, Targets] | None:
    """(what the image is, advice) for an NVIDIA-only image reference, else None."""
    for row in image_rows(catalog):
        if fnmatch.fnmatchcase(reference.lower(), row["pattern"]):
            return row["what"], advice_row(row, Advice(Status.UNSUPPORTED))
    return None


NORMALISE = re.compile(r"[-_.]+")


def normalise(name: str) -> str:
    return NORMALISE.sub("-", name).lower()


@functools.cache
def distribution_rows(catalog: Catalog) -> dict[str, dict[str, Any]]:
    return catalog.data("deploy/packages.toml").get("distribution", {})


def distribution_match(catalog: Catalog, name: str) -> Targets | None:
    """Advice for an NVIDIA-only distribution (normalised name), else None (also for one that
    installs everywhere, ``installs_everywhere``: NVML's pure-Python bindings; and for one of
    the CUDA libraries a CUDA build of torch installs with itself, ``comes_with_torch``)."""
    from portlint.python.package_checks import package_advice

    wanted = normalise(name)
    for pattern, row in distribution_rows(catalog).items():
        if fnmatch.fnmatchcase(wanted, pattern):
            if row.get("installs_everywhere") or row.get("comes_with_torch"):
                return None
            if "module" in row:
                advice = dict(package_advice(catalog)[row["module"]])
                advice.setdefault("arm64", PORTABLE)
                return advice
            advice = dict(advice_row(row, Advice(Status.UNSUPPORTED)))
            # Arm hosts matter only where the row says so: these packages exist for aarch64.
            advice["arm64"] = advice_row(row, PORTABLE)["arm64"]
            return advice
    return None

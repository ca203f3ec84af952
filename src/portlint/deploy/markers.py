"""Which targets' machines install a requirement, read from its PEP 508 environment marker.

``bitsandbytes>=0.44; platform_system != "Darwin"`` is never installed on a Mac, so a finding on
it does not concern mps; ``flash-attn @ https://…linux_x86_64.whl ; platform_machine ==
"x86_64"`` is never fetched on an Arm host, so the wheel's platform tag costs an Arm host
nothing. The machines each target runs on are data (rules/deploy.toml ``[marker_hosts]``); the
marker is evaluated by ``packaging`` for each of them, as pip evaluates it.

Only the platform decides: a target is dropped when the marker is false on every one of its
machines for every Python version and every extra the marker names, so a marker that only
narrows Python versions or extras never drops one.
"""

from __future__ import annotations

import functools
import re
from typing import Any

from portlint.catalog import Catalog
from portlint.deploy.facts import Targets, deploy_table

#: Python versions a marker is read for: the target is dropped only if none installs it.
PYTHON_VERSIONS = ("3.8", "3.9", "3.10", "3.11", "3.12", "3.13", "3.14")
#: ``sys_platform`` -> (``platform_system``, ``os_name``), as CPython reports them.
SYSTEMS = {"linux": ("Linux", "posix"), "darwin": ("Darwin", "posix"), "win32": ("Windows", "nt")}
EXTRA = re.compile(r"""\bextra\s*==\s*['"]([^'"]+)['"]""")


@functools.cache
def _hosts(catalog: Catalog) -> dict[str, tuple[tuple[str, str], ...]]:
    """Target -> its machines as (sys_platform, platform_machine)."""
    table = deploy_table(catalog)["marker_hosts"]
    return {
        target: tuple((host.split()[0], host.split()[1]) for host in hosts)
        for target, hosts in table["targets"].items()
    }


def _environments(host: tuple[str, str], extras: list[str]) -> list[dict[str, str]]:
    platform, machine = host
    system, os_name = SYSTEMS[platform]
    return [
        {
            "sys_platform": platform,
            "platform_system": system,
            "os_name": os_name,
            "platform_machine": machine,
            "python_version": version,
            "python_full_version": version + ".0",
            "implementation_name": "cpython",
            "platform_python_implementation": "CPython",
            "extra": extra,
        }
        for version in PYTHON_VERSIONS
        for extra in extras
    ]


def _installs_on(marker: Any, host: tuple[str, str], extras: list[str]) -> bool:
    for environment in _environments(host, extras):
        try:
            if marker.evaluate(environment):
                return True
        except Exception:  # a comparison packaging cannot make: keep the target
            return True
    return False


def installing_targets(catalog: Catalog, code: str, marker: Any, targets: Targets) -> Targets:
    """``targets`` without those none of whose machines installs a requirement with ``marker``
    (None: no marker, all kept). For a rule about Arm hosts alone (``arm_rules``: an x86_64-only
    wheel), only a target's Arm machines are read."""
    if marker is None:
        return targets
    table = deploy_table(catalog)["marker_hosts"]
    arm = code in table.get("arm_rules", ())
    extras = ["", *EXTRA.findall(str(marker))]
    hosts = _hosts(catalog)
    kept: dict[str, Any] = {}
    for target, advice in targets.items():
        machines = hosts.get(target)
        if machines is None:
            kept[target] = advice  # a target with no machines listed is never dropped
            continue
        if arm:
            machines = tuple(h for h in machines if h[1] in table["arm_machines"])
        if any(_installs_on(marker, host, extras) for host in machines):
            kept[target] = advice
    return kept

"""The oldest torch a project supports, read from its own dependency declarations.

Used for ``min-torch`` when the configuration does not set it: the lower bound of the ``torch``
requirement in ``pyproject.toml`` (``[project] dependencies``) or ``requirements*.txt`` next to
the configuration. ``torch>=2.1``, ``torch==2.4.1``, ``torch~=2.3.0`` and ``torch>2.2`` give
2.1, 2.4, 2.3 and 2.2; a requirement without a lower bound gives nothing.
"""

from __future__ import annotations

import re
from pathlib import Path

from portlint.catalog import tomllib

LOWER_BOUND = re.compile(r"(>=|==|~=|>|===)\s*v?(\d+)\.(\d+)")
TORCH_REQUIREMENT = re.compile(
    r"^\s*torch\s*(\[[^\]]*\])?\s*(?P<spec>[<>=!~][^;#]*)", re.IGNORECASE
)


def lower_bound(requirement: str) -> str | None:
    """``"2.1"`` for ``"torch>=2.1,<3"``; None when the requirement is not torch or has no bound."""
    match = TORCH_REQUIREMENT.match(requirement)
    if match is None:
        return None
    bounds = [(int(a), int(b)) for _, a, b in LOWER_BOUND.findall(match.group("spec"))]
    if not bounds:
        return None
    major, minor = min(bounds)
    return f"{major}.{minor}"


def _project_table(folder: Path) -> dict:
    """``[project]`` of ``folder/pyproject.toml``; empty when absent, unreadable or mistyped."""
    pyproject = folder / "pyproject.toml"
    if not pyproject.is_file():
        return {}
    try:
        project = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("project")
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return {}
    return project if isinstance(project, dict) else {}


def requires_python(folder: Path) -> str | None:
    """``[project] requires-python`` of the project in ``folder``, e.g. ``">=3.10"``."""
    value = _project_table(folder).get("requires-python")
    return value if isinstance(value, str) else None


def infer_min_torch(folder: Path) -> tuple[str, str] | None:
    """(version, where it was read) for the project in ``folder``, or None."""
    dependencies = _project_table(folder).get("dependencies")
    for requirement in dependencies if isinstance(dependencies, list) else []:
        version = lower_bound(str(requirement))
        if version:
            return version, str(folder / "pyproject.toml")
    for requirements in sorted(folder.glob("requirements*.txt")):
        try:
            lines = requirements.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            continue
        for line in lines:
            version = lower_bound(line)
            if version:
                return version, str(requirements)
    return None

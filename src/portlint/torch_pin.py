"""The oldest torch and the oldest Python a project supports, read from its own declarations.

``min-torch``, when the configuration does not set it, is the lower bound of the ``torch``
requirement found first in: ``pyproject.toml`` (``[project] dependencies``), ``setup.cfg``
(``[options] install_requires``), ``setup.py`` (a literal ``install_requires=[...]`` list, read
with ``ast``, never run), and ``requirements*.txt`` next to the configuration, following ``-r``
/ ``--requirement`` includes. ``torch>=2.1``, ``torch==2.4.1``, ``torch~=2.3.0`` and
``torch>2.2`` give 2.1, 2.4, 2.3 and 2.2; a requirement without a lower bound gives nothing.

The oldest Python is the lower bound of ``requires-python`` in ``pyproject.toml``: fixed code
must parse with its grammar.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from pathlib import Path

LOWER_BOUND = re.compile(r"(>=|==|~=|>|===)\s*v?(\d+)\.(\d+)")
TORCH_REQUIREMENT = re.compile(
    r"^\s*torch\s*(\[[^\]]*\])?\s*(?P<spec>[<>=!~][^;#]*)", re.IGNORECASE
)
INCLUDE = re.compile(r"^\s*(-r|--requirement)(\s*=\s*|\s+)(?P<path>\S+)")
#: How deep ``-r`` includes are followed (they may form a cycle).
MAX_INCLUDE_DEPTH = 8


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


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def _pyproject(folder: Path) -> dict:
    text = _read(folder / "pyproject.toml") if (folder / "pyproject.toml").is_file() else None
    if text is None:
        return {}
    # The parsers are imported when a file is there to parse: most runs on one file have none.
    from portlint.toml import tomllib

    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return {}


def _setup_cfg_requirements(path: Path) -> list[str]:
    text = _read(path)
    if text is None:
        return []
    import configparser

    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(text)
    except configparser.Error:
        return []
    value = parser.get("options", "install_requires", fallback="")
    return [line.strip() for line in value.splitlines() if line.strip()]


def _setup_py_requirements(path: Path) -> list[str]:
    """The string literals of ``install_requires=[...]`` (a list or tuple written in the call)."""
    text = _read(path)
    if text is None:
        return []
    import ast

    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return []
    found: list[str] = []
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.keyword)
            and node.arg == "install_requires"
            and isinstance(node.value, ast.List | ast.Tuple)
        ):
            found.extend(
                element.value
                for element in node.value.elts
                if isinstance(element, ast.Constant) and isinstance(element.value, str)
            )
    return found


def requirement_lines(path: Path, depth: int = 0, seen: set[Path] | None = None) -> Iterator[str]:
    """The lines of a requirements file, with the files it includes by ``-r`` in their place."""
    seen = set() if seen is None else seen
    resolved = path.resolve()
    if resolved in seen or depth > MAX_INCLUDE_DEPTH:
        return
    seen.add(resolved)
    text = _read(path)
    if text is None:
        return
    for line in text.splitlines():
        include = INCLUDE.match(line)
        if include:
            yield from requirement_lines(path.parent / include.group("path"), depth + 1, seen)
        else:
            yield line


def _first_bound(requirements: Iterable[str]) -> str | None:
    for requirement in requirements:
        version = lower_bound(str(requirement))
        if version:
            return version
    return None


def _project_table(folder: Path) -> dict:
    """``[project]`` of ``folder/pyproject.toml``; empty when absent, unreadable or mistyped."""
    project = _pyproject(folder).get("project")
    return project if isinstance(project, dict) else {}


def requires_python(folder: Path) -> str | None:
    """``[project] requires-python`` of the project in ``folder``, e.g. ``">=3.10"``."""
    value = _project_table(folder).get("requires-python")
    return value if isinstance(value, str) else None


def infer_min_torch(folder: Path) -> tuple[str, str] | None:
    """(version, where it was read) for the project in ``folder``, or None."""
    dependencies = _project_table(folder).get("dependencies")
    if not isinstance(dependencies, list):
        dependencies = []
    sources: list[tuple[Path, Iterable[str]]] = [(folder / "pyproject.toml", dependencies)]
    if (folder / "setup.cfg").is_file():
        sources.append((folder / "setup.cfg", _setup_cfg_requirements(folder / "setup.cfg")))
    if (folder / "setup.py").is_file():
        sources.append((folder / "setup.py", _setup_py_requirements(folder / "setup.py")))
    for requirements_file in sorted(folder.glob("requirements*.txt")):
        sources.append((requirements_file, requirement_lines(requirements_file)))
    for where, requirements in sources:
        version = _first_bound(requirements)
        if version:
            return version, str(where)
    return None


PYTHON_LOWER_BOUND = re.compile(r"(>=|==|~=|>)\s*(\d+)\.(\d+)")


def infer_min_python(folder: Path) -> str | None:
    """The lower bound of the project's ``requires-python``, or None."""
    return min_python_of(requires_python(folder))


def min_python_of(requires: str | None) -> str | None:
    """The lower bound of a ``requires-python`` value (``">=3.9"`` -> ``"3.9"``), or None."""
    if requires is None:
        return None
    bounds = [(int(a), int(b)) for _, a, b in PYTHON_LOWER_BOUND.findall(requires)]
    if not bounds:
        return None
    major, minor = min(bounds)
    return f"{major}.{minor}"

"""Python project metadata: ``pyproject.toml`` (read with tomllib) and ``setup.cfg``.

tomllib gives values without positions, so each dependency string is found again in the text, in
order; a string that cannot be found is skipped rather than reported at a wrong place.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from portlint.deploy.report import Reporter
from portlint.deploy.requirements import check_index_url, check_requirement, split_line
from portlint.deploy.words import Word
from portlint.model import Span
from portlint.toml import tomllib

TOML_ERROR_AT = re.compile(r"\(at line (\d+), column (\d+)\)")
#: setup.cfg keys whose values are requirement lists.
SETUP_CFG_KEYS = frozenset({"install_requires", "setup_requires", "tests_require"})
SETUP_CFG_SECTIONS = frozenset({"options.extras_require"})
SECTION = re.compile(r"^\s*\[([^\]]+)\]")
KEY = re.compile(r"^([A-Za-z0-9_.-]+)\s*[=:]\s*(.*)$")


def analyse_pyproject_text(rep: Reporter) -> None:
    try:
        document = tomllib.loads(rep.source.text)
    except tomllib.TOMLDecodeError as error:
        where = TOML_ERROR_AT.search(str(error))
        line, column = (int(where.group(1)), int(where.group(2)) - 1) if where else (1, 0)
        message = TOML_ERROR_AT.sub("", str(error)).strip()
        rep.parse_error(line, column, f"TOML error: {message}")
        return
    finder = StringFinder(rep)
    for requirement in dependency_strings(document):
        word = finder.find(requirement)
        if word is not None:
            check_requirement(rep, word)
    for url in all_strings(document):
        if "://" in url:
            word = StringFinder(rep).find(url)
            if word is not None:
                check_index_url(rep, word)


def dependency_strings(document: dict[str, Any]) -> Iterator[str]:
    project = document.get("project", {})
    yield from _strings(project.get("dependencies", []))
    for group in project.get("optional-dependencies", {}).values():
        yield from _strings(group)
    yield from _strings(document.get("build-system", {}).get("requires", []))
    for group in document.get("dependency-groups", {}).values():
        yield from _strings(group)


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, list):
        yield from (item for item in value if isinstance(item, str))


def all_strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from all_strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from all_strings(item)


class StringFinder:
    """Finds quoted strings in the text in order, each occurrence used once."""

    def __init__(self, rep: Reporter) -> None:
        self.rep = rep
        self.used: set[tuple[int, int]] = set()

    def find(self, value: str) -> Word | None:
        for number, line in enumerate(self.rep.index.lines, start=1):
            for quote in ('"', "'"):
                start = line.find(quote + value + quote)
                while start >= 0:
                    if (number, start) not in self.used:
                        self.used.add((number, start))
                        column = start + 1
                        return Word(value, Span(number, column, number, column + len(value)))
                    start = line.find(quote + value + quote, start + 1)
        return None


def analyse_setup_cfg_text(rep: Reporter) -> None:
    """Requirement lists of ``[options]`` and ``[options.extras_require]`` (values may go on over
    indented continuation lines)."""
    section, listing = "", False
    for number, line in enumerate(rep.index.lines, start=1):
        header = SECTION.match(line)
        if header:
            section, listing = header.group(1).strip(), False
            continue
        if not line.strip() or line.lstrip().startswith(("#", ";")):
            continue
        continued = line[0] in " \t"
        if not continued:
            key = KEY.match(line)
            listing = bool(key) and (
                (section == "options" and key.group(1) in SETUP_CFG_KEYS)
                or section in SETUP_CFG_SECTIONS
            )
            if not listing or not key.group(2).strip():
                continue
            column = line.index(key.group(2), len(key.group(1)))
            line = " " * column + key.group(2)
        if listing:
            for word in split_line(line, number):
                check_requirement(rep, word)

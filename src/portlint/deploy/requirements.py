"""PRT93x/PRT951: Python dependencies — requirement strings, wheel indexes, local versions.

Requirement strings are parsed with ``packaging`` (the library pip itself vendors), so names are
normalised and version specifiers read exactly as pip reads them.
"""

from __future__ import annotations

import re

from portlint.deploy.facts import (
    compiled,
    deploy_table,
    distribution_match,
    local_version_advice,
    matches_any,
    normalise,
    wheel_index_advice,
)
from portlint.deploy.report import Reporter
from portlint.deploy.words import Word
from portlint.model import Applicability, Edit, Fix, Span

#: Options of a requirements file / ``pip install`` that take an index or find-links URL.
INDEX_OPTIONS = frozenset({"-i", "--index-url", "--extra-index-url", "-f", "--find-links"})
#: Options whose value is not a requirement (skipped with their value).
VALUE_OPTIONS = frozenset(
    {
        "-r",
        "--requirement",
        "-c",
        "--constraint",
        "-e",
        "--editable",
        "--hash",
        "--python-version",
        "--platform",
        "--target",
        "-t",
        "--prefix",
        "--root",
        "--trusted-host",
        "--only-binary",
        "--no-binary",
        "--progress-bar",
        "--upgrade-strategy",
        "--cache-dir",
        "--src",
    }
)
#: `` #`` starts a comment in a requirements file (a ``#`` inside a URL fragment does not).
COMMENT = re.compile(r"(?:^|\s)#")
LOCAL_VERSION = re.compile(r"\+(cu\d+)\b")


def check_index_url(rep: Reporter, url: Word) -> None:
    """PRT931 when ``url`` is a CUDA wheel index."""
    table = deploy_table(rep.catalog)["wheel_index"]
    if not matches_any(table["patterns"], url.text):
        return
    fix = None
    rewrite = compiled(table["cpu_rewrite"]).search(url.text)
    if rewrite and "download.pytorch.org" in url.text:
        start = rewrite.start() + len(rewrite.group("channel") or "")
        edit = Edit(url.part(start, rewrite.end()), "cpu")
        if edit.span != url.span:
            fix = Fix(Applicability.SAFE, (edit,), "Use the CPU wheel index", target="cpu")
    rep.add(
        "PRT931",
        url.span,
        f"`{url.text}` serves CUDA builds",
        targets=wheel_index_advice(rep.catalog),
        fix=fix,
    )


def check_requirement(rep: Reporter, word: Word) -> None:
    """PRT933, PRT932 and PRT951 on one requirement string (``name[extras] specifiers; marker``,
    a direct URL or a wheel file name)."""
    from packaging.requirements import InvalidRequirement, Requirement

    text = word.text
    check_wheel_platform(rep, word)
    try:
        requirement = Requirement(text)
    except InvalidRequirement:
        return
    name_at = text.find(requirement.name)
    advice = distribution_match(rep.catalog, requirement.name)
    if advice is not None:
        rep.add(
            "PRT933",
            word.part(name_at, name_at + len(requirement.name)),
            f"`{requirement.name}` is built for NVIDIA GPUs only",
            targets=advice,
        )
    if any("+" in spec.version for spec in requirement.specifier):
        check_local_version(rep, word, requirement.name)


def check_local_version(rep: Reporter, word: Word, name: str) -> None:
    table = deploy_table(rep.catalog)["local_version"]
    for match in LOCAL_VERSION.finditer(word.text):
        span = word.part(match.start(1), match.end(1))
        fix = None
        if normalise(name) in table["cpu_twins"] and span != word.span:
            fix = Fix(Applicability.SAFE, (Edit(span, "cpu"),), "Pin the CPU build", target="cpu")
        rep.add(
            "PRT932",
            word.part(match.start(), match.end()),
            f"`{name}` is pinned to its CUDA build `+{match.group(1)}`",
            targets=local_version_advice(rep.catalog),
            fix=fix,
        )


def check_wheel_platform(rep: Reporter, word: Word) -> None:
    pattern = compiled(deploy_table(rep.catalog)["x86_wheel"]["pattern"])
    match = pattern.search(word.text)
    if match:
        rep.add(
            "PRT951",
            word.part(match.start() + 1, match.end() - len(".whl")),
            "the wheel is built for x86_64 only",
        )


def check_pip_arguments(rep: Reporter, words: list[Word]) -> None:
    """``pip install`` arguments (after ``install``) or the words of a requirements-file line."""
    pending = None
    for word in words:
        if pending is not None:
            if pending in INDEX_OPTIONS:
                check_index_url(rep, word)
            pending = None
            continue
        option, has_value, value = word.text.partition("=")
        if word.text.startswith("-"):
            if option in INDEX_OPTIONS and has_value:
                check_index_url(rep, Word(value, word.part(len(option) + 1, len(word.text))))
            elif option in INDEX_OPTIONS or option in VALUE_OPTIONS:
                pending = None if has_value else option
            continue
        check_requirement(rep, word)


def split_line(line: str, number: int) -> list[Word]:
    """The words of one requirements-file line, comments dropped."""
    comment = COMMENT.search(line)
    if comment:
        line = line[: comment.start()]
    words = []
    # A requirement may contain spaces ("torch >= 2.1 ; python_version > '3.9'"): only options
    # and their values are split off; the rest of the line is one requirement.
    position = 0
    stripped = line.rstrip(" \t\\")
    while position < len(stripped):
        while position < len(stripped) and stripped[position] in " \t":
            position += 1
        if position >= len(stripped):
            break
        if stripped[position] == "-":
            end = position
            while end < len(stripped) and stripped[end] not in " \t":
                end += 1
        else:
            option = re.search(r"\s--?[a-z]", stripped[position:])
            end = position + option.start() if option else len(stripped)
        text = stripped[position:end].rstrip()
        words.append(Word(text, Span(number, position, number, position + len(text))))
        position = end
    return words


def analyse_requirements_text(rep: Reporter) -> None:
    for number, line in enumerate(rep.index.lines, start=1):
        if line.strip() and not line.lstrip().startswith("#"):
            check_pip_arguments(rep, split_line(line, number))


CONDA_SPEC = re.compile(r"^([A-Za-z0-9_.-]+)")


def check_conda_spec(rep: Reporter, word: Word) -> None:
    """A conda package spec (``pytorch-cuda=12.1``, ``cudatoolkit>=11``, ``nvidia::cuda``)."""
    text = word.text.split("::")[-1]
    offset = len(word.text) - len(text)
    match = CONDA_SPEC.match(text)
    if not match:
        return
    name = match.group(1)
    advice = distribution_match(rep.catalog, name)
    if advice is not None:
        rep.add(
            "PRT933",
            word.part(offset, offset + len(name)),
            f"`{name}` is built for NVIDIA GPUs only",
            targets=advice,
        )

"""PRT93x/PRT951: Python dependencies — requirement strings, wheel indexes, local versions.

Requirement strings are parsed with ``packaging`` (the library pip itself vendors), so names are
normalised and version specifiers read exactly as pip reads them.
"""

from __future__ import annotations

import re
from typing import Any

from portlint.deploy.facts import (
    Targets,
    compiled,
    deploy_table,
    distribution_match,
    local_version_advice,
    matches_any,
    normalise,
    wheel_index_advice,
)
from portlint.deploy.markers import installing_targets
from portlint.deploy.report import Reporter
from portlint.deploy.words import Word
from portlint.model import Applicability, Edit, Finding, Fix, Span
from portlint.sink import FindingList

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
    a direct URL or a wheel file name). A target none of whose machines installs it (its
    environment marker, ``portlint.deploy.markers``) is not listed."""
    text = word.text
    requirement, marker = _parse_requirement(text)
    check_wheel_platform(rep, word, marker)
    if requirement is None:
        return
    name_at = text.find(requirement.name)
    advice = distribution_match(rep.catalog, requirement.name)
    if advice is not None:
        add_installed(
            rep,
            "PRT933",
            word.part(name_at, name_at + len(requirement.name)),
            f"`{requirement.name}` is built for NVIDIA GPUs only",
            advice,
            marker,
        )
    if any("+" in spec.version for spec in requirement.specifier):
        check_local_version(rep, word, requirement.name, marker)


def _parse_requirement(text: str) -> tuple[Any, Any]:
    """The ``packaging`` requirement of ``text`` and its environment marker (either may be
    None). As pip reads a requirements line, a marker may follow a direct URL without the space
    PEP 508 asks for (``name @ https://.../x.whl; sys_platform == 'linux'``), or follow a bare
    URL (``https://.../x.whl; sys_platform == 'linux'``): pip splits the line at its first
    ``;`` (``"; "`` on a bare URL) before parsing, and so is it read here."""
    from packaging.markers import InvalidMarker, Marker
    from packaging.requirements import InvalidRequirement, Requirement

    try:
        requirement = Requirement(text)
        return requirement, requirement.marker
    except InvalidRequirement:
        pass
    bare_url = "@" not in text or "://" in text.split("@", 1)[0]
    head, found, tail = text.partition("; " if bare_url else ";")
    if not found or not tail.strip():
        return None, None
    try:
        marker = Marker(tail.strip())
    except InvalidMarker:
        return None, None
    try:
        return (None if bare_url else Requirement(head.rstrip())), marker
    except InvalidRequirement:
        return None, marker


def add_installed(
    rep: Reporter, code: str, span: Span, message: str, targets: Targets, marker: Any, **kw: Any
) -> None:
    """Report, for the targets whose machines install a requirement with ``marker``; nothing
    when none does."""
    kept = installing_targets(rep.catalog, code, marker, targets)
    if kept:
        rep.add(code, span, message, targets=kept, **kw)


def check_local_version(rep: Reporter, word: Word, name: str, marker: Any = None) -> None:
    table = deploy_table(rep.catalog)["local_version"]
    for match in LOCAL_VERSION.finditer(word.text):
        span = word.part(match.start(1), match.end(1))
        fix = None
        if normalise(name) in table["cpu_twins"] and span != word.span:
            fix = Fix(Applicability.SAFE, (Edit(span, "cpu"),), "Pin the CPU build", target="cpu")
        add_installed(
            rep,
            "PRT932",
            word.part(match.start(), match.end()),
            f"`{name}` is pinned to its CUDA build `+{match.group(1)}`",
            local_version_advice(rep.catalog),
            marker,
            fix=fix,
        )


def check_wheel_platform(rep: Reporter, word: Word, marker: Any = None) -> None:
    pattern = compiled(deploy_table(rep.catalog)["x86_wheel"]["pattern"])
    match = pattern.search(word.text)
    if match:
        add_installed(
            rep,
            "PRT951",
            word.part(match.start() + 1, match.end() - len(".whl")),
            "the wheel is built for x86_64 only",
            rep.catalog.rules["PRT951"].targets,
            marker,
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
    """Every line of a requirements file. In a file compiled by pip-compile or ``uv export``, a
    CUDA library that the file's own annotations say is there only for requirements reported
    already (``nvidia-cudnn-cu12`` ``# via torch`` beside ``torch==2.4.0+cu121``) is no site of
    its own: it goes when its parents are ported (``pulled_in_by``)."""
    sink, collected = rep.sink, FindingList()
    rep.sink = collected
    for number, line in enumerate(rep.index.lines, start=1):
        if line.strip() and not line.lstrip().startswith("#"):
            check_pip_arguments(rep, split_line(line, number))
    found = collected.findings
    rep.sink = sink
    dropped = covered_lines(found, pulled_in_by(rep.index.lines), rep.index.lines)
    for finding in found:
        if not (finding.code == "PRT933" and finding.span.line in dropped):
            sink.emit(finding)


def covered_lines(
    found: list[Finding], parents: dict[int, tuple[str, frozenset[str]]], lines: list[str]
) -> set[int]:
    """The lines whose PRT933 finding another reported requirement covers: every distribution
    that pulls it in is reported, by a finding kept or by one covered in turn (a chain of CUDA
    libraries ends at the torch pin; a cycle with no reported root stays)."""
    names = requirement_names(lines, {f.span.line for f in found})
    candidates = {f.span.line for f in found if f.code == "PRT933" and f.span.line in parents}
    kept = {
        names[f.span.line]
        for f in found
        if f.span.line in names and not (f.code == "PRT933" and f.span.line in candidates)
    }
    dropped: set[int] = set()
    grown = True
    while grown:
        grown = False
        for line in candidates - dropped:
            name, via = parents[line]
            if via <= kept:
                dropped.add(line)
                kept.add(name)
                grown = True
    return dropped


#: The start of a requirement line: its distribution name.
REQUIREMENT_NAME = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)")
#: pip-compile / uv annotations: ``# via torch`` on one line, or ``# via`` then ``#   torch``.
VIA = re.compile(r"^\s+#\s+via(?:\s+(\S.*))?$")
VIA_MORE = re.compile(r"^\s+#\s{2,}(\S.*)$")


def requirement_names(lines: list[str], numbers: set[int]) -> dict[int, str]:
    """The normalised distribution name of each requirement line in ``numbers``."""
    names = {}
    for number in numbers:
        match = REQUIREMENT_NAME.match(lines[number - 1].strip()) if number <= len(lines) else None
        if match:
            names[number] = normalise(match.group(1))
    return names


def pulled_in_by(lines: list[str]) -> dict[int, tuple[str, frozenset[str]]]:
    """Requirement line -> (its name, the distributions its ``# via`` annotation names), for the
    requirements annotated as pulled in by other distributions alone. One required by an input
    file (``# via -r requirements.in``) is not among them; one required by the project itself
    names a distribution the file does not report, so it stays a site."""
    found: dict[int, tuple[str, frozenset[str]]] = {}
    current: tuple[int, str] | None = None
    via: list[str] = []
    in_via = False

    def close() -> None:
        if current and via and all(REQUIREMENT_NAME.fullmatch(p) for p in via):
            found[current[0]] = (current[1], frozenset(normalise(p) for p in via))

    for number, line in enumerate(lines, start=1):
        if line[:1] not in (" ", "\t"):  # a new entry (or an option, or a top comment)
            close()
            match = REQUIREMENT_NAME.match(line)
            current = (number, normalise(match.group(1))) if match else None
            via, in_via = [], False
        elif (single := VIA.match(line)) and current:
            in_via = True
            via += [single.group(1).strip()] if single.group(1) else []
        elif in_via and (more := VIA_MORE.match(line)):
            via.append(more.group(1).strip())
        else:
            in_via = False
    close()
    return found


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

"""PRT90x/PRT92x checks on one command: its program, flags and arguments.

Shared by shell scripts, Dockerfile ``RUN``/``CMD``/``ENTRYPOINT``, compose and Kubernetes
``command:`` lists and CI steps, which all reduce a command to a list of ``Word``s.
"""

from __future__ import annotations

import posixpath
import re

from portlint.deploy.facts import (
    compiled,
    deploy_table,
    device_advice,
    image_match,
    tool_advice,
    variable_advice,
    variable_severity,
)
from portlint.deploy.report import Reporter
from portlint.deploy.requirements import check_pip_arguments
from portlint.deploy.words import Word
from portlint.model import Span

#: Programs that run the command that follows them.
WRAPPERS = frozenset({"sudo", "exec", "time", "nohup", "env", "xargs", "timeout"})
CONTAINER_CLIS = frozenset({"docker", "podman", "nerdctl"})
PIP = frozenset({"pip", "pip3"})
CONDA = frozenset({"conda", "mamba", "micromamba"})
ASSIGNMENT = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=")
IMAGE_LIKE = re.compile(r"^[\w.-]+(?::\d+)?/[\w./-]+(?::[\w.-]+)?(?:@sha256:\w+)?$")


def check_command(rep: Reporter, words: list[Word]) -> None:
    for position, word in enumerate(words):
        check_tool(rep, word)
        check_image_reference(rep, word)
        preceding = words[position - 1] if position else None
        following = words[position + 1] if position + 1 < len(words) else None
        check_arch_flags(rep, word, preceding, following)
    program, rest = split_program(rep, words)
    if program is None:
        return
    name = posixpath.basename(program.text)
    if name in CONTAINER_CLIS:
        check_container_cli(rep, rest)
    elif name in PIP and rest[:1] and rest[0].text == "install":
        check_pip_arguments(rep, rest[1:])
    elif name.startswith("python") and [w.text for w in rest[:3]] == ["-m", "pip", "install"]:
        check_pip_arguments(rep, rest[3:])
    elif name == "uv" and [w.text for w in rest[:2]] == ["pip", "install"]:
        check_pip_arguments(rep, rest[2:])
    elif name in CONDA and rest[:1] and rest[0].text in ("install", "create"):
        check_conda_arguments(rep, rest[1:])


def split_program(rep: Reporter, words: list[Word]) -> tuple[Word | None, list[Word]]:
    """The program a command runs (after ``sudo``, ``env X=1`` and the like) and its arguments.
    Assignments in front of the program and after ``env`` are checked on the way."""
    for position, word in enumerate(words):
        assignment = ASSIGNMENT.match(word.text)
        if assignment:
            check_assignment_word(rep, word)
        elif not word.text.startswith("-") and posixpath.basename(word.text) not in WRAPPERS:
            return word, words[position + 1 :]
    return None, []


def check_assignment_word(rep: Reporter, word: Word) -> None:
    """``NAME=value`` (a shell prefix, ``env NAME=value``, ``docker run -e NAME=value``)."""
    assignment = ASSIGNMENT.match(word.text)
    if assignment:
        name = assignment.group(1)
        check_variable(rep, Word(name, word.part(0, len(name))))


def check_variable(rep: Reporter, name: Word) -> None:
    """PRT921 when ``name`` is a CUDA-only environment variable being set."""
    advice = variable_advice(name.text, rep.catalog)
    if advice is not None:
        message = f"`{name.text}` is read only by NVIDIA's stack"
        severity = variable_severity(name.text, rep.catalog)
        rep.add("PRT921", name.span, message, advice, severity=severity)


def check_tool(rep: Reporter, word: Word) -> None:
    tool = posixpath.basename(word.text)
    advice = tool_advice(rep.catalog).get(tool)
    if advice is not None:
        from portlint.python.environment_checks import tool_source

        message = f"`{tool}` exists only where {tool_source(rep.catalog, tool)} is installed"
        rep.add("PRT922", word.span, message, advice)


def check_image_reference(rep: Reporter, word: Word) -> None:
    if not IMAGE_LIKE.match(word.text):
        return
    found = image_match(rep.catalog, word.text)
    if found is not None:
        what, advice = found
        rep.add("PRT901", word.span, f"`{word.text}` is {what}", advice)


def check_arch_flags(
    rep: Reporter, word: Word, preceding: Word | None, following: Word | None
) -> None:
    """PRT923 for nvcc architecture flags, alone or inside a longer word ("-O3 -arch=sm_80"):
    one finding per word, at its first flag (one string of six ``-gencode=`` flags is one edit)."""
    flags = arch_flags(rep, word, preceding, following)
    if flags:
        report_arch_flags(rep, word, flags[0], len(flags) - 1, "argument")


def arch_flags(
    rep: Reporter, word: Word, preceding: Word | None, following: Word | None
) -> list[tuple[str, int, int]]:
    """The nvcc architecture flags in ``word`` (token, start, end), read after the word before
    it (``-gencode`` then ``arch=compute_80,code=sm_80`` is one flag) and before the next."""
    table = deploy_table(rep.catalog)["nvcc_flags"]
    value = compiled(table["value"])
    tokens = [(m.group(), m.start(), m.end()) for m in re.finditer(r"\S+", word.text)]
    if not tokens:  # an empty word: a command cut off after "&&"
        return []
    after = [t[0] for t in tokens[1:]] + [following.text if following else ""]
    previous = preceding.text if preceding else ""
    flags: list[tuple[str, int, int]] = []
    for (token, start, end), next_token in zip(tokens, after, strict=True):
        flag, _, attached = token.partition("=")
        if flag in table["always"]:
            found = True
        elif flag in table["with_value"]:
            found = value.match(attached or next_token) is not None
        else:  # a bare "arch=compute_80,code=sm_80" belongs to a -gencode before it
            found = previous not in table["always"] and compiled(table["code_spec"]).match(token)
        if found:
            flags.append((token, start, end))
        previous = flag
    return flags


def report_arch_flags(
    rep: Reporter, word: Word, first: tuple[str, int, int], more: int, holder: str
) -> None:
    """One PRT923 at ``first`` (a flag of ``word``), counting the ``more`` flags of the same
    ``holder`` (an argument, a list) that it stands for."""
    token, start, end = first
    message = f"`{token}` names NVIDIA GPU architectures"
    if more:
        others = f"{more} more flag" + ("s" if more > 1 else "")
        message = f"`{token}` and {others} in this {holder} name NVIDIA GPU architectures"
    rep.add("PRT923", word.part(start, end), message)


def check_container_cli(rep: Reporter, words: list[Word]) -> None:
    """``docker run/create/build/pull`` flags: --gpus, --runtime, --platform, -e, --device."""
    flag_word = None
    for word in words:
        if flag_word is not None:
            whole = Span(flag_word.span.line, flag_word.span.column, *_end(word.span))
            check_container_flag(rep, flag_word.text, word.text, word, whole)
            flag_word = None
            continue
        flag, has_value, value = word.text.partition("=")
        if flag in CONTAINER_FLAGS:
            if has_value:
                check_container_flag(rep, flag, value, word, word.span)
            else:
                flag_word = word


def _end(span: Span) -> tuple[int, int]:
    return span.end_line, span.end_column


CONTAINER_FLAGS = frozenset({"--gpus", "--runtime", "--platform", "-e", "--env", "--device"})


def check_container_flag(rep: Reporter, flag: str, value: str, word: Word, whole: Span) -> None:
    """One container-CLI flag; ``word`` holds ``value`` (alone or as ``flag=value``), ``whole``
    spans flag and value."""
    devices = device_advice(rep.catalog, "docker")
    offset = len(word.text) - len(value)
    if flag == "--gpus":
        rep.add("PRT904", whole, "`--gpus` needs the NVIDIA Container Toolkit", devices)
    elif flag == "--device" and value.startswith("nvidia.com/gpu"):
        message = "`nvidia.com/gpu` CDI devices exist only with the NVIDIA Container Toolkit"
        rep.add("PRT904", whole, message, devices)
    elif flag == "--runtime" and value == "nvidia":
        message = "the `nvidia` runtime exists only with the NVIDIA Container Toolkit"
        rep.add("PRT903", whole, message, devices)
    elif flag == "--platform" and value in AMD64_PLATFORMS:
        span = word.part(offset, len(word.text))
        rep.add("PRT902", span, f"`{value}` pins the container to x86_64")
    elif flag in ("-e", "--env"):
        name = value.split("=", 1)[0]
        check_variable(rep, Word(name, word.part(offset, offset + len(name))))


AMD64_PLATFORMS = frozenset({"linux/amd64", "linux/x86_64", "linux/amd64/v2", "linux/amd64/v3"})


def check_conda_arguments(rep: Reporter, words: list[Word]) -> None:
    """``conda install`` package specs (``pytorch-cuda=12.1``); channels and options skipped."""
    from portlint.deploy.requirements import check_conda_spec

    skip = False
    for word in words:
        if skip:
            skip = False
        elif word.text in ("-c", "--channel", "-n", "--name", "-p", "--prefix", "-f", "--file"):
            skip = True
        elif not word.text.startswith("-"):
            check_conda_spec(rep, word)

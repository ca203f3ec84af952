"""Dockerfiles and Containerfiles, parsed with tree-sitter-dockerfile (which keeps line
continuations, heredocs and exec-form JSON arrays, with positions).

``FROM`` images and platform pins, ``ENV``/``ARG`` variables, and the shell of ``RUN``, ``CMD``,
``ENTRYPOINT`` and ``HEALTHCHECK`` — shell form and heredocs through the shell checks, exec form
as a word list.
"""

from __future__ import annotations

import json
import re
from typing import Any

from portlint.deploy.commands import AMD64_PLATFORMS, check_command, check_variable
from portlint.deploy.facts import image_match
from portlint.deploy.report import Reporter
from portlint.deploy.shell import analyse_shell_text
from portlint.deploy.treesitter import Parsed, parse, region_text, walk
from portlint.deploy.words import Word, unquoted
from portlint.model import Span

SHELLS = frozenset({"sh", "bash", "/bin/sh", "/bin/bash", "/usr/bin/env"})
EXPANSION = re.compile(r"\$\{?(\w+)(?::?-[^}]*)?\}?")


def analyse_dockerfile_text(rep: Reporter) -> None:
    parsed = parse("dockerfile", rep.source.text)
    arguments: dict[str, str] = {}
    stages: set[str] = set()
    for node in walk(parsed.root):
        kind = node.type
        if kind == "arg_instruction":
            record_argument(parsed, node, arguments)
            check_declared_name(rep, parsed, node)
        elif kind == "env_instruction":
            for pair in node.children:
                if pair.type == "env_pair" and pair.child_by_field_name("name") is not None:
                    name = pair.child_by_field_name("name")
                    check_variable(rep, Word(parsed.text(name), parsed.span(name)))
        elif kind == "from_instruction":
            check_from(rep, parsed, node, arguments, stages)
        elif kind == "shell_command":
            check_shell_form(rep, parsed, node)
        elif kind == "json_string_array" and node.parent.type in RUNS_COMMANDS:
            check_exec_form(rep, parsed, node)
        elif kind == "heredoc_block" and node.parent.type == "run_instruction":
            check_heredoc(rep, parsed, node)


RUNS_COMMANDS = frozenset(
    {"run_instruction", "cmd_instruction", "entrypoint_instruction", "healthcheck_instruction"}
)


def record_argument(parsed: Parsed, node: Any, arguments: dict[str, str]) -> None:
    name = node.child_by_field_name("name")
    default = node.child_by_field_name("default")
    if name is not None and default is not None:
        arguments[parsed.text(name)] = unquoted(parsed.text(default), parsed.span(default)).text


def check_declared_name(rep: Reporter, parsed: Parsed, node: Any) -> None:
    name = node.child_by_field_name("name")
    if name is not None:
        check_variable(rep, Word(parsed.text(name), parsed.span(name)))


def check_from(
    rep: Reporter, parsed: Parsed, node: Any, arguments: dict[str, str], stages: set[str]
) -> None:
    for child in node.children:
        if child.type == "param":
            text = parsed.text(child)
            key, _, value = text.partition("=")
            if key == "--platform" and expand(value, arguments) in AMD64_PLATFORMS:
                span = parsed.span(child)
                rep.add("PRT902", span, f"`{value}` pins the image to x86_64")
        elif child.type == "image_spec":
            written = parsed.text(child)
            image = expand(written, arguments)
            found = image_match(rep.catalog, image) if image.lower() not in stages else None
            if found is not None:
                what, advice = found
                shown = image if image == written else f"{written}` (`{image}`)"
                message = f"`{shown}` is {what}" if image == written else f"`{shown} is {what}"
                rep.add("PRT901", parsed.span(child), message, advice)
        elif child.type == "image_alias":
            stages.add(parsed.text(child).lower())


def expand(text: str, arguments: dict[str, str]) -> str:
    """``${NAME}`` / ``$NAME`` replaced by the ARG default declared before (left as is if none)."""
    return EXPANSION.sub(lambda m: arguments.get(m.group(1), m.group(0)), text)


def check_shell_form(rep: Reporter, parsed: Parsed, node: Any) -> None:
    fragments = [c for c in node.children if c.type == "shell_fragment"]
    if all(c.type == "heredoc_marker" for f in fragments for c in f.children) and any(
        f.children for f in fragments
    ):
        return  # only "<<EOF": the script is the heredoc block
    span = parsed.span(node)
    analyse_shell_text(rep, region_text(rep.index, span), span.line)


def check_heredoc(rep: Reporter, parsed: Parsed, node: Any) -> None:
    lines = [c for c in node.children if c.type == "heredoc_line"]
    if lines:
        first, last = parsed.span(lines[0]), parsed.span(lines[-1])
        span = Span(first.line, 0, last.end_line, last.end_column)
        analyse_shell_text(rep, region_text(rep.index, span), span.line)


def check_exec_form(rep: Reporter, parsed: Parsed, node: Any) -> None:
    """``["nvidia-smi", "-L"]``, or ``["sh", "-c", "script"]`` whose script is shell."""
    words = []
    for child in node.children:
        if child.type == "json_string":
            raw = parsed.text(child)
            try:
                text = json.loads(raw)
            except ValueError:
                continue
            word = unquoted(raw, parsed.span(child))
            words.append(Word(text, word.span) if text != word.text else word)
    texts = [w.text for w in words]
    if len(words) >= 3 and texts[0] in SHELLS and "-c" in texts[1:-1]:
        script = words[texts.index("-c") + 1]
        if script.span.line == script.span.end_line and script.text == rep.index.text(*script.span):
            analyse_shell_text(rep, region_text(rep.index, script.span), script.span.line)
            return
    check_command(rep, words)

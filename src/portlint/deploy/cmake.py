"""CMake files, parsed with tree-sitter-cmake: CUDA language and toolkit use (PRT941),
architecture settings (PRT942) and nvcc flags in arguments (PRT923). A command in the arm of a
build option that turns CUDA on (``if(USE_CUDA)``) is built only where the user asks for CUDA:
no finding there."""

from __future__ import annotations

import re
from typing import Any

from portlint.deploy.commands import check_arch_flags
from portlint.deploy.facts import deploy_table
from portlint.deploy.report import Reporter
from portlint.deploy.treesitter import Parsed, parse, walk
from portlint.deploy.words import Word, unquoted


def analyse_cmake_text(rep: Reporter) -> None:
    parsed = parse("cmake", rep.source.text)
    table = deploy_table(rep.catalog)["cmake"]
    option = re.compile(table.get("cuda_options", "(?!)"), re.IGNORECASE)
    settings: set[str] = set()  # the architecture variables reported so far
    for node in walk(parsed.root):
        if node.type == "normal_command" and not in_cuda_option_arm(parsed, node, option):
            check_cmake_command(rep, parsed, node, table, settings)


def in_cuda_option_arm(parsed: Parsed, node: Any, option: re.Pattern[str]) -> bool:
    """Whether ``node`` is in the arm of an ``if``/``elseif`` that holds only where a CUDA build
    option is on: the option alone or in a chain of ``AND`` (``if(USE_CUDA)``, ``elseif(WITH_CUDA
    AND BUILD_OPS)``), not negated."""
    current = node
    while current.parent is not None:
        body, current = current, current.parent
        if body.type != "body" or current.type != "if_condition":
            continue
        command = body.prev_named_sibling
        if command is None or command.type not in ("if_command", "elseif_command"):
            continue
        words = [word.text.upper().strip("${}") for word in arguments_of(parsed, command)]
        if "OR" in words or "NOT" in words:
            continue
        if any(option.fullmatch(word) for word in words):
            return True
    return False


def arguments_of(parsed: Parsed, node: Any) -> list[Word]:
    words = []
    for child in walk(node):
        if child.type == "argument":
            words.append(unquoted(parsed.text(child), parsed.span(child)))
    return words


def check_cmake_command(
    rep: Reporter, parsed: Parsed, node: Any, table: dict, settings: set[str]
) -> None:
    """The findings of one command. ``settings``: the architecture variables the file already
    reported (PRT942): each is one setting, however many commands set or append to it."""
    name_node = node.children[0]
    command = parsed.text(name_node).lower()
    words = arguments_of(parsed, node)
    upper = [w.text.upper() for w in words]
    if command == "string" and upper[:1] == ["REGEX"] and len(words) > 2:
        # ``string(REGEX REPLACE "-gencode arch=[^ ]+" "" out ${CMAKE_CUDA_FLAGS})``: the
        # pattern names the flag to find it in a string; it passes no flag
        words = [word for position, word in enumerate(words) if position != 2]
        upper = [w.text.upper() for w in words]
    if command in table["language_commands"]:
        # enable_language(CUDA); project(name LANGUAGES CXX CUDA)
        start = 0 if command == "enable_language" else 1
        for word, text in zip(words[start:], upper[start:], strict=True):
            if text == "CUDA":
                rep.add("PRT941", word.span, "the CUDA language needs nvcc and the CUDA toolkit")
    elif command == "find_package" and words and words[0].text in table["find_packages"]:
        rep.add("PRT941", words[0].span, f"`find_package({words[0].text})` finds NVIDIA's toolkit")
    elif command in table["cuda_commands"]:
        rep.add("PRT941", parsed.span(name_node), f"`{command}` builds with nvcc")
    for position, word in enumerate(words):
        if word.text.startswith("CUDA::"):
            rep.add("PRT941", word.span, f"`{word.text}` is a CUDA toolkit library")
        elif word.text in table["architecture_names"] and word.text not in settings:
            settings.add(word.text)
            rep.add("PRT942", word.span, f"`{word.text}` lists NVIDIA compute capabilities")
        preceding = words[position - 1] if position else None
        following = words[position + 1] if position + 1 < len(words) else None
        check_arch_flags(rep, word, preceding, following)

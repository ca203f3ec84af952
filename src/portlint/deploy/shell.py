"""Shell scripts, and shell text embedded in other files (Dockerfile RUN, CI steps), parsed with
tree-sitter-bash: every command, assignment and architecture test in the text."""

from __future__ import annotations

import re
from typing import Any

from portlint.deploy.commands import check_command, check_variable
from portlint.deploy.report import Reporter
from portlint.deploy.treesitter import Parsed, parse, walk
from portlint.deploy.words import Word, unquoted

#: Text that shows a script looks at the host's architecture.
ARCH_PROBE = re.compile(r"uname\s+-\w*m|\barch\b|--print-architecture|HOSTTYPE|MACHTYPE|TARGETARCH")
X86_NAMES = frozenset({"x86_64", "amd64", "x86-64"})
ARM_NAMES = re.compile(r"aarch64|arm64|armv8|\barm\b")
LITERALS = frozenset({"word", "string", "raw_string", "extglob_pattern"})


def analyse_shell_file(rep: Reporter) -> None:
    """Findings in a shell script."""
    analyse_shell_text(rep, rep.source.text)


def analyse_shell_text(rep: Reporter, text: str, first_line: int = 1) -> None:
    """Findings in ``text``, whose line 1 is line ``first_line`` of the file."""
    parsed = parse("bash", text, first_line)
    probes_arch = ARCH_PROBE.search(text) is not None
    for node in walk(parsed.root):
        if node.type == "command":
            check_command(rep, command_words(node, parsed))
        elif node.type == "variable_assignment":
            name = node.child_by_field_name("name")
            if name is not None:
                check_variable(rep, Word(parsed.text(name), parsed.span(name)))
        elif probes_arch and node.type == "test_command":
            check_x86_only(rep, parsed, node, enclosing(node, "if_statement") or parsed.root)
        elif probes_arch and node.type == "case_item":
            check_x86_only(rep, parsed, node, enclosing(node, "case_statement") or parsed.root)


def command_words(node: Any, parsed: Parsed) -> list[Word]:
    name = node.child_by_field_name("name")
    parts = ([name] if name is not None else []) + node.children_by_field_name("argument")
    return [unquoted(parsed.text(part), parsed.span(part)) for part in parts]


def enclosing(node: Any, kind: str) -> Any | None:
    parent = node.parent
    while parent is not None and parent.type != kind:
        parent = parent.parent
    return parent


def check_x86_only(rep: Reporter, parsed: Parsed, test: Any, statement: Any) -> None:
    """PRT924 for each ``x86_64`` literal in ``test`` when ``statement`` has no Arm branch."""
    if ARM_NAMES.search(parsed.text(statement)):
        return
    scope = test.children_by_field_name("value") if test.type == "case_item" else [test]
    for part in scope:
        for node in walk(part):
            if node.type in LITERALS:
                word = unquoted(parsed.text(node), parsed.span(node))
                if word.text in X86_NAMES:
                    message = f"only `{word.text}` hosts pass this architecture test"
                    rep.add("PRT924", word.span, message)

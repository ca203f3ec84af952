"""Shell scripts, and shell text embedded in other files (Dockerfile RUN, CI steps), parsed with
tree-sitter-bash: every command, assignment and architecture test in the text."""

from __future__ import annotations

import posixpath
import re
from typing import Any

from portlint.deploy.commands import check_command, check_variable
from portlint.deploy.facts import tool_advice
from portlint.deploy.report import Reporter
from portlint.deploy.treesitter import Parsed, parse, walk
from portlint.deploy.words import Word, unquoted
from portlint.model import TARGETS

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
    if VENDOR_TEST.search(text):
        rep.covered_lines += vendor_arms(parsed)
    if TOOL_PROBE.search(text):
        rep.covered_lines += tool_probe_arms(parsed, frozenset(tool_advice(rep.catalog)))
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


#: Text that may compare a value with a vendor's name (``= "cuda"``, ``cuda)``, ``== cuda*``).
VENDOR_TEST = re.compile(r"""(?:==?\s*["']?|^\s*)cuda\b""", re.IGNORECASE | re.MULTILINE)
#: The comparisons of a test that hold when both sides are the same.
EQUALS = frozenset({"=", "=="})


def vendor_arms(parsed: Parsed) -> list[tuple[int, int, frozenset[str]]]:
    """The arms of an ``if`` or ``case`` on a device type (``if [ "$PLATFORM" = "cuda" ]``,
    ``case $PLATFORM in hip) ...``): their lines, and the targets that never run them there.
    An arm for another vendor runs on that vendor alone. The arm for CUDA is not run by the
    targets its siblings name (``elif [ "$PLATFORM" = "hip" ]``: rocm) and, where an ``else``
    or ``*)`` arm is there, by any other target, which takes that one (a sibling covers its
    targets whatever it does: an ``else`` that prints "unsupported platform" is their answer).
    The vendor words are rules/device.toml ``[backend.vendors]``."""
    from portlint.python.backend_packages import catalogue_words

    words = catalogue_words()
    found = []
    for node in walk(parsed.root):
        if node.type == "if_statement":
            arms = _if_arms(node)
        elif node.type == "case_statement":
            arms = _case_arms(node)
        else:
            continue
        named = [_arm_vendors(test, parsed, words) for test, _ in arms]
        has_default = any(test is None for test, _ in arms)
        for (_, body), vendors in zip(arms, named, strict=True):
            if vendors is None or not body:
                continue
            if vendors != {"cuda"}:
                targets = frozenset(TARGETS) - vendors
            elif has_default:
                targets = frozenset(TARGETS)
            else:
                named_by_siblings = {
                    v for other in named if other is not vendors for v in other or ()
                }
                targets = frozenset(TARGETS) & named_by_siblings
            if targets:
                first, last = parsed.span(body[0]).line, parsed.span(body[-1]).end_line
                found.append((first, last, targets))
    return found


#: Text that may look an NVIDIA tool up (``command -v nvidia-smi``, ``which nvcc``).
TOOL_PROBE = re.compile(r"(?:\bcommand\s+-v|\bwhich|\btype|\bhash)\s+\S*(?:nvidia-smi|nvcc)\b")
#: Programs that look a command up without running it.
LOOKUPS = frozenset({"command", "which", "type", "hash"})


def tool_probe_arms(parsed: Parsed, tools: frozenset[str]) -> list[tuple[int, int, frozenset[str]]]:
    """The arms of an ``if`` or ``elif`` whose test looks one of NVIDIA's ``tools`` up
    (``if command -v nvidia-smi; then nvidia-smi; fi``, ``which nvcc``; rules/environment.toml
    ``[tool.*]``): the tool is there only on NVIDIA machines, so no target runs the arm, and the
    lookup itself fails nowhere. Their lines, from the test's, with every target."""
    found = []
    for node in walk(parsed.root):
        if node.type != "if_statement":
            continue
        for test, body in _if_arms(node):
            if test is not None and body and _probed_tool(test, parsed) in tools:
                first, last = parsed.span(test).line, parsed.span(body[-1]).end_line
                found.append((first, last, frozenset(TARGETS)))
    return found


def _probed_tool(test: Any, parsed: Parsed) -> str | None:
    """The program a lookup looks up (``command -v nvcc``, ``which nvidia-smi > /dev/null``)."""
    if test.type == "redirected_statement":
        test = next((c for c in test.named_children if c.type == "command"), test)
    if test.type != "command":
        return None
    words = [word.text for word in command_words(test, parsed)]
    if not words or posixpath.basename(words[0]) not in LOOKUPS:
        return None
    if words[0] == "command" and not {"-v", "-V"} & set(words[1:]):
        return None  # ``command nvidia-smi`` runs it
    looked_up = [word for word in words[1:] if not word.startswith("-")]
    return posixpath.basename(looked_up[0]) if len(looked_up) == 1 else None


def _if_arms(node: Any) -> list[tuple[Any | None, list[Any]]]:
    """(test, body) of the ``if``, each ``elif`` and the ``else`` (test None)."""
    arms = [
        (
            node.child_by_field_name("condition"),
            _after(node, "then", ("elif_clause", "else_clause", "fi")),
        )
    ]
    for clause in node.children:
        if clause.type == "elif_clause":
            test = clause.child_by_field_name("condition") or next(
                (c for c in clause.children if c.type == "test_command"), None
            )
            arms.append((test, _after(clause, "then", ())))
        elif clause.type == "else_clause":
            arms.append((None, _after(clause, "else", ())))
    return arms


def _after(node: Any, keyword: str, stops: tuple[str, ...]) -> list[Any]:
    """The statements of ``node`` after ``keyword`` and before any of ``stops``."""
    found: list[Any] = []
    started = False
    for child in node.children:
        if child.type in stops:
            break
        if started and child.is_named and child.type != "comment":
            found.append(child)
        started = started or child.type == keyword
    return found


def _case_arms(node: Any) -> list[tuple[Any | None, list[Any]]]:
    """(item, body) of each ``case`` item; a ``*)`` item is the default (test None)."""
    arms: list[tuple[Any | None, list[Any]]] = []
    for item in node.children:
        if item.type != "case_item":
            continue
        values = item.children_by_field_name("value")
        body = [c for c in item.children if c.is_named and c not in values and c.type != "comment"]
        default = any(v.type == "extglob_pattern" and v.text == b"*" for v in values)
        arms.append((None if default else item, body))
    return arms


def _arm_vendors(test: Any | None, parsed: Parsed, words: dict[str, str]) -> set[str] | None:
    """The vendors an arm's test names: the literals compared for equality in an ``if`` test
    (``[ "$PLATFORM" = "cuda" ]``, ``[[ $DEVICE == cuda* ]]``) or listed by a ``case`` item;
    None for the default arm or a test of anything else (``!=``, a command)."""
    if test is None:
        return None
    if test.type == "case_item":
        literals = test.children_by_field_name("value")
    else:
        literals = []
        for node in walk(test):
            if node.type == "binary_expression":
                operator = node.child_by_field_name("operator")
                if operator is None or parsed.text(operator) not in EQUALS:
                    return None
                literals += [c for c in node.children if c.type in LITERALS]
    vendors = set()
    for literal in literals:
        word = unquoted(parsed.text(literal), parsed.span(literal)).text.rstrip("*").lower()
        if word in words:
            vendors.add(words[word])
    return vendors or None


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

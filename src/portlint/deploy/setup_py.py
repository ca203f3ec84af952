"""``setup.py``: the Python checks (CUDAExtension is PRT502 there), plus the requirement lists
of ``setup()`` and nvcc architecture flags in ``extra_compile_args``."""

from __future__ import annotations

import ast
from typing import TypeGuard

from portlint.catalog import Catalog
from portlint.deploy.commands import arch_flags, check_arch_flags, report_arch_flags
from portlint.deploy.facts import deploy_table
from portlint.deploy.report import Reporter
from portlint.deploy.requirements import check_requirement
from portlint.deploy.words import Word
from portlint.model import SourceFile, Span
from portlint.python.analyser import analyse_python
from portlint.python.names import NameResolver, import_bindings
from portlint.python.package_checks import stops_without_toolkit
from portlint.python.tree import statement_blocks, statements_walk
from portlint.sink import FindingList, FindingSink

REQUIREMENT_KEYWORDS = frozenset({"install_requires", "setup_requires", "tests_require"})


def analyse_setup_py(source: SourceFile, catalog: Catalog, settings, sink: FindingSink) -> None:
    python = FindingList()
    analyse_python(source, catalog, settings, python)
    for finding in python.findings:
        sink.emit(finding)
    if any(f.code == "PRT001" for f in python.findings):
        return
    rep = Reporter.for_source(source, catalog, sink)
    tree = ast.parse(source.text, filename=source.path)
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            for keyword in node.keywords:
                if keyword.arg in REQUIREMENT_KEYWORDS or keyword.arg == "extras_require":
                    for string in requirement_strings(keyword.value):
                        check_requirement(rep, string_word(rep, string))
    if not builds_for_rocm(source.text, catalog):
        check_flag_strings(rep, tree, after_toolkit_refusal(tree, catalog))


def builds_for_rocm(text: str, catalog: Catalog) -> bool:
    """The script builds for ROCm itself (rules/deploy.toml ``[nvcc_flags] rocm_build_words``:
    it asks ``torch.version.hip`` or ``ROCM_HOME``, or passes hip-clang's ``--offload-arch``):
    its nvcc flags are for its CUDA build, and ROCm's build has flags of its own."""
    words = deploy_table(catalog)["nvcc_flags"]["rocm_build_words"]
    return any(word in text for word in words)


def after_toolkit_refusal(tree: ast.Module, catalog: Catalog) -> list[tuple[int, int]]:
    """The lines (first, last) of the statements that follow a refusal without the CUDA toolkit
    in their block (``if CUDA_HOME is None: raise ...``, ``assert CUDA_HOME is not None``): they
    run only where PyTorch found nvcc, which is no target's build (the refusal is the site,
    PRT502)."""
    bindings: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            bindings.update(import_bindings(node))
    resolver = NameResolver()
    resolver.module.bindings.update(bindings)
    spans = []
    for node in statements_walk(tree):
        for block in statement_blocks(node):
            for position, statement in enumerate(block):
                if stops_without_toolkit(statement, catalog, resolver.qualified_name):
                    rest = block[position + 1 :]
                    if rest:
                        spans.append((rest[0].lineno, rest[-1].end_lineno or rest[-1].lineno))
                    break
    return spans


def check_flag_strings(rep: Reporter, tree: ast.Module, skipped: list[tuple[int, int]]) -> None:
    """PRT923 in the script's strings, each read after the string before it in the same list
    (``["-gencode", "arch=compute_80,code=sm_80"]`` is one flag), once per list (one edit gives
    hipcc its flags instead) and once per string outside a list; docstrings and other strings
    that stand alone as a statement are prose, not arguments. Not in the ``skipped`` lines."""
    prose = {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Expr)}
    listed: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.List | ast.Tuple):
            strings = [e if _is_string(e) and id(e) not in prose else None for e in node.elts]
            listed.update(id(e) for e in strings if e is not None)
            found = []  # (word, its flags) of each string that holds some
            for before, string in zip([None, *strings], strings, strict=False):
                if string is None or _skipped(string, skipped):
                    continue
                previous = string_word(rep, before) if before is not None else None
                word = string_word(rep, string)
                flags = arch_flags(rep, word, previous, None)
                if flags:
                    found.append((word, flags))
            if found:
                word, flags = found[0]
                more = sum(len(f) for _, f in found) - 1
                report_arch_flags(rep, word, flags[0], more, "list")
    handled = prose | listed
    for node in ast.walk(tree):
        if _is_string(node) and id(node) not in handled and not _skipped(node, skipped):
            check_arch_flags(rep, string_word(rep, node), None, None)


def _skipped(node: ast.Constant, spans: list[tuple[int, int]]) -> bool:
    return any(first <= node.lineno <= last for first, last in spans)


def _is_string(node: ast.AST) -> TypeGuard[ast.Constant]:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def requirement_strings(node: ast.expr) -> list[ast.Constant]:
    """String literals in a list, or in the lists of a dict (``extras_require``)."""
    values = node.values if isinstance(node, ast.Dict) else [node]
    strings = []
    for value in values:
        if isinstance(value, ast.List | ast.Tuple):
            strings.extend(
                e for e in value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)
            )
    return strings


def string_word(rep: Reporter, node: ast.Constant) -> Word:
    """The string's value, with the span of its text between the quotes when it is written as
    is on one line (else the whole literal)."""
    line, end_line = node.lineno, node.end_lineno or node.lineno
    start = rep.index.char_column(line, node.col_offset)
    end = rep.index.char_column(end_line, node.end_col_offset or node.col_offset)
    written = rep.index.text(line, start, end_line, end)
    inner = written.lstrip("rRbBuU")
    quote = inner[:3] if inner[:3] in ('"""', "'''") else inner[:1]
    prefix = len(written) - len(inner) + len(quote)
    if line == end_line and written[prefix : len(written) - len(quote)] == node.value:
        return Word(node.value, Span(line, start + prefix, line, end - len(quote)))
    return Word(node.value, Span(line, start, end_line, end))

"""tree-sitter parsers, one per grammar, chosen by file suffix.

tree-sitter-cuda parses CUDA's extensions (``__global__``, ``__shared__``, ``__launch_bounds__``,
``<<<...>>>``) and, on the CUDA toolkit headers and torch's C++ headers, also leaves fewer ERROR
nodes than tree-sitter-cpp on plain C++ (``benchmarks/grammar_errors.py``; numbers in
benchmarks/README.md). So every suffix uses it; the table (``portlint.languages``) stays per
suffix so that a suffix can move to tree-sitter-cpp if a later grammar release turns the
measurement around.
"""

from __future__ import annotations

import functools
import importlib

from tree_sitter import Language, Parser, Tree

from portlint.languages import LANGUAGES

#: suffix -> grammar, from the languages table.
GRAMMAR_BY_SUFFIX = {suffix: lang.grammar for suffix, lang in LANGUAGES.items() if lang.grammar}


@functools.cache
def _parser(grammar: str) -> Parser:
    # "cuda" -> tree_sitter_cuda (a dependency); another grammar's package must be installed.
    module = importlib.import_module(f"tree_sitter_{grammar}")
    return Parser(Language(module.language()))


def parse(data: bytes, suffix: str) -> Tree:
    return _parser(GRAMMAR_BY_SUFFIX.get(suffix, "cuda")).parse(data)

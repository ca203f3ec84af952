"""tree-sitter parsers, one per grammar, chosen by file suffix.

tree-sitter-cuda parses CUDA's extensions (``__global__``, ``__shared__``, ``__launch_bounds__``,
``<<<...>>>``) and, on the CUDA toolkit headers and torch's C++ headers, also leaves fewer ERROR
nodes than tree-sitter-cpp on plain C++ (``benchmarks/grammar_errors.py``; numbers in
benchmarks/README.md). So every suffix uses it; the table stays per suffix so that a suffix can
move to tree-sitter-cpp if a later grammar release turns the measurement around.
"""

from __future__ import annotations

import functools

from tree_sitter import Language, Parser, Tree

GRAMMAR_BY_SUFFIX = {
    ".cu": "cuda",
    ".cuh": "cuda",
    ".hip": "cuda",
    ".cpp": "cuda",
    ".cc": "cuda",
    ".cxx": "cuda",
    ".c++": "cuda",
    ".h": "cuda",
    ".hpp": "cuda",
    ".hh": "cuda",
}


@functools.cache
def _parser(grammar: str) -> Parser:
    if grammar == "cuda":
        import tree_sitter_cuda as module
    else:
        import tree_sitter_cpp as module
    return Parser(Language(module.language()))


def parse(data: bytes, suffix: str) -> Tree:
    return _parser(GRAMMAR_BY_SUFFIX.get(suffix, "cuda")).parse(data)

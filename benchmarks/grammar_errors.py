"""Which tree-sitter grammar parses real C++/CUDA with fewer ERROR nodes?

Parses every file under the given folders (default: the CUDA toolkit headers and, when present,
torch's C++ headers) with tree-sitter-cpp and with tree-sitter-cuda, and prints, per file suffix,
the number of files, ERROR nodes, MISSING nodes and files with at least one error for each grammar.
portlint picks the grammar per suffix from these numbers (``portlint.cxx.parsing``).

Run: ``python benchmarks/grammar_errors.py [FOLDER ...]``.
"""

from __future__ import annotations

import sys
from collections import defaultdict
from pathlib import Path

import tree_sitter_cpp
import tree_sitter_cuda
from tree_sitter import Language, Parser, Query, QueryCursor

DEFAULT_TREES = [
    Path("/usr/local/cuda-13.0/include"),
    *Path("/work/torchenv/lib").glob("python3*/site-packages/torch/include"),
]
SUFFIXES = {".h", ".hpp", ".hh", ".cuh", ".cu", ".cpp", ".cc", ".cxx", ".inl"}
GRAMMARS = {"cpp": tree_sitter_cpp.language(), "cuda": tree_sitter_cuda.language()}


def count_problems(parser: Parser, query: Query, data: bytes) -> tuple[int, int]:
    """(ERROR nodes, MISSING nodes) in one file."""
    tree = parser.parse(data)
    errors = sum(len(nodes) for nodes in QueryCursor(query).captures(tree.root_node).values())
    missing = 0
    if tree.root_node.has_error:
        cursor = tree.walk()
        stack = [tree.root_node]
        while stack:
            node = stack.pop()
            if node.is_missing:
                missing += 1
            if node.has_error:
                stack.extend(node.children)
        del cursor
    return errors, missing


def main(argv: list[str]) -> int:
    trees = [Path(a) for a in argv] or [t for t in DEFAULT_TREES if t.is_dir()]
    tools = {}
    for name, pointer in GRAMMARS.items():
        language = Language(pointer)
        tools[name] = (Parser(language), Query(language, "(ERROR) @error"))
    totals: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    for tree in trees:
        for path in sorted(tree.rglob("*")):
            suffix = path.suffix.lower()
            if suffix not in SUFFIXES or not path.is_file():
                continue
            data = path.read_bytes()
            for name, (parser, query) in tools.items():
                errors, missing = count_problems(parser, query, data)
                row = totals[(suffix, name)]
                row[0] += 1
                row[1] += errors
                row[2] += missing
                row[3] += errors + missing > 0
    print(f"trees: {', '.join(map(str, trees))}")
    header = ("suffix", "grammar", "files", "ERROR", "MISSING", "files with errors")
    print("{:8} {:8} {:>6} {:>7} {:>8} {:>18}".format(*header))
    for (suffix, name), (files, errors, missing, bad) in sorted(totals.items()):
        print(f"{suffix:8} {name:8} {files:6d} {errors:7d} {missing:8d} {bad:18d}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

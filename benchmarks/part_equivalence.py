"""Findings of files analysed in parts (``portlint.python.parts``, ``portlint.cxx.parts``)
against the whole.

    python benchmarks/part_equivalence.py PATH... [--cxx] [--part-size N] [--show 5]

Each ``.py`` file (with ``--cxx``: each C++/CUDA file) under the paths is linted twice in check
mode with the default settings: whole, and cut into parts of about ``--part-size`` characters
(default 1: a cut at every place a cut can go, the hardest case), however small the file and
however large its context. Prints how many files were compared, how many were analysed in parts
(the rest fell back to the whole analysis), and every file whose findings differ, with the first
differences. With ``--cxx``, also how many of the files analysed in parts have a part that
starts inside a function's body.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from portlint import engine
from portlint.catalog import load_catalog
from portlint.config import Settings
from portlint.cxx import parts as cxx_parts
from portlint.discover import language_of
from portlint.engine import lint_source, read_source
from portlint.python import parts as python_parts


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="+", type=Path)
    parser.add_argument("--cxx", action="store_true", help="C++/CUDA files instead of Python")
    parser.add_argument("--part-size", type=int, default=1)
    parser.add_argument("--show", type=int, default=3, help="differences shown per file")
    args = parser.parse_args()
    language = "cxx" if args.cxx else "python"
    files = sorted(
        path
        for root in args.paths
        for path in ([root] if root.is_file() else root.rglob("*"))
        if path.is_file() and language_of(path) == language
    )
    settings = Settings()
    analyser = engine.ANALYSERS[language]
    parts = cxx_parts if args.cxx else python_parts
    parts.SMALLEST_PART = args.part_size
    parts.WHOLE_UP_TO = 0
    parts.PARTS_PER_FILE = 1 << 62
    parts.CONTEXT_PARTS = 1 << 62
    hip_macros = tuple(load_catalog().table("cxx").get("guards", {}).get("hip_macros", ()))
    compared = in_parts = in_functions = differing = 0
    for path in files:
        try:
            source = read_source(path, language)
        except engine.UnreadableFile:
            continue
        engine.ANALYSERS[language] = analyser._replace(part_threshold=1 << 62)
        whole = list(lint_source(source, language, settings).findings)
        engine.ANALYSERS[language] = analyser._replace(part_threshold=0)
        result = lint_source(source, language, settings).findings
        engine.ANALYSERS[language] = analyser
        compared += 1
        in_parts += not isinstance(result, tuple)
        if args.cxx and not isinstance(result, tuple):
            cuts = cxx_parts.cut(source.text, args.part_size, hip_macros)
            in_functions += any(part.in_function for part in cuts)
        cut = list(result)
        if cut == whole:
            continue
        differing += 1
        print(f"{path}: whole {len(whole)}, in parts {len(cut)}")
        only_whole = [f for f in whole if f not in cut]
        only_parts = [f for f in cut if f not in whole]
        if len(only_whole) == len(only_parts):
            for one, other in list(zip(only_whole, only_parts, strict=True))[: args.show]:
                fields = [n for n in one.__slots__ if getattr(one, n) != getattr(other, n)]
                print(f"  {one.span.line}:{one.span.column} {one.code}: differs in {fields}")
                if fields == ["fix"]:
                    print(f"    whole: {one.fix}\n    parts: {other.fix}")
            continue
        for label, found in (("whole only", only_whole), ("parts only", only_parts)):
            for finding in found[: args.show]:
                print(
                    f"  {label}: {finding.span.line}:{finding.span.column} {finding.code} "
                    f"{finding.severity.value} {finding.message[:90]}"
                )
            if not found and len(cut) == len(whole):
                print(f"  {label}: same findings, different details or order")
    inside = f" ({in_functions} cut inside a function)" if args.cxx else ""
    print(f"{compared} files compared, {in_parts} analysed in parts{inside}, {differing} differ")
    return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(main())

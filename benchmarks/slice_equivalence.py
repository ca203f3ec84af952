"""Sliced parsing changes no finding: lint every Python file of some trees twice, parsed in
slices (``portlint.python.slices``, what portlint does) and parsed whole, and diff the JSON of
the findings (spans, messages, targets, fixes).

    python benchmarks/slice_equivalence.py TREE [TREE ...]

Every file the prefilter passes is linted both ways, with the default settings. Prints, per tree,
how many files were compared, how many were parsed in slices (the others fell back to a whole
parse or had nothing to leave out), how many had to be analysed again after a left-out
definition turned out to be needed, and every difference; exits 1 if there is one.

Standard library only (and portlint).
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import json
import sys
from pathlib import Path

from portlint.catalog import load_catalog
from portlint.config import Settings
from portlint.engine import UnreadableFile, read_source
from portlint.output.json_format import finding_to_json
from portlint.python import analyser, prefilter, slices
from portlint.sink import FindingList


def python_files(root: Path) -> list[Path]:
    if root.is_file():
        return [root]
    return sorted(path for path in root.rglob("*.py") if path.is_file())


class Counts:
    def __init__(self) -> None:
        self.files = self.sliced = self.again = self.findings = 0


def findings_json(source, catalog, settings: Settings, sliced: bool) -> list[dict]:
    sink = FindingList()
    analyser.analyse_python(source, catalog, settings, sink, sliced=sliced)
    findings = sink.findings
    return [finding_to_json(f) for f in sorted(findings, key=lambda f: (f.span, f.code))]


def compare(root: Path, catalog, settings: Settings) -> tuple[Counts, list[str]]:
    counts, differences = Counts(), []
    for path in python_files(root):
        with contextlib.suppress(UnreadableFile):
            source = read_source(path, "python")
            if not prefilter.is_candidate(source.text):
                continue
            counts.files += 1
            watch = _Watch()
            with watch:
                sliced = findings_json(source, catalog, settings, sliced=True)
            counts.sliced += watch.sliced
            counts.again += watch.again
            whole = findings_json(source, catalog, settings, sliced=False)
            counts.findings += len(whole)
            if sliced != whole:
                before = json.dumps(whole, indent=1, sort_keys=True).splitlines()
                after = json.dumps(sliced, indent=1, sort_keys=True).splitlines()
                diff = difflib.unified_diff(before, after, "whole", "sliced", lineterm="", n=2)
                differences.append(f"{path}\n" + "\n".join(diff))
    return counts, differences


class _Watch:
    """Counts, for one file, whether it was parsed in slices and analysed again."""

    def __enter__(self) -> _Watch:
        self.sliced = self.again = 0
        self._parse = slices.parse
        self._analyse = analyser._analyse_tree
        calls = []

        def parse(*args, **kwargs):
            tree, stubs = self._parse(*args, **kwargs)
            self.sliced = int(bool(stubs))
            return tree, stubs

        def analyse(*args, **kwargs):
            calls.append(1)
            self.again = int(len(calls) > 1)
            return self._analyse(*args, **kwargs)

        slices.parse = parse
        analyser._analyse_tree = analyse
        return self

    def __exit__(self, *exc) -> None:
        slices.parse = self._parse
        analyser._analyse_tree = self._analyse


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("trees", nargs="+", type=Path, help="folders or files to lint")
    args = parser.parse_args()
    catalog, settings = load_catalog(), Settings()
    failed = False
    for root in args.trees:
        counts, differences = compare(root, catalog, settings)
        print(
            f"{root}: {counts.files} files compared, {counts.findings} findings, "
            f"{counts.sliced} parsed in slices, {counts.again} analysed again whole, "
            f"{len(differences)} differing"
        )
        for difference in differences:
            print(difference)
        failed = failed or bool(differences)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

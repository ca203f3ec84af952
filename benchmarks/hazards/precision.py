"""Hazard precision on real CUDA code: re-run portlint's PRT8xx rules on pinned checkouts and
score the findings against the labels in ``labels.csv``.

Each row of ``labels.csv`` is one hazard finding that a person read and judged: ``real`` (a
maintainer porting to AMD GPUs would want to hear about it) or ``noise``, with a one-line reason.
The sources are not part of portlint: ``repos.txt`` pins each repository by commit, and this
script reads them from local git directories (``--mirror DIR``, holding ``owner+name/repo`` bare
git dirs or ``owner+name`` clones) or from extracted trees (``--checkouts DIR``, holding
``owner+name/`` folders made with ``git archive <commit> | tar -x``).

Run: ``python benchmarks/hazards/precision.py --mirror DIR`` (or ``--checkouts DIR``).
It prints precision per rule over the labelled findings, then every finding that has no label
(``--unlabelled``) and every label that no longer matches a finding: both mean the labels need
a look after a rule changed.
"""

from __future__ import annotations

import argparse
import csv
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

from portlint.catalog import load_catalog
from portlint.cxx.analyser import analyse_cxx, is_candidate
from portlint.discover import LANGUAGE_BY_SUFFIX
from portlint.engine import UnreadableFile, read_source
from portlint.sink import collect

HERE = Path(__file__).parent
CXX_SUFFIXES = {s for s, language in LANGUAGE_BY_SUFFIX.items() if language == "cxx"}
FIELDS = ("repo", "path", "line", "rule", "symbol", "verdict", "reason")


def read_pins(path: Path) -> list[tuple[str, str]]:
    """(owner/name, commit) per non-comment line of ``repos.txt`` (``owner/name@commit``)."""
    pins = []
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            repo, commit = line.split("@")
            pins.append((repo, commit))
    return pins


def git_dir(mirror: Path, repo: str) -> Path:
    folder = mirror / repo.replace("/", "+")
    for candidate in (folder / "repo", folder / ".git", folder):
        if (candidate / "HEAD").is_file():
            return candidate
    raise SystemExit(f"no git directory for {repo} under {mirror}")


def extract(git: Path, commit: str, target: Path) -> None:
    """The C++/CUDA files of ``commit`` into ``target``; blobs a partial mirror lacks (large
    binaries) are skipped."""
    listing = subprocess.run(
        ["git", f"--git-dir={git}", "ls-tree", "-r", "-z", commit],
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    wanted = []
    for entry in filter(None, listing):
        meta, name = entry.split(b"\t", 1)
        path = name.decode("utf-8", "surrogateescape")
        if meta.split()[1] == b"blob" and Path(path).suffix.lower() in CXX_SUFFIXES:
            wanted.append((meta.split()[2].decode(), path))
    batch = subprocess.run(
        ["git", f"--git-dir={git}", "cat-file", "--batch"],
        input="".join(f"{sha}\n" for sha, _ in wanted).encode(),
        capture_output=True,
        check=True,
    ).stdout
    position = 0
    for _, path in wanted:
        end = batch.index(b"\n", position)
        header = batch[position:end].split()
        position = end + 1
        if header[-1] == b"missing":
            continue
        size = int(header[2])
        destination = target / path
        destination.parent.mkdir(parents=True, exist_ok=True)
        destination.write_bytes(batch[position : position + size])
        position += size + 1


def hazard_findings(tree: Path):
    """(path, line, rule, symbol, message) of every PRT8xx finding in ``tree``."""
    catalog = load_catalog()
    for path in sorted(p for p in tree.rglob("*") if p.suffix.lower() in CXX_SUFFIXES):
        if not path.is_file():
            continue
        try:
            source = read_source(path, "cxx")
        except UnreadableFile:
            continue
        if not is_candidate(source.text):
            continue
        relative = path.relative_to(tree).as_posix()
        found = collect(analyse_cxx, source._replace(path=relative), catalog, None)
        for finding in sorted(found, key=lambda f: (f.span, f.code)):
            if finding.code.startswith("PRT8"):
                symbol = " ".join(finding.symbol.split())
                yield relative, finding.span.line, finding.code, symbol, finding.message


def read_labels(path: Path) -> dict[tuple[str, str, int, str, str], tuple[str, str]]:
    """One label per (repo@commit, path, line, rule, symbol): findings that share all five (two
    masks on one line) share the label and each counts."""
    labels = {}
    with path.open(encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(handle):
            key = (row["repo"], row["path"], int(row["line"]), row["rule"], row["symbol"])
            if row["verdict"] not in ("real", "noise"):
                raise SystemExit(f"labels: verdict must be real or noise: {row}")
            labels[key] = (row["verdict"], row["reason"])
    return labels


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--mirror", type=Path, help="folder of git dirs (owner+name/repo)")
    source.add_argument("--checkouts", type=Path, help="folder of extracted trees (owner+name/)")
    parser.add_argument("--unlabelled", action="store_true", help="list findings with no label")
    args = parser.parse_args(argv)
    pins = read_pins(HERE / "repos.txt")
    labels = read_labels(HERE / "labels.csv")
    found = {}
    with tempfile.TemporaryDirectory() as scratch:
        for repo, commit in pins:
            if args.mirror is not None:
                tree = Path(scratch) / repo.replace("/", "+")
                extract(git_dir(args.mirror, repo), commit, tree)
            else:
                tree = args.checkouts / repo.replace("/", "+")
            pinned = f"{repo}@{commit}"
            for path, line, rule, symbol, message in hazard_findings(tree):
                key = (pinned, path, line, rule, symbol)
                found.setdefault(key, [message, 0])[1] += 1
    verdicts: dict[str, Counter] = {}
    unlabelled = []
    for key, (message, count) in sorted(found.items()):
        label = labels.get(key)
        if label is None:
            unlabelled.extend([(key, message)] * count)
            continue
        verdicts.setdefault(key[3], Counter())[label[0]] += count
    total = Counter()
    print(f"{'rule':8} {'real':>5} {'noise':>6} {'precision':>10}")
    for rule in sorted(verdicts):
        counts = verdicts[rule]
        total.update(counts)
        print(f"{rule:8} {counts['real']:5} {counts['noise']:6} {precision(counts):>10}")
    print(f"{'all':8} {total['real']:5} {total['noise']:6} {precision(total):>10}")
    total_found = sum(count for _, count in found.values())
    print(f"{total_found} hazard findings, {len(unlabelled)} without a label")
    if args.unlabelled:
        for (_, path, line, rule, symbol), message in unlabelled:
            print(f"  {path}:{line} {rule} `{symbol}` {message}")
    stale = sorted(set(labels) - set(found))
    for _, path, line, rule, symbol in stale:
        print(f"  label matches no finding: {path}:{line} {rule} `{symbol}`")
    return 0


def precision(counts: Counter) -> str:
    judged = counts["real"] + counts["noise"]
    return f"{100 * counts['real'] / judged:.1f}%" if judged else "-"


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

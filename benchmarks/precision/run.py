"""Precision and recall of portlint on real multi-vendor PyTorch code, against hand labels.

The repositories and the folders analysed are pinned in ``repos.txt`` (``owner/repo@commit
subpath ...``). Each needs a local checkout of exactly that commit, one folder per repository,
named ``owner+repo``, under ``--src``. With ``--mirror DIR`` the script makes missing checkouts
itself from bare git directories (``DIR/owner+repo/repo``, ``DIR/owner+repo`` or
``DIR/owner/repo.git``)::

    git --git-dir=GITDIR archive COMMIT SUBPATH... | tar -x -C SRC/owner+repo

portlint runs once per repository, from inside the checkout, on the pinned sub-paths
(``--output-format json --isolated --no-respect-gitignore``), so finding paths are relative to
the repository root. Findings are joined with ``labels.csv`` and the report gives, per rule and
overall (one table per repository group when ``repos.txt`` has several: a line ``## NAME`` starts
a group, and the pins before the first are ``tuning``; a held-out group was labelled without the
analysis being changed for it):

- strict precision: findings labelled ``right`` (site, target list and severity all right) over
  all labelled findings whose severity and targets are still those that were labelled;
- site precision: ``right`` plus ``wrong-detail`` (a real site with a wrong target list or
  severity) over all labelled findings;
- unlabelled findings, labelled findings that no longer occur, and labelled findings whose
  severity or targets changed since they were labelled (they need a fresh look);
- recall on the files read in full (``files_read.txt``): expected sites are the labelled real
  sites in those files plus ``missed.csv``; a site counts as found when a current finding of the
  same rule is on its line.

Choose the portlint to measure with ``--portlint`` (a command, default: this interpreter's
``-m portlint``) and ``--pythonpath`` (prepended to ``PYTHONPATH``, e.g. another checkout's
``src``). ``--sample N`` prints a stratified random sample of unlabelled findings to label next;
``--changed`` prints the labelled findings whose severity or targets changed, with their old
verdict, to label again; ``--dump FILE`` writes all current findings, with their repository, as
JSON.

Standard library only.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import random
import shlex
import subprocess
import sys
import tarfile
import tempfile
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
#: The group of the pins before any ``## NAME`` line of repos.txt.
DEFAULT_GROUP = "tuning"
VERDICTS = ("right", "wrong-detail", "false-positive")
LABEL_FIELDS = (
    "repo",
    "path",
    "line",
    "rule",
    "symbol",
    "severity",
    "targets",
    "verdict",
    "reason",
)


@dataclass(frozen=True)
class Pin:
    repo: str  # owner/name
    commit: str
    subpaths: tuple[str, ...]
    #: the set the repository belongs to (``## NAME`` in repos.txt): tuning or held out
    group: str = DEFAULT_GROUP

    @property
    def spec(self) -> str:
        return f"{self.repo}@{self.commit}"

    @property
    def folder(self) -> str:
        return self.repo.replace("/", "+")


@dataclass
class Label:
    repo: str  # owner/name@commit
    path: str
    line: int
    rule: str
    symbol: str
    severity: str
    targets: str
    verdict: str
    reason: str


@dataclass
class Join:
    """Findings matched with labels."""

    matched: list[tuple[dict, Label]] = field(default_factory=list)
    unlabelled: list[dict] = field(default_factory=list)
    gone: list[Label] = field(default_factory=list)


def read_pins(path: Path) -> list[Pin]:
    """The pins of repos.txt; a line ``## NAME`` starts a group (the first is ``tuning``)."""
    pins = []
    group = DEFAULT_GROUP
    for raw in path.read_text().splitlines():
        if raw.startswith("## "):
            group = raw[3:].strip()
            continue
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        spec, *subpaths = line.split()
        repo, _, commit = spec.partition("@")
        pins.append(Pin(repo, commit, tuple(subpaths) or (".",), group))
    return pins


def read_labels(path: Path) -> list[Label]:
    if not path.exists():
        return []
    with path.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    labels = []
    for number, row in enumerate(rows, start=2):
        if row["verdict"] not in VERDICTS:
            raise SystemExit(f"{path}:{number}: verdict must be one of {', '.join(VERDICTS)}")
        labels.append(
            Label(
                repo=row["repo"],
                path=row["path"],
                line=int(row["line"]),
                rule=row["rule"],
                symbol=row.get("symbol") or "",
                severity=row.get("severity") or "",
                targets=row.get("targets") or "",
                verdict=row["verdict"],
                reason=row["reason"],
            )
        )
    return labels


def read_rows(path: Path) -> list[dict]:
    if not path.exists():
        return []
    with path.open(newline="") as handle:
        return list(csv.DictReader(handle))


def targets_text(finding: dict) -> str:
    """The targets of a finding as a stable string: ``npu=rename mlu=rename cpu=manual``."""
    return " ".join(
        f"{name}={entry['status']}" for name, entry in sorted(finding["targets"].items())
    )


def join(findings: list[dict], labels: list[Label]) -> Join:
    """Match each finding (with a ``repo`` key) to a label of the same repo, path, line and rule.

    A label with the finding's symbol is preferred; otherwise any label left on that line and
    rule is used, so that a span that grew or shrank keeps its label. Findings of the same rule
    and symbol repeated on one line share its label. One site may have several
    labels, one per severity and target list it was seen with (analyses change): the one whose
    details match the finding is used (the last such, so that an appended row relabels), else
    the last one.
    """
    pool: dict[tuple, list[Label]] = defaultdict(list)
    for label in labels:
        pool[(label.repo, label.path, label.line, label.rule)].append(label)
    used: set[tuple] = set()  # (key, label symbol) already matched
    result = Join()

    def take(finding: dict, key: tuple, candidates: list[Label]) -> None:
        best = next(
            (lab for lab in reversed(candidates) if not details_changed(finding, lab)),
            candidates[-1],
        )
        used.add((key, best.symbol))
        result.matched.append((finding, best))

    pending = []
    for finding in findings:
        key = (finding["repo"], finding["path"], finding["line"], finding["code"])
        exact = [
            lab
            for lab in pool.get(key, [])
            if lab.symbol == finding["symbol"] and (key, lab.symbol) not in used
        ]
        if exact:
            take(finding, key, exact)
        elif (key, finding["symbol"]) in used:
            # the same rule and symbol again on the line (``x.is_cuda and y.is_cuda``): one
            # label row judges them all
            same = [lab for lab in pool[key] if lab.symbol == finding["symbol"]]
            take(finding, key, same)
        else:
            pending.append((finding, key))
    for finding, key in pending:
        free = [lab for lab in pool.get(key, []) if (key, lab.symbol) not in used]
        if free:
            take(finding, key, [lab for lab in free if lab.symbol == free[0].symbol])
        else:
            result.unlabelled.append(finding)
    seen = set()
    for label in labels:
        slot = ((label.repo, label.path, label.line, label.rule), label.symbol)
        if slot not in used and slot not in seen:
            seen.add(slot)
            result.gone.append(label)
    return result


def details_changed(finding: dict, label: Label) -> bool:
    return (label.severity, label.targets) != (finding["severity"], targets_text(finding))


@dataclass
class Score:
    right: int = 0
    wrong_detail: int = 0
    false_positive: int = 0
    changed: int = 0  # labelled, but the severity or targets differ from the labelled ones
    strict_right: int = 0  # labelled right, details unchanged

    @property
    def labelled(self) -> int:
        return self.right + self.wrong_detail + self.false_positive

    def strict(self) -> float | None:
        total = self.labelled - self.changed
        return None if total <= 0 else self.strict_right / total

    def site(self) -> float | None:
        return None if not self.labelled else (self.right + self.wrong_detail) / self.labelled


def score(matched: list[tuple[dict, Label]]) -> dict[str, Score]:
    """Scores per rule code, plus ``"all"``.

    A finding whose severity or targets changed since labelling keeps its site verdict (the site
    is the same) but leaves the strict figure, since its details were judged on other values.
    """
    scores: dict[str, Score] = defaultdict(Score)
    for finding, label in matched:
        changed = details_changed(finding, label)
        for key in (finding["code"], "all"):
            entry = scores[key]
            entry.changed += changed
            if label.verdict == "right":
                entry.right += 1
                entry.strict_right += not changed
            elif label.verdict == "wrong-detail":
                entry.wrong_detail += 1
            else:
                entry.false_positive += 1
    return dict(scores)


def recall(
    findings: list[dict], labels: list[Label], missed: list[dict], files_read: set[tuple[str, str]]
) -> tuple[int, int, list[dict]]:
    """(found, expected, still missed) over the files read in full.

    A site is found when a current finding of the same rule (code or name) is on its line.
    """
    present = set()
    for f in findings:
        # A miss may name its rule by code or by name, and give "*" for "anywhere in the file"
        # (a once-per-file finding such as a backend summary).
        for rule in (f["code"], f.get("name")):
            present |= {(f["repo"], f["path"], f["line"], rule), (f["repo"], f["path"], "*", rule)}
    # The last row of a labelled finding is its verdict now: an appended row relabels it.
    latest = {(lab.repo, lab.path, lab.line, lab.rule, lab.symbol): lab for lab in labels}
    expected = {
        (lab.repo, lab.path, lab.line, lab.rule)
        for lab in latest.values()
        if lab.verdict != "false-positive" and (lab.repo, lab.path) in files_read
    }
    labelled_rules = {site[:2] + site[3:] for site in expected}
    missed = [row for row in missed if (row["repo"], row["path"]) in files_read]
    for row in missed:
        site = miss_site(row)
        if site[2] == "*" and site[:2] + site[3:] in labelled_rules:
            continue  # the once-per-file site is already counted through its label
        expected.add(site)
    still = [row for row in missed if miss_site(row) not in present]
    found = sum(1 for site in expected if site in present)
    return found, len(expected), still


def miss_site(row: dict) -> tuple:
    line = row["line"] if row["line"] == "*" else int(row["line"])
    return (row["repo"], row["path"], line, row["rule"])


def find_gitdir(mirror: Path, pin: Pin) -> Path | None:
    owner, name = pin.repo.split("/")
    for candidate in (
        mirror / pin.folder / "repo",
        mirror / pin.folder,
        mirror / owner / f"{name}.git",
    ):
        if (candidate / "HEAD").exists():
            return candidate
    return None


def package_inits(gitdir: Path, commit: str, subpaths: list[str]) -> list[str]:
    """The ``__init__.py`` files of the folders above the sub-paths: the packages the pinned
    modules belong to, as in a full checkout (``from xtuner.v1.utils import ...`` is an import
    of the project's own package only where ``xtuner/__init__.py`` is there)."""
    above = {
        "/".join([*parts[:end], "__init__.py"])
        for path in subpaths
        for parts in [path.strip("/").split("/")]
        for end in range(1, len(parts))
    }
    if not above:
        return []
    listed = subprocess.run(
        ["git", f"--git-dir={gitdir}", "ls-tree", "--name-only", commit, "--", *sorted(above)],
        capture_output=True,
        text=True,
        check=True,
    )
    return [name for name in listed.stdout.splitlines() if name not in subpaths]


def absent_files(gitdir: Path, commit: str, paths: list[str]) -> list[str]:
    """The files under ``paths`` whose content the git directory lacks: a mirror made from a
    size-limited snapshot leaves out large files (model weights, media), and ``git archive``
    stops at the first one. They are left out of the checkout."""
    listed = subprocess.run(
        ["git", f"--git-dir={gitdir}", "ls-tree", "-r", commit, "--", *paths],
        capture_output=True,
        text=True,
        check=True,
    )
    entries = [line.split("\t", 1) for line in listed.stdout.splitlines()]
    blobs = [(meta.split()[2], path) for meta, path in entries if meta.split()[1] == "blob"]
    checked = subprocess.run(
        ["git", f"--git-dir={gitdir}", "cat-file", "--batch-check=%(objectname)"],
        input="".join(f"{sha}\n" for sha, _ in blobs),
        capture_output=True,
        text=True,
        check=True,
    )
    missing = {line.split()[0] for line in checked.stdout.splitlines() if line.endswith(" missing")}
    return [path for sha, path in blobs if sha in missing]


def ensure_checkout(src: Path, mirror: Path | None, pin: Pin) -> Path:
    """The checkout folder of a pin, extracted from the mirror when it is missing."""
    folder = src / pin.folder
    stamp = folder / ".portlint-bench-commit"
    if folder.is_dir() and (not stamp.exists() or stamp.read_text().strip() == pin.commit):
        return folder
    if mirror is None:
        raise SystemExit(f"no checkout of {pin.spec} at {folder}; pass --mirror DIR to make one")
    gitdir = find_gitdir(mirror, pin)
    if gitdir is None:
        raise SystemExit(f"no git directory for {pin.repo} under {mirror}")
    folder.mkdir(parents=True, exist_ok=True)
    paths = [] if pin.subpaths == (".",) else list(pin.subpaths)
    paths += package_inits(gitdir, pin.commit, paths)
    paths += [f":(exclude){path}" for path in absent_files(gitdir, pin.commit, paths)]
    with tempfile.TemporaryFile() as archive:
        subprocess.run(
            ["git", f"--git-dir={gitdir}", "archive", pin.commit, *paths],
            stdout=archive,
            check=True,
        )
        archive.seek(0)
        with tarfile.open(fileobj=archive) as tar:
            tar.extractall(folder, filter="data")
    stamp.write_text(pin.commit + "\n")
    return folder


def run_portlint(command: list[str], pythonpath: str | None, folder: Path, pin: Pin) -> list[dict]:
    env = dict(os.environ)
    if pythonpath:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [pythonpath, env.get("PYTHONPATH")]))
    args = [*command, "--output-format", "json", "--isolated", "--no-respect-gitignore"]
    proc = subprocess.run(
        [*args, *pin.subpaths], cwd=folder, env=env, capture_output=True, text=True, check=False
    )
    if proc.returncode not in (0, 1):
        raise SystemExit(
            f"portlint failed on {pin.spec} ({proc.returncode}): {proc.stderr.strip()}"
        )
    findings = json.loads(proc.stdout)
    for finding in findings:
        finding["repo"] = pin.spec
        finding["path"] = finding["path"].removeprefix("./")
    return findings


def stratified_sample(findings: list[dict], size: int, seed: int) -> list[dict]:
    """About ``size`` findings, every rule represented, the rest in proportion to each rule."""
    rng = random.Random(seed)
    by_rule: dict[str, list[dict]] = defaultdict(list)
    for finding in findings:
        by_rule[finding["code"]].append(finding)
    total = len(findings)
    chosen = []
    for _rule, group in sorted(by_rule.items()):
        share = max(min(3, len(group)), round(size * len(group) / total)) if total else 0
        chosen.extend(rng.sample(group, min(share, len(group))))
    return chosen


def percent(value: float | None) -> str:
    return "   -  " if value is None else f"{100 * value:5.1f}%"


def by_group(
    findings: list[dict], joined: Join, groups: dict[str, str]
) -> dict[str, tuple[list[dict], list[tuple[dict, Label]]]]:
    """Findings and matched findings per repository group (``groups``: ``owner/repo@commit`` ->
    group), in the order the groups first appear; a repository without a group is ``tuning``."""
    split: dict[str, tuple[list[dict], list[tuple[dict, Label]]]] = {}
    for name in [*dict.fromkeys(groups.values()), DEFAULT_GROUP]:
        split.setdefault(name, ([], []))
    for finding in findings:
        split[groups.get(finding["repo"], DEFAULT_GROUP)][0].append(finding)
    for finding, label in joined.matched:
        split[groups.get(finding["repo"], DEFAULT_GROUP)][1].append((finding, label))
    return {name: parts for name, parts in split.items() if parts[0]}


def print_table(findings: list[dict], matched: list[tuple[dict, Label]]) -> None:
    scores = score(matched)
    totals = Counter(f["code"] for f in findings)
    header = "rule     findings labelled right wrong-detail false-pos changed  strict   site"
    print(header)
    print("-" * len(header))
    for rule in [*sorted(set(totals) | {k for k in scores if k != "all"}), "all"]:
        entry = scores.get(rule, Score())
        found = sum(totals.values()) if rule == "all" else totals[rule]
        print(
            f"{rule:8} {found:8} {entry.labelled:8} {entry.right:5} {entry.wrong_detail:12} "
            f"{entry.false_positive:9} {entry.changed:7} {percent(entry.strict())} "
            f"{percent(entry.site())}"
        )


def report(
    findings: list[dict],
    labels: list[Label],
    missed: list[dict],
    files_read: dict[str, set],
    groups: dict[str, str] | None = None,
) -> Join:
    """Print precision per rule (one table per repository group when there are several: the
    repositories the analysis was tuned on and those held out), then what needs labelling and
    recall per group of files read in full."""
    joined = join(findings, labels)
    unlabelled = Counter(f["code"] for f in joined.unlabelled)
    split = by_group(findings, joined, groups or {})
    if len(split) > 1:
        for name, (group_findings, matched) in split.items():
            repos = len({f["repo"] for f in group_findings})
            print(f"## {name} ({repos} repositories)")
            print_table(group_findings, matched)
            print()
        print("## all")
    print_table(findings, joined.matched)
    print()
    print(f"unlabelled findings: {len(joined.unlabelled)} {dict(sorted(unlabelled.items()))}")
    gone = Counter(label.verdict for label in joined.gone)
    print(f"labelled findings that no longer occur: {len(joined.gone)}", dict(sorted(gone.items())))
    for label in joined.gone:
        if label.verdict != "false-positive":  # a real site lost
            print(f"  lost: {label.repo} {label.path}:{label.line} {label.rule} [{label.verdict}]")
    changed = [(f, lab) for f, lab in joined.matched if details_changed(f, lab)]
    print(f"labelled findings whose severity or targets changed: {len(changed)}")
    groups = dict(files_read)
    if len(groups) > 1:
        groups["all"] = set().union(*files_read.values())
    for name, files in groups.items():
        found, expected, still = recall(findings, labels, missed, files)
        value = found / expected if expected else None
        print(
            f"recall on {len(files)} files read in full ({name}): {found}/{expected} ="
            f" {percent(value)} ({len(still)} listed misses still missed)"
        )
    return joined


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--src", type=Path, required=True, help="folder of owner+repo checkouts")
    parser.add_argument("--mirror", type=Path, help="folder of bare git dirs to extract from")
    parser.add_argument("--portlint", default=f"{shlex.quote(sys.executable)} -m portlint")
    parser.add_argument("--pythonpath", help="prepended to PYTHONPATH for portlint")
    parser.add_argument("--repos", type=Path, default=HERE / "repos.txt")
    parser.add_argument("--labels", type=Path, default=HERE / "labels.csv")
    parser.add_argument("--missed", type=Path, default=HERE / "missed.csv")
    parser.add_argument("--files-read", type=Path, default=HERE / "files_read.txt")
    parser.add_argument("--dump", type=Path, help="write the current findings here as JSON")
    parser.add_argument("--sample", type=int, default=0, help="print N unlabelled findings")
    parser.add_argument("--seed", type=int, default=9)
    parser.add_argument(
        "--changed",
        action="store_true",
        help="print the findings whose details changed, to relabel",
    )
    return parser.parse_args(argv)


def read_files_read(path: Path) -> dict[str, set[tuple[str, str]]]:
    """The files read in full, by group: a line ``## NAME`` starts a group (default ``read``)."""
    groups: dict[str, set[tuple[str, str]]] = defaultdict(set)
    if not path.exists():
        return groups
    group = "read"
    for raw in path.read_text().splitlines():
        if raw.startswith("## "):
            group = raw[3:].strip()
            continue
        line = raw.split("#", 1)[0].strip()
        if line:
            repo, file = line.split()
            groups[group].add((repo, file))
    return groups


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    command = shlex.split(args.portlint)
    findings = []
    pins = read_pins(args.repos)
    for pin in pins:
        folder = ensure_checkout(args.src, args.mirror, pin)
        findings.extend(run_portlint(command, args.pythonpath, folder, pin))
    if args.dump:
        args.dump.write_text(json.dumps(findings, indent=1))
    specs = {pin.spec for pin in pins}  # a shorter pins file measures only its repositories
    labels = [label for label in read_labels(args.labels) if label.repo in specs]
    missed = [row for row in read_rows(args.missed) if row["repo"] in specs]
    files_read = {
        name: {pair for pair in files if pair[0] in specs}
        for name, files in read_files_read(args.files_read).items()
    }
    joined = report(findings, labels, missed, files_read, {pin.spec: pin.group for pin in pins})
    rows = []
    if args.sample:
        rows += [(f, "", "") for f in stratified_sample(joined.unlabelled, args.sample, args.seed)]
    if args.changed:
        rows += [
            (f, lab.verdict, lab.reason) for f, lab in joined.matched if details_changed(f, lab)
        ]
    if rows:
        print()
        writer = csv.writer(sys.stdout)
        writer.writerow(LABEL_FIELDS)
        for finding, verdict, reason in rows:
            writer.writerow(
                [
                    *[finding["repo"], finding["path"], finding["line"], finding["code"]],
                    *[
                        finding["symbol"],
                        finding["severity"],
                        targets_text(finding),
                        verdict,
                        reason,
                    ],
                ]
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())

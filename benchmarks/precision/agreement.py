"""How far two independent readings of the same findings agree.

``second_reading.csv`` holds a second verdict, given without sight of the first, for a random
sample of labelled findings (five per repository group, drawn from the findings whose severity
and targets were still those labelled). Both files have the columns of ``labels.csv``; a second
row answers the first-reading label of the same repository, path, line, rule, symbol, severity
and targets. The report gives, over the rows both readers labelled:

- the verdicts side by side (first reader's in rows, second reader's in columns);
- agreement and Cohen's kappa on three questions: the verdict itself; whether the finding is
  ``right`` in every detail (what strict precision counts); whether it is a real site at all
  (``right`` or ``wrong-detail``, what site precision counts);
- strict and site precision of the sample by each reader, and by both (a finding counts only
  when both readers say so).

Agreement between readers bounds what a precision figure against one reader's labels can show:
where readers disagree on a finding, no analysis satisfies both.

Standard library only::

    python benchmarks/precision/agreement.py [--first labels.csv] [--second second_reading.csv]
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from run import VERDICTS, Label, read_labels  # noqa: E402


def key(label: Label) -> tuple:
    return (
        label.repo,
        label.path,
        label.line,
        label.rule,
        label.symbol,
        label.severity,
        label.targets,
    )


def pair(first: list[Label], second: list[Label]) -> tuple[list[tuple[str, str]], list[Label]]:
    """The (first, second) verdicts of the findings both readings label, and the second-reading
    rows that answer no first-reading label. A finding the first reading labels twice (the same
    details at two columns of one line) takes its last label, as the benchmark's join does."""
    earlier = {key(label): label.verdict for label in first}
    pairs, unmatched = [], []
    for label in second:
        verdict = earlier.get(key(label))
        if verdict is None:
            unmatched.append(label)
        else:
            pairs.append((verdict, label.verdict))
    return pairs, unmatched


def kappa(pairs: list[tuple[str, str]], classify: Callable[[str], str]) -> tuple[float, float]:
    """Observed agreement and Cohen's kappa of the two readings, each verdict first mapped by
    ``classify`` (the verdict itself, or a coarser yes/no)."""
    classes = [(classify(a), classify(b)) for a, b in pairs]
    total = len(classes)
    observed = sum(a == b for a, b in classes) / total
    left = Counter(a for a, _ in classes)
    right = Counter(b for _, b in classes)
    expected = sum(left[c] * right[c] for c in left) / (total * total)
    return observed, (observed - expected) / (1 - expected) if expected < 1 else 1.0


QUESTIONS: list[tuple[str, Callable[[str], str]]] = [
    ("verdict", lambda v: v),
    ("right in every detail", lambda v: str(v == "right")),
    ("a real site", lambda v: str(v != "false-positive")),
]


def report(pairs: list[tuple[str, str]], unmatched: list[Label]) -> None:
    print(f"findings read twice: {len(pairs)}")
    if unmatched:
        print(f"second-reading rows with no first-reading label: {len(unmatched)}")
    if not pairs:
        return
    table = Counter(pairs)
    width = max(len(v) for v in (*VERDICTS, "first/second"))
    print()
    corner = "first/second"
    print(f"{corner:>{width}}  " + "  ".join(f"{v:>{width}}" for v in VERDICTS))
    for first in VERDICTS:
        cells = "  ".join(f"{table[first, second]:>{width}}" for second in VERDICTS)
        print(f"{first:>{width}}  {cells}")
    print()
    for question, classify in QUESTIONS:
        observed, value = kappa(pairs, classify)
        print(f"{question:<22} agreement {100 * observed:5.1f}%  kappa {value:5.2f}")
    print()
    total = len(pairs)
    readers = {
        "first reader": [a for a, _ in pairs],
        "second reader": [b for _, b in pairs],
    }
    for name, verdicts in readers.items():
        strict = verdicts.count("right") / total
        site = sum(v != "false-positive" for v in verdicts) / total
        print(f"{name:<14} strict {100 * strict:5.1f}%  site {100 * site:5.1f}%")
    strict = sum(a == b == "right" for a, b in pairs) / total
    site = sum("false-positive" not in (a, b) for a, b in pairs) / total
    print(f"{'both readers':<14} strict {100 * strict:5.1f}%  site {100 * site:5.1f}%")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--first", type=Path, default=HERE / "labels.csv")
    parser.add_argument("--second", type=Path, default=HERE / "second_reading.csv")
    args = parser.parse_args(argv)
    if not args.second.exists():
        parser.error(f"{args.second}: no such file")
    pairs, unmatched = pair(read_labels(args.first), read_labels(args.second))
    report(pairs, unmatched)
    return 0


if __name__ == "__main__":
    sys.exit(main())

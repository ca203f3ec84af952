"""What happens to a run's findings after linting and selection, for pull requests and legacy
code: ``--update-baseline``, ``--baseline``, ``--diff-base`` and ``--add-noqa``.

The CLI builds ``ReviewOptions`` from its flags and calls these functions in that order; they
return values and raise one-line errors, and never print.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from portlint.baseline import BaselineError, Update, hide_baselined, load_baseline, update_baseline
from portlint.discover import language_of
from portlint.engine import UnreadableFile, read_source
from portlint.fingerprint import SourceLines, finding_keys
from portlint.gitdiff import changed_lines, only_changed
from portlint.model import Finding
from portlint.noqa import add_noqa
from portlint.repo import GitError, relative_path, repository_root
from portlint.writer import FileChanged, NotWritable, write_source

__all__ = ["BaselineError", "GitError", "NoqaSummary", "ReviewOptions", "narrow", "record"]


@dataclass
class ReviewOptions:
    diff_base: str | None = None
    diff_mode: str = "added"
    baseline: Path | None = None
    lines: SourceLines = field(default_factory=SourceLines)

    @property
    def root(self) -> Path:
        return repository_root()

    def keyed(self, findings: list[Finding]):
        return finding_keys(findings, self.lines, lambda path: relative_path(path, self.root))


def record(findings: list[Finding], linted: list[str], options: ReviewOptions) -> Update:
    """``--update-baseline``: write the baseline from this run's findings."""
    assert options.baseline is not None
    paths = {relative_path(path, options.root) for path in linted}
    return update_baseline(options.baseline, options.keyed(findings), paths, options.root)


def narrow(findings: list[Finding], options: ReviewOptions) -> list[Finding]:
    """The findings a review should see: not in the baseline, on lines the branch adds."""
    if options.baseline is not None:
        findings = hide_baselined(options.keyed(findings), load_baseline(options.baseline))
    if options.diff_base is not None:
        changed = changed_lines(options.diff_base, options.root)
        findings = only_changed(findings, changed, options.diff_mode)
    return findings


@dataclass
class NoqaSummary:
    added: int = 0
    files: int = 0
    skipped: int = 0
    problems: list[str] = field(default_factory=list)


def insert_noqa(findings: list[Finding]) -> NoqaSummary:
    """``--add-noqa``: write a suppression comment for every finding, file by file."""
    summary = NoqaSummary()
    by_path: dict[str, list[Finding]] = defaultdict(list)
    for finding in findings:
        by_path[finding.path].append(finding)
    for path, in_file in sorted(by_path.items()):
        try:
            source = read_source(Path(path), language_of(Path(path)) or "unknown")
            result = add_noqa(source, in_file)
            if result.added:
                write_source(source, result.text)
        except (UnreadableFile, FileChanged, NotWritable, OSError) as error:
            summary.problems.append(f"{path}: {error}")
            continue
        summary.added += result.added
        summary.skipped += result.skipped
        summary.files += 1 if result.added else 0
    return summary

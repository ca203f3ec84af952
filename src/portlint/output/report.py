"""What every output format receives: the findings of a run and what they are about."""

from __future__ import annotations

import functools
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from portlint.catalog import Catalog
from portlint.fingerprint import Key, SourceLines, finding_keys
from portlint.fix import FixPolicy
from portlint.model import Advice, Finding, Status


@dataclass
class Report:
    findings: list[Finding]
    targets: tuple[str, ...]
    catalog: Catalog
    files_checked: int = 0
    #: Whether the stream is a terminal (colour, rich layout).
    terminal: bool = False
    #: Findings that --fix fixed (they are no longer in ``findings``).
    fixed: list[Finding] = field(default_factory=list)
    show_fixes: bool = False
    #: Findings only: no summary table, no closing line.
    quiet: bool = False
    #: ``--unsafe-fixes`` was given: unsafe fixes count as fixable, not as hidden.
    unsafe_fixes: bool = False
    #: The folder CI formats give paths relative to; found with git on first use when not set.
    root: Path | None = None
    lines: SourceLines = field(default_factory=SourceLines)

    @functools.cached_property
    def repository_root(self) -> Path:
        from portlint.repo import repository_root

        return self.root.resolve() if self.root else repository_root()

    def relative_path(self, path: str) -> str:
        """The path as CI systems show it: relative to the repository root, forward slashes."""
        from portlint.repo import relative_path

        return relative_path(path, self.repository_root)

    def line_text(self, finding: Finding, line: int | None = None) -> str:
        return self.lines.line(finding.path, finding.span.line if line is None else line)

    def keyed_findings(self) -> list[tuple[Finding, Key]]:
        """Findings in file order with their line-number-free keys (see ``fingerprint``)."""
        return finding_keys(self.findings, self.lines, self.relative_path)

    def sorted_findings(self) -> list[Finding]:
        return sorted(self.findings, key=lambda f: (f.path, f.span, f.code))

    def fixable(self, finding: Finding) -> bool:
        """Whether ``portlint --fix`` (with this run's ``--unsafe-fixes``) would fix it."""
        return FixPolicy(unsafe=self.unsafe_fixes, targets=self.targets).allows(finding.fix)

    def fix_counts(self) -> tuple[int, int]:
        """(fixable with this run's options, hidden: fixable only with ``--unsafe-fixes``)."""
        unsafe = FixPolicy(unsafe=True, targets=self.targets)
        fixable = sum(1 for f in self.findings if self.fixable(f))
        return fixable, sum(1 for f in self.findings if unsafe.allows(f.fix)) - fixable

    def target_summary(self) -> dict[str, Counter]:
        """target -> counts of findings by status (rename, manual, unsupported)."""
        summary: dict[str, Counter] = {t: Counter() for t in self.targets}
        for finding in self.findings:
            for target, advice in finding.targets.items():
                if target in summary and advice.status is not Status.PORTABLE:
                    summary[target][advice.status.value] += 1
        return summary


def advice_text(advice: Advice | None) -> str:
    """One target's answer in a few words, as the text output and annotations show it."""
    if advice is None or advice.status is Status.PORTABLE:
        return "ok"
    if advice.status is Status.RENAME:
        return advice.replacement or "rename"
    if advice.status is Status.MANUAL:
        if advice.replacement:
            return f"manual: {advice.replacement}"
        return advice.note or "manual port"
    return "unsupported"


def advice_line(finding: Finding, targets: tuple[str, ...]) -> str:
    """``rocm: ok · npu: torch.npu.synchronize · cpu: remove``"""
    return " · ".join(f"{t}: {advice_text(finding.targets.get(t))}" for t in targets)


def fix_summary(fixable: int, hidden: int, unsafe_fixes: bool = False) -> str | None:
    """``[*] 3 fixable with `portlint --fix` (1 hidden fix can be enabled with ...).``, as ruff."""
    command = "portlint --fix --unsafe-fixes" if unsafe_fixes else "portlint --fix"
    line = f"[*] {fixable} fixable with `{command}`" if fixable else "No fixes available"
    if hidden:
        fix = "fix" if hidden == 1 else "fixes"
        line += f" ({hidden} hidden {fix} can be enabled with `--unsafe-fixes`)"
    return f"{line}." if fixable or hidden else None


#: Characters a terminal acts on or that reorder text: C0 and C1 controls, DEL, bidirectional
#: overrides and isolates, and the lone surrogates that stand for undecodable bytes in names.
UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
NAMED_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    code = ord(char)
    if char in NAMED_ESCAPES:
        return NAMED_ESCAPES[char]
    if 0xDC80 <= code <= 0xDCFF:  # an undecodable byte of a file name (surrogateescape)
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: str) -> str:
    """``text`` with control characters shown as escapes (``\\x1b``, ``\\n``): a file name or
    source line can never move the cursor, recolour or retitle the terminal."""
    return UNPRINTABLE.sub(_escape, text) if UNPRINTABLE.search(text) else text

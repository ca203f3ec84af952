"""What every output format receives: how to show a run's findings, and the run's totals.

A run streams its findings: each format's ``Writer`` gets one file's findings at a time, as soon
as that file is done (files in path order, findings in file order, the order every format lists
them in), and nothing keeps them afterwards; summaries read the counts in ``Totals``. A report
built with ``findings`` (and ``fixed``) up front renders a whole run the same way
(``portlint.output.render``).
"""

from __future__ import annotations

import functools
import json
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Sequence
from itertools import groupby
from json.encoder import encode_basestring, encode_basestring_ascii  # C where built
from pathlib import Path
from typing import Any, TextIO

from portlint.catalog import Catalog
from portlint.fingerprint import Key, SourceLines, finding_keys, keys_in_order
from portlint.fix import FixPolicy
from portlint.model import Advice, Finding, Status
from portlint.sink import FindingParts


class Totals:
    """Counts of the findings written so far: all that summaries need."""

    def __init__(self, targets: Iterable[str]) -> None:
        self.findings = 0
        #: Files with at least one finding.
        self.files = 0
        #: Fixable with this run's options, and fixable only with ``--unsafe-fixes``.
        self.fixable = 0
        self.hidden = 0
        self.per_code: Counter[str] = Counter()
        self.fixable_codes: set[str] = set()
        #: target -> counts of findings by status (rename, manual, unsupported).
        self.per_target: dict[str, Counter[str]] = {t: Counter() for t in targets}
        #: Findings that --fix fixed: path -> rule code -> count.
        self.fixed: dict[str, Counter[str]] = defaultdict(Counter)
        self.fixed_count = 0


class Report:
    def __init__(
        self,
        findings: list[Finding],
        targets: tuple[str, ...],
        catalog: Catalog,
        files_checked: int = 0,
        terminal: bool = False,
        fixed: list[Finding] | None = None,
        show_fixes: bool = False,
        quiet: bool = False,
        unsafe_fixes: bool = False,
        root: Path | None = None,
    ) -> None:
        #: A whole run's findings, for ``render``; a streaming run passes them to ``add``
        #: instead.
        self.findings = findings
        self.targets = targets
        self.catalog = catalog
        self.files_checked = files_checked
        #: Whether the stream is a terminal (colour, rich layout).
        self.terminal = terminal
        #: Findings that --fix fixed, for ``render`` (they are not in ``findings``).
        self.fixed: list[Finding] = fixed if fixed is not None else []
        self.show_fixes = show_fixes
        #: Findings only: no summary table, no closing line.
        self.quiet = quiet
        #: ``--unsafe-fixes`` was given: unsafe fixes count as fixable, not as hidden.
        self.unsafe_fixes = unsafe_fixes
        #: The folder CI formats give paths relative to; found with git on first use when not set.
        self.root = root
        self.lines = SourceLines()
        self.totals = Totals(targets)
        self._policy = FixPolicy(unsafe=self.unsafe_fixes, targets=self.targets)
        self._unsafe = FixPolicy(unsafe=True, targets=self.targets)

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

    def keyed(self, findings: Sequence[Finding]) -> Iterable[tuple[Finding, Key]]:
        """One file's findings in file order with their line-number-free keys (``fingerprint``:
        occurrences count within a file, so a file at a time gives the whole run's keys). A
        file analysed in parts gives its findings in file order already, one part at a time:
        they are keyed as they come, not all held."""
        if isinstance(findings, FindingParts):
            return keys_in_order(findings, self.lines, self.relative_path)
        return finding_keys(list(findings), self.lines, self.relative_path)

    def files(self) -> Iterator[list[Finding]]:
        """``findings`` (a whole run's), sorted and grouped by file, as a run streams them."""
        ordered = sorted(self.findings, key=lambda f: (f.path, f.span, f.code))
        for _, group in groupby(ordered, key=lambda f: f.path):
            yield list(group)

    def fixable(self, finding: Finding) -> bool:
        """Whether ``portlint --fix`` (with this run's ``--unsafe-fixes``) would fix it."""
        return self._policy.allows(finding.fix)

    def add(self, findings: Sequence[Finding]) -> None:
        """Count one file's findings (before its writer gets them)."""
        totals = self.totals
        if findings:
            totals.files += 1
        totals.findings += len(findings)
        for finding in findings:
            totals.per_code[finding.code] += 1
            if self.fixable(finding):
                totals.fixable += 1
                totals.fixable_codes.add(finding.code)
            elif self._unsafe.allows(finding.fix):
                totals.hidden += 1
            for target, advice in finding.targets.items():
                counts = totals.per_target.get(target)
                if counts is not None and advice.status is not Status.PORTABLE:
                    counts[advice.status.value] += 1

    def add_fixed(self, fixed: Iterable[Finding]) -> None:
        for finding in fixed:
            self.totals.fixed[finding.path][finding.code] += 1
            self.totals.fixed_count += 1

    def fix_counts(self) -> tuple[int, int]:
        """(fixable with this run's options, hidden: fixable only with ``--unsafe-fixes``)."""
        return self.totals.fixable, self.totals.hidden

    def target_summary(self) -> dict[str, Counter[str]]:
        """target -> counts of findings by status (rename, manual, unsupported)."""
        return self.totals.per_target


class Writer:
    """One output format, written as the run goes: ``file`` for each file with findings, then
    ``finish`` once, when the totals are known."""

    def __init__(self, report: Report, stream: TextIO) -> None:
        self.report = report
        self.stream = stream

    def file(self, findings: Sequence[Finding]) -> None:
        raise NotImplementedError

    def finish(self) -> None:
        """Closing lines and summaries; by default none."""


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


def plural(count: int, word: str) -> str:
    return f"{count} {word}{'s' if count != 1 else ''}"


def indented_json(value: Any, margin: str = "", ensure_ascii: bool = False) -> str:
    """``json.dumps(value, indent=2, ensure_ascii=...)`` with every line after the first
    prefixed by ``margin``: the same bytes, with the strings and numbers encoded by json's C
    functions (``indent`` alone makes json take its pure-Python encoder, several times
    slower, and a report can hold 100,000 findings). Dicts with keys other than strings go
    to ``json.dumps`` itself."""
    quote = encode_basestring_ascii if ensure_ascii else encode_basestring
    parts: list[str] = []

    def put(item: Any, pad: str) -> None:
        if isinstance(item, str):
            parts.append(quote(item))
        elif item is None:
            parts.append("null")
        elif item is True:
            parts.append("true")
        elif item is False:
            parts.append("false")
        elif isinstance(item, int) and not isinstance(item, bool):
            parts.append(int.__repr__(item))
        elif isinstance(item, dict) and all(isinstance(key, str) for key in item):
            if not item:
                parts.append("{}")
                return
            inner = pad + "  "
            opening = "{\n" + inner
            for key, entry in item.items():
                if type(entry) is str:  # most values: no call of ``put``
                    parts.append(opening + quote(key) + ": " + quote(entry))
                else:
                    parts.append(opening + quote(key) + ": ")
                    put(entry, inner)
                opening = ",\n" + inner
            parts.append("\n" + pad + "}")
        elif isinstance(item, list | tuple):
            if not item:
                parts.append("[]")
                return
            inner = pad + "  "
            opening = "[\n" + inner
            for entry in item:
                parts.append(opening)
                put(entry, inner)
                opening = ",\n" + inner
            parts.append("\n" + pad + "]")
        else:  # floats, other keys: json's own encoder, indented by hand
            text = json.dumps(item, indent=2, ensure_ascii=ensure_ascii)
            parts.append(text.replace("\n", "\n" + pad))

    put(value, margin)
    return "".join(parts)


#: Stands for the streamed array's items in the document given to ``JsonArray``.
ITEMS = "\0items\0"


class JsonArray:
    """``json.dump(document, stream, indent=2)``, where one array in ``document`` is ``[ITEMS]``
    and its items are given one at a time: the same bytes, never the whole array at once."""

    def __init__(self, stream: TextIO, document: Any, ensure_ascii: bool = False) -> None:
        self.stream = stream
        self.ensure_ascii = ensure_ascii
        text = json.dumps(document, indent=2, ensure_ascii=ensure_ascii)
        head, _, self.tail = text.partition(json.dumps(ITEMS))
        self.head, self.indent = head.rsplit("\n", 1)
        self.count = 0

    def add(self, item: Any) -> None:
        if not self.count:
            self.stream.write(self.head)
        separator = ",\n" if self.count else "\n"
        self.stream.write(
            separator + self.indent + indented_json(item, self.indent, self.ensure_ascii)
        )
        self.count += 1

    def close(self) -> None:
        if self.count:
            self.stream.write(self.tail + "\n")
        else:  # ``[]``, then what follows the array
            self.stream.write(self.head + "]" + self.tail.partition("]")[2] + "\n")


def write_whole(writer: Writer, report: Report) -> None:
    """A whole run's ``findings`` and ``fixed`` through ``writer``, file by file, as a streaming
    run writes them."""
    report.totals = Totals(report.targets)
    report.add_fixed(report.fixed)
    for findings in report.files():
        report.add(findings)
        writer.file(findings)
    writer.finish()


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

"""Plain data shared by every part of portlint.

Position convention, used everywhere inside portlint: lines are 1-based; columns are 0-based and
count Unicode code points (characters) from the start of the line; an end position is exclusive.
Output formats convert once, in ``portlint.output.positions`` (JSON adds 1, SARIF counts UTF-16
units, rdjson UTF-8 bytes).

Records are named tuples, not dataclasses: portlint starts afresh for every run, and building a
dataclass costs 1-3 ms at import and loads ``inspect``; with every record a dataclass, that was a
sixth of a cached run over a large tree (``benchmarks/README.md``). Edit, Fix and Finding share
their repeated parts with equal ones (their ``__new__``), so each adds that to a named tuple of
its fields.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence
from enum import Enum
from typing import NamedTuple

#: The accelerator targets, in the order reports list them; the default set.
TARGETS: tuple[str, ...] = ("rocm", "npu", "mlu", "xpu", "mps", "cpu")
#: Host-architecture targets, reported only when asked for by name (``--target arm64``): they
#: matter for images, wheels and scripts, not for device code, so they stay out of the default.
HOST_TARGETS: tuple[str, ...] = ("arm64",)
#: Every target portlint knows.
ALL_TARGETS: tuple[str, ...] = TARGETS + HOST_TARGETS


class Status(str, Enum):
    """What a site needs on one target."""

    PORTABLE = "portable"
    RENAME = "rename"
    MANUAL = "manual"
    UNSUPPORTED = "unsupported"


class Severity(str, Enum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


class Applicability(str, Enum):
    SAFE = "safe"
    UNSAFE = "unsafe"


class Span(NamedTuple):
    line: int
    column: int
    end_line: int
    end_column: int


class Advice(NamedTuple):
    """The answer for one target: a status, and the replacement text when there is one."""

    status: Status
    replacement: str | None = None
    note: str | None = None
    #: The release of the target's software that added ``replacement`` (ROCm, for HIP names).
    since: str | None = None
    #: A further counterpart below the portable one, as advice (rocBLAS below hipBLAS).
    roc: str | None = None

    @property
    def portable(self) -> bool:
        return self.status is Status.PORTABLE


PORTABLE = Advice(Status.PORTABLE)


#: Advice maps by content: findings with the same advice share one read-only mapping.
_SHARED_TARGETS: dict[tuple[tuple[str, Advice], ...], Mapping[str, Advice]] = {}
#: Beyond this many distinct maps (never reached by the catalogue's rules), stop sharing.
_SHARED_LIMIT = 65536


def shared_targets(targets: Mapping[str, Advice]) -> Mapping[str, Advice]:
    """One mapping per distinct per-target advice, shared by every finding that has it (most
    findings of a rule have the same). Shared mappings are never changed: code that adjusts a
    finding's targets builds a new dict, as ``Finding.for_targets`` does."""
    key = tuple(targets.items())
    shared = _SHARED_TARGETS.get(key)
    if shared is None:
        shared = dict(targets)
        if len(_SHARED_TARGETS) < _SHARED_LIMIT:
            _SHARED_TARGETS[key] = shared
    return shared


def _shared_text(text: str) -> str:
    """Messages and symbols repeat from site to site: one copy of each, as for identifiers."""
    return sys.intern(text) if type(text) is str and len(text) < 512 else text


class _EditFields(NamedTuple):
    span: Span
    content: str


class Edit(_EditFields):
    __slots__ = ()

    def __new__(cls, span: Span, content: str) -> Edit:
        return super().__new__(cls, span, _shared_text(content))


class _FixFields(NamedTuple):
    applicability: Applicability
    edits: tuple[Edit, ...]
    description: str
    #: A fix that ports to one target only (hipify renames): applied only when that target is the
    #: single one requested, because the result no longer builds for the others.
    target: str | None


class Fix(_FixFields):
    __slots__ = ()

    def __new__(
        cls,
        applicability: Applicability,
        edits: tuple[Edit, ...],
        description: str = "",
        target: str | None = None,
    ) -> Fix:
        return super().__new__(cls, applicability, edits, _shared_text(description), target)


class _FindingFields(NamedTuple):
    path: str
    span: Span
    code: str
    name: str
    severity: Severity
    message: str
    symbol: str
    targets: Mapping[str, Advice]
    fix: Fix | None


class Finding(_FindingFields):
    """One site. Findings are many (one per 25 bytes of some generated files): the advice map,
    message and symbol are shared with the other findings that have the same."""

    __slots__ = ()

    def __new__(
        cls,
        path: str,
        span: Span,
        code: str,
        name: str,
        severity: Severity,
        message: str,
        symbol: str,
        targets: Mapping[str, Advice] | None = None,
        fix: Fix | None = None,
    ) -> Finding:
        return super().__new__(
            cls,
            path,
            span,
            code,
            name,
            severity,
            _shared_text(message),
            _shared_text(symbol),
            shared_targets(targets or {}),
            fix,
        )

    def moved(self, place: Callable[[Span], Span]) -> Finding:
        """This finding with its span and its fix's edits where ``place`` puts them (a file
        analysed in parts: ``python.parts``)."""
        fix = self.fix
        if fix is not None:
            edits = tuple(Edit(place(edit.span), edit.content) for edit in fix.edits)
            fix = Fix(fix.applicability, edits, fix.description, fix.target)
        return Finding(
            self.path,
            place(self.span),
            self.code,
            self.name,
            self.severity,
            self.message,
            self.symbol,
            self.targets,
            fix,
        )

    def for_targets(self, wanted: tuple[str, ...]) -> Finding | None:
        """This finding narrowed to ``wanted`` targets, or None when it is portable on all of them.

        Findings with no per-target advice at all (parse errors, unreadable files) always stay.
        """
        if not self.targets:
            return self
        kept = {t: a for t, a in self.targets.items() if t in wanted and not a.portable}
        if not kept:
            return None
        if len(kept) == len(self.targets):
            return self  # nothing narrowed (most findings): no copy
        return self._replace(targets=shared_targets(kept))


#: Severities from the least to the most severe.
SEVERITY_RANK = {Severity.INFO: 0, Severity.WARNING: 1, Severity.ERROR: 2}


def says_all(finding: Finding, other: Finding) -> bool:
    """``finding`` lists every target ``other`` does (portable ones aside), at least as
    severe: where both are one site, ``finding`` can stand for ``other``."""
    listed = {t for t, advice in finding.targets.items() if not advice.portable}
    return {t for t, advice in other.targets.items() if not advice.portable} <= listed and (
        SEVERITY_RANK[finding.severity] >= SEVERITY_RANK[other.severity]
    )


class SourceFile(NamedTuple):
    """A file read from disk, decoded, with what is needed to write it back unchanged."""

    path: str
    text: str
    encoding: str = "utf-8"
    bom: bool = False
    newline: str = "\n"
    #: ``writer.content_digest`` of the bytes read: a file is written back only if it still
    #: holds them ("changed since read" is decided by content, not by modification time).
    digest: str = ""

    @property
    def lines(self) -> list[str]:
        return self.text.splitlines()


class FileResult(NamedTuple):
    path: str
    #: A tuple; for a file analysed in parts, ``sink.FindingParts`` (read in order, compressed).
    findings: Sequence[Finding] = ()
    #: One-line problem that stopped the file from being linted (binary, undecodable, unreadable).
    error: str | None = None
    #: The file's text after fixes, when fixing was asked for and something changed.
    fixed_text: str | None = None
    fixes_applied: tuple[Finding, ...] = ()
    #: The file as read, when it was fixed (to write it back in the same encoding and form).
    source: SourceFile | None = None
    #: ``error`` is a bug in portlint rather than a problem with the file.
    internal_error: bool = False
    #: When fixed: the findings before the fixes, which stay reported if the file cannot be
    #: written.
    findings_before_fix: tuple[Finding, ...] = ()

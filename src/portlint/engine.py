"""File in, findings out — the same for every output format, the CLI, pre-commit and CI.

``lint_paths`` reads each file in the calling process and runs a cheap text test; only files that
could hold a finding are parsed, spread over worker processes when there are enough of them.
Analysers are imported on first use, so a run that parses nothing imports no parser.
"""

from __future__ import annotations

import importlib
import io
import os
import tokenize
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from portlint.catalog import Catalog, load_catalog
from portlint.config import Settings
from portlint.discover import Candidate, matches_glob
from portlint.model import FileResult, Finding, SourceFile, Span
from portlint.suppress import apply_suppressions

if TYPE_CHECKING:
    from concurrent.futures import Future, ProcessPoolExecutor

#: Below this many files to parse, worker processes cost more than they save.
PARALLEL_THRESHOLD = 12
BINARY_SNIFF = 8192


@dataclass(frozen=True)
class Analyser:
    """How to find out whether a file may hold findings, and how to analyse it."""

    module: str
    candidate: str
    analyse: str

    def load(self, attribute: str) -> Callable:
        return getattr(importlib.import_module(self.module), attribute)


#: language -> analyser. The prefilter modules import no parser.
ANALYSERS: dict[str, Analyser] = {
    "python": Analyser("portlint.python.analyser", "is_candidate", "analyse_python"),
}


class UnreadableFile(Exception):
    """The file cannot be read or decoded; the message is one line for the user."""


def read_source(path: Path, language: str) -> SourceFile:
    try:
        raw = path.read_bytes()
        stat = path.stat()
    except OSError as error:
        raise UnreadableFile(f"cannot read: {error.strerror or error}") from None
    if b"\0" in raw[:BINARY_SNIFF]:
        raise UnreadableFile("binary file (contains NUL bytes)")
    bom = raw.startswith(b"\xef\xbb\xbf")
    encoding = "utf-8"
    if language == "python":
        try:
            encoding, _ = tokenize.detect_encoding(io.BytesIO(raw).readline)
        except SyntaxError as error:
            raise UnreadableFile(f"bad encoding declaration: {error}") from None
    try:
        text = raw.decode(encoding)
    except (UnicodeDecodeError, LookupError) as error:
        raise UnreadableFile(f"not valid {encoding}: {error}") from None
    if text.startswith("\ufeff"):
        text = text[1:]
    return SourceFile(
        path=str(path),
        text=text,
        encoding="utf-8" if encoding == "utf-8-sig" else encoding,
        bom=bom,
        newline=_newline_of(text),
        mtime_ns=stat.st_mtime_ns,
    )


def _newline_of(text: str) -> str:
    position = text.find("\n")
    if position > 0 and text[position - 1] == "\r":
        return "\r\n"
    if position < 0 and "\r" in text:
        return "\r"
    return "\n"


def unreadable_finding(path: str, reason: str, catalog: Catalog) -> Finding:
    rule = catalog.rules["PRT002"]
    return Finding(path, Span(1, 0, 1, 0), rule.code, rule.name, rule.severity, reason, "")


def analyse_source(source: SourceFile, language: str, catalog: Catalog) -> list[Finding]:
    analyser = ANALYSERS[language]
    return analyser.load(analyser.analyse)(source, catalog)


def select_findings(
    findings: Iterable[Finding], source: SourceFile, settings: Settings
) -> tuple[Finding, ...]:
    """Apply rule selection, per-file ignores, suppression comments and the target filter."""
    ignored = tuple(
        code
        for pattern, codes in settings.per_file_ignores.items()
        if matches_glob(_config_relative(source.path, settings), pattern)
        for code in codes
    )
    kept = []
    for finding in findings:
        if not settings.is_enabled(finding.code):
            continue
        if any(finding.code.startswith(code) or code == "ALL" for code in ignored):
            continue
        narrowed = finding.for_targets(settings.targets)
        if narrowed is not None:
            kept.append(narrowed)
    kept = apply_suppressions(kept, source.text)
    return tuple(sorted(kept, key=lambda f: (f.span, f.code)))


def _config_relative(path: str, settings: Settings) -> str:
    try:
        return Path(path).absolute().relative_to(settings.root.absolute()).as_posix()
    except ValueError:
        return Path(path).as_posix()


def lint_source(source: SourceFile, language: str, settings: Settings) -> FileResult:
    catalog = load_catalog()
    findings = analyse_source(source, language, catalog)
    return FileResult(source.path, select_findings(findings, source, settings))


def _lint_job(job: tuple[SourceFile, str, Settings]) -> FileResult:
    return lint_source(*job)


def lint_paths(
    candidates: Iterable[Candidate], settings: Settings, jobs: int | None = None
) -> Iterator[FileResult]:
    """Results for every candidate file: clean files too, in no particular order."""
    catalog = load_catalog()
    with JobRunner(jobs) as runner:
        for candidate in candidates:
            analyser = ANALYSERS.get(candidate.language)
            if analyser is None:
                continue
            try:
                source = read_source(candidate.path, candidate.language)
            except UnreadableFile as error:
                finding = unreadable_finding(str(candidate.path), str(error), catalog)
                yield FileResult(str(candidate.path), (finding,), error=str(error))
                continue
            if analyser.load(analyser.candidate)(source.text):
                yield from runner.submit((source, candidate.language, settings))
            else:
                yield FileResult(source.path)
        yield from runner.results()


class JobRunner:
    """Parses files in this process, or in worker processes once there are enough of them.

    Files are handed to the workers one at a time as the prefilter finds them, so parsing starts
    while the rest of the tree is still being read, and a worker that drew a large file does not
    hold up a batch of small ones.
    """

    def __init__(self, jobs: int | None) -> None:
        self.workers = jobs if jobs is not None else (os.cpu_count() or 1)
        self.waiting: list[tuple[SourceFile, str, Settings]] = []
        self.pool: ProcessPoolExecutor | None = None
        self.futures: list[Future[FileResult]] = []

    def __enter__(self) -> JobRunner:
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self.pool is not None:
            self.pool.shutdown(cancel_futures=True)

    def submit(self, job: tuple[SourceFile, str, Settings]) -> Iterator[FileResult]:
        if self.workers <= 1:
            yield _lint_job(job)
        elif self.pool is not None:
            self.futures.append(self.pool.submit(_lint_job, job))
        else:
            self.waiting.append(job)
            if len(self.waiting) >= PARALLEL_THRESHOLD:
                self.pool = _start_pool(self.workers)
                self.futures = [self.pool.submit(_lint_job, waiting) for waiting in self.waiting]
                self.waiting = []

    def results(self) -> Iterator[FileResult]:
        """What is still to come: the few files too few for workers, then the workers' results."""
        yield from map(_lint_job, self.waiting)
        self.waiting = []
        if self.futures:
            from concurrent.futures import as_completed

            for future in as_completed(self.futures):
                yield future.result()


def _start_pool(workers: int) -> ProcessPoolExecutor:
    # Imported here: a run that parses a handful of files never needs them.
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    context = multiprocessing.get_context("fork" if os.name == "posix" else "spawn")
    return ProcessPoolExecutor(max_workers=workers, mp_context=context)

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
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from portlint.catalog import Catalog, load_catalog
from portlint.config import Settings
from portlint.discover import Candidate, matches_glob
from portlint.fix import MAX_ROUNDS, FixPolicy, apply_fixes
from portlint.model import FileResult, Finding, SourceFile, Span
from portlint.suppress import (
    UNUSED_SUPPRESSION,
    check_suppressions,
    may_hold_suppressions,
    unused_suppressions,
)

if TYPE_CHECKING:
    from concurrent.futures import Future, ProcessPoolExecutor

#: Below this many files to parse, worker processes cost more than they save.
PARALLEL_THRESHOLD = 12
BINARY_SNIFF = 8192
#: Findings about the input itself: with them present, no suppression can be judged unused.
INPUT_PROBLEMS = ("PRT001", "PRT002")
PYTHON_SUFFIXES = (".py", ".pyi")


@dataclass(frozen=True)
class Analyser:
    """How to find out whether a file may hold findings, and how to analyse it."""

    module: str
    candidate: str
    analyse: str
    #: ``analyse`` takes the run's settings as a third argument (for settings-dependent fixes).
    takes_settings: bool = False
    #: ``after_fix(original, fixed) -> text``: tidy-up after fixes (unused imports), and
    #: ``check_fixed(text) -> str | None``: an error message if fixed text no longer parses.
    after_fix: str | None = None
    check_fixed: str | None = None
    #: ``apply_fixes(text, findings, policy, settings) -> (text, applied, problem)``: the
    #: analyser applies its fixes itself, in one pass (Python: libcst transforms), instead of
    #: text edits in rounds.
    apply_fixes: str | None = None

    def load(self, attribute: str) -> Callable:
        """A function of the analyser's module, or ``module:function`` elsewhere."""
        module, _, name = attribute.rpartition(":")
        return getattr(importlib.import_module(module or self.module), name)


#: language -> analyser. The prefilter modules import no parser.
ANALYSERS: dict[str, Analyser] = {
    "python": Analyser(
        "portlint.python.analyser",
        "portlint.python.prefilter:is_candidate",
        "analyse_python",
        takes_settings=True,
        apply_fixes="portlint.python.transform:fix_python",
    ),
    # Build and deployment files (portlint.deploy); one prefilter for all of them.
    "python-setup": Analyser(
        "portlint.deploy.analysers",
        "is_setup_py_candidate",
        "analyse_setup_py",
        takes_settings=True,
        after_fix="portlint.python.tidy:tidy_after_fix",
        check_fixed="portlint.python.tidy:syntax_error",
    ),
    "dockerfile": Analyser("portlint.deploy.analysers", "is_candidate", "analyse_dockerfile"),
    "yaml": Analyser("portlint.deploy.analysers", "is_candidate", "analyse_yaml"),
    "shell": Analyser("portlint.deploy.analysers", "is_candidate", "analyse_shell"),
    "requirements": Analyser("portlint.deploy.analysers", "is_candidate", "analyse_requirements"),
    "pyproject": Analyser("portlint.deploy.analysers", "is_candidate", "analyse_pyproject"),
    "setup-cfg": Analyser("portlint.deploy.analysers", "is_candidate", "analyse_setup_cfg"),
    "cmake": Analyser("portlint.deploy.analysers", "is_candidate", "analyse_cmake"),
    "cxx": Analyser("portlint.cxx.analyser", "is_candidate", "analyse_cxx"),
}
#: Languages whose files declare their encoding as Python source does (PEP 263).
PYTHON_LANGUAGES = frozenset({"python", "python-setup"})


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
    if language in PYTHON_LANGUAGES:
        try:
            encoding, _ = tokenize.detect_encoding(io.BytesIO(raw).readline)
        except SyntaxError as error:
            if "unknown encoding" in str(error):
                raise UnreadableFile(f"bad encoding declaration: {error}") from None
            # No usable declaration and not UTF-8: let the decode below say where it fails.
    # C and C++ compilers take bytes: a stray Latin-1 byte in a comment is common and harmless.
    # Such bytes decode to lone surrogates (one character column each) and encode back unchanged.
    errors = "surrogateescape" if language == "cxx" else "strict"
    try:
        text = raw.decode(encoding, errors)
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
    return catalog.rules["PRT002"].finding(path, Span(1, 0, 1, 0), reason)


def analyse_source(
    source: SourceFile, language: str, catalog: Catalog, settings: Settings
) -> list[Finding]:
    analyser = ANALYSERS[language]
    analyse = analyser.load(analyser.analyse)
    if analyser.takes_settings:
        return analyse(source, catalog, settings)
    return analyse(source, catalog)


def select_findings(
    findings: Iterable[Finding], source: SourceFile, settings: Settings
) -> tuple[Finding, ...]:
    """Apply rule selection, per-file ignores, suppression comments and the target filter, and
    report the suppression comments that matched nothing."""
    ignored = tuple(
        code
        for pattern, codes in settings.per_file_ignores.items()
        if matches_glob(_config_relative(source.path, settings), pattern)
        for code in codes
    )
    selected = [
        finding
        for finding in findings
        if settings.is_enabled(finding.code)
        and not any(finding.code.startswith(code) or code == "ALL" for code in ignored)
    ]
    # Suppressions are matched before the target filter: a comment that silences a finding
    # for a target this run does not ask about is still in use.
    check = check_suppressions(selected, source.text)
    kept = [n for n in (f.for_targets(settings.targets) for f in check.kept) if n is not None]
    unused = unused_suppression_findings(source, check.used, selected, settings)
    kept.extend(unused)
    return tuple(sorted(kept, key=lambda f: (f.span, f.code)))


def unused_suppression_findings(
    source: SourceFile, used: set[tuple[int, str]], selected: list[Finding], settings: Settings
) -> list[Finding]:
    if not settings.is_enabled(UNUSED_SUPPRESSION) or not may_hold_suppressions(source.text):
        return []
    if any(f.code in INPUT_PROBLEMS for f in selected):
        return []
    catalog = load_catalog()
    rule = catalog.rules[UNUSED_SUPPRESSION]

    def enabled(prefix: str) -> bool:
        return any(settings.is_enabled(code) for code in catalog.rules if code.startswith(prefix))

    python = Path(source.path).suffix.lower() in PYTHON_SUFFIXES
    found = []
    for suppression, codes in unused_suppressions(source.text, used, enabled, python):
        what = ", ".join(codes) if all(codes) else "it"
        span = Span(suppression.line, suppression.column, suppression.line, suppression.end_column)
        message = f"unused suppression `{suppression.text}`: {what} matches no finding on this line"
        found.append(rule.finding(source.path, span, message, suppression.text))
    return found


def _config_relative(path: str, settings: Settings) -> str:
    try:
        return Path(path).absolute().relative_to(settings.root.absolute()).as_posix()
    except ValueError:
        return Path(path).as_posix()


def lint_source(
    source: SourceFile, language: str, settings: Settings, fixing: FixPolicy | None = None
) -> FileResult:
    catalog = load_catalog()
    findings = select_findings(
        analyse_source(source, language, catalog, settings), source, settings
    )
    if fixing is None:
        return FileResult(source.path, findings)
    return fix_source(source, language, settings, fixing, findings)


def fix_source(
    source: SourceFile,
    language: str,
    settings: Settings,
    fixing: FixPolicy,
    findings: tuple[Finding, ...],
) -> FileResult:
    """Apply fixes (in one pass, or in rounds of text edits); the result holds what remains."""
    catalog = load_catalog()
    analyser = ANALYSERS[language]
    if analyser.apply_fixes:
        apply = analyser.load(analyser.apply_fixes)
        text, applied, problem = apply(source.text, findings, fixing, settings)
        current = source
    else:
        current, applied, problem = source, [], None
        for _ in range(MAX_ROUNDS):
            text, chosen = apply_fixes(current.text, findings, fixing)
            if not chosen:
                break
            applied.extend(chosen)
            current = replace(current, text=text)
            findings = select_findings(
                analyse_source(current, language, catalog, settings), current, settings
            )
        text = current.text
        if applied and analyser.after_fix:
            text = analyser.load(analyser.after_fix)(source.text, text)
        if applied and analyser.check_fixed:
            problem = analyser.load(analyser.check_fixed)(text)
    if not applied:
        return FileResult(source.path, findings)
    if problem is not None:
        # A fix must never break a file: keep the original and say so.
        message = f"internal error: fixes would break the file ({problem}); file left unchanged"
        original = select_findings(
            analyse_source(source, language, catalog, settings), source, settings
        )
        return FileResult(source.path, original, error=message)
    if text != current.text:
        current = replace(current, text=text)
        findings = select_findings(
            analyse_source(current, language, catalog, settings), current, settings
        )
    return FileResult(
        source.path, findings, fixed_text=text, fixes_applied=tuple(applied), source=source
    )


def _lint_job(job: tuple[SourceFile, str, Settings, FixPolicy | None]) -> FileResult:
    try:
        return lint_source(*job)
    except Exception as error:  # a bug in portlint: report it for this file, go on with the rest
        message = f"internal error: {type(error).__name__}: {error} (please report this)"
        return FileResult(job[0].path, (), error=message, internal_error=True)


def lint_paths(
    candidates: Iterable[Candidate],
    settings: Settings,
    jobs: int | None = None,
    fixing: FixPolicy | None = None,
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
                yield from runner.submit((source, candidate.language, settings, fixing))
            else:
                # No rule can fire, so every portlint suppression in the file is unused; finding
                # them needs the text only, no parser.
                yield FileResult(source.path, select_findings((), source, settings))
        yield from runner.results()


class JobRunner:
    """Parses files in this process, or in worker processes once there are enough of them.

    Files are handed to the workers one at a time as the prefilter finds them, so parsing starts
    while the rest of the tree is still being read, and a worker that drew a large file does not
    hold up a batch of small ones.
    """

    def __init__(self, jobs: int | None) -> None:
        self.workers = jobs if jobs is not None else (os.cpu_count() or 1)
        self.waiting: list[tuple[SourceFile, str, Settings, FixPolicy | None]] = []
        self.pool: ProcessPoolExecutor | None = None
        self.futures: list[Future[FileResult]] = []

    def __enter__(self) -> JobRunner:
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self.pool is not None:
            self.pool.shutdown(cancel_futures=True)

    def submit(
        self, job: tuple[SourceFile, str, Settings, FixPolicy | None]
    ) -> Iterator[FileResult]:
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

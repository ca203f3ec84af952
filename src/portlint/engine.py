"""File in, findings out — the same for every output format, the CLI, pre-commit and CI.

``lint_paths`` answers from the cache what it can; the other files are read and given a cheap
text test, and only files that could hold a finding are parsed, in worker processes when there
are enough files.
Analysers are imported on first use, so a run that parses nothing imports no parser.
"""

from __future__ import annotations

import gc
import importlib
import io
import os
import time
import tokenize
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from stat import S_ISBLK, S_ISCHR, S_ISDIR, S_ISFIFO, S_ISREG, S_ISSOCK
from typing import TYPE_CHECKING, NamedTuple

from portlint.catalog import Catalog, load_catalog
from portlint.config import Settings
from portlint.discover import Candidate, matches_glob
from portlint.fix import MAX_ROUNDS, FixPolicy, apply_fixes
from portlint.languages import CXX, is_python_path
from portlint.model import TARGETS, FileResult, Finding, SourceFile, Span
from portlint.sink import FindingList

if TYPE_CHECKING:
    from concurrent.futures import Future, ProcessPoolExecutor

    from portlint.cache import Cache

#: Below this many files left to read, worker processes cost more than they save.
PARALLEL_THRESHOLD = 24
#: How long a run works in this process before it starts workers for the rest.
INLINE_SECONDS = 0.15
#: From this many files on, workers start at once: the run is long enough to repay them, and
#: the time spent inline would run on one CPU only (about 60 ms of a 1 s run on 2,912 files).
AT_ONCE = 512
#: Files per job sent to a worker, at most (small files cost less than sending them one by one:
#: on the transformers tree, 48 instead of 16 saves 3% of the CPU time, spent sending batches
#: and waking the threads that do). Batches shrink towards the end of a run, down to one file
#: (``_batches``), so that no worker is left with a batch of large files while the others have
#: nothing left to do.
BATCH_SIZE = 48
#: Batches per worker that a run's files are cut into, at least, before batches shrink.
BATCHES_PER_WORKER = 8
#: Files sent but not yet answered, per worker: enough to keep workers busy while the oldest
#: batch (whose results are given back first) finishes a large file (at 64, the others ran out
#: of work for 0.1 s while one linted transformers' ``modeling_utils.py``), few enough that the
#: results in flight stay bounded however large the tree.
IN_FLIGHT_PER_WORKER = 256
BINARY_SNIFF = 8192
#: Findings about the input itself: with them present, no suppression can be judged unused.
INPUT_PROBLEMS = ("PRT001", "PRT002")


class Analyser(NamedTuple):
    """How to find out whether a file may hold findings, and how to analyse it."""

    module: str
    candidate: str
    #: ``analyse(source, catalog, settings, sink)`` emits the file's findings into the sink
    #: (``portlint.sink``).
    analyse: str
    #: ``after_fix(original, fixed) -> text``: tidy-up after fixes (unused imports), and
    #: ``check_fixed(text) -> str | None``: an error message if fixed text no longer parses.
    after_fix: str | None = None
    check_fixed: str | None = None
    #: ``apply_fixes(text, findings, policy, settings) -> (text, applied, problem)``: the
    #: analyser applies its fixes itself, in one pass (Python: libcst transforms), instead of
    #: text edits in rounds.
    apply_fixes: str | None = None
    #: ``in_parts(source, settings, catalog) -> FindingParts | None``: check mode's selected
    #: findings of a file longer than ``part_threshold`` characters, analysed a part at a time so
    #: that memory follows the part (None: analyse it whole after all).
    in_parts: str | None = None
    part_threshold: int = 0
    #: ``path_candidate(path) -> bool``: a file to analyse whatever its text holds (a backend
    #: package's ``__init__.py``, which carries the package's summary).
    path_candidate: str | None = None

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
        apply_fixes="portlint.python.transform:fix_python",
        in_parts="portlint.python.parts:lint_in_parts",
        part_threshold=100_000,  # and the function decides: parts.WHOLE_UP_TO
        path_candidate="portlint.python.backend_packages:is_package_init",
    ),
    # Build and deployment files (portlint.deploy); one prefilter for all of them.
    "python-setup": Analyser(
        "portlint.deploy.analysers",
        "is_setup_py_candidate",
        "analyse_setup_py",
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
    "cxx": Analyser(
        "portlint.cxx.analyser",
        "is_candidate",
        "analyse_cxx",
        in_parts="portlint.cxx.parts:lint_in_parts",
        part_threshold=1_000_000,
    ),
}
#: Languages whose files declare their encoding as Python source does (PEP 263).
PYTHON_LANGUAGES = frozenset({"python", "python-setup"})


class UnreadableFile(Exception):
    """The file cannot be read or decoded; the message is one line for the user."""


class NotRegularFile(Exception):
    """A FIFO, socket or device: never opened (a FIFO would block the run); skipped."""


def read_source(path: Path, language: str, max_size: int | None = None) -> SourceFile:
    """The file's text, decoded, with the digest that ``--fix`` and ``--add-noqa`` compare before
    writing. Raises ``NotRegularFile`` before opening anything that is not a regular file, and
    ``UnreadableFile`` (one line) when it cannot be linted: unreadable, larger than ``max_size``
    bytes, binary, UTF-16, or not in its declared encoding."""
    raw, _ = read_bytes(path, max_size)
    return decode_source(path, raw, language, digest=True)


def read_bytes(path: Path | str, max_size: int | None = None) -> tuple[bytes, os.stat_result]:
    # os functions on the path string: pathlib's own costs as much as reading a small file.
    try:
        stat = os.stat(path)
        if not S_ISREG(stat.st_mode):
            raise NotRegularFile(f"not a regular file ({_file_kind(stat.st_mode)}); skipped")
        if max_size is not None and stat.st_size > max_size:
            raise UnreadableFile(
                f"file too large ({stat.st_size:,} bytes, more than max-file-size "
                f"{max_size:,}); not analysed"
            )
        with open(path, "rb") as stream:
            raw = stream.read()
    except OSError as error:
        raise UnreadableFile(f"cannot read: {error.strerror or error}") from None
    return raw, stat


def decode_source(path: Path | str, raw: bytes, language: str, digest: bool = False) -> SourceFile:
    """``digest``: keep a digest of ``raw`` (only a run that writes files needs one)."""
    if raw.startswith(UTF16_BOMS) or _looks_like_utf16(raw[:BINARY_SNIFF]):
        raise UnreadableFile("UTF-16 is not supported; save the file as UTF-8")
    if b"\0" in raw[:BINARY_SNIFF]:
        raise UnreadableFile("binary file (contains NUL bytes)")
    bom = raw.startswith(b"\xef\xbb\xbf")
    encoding = "utf-8"
    if language in PYTHON_LANGUAGES and _may_declare_encoding(raw):
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
        digest=_content_digest(raw) if digest else "",
    )


def _may_declare_encoding(raw: bytes) -> bool:
    """Could the first two lines hold a ``coding`` declaration (PEP 263)? Without one,
    ``tokenize.detect_encoding`` gives UTF-8, and most files need not ask it."""
    end = raw.find(b"\n")
    end = raw.find(b"\n", end + 1) if end >= 0 else -1
    return b"coding" in (raw if end < 0 else raw[:end])


#: UTF-32 and UTF-16 byte order marks (UTF-32 LE starts with the UTF-16 LE one).
UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff", b"\x00\x00\xfe\xff")


def _looks_like_utf16(head: bytes) -> bool:
    """UTF-16 without a BOM: mostly ASCII text with a NUL in every other byte."""
    if len(head) < 4 or b"\0" not in head:
        return False
    even, odd = head[0::2], head[1::2]
    return any(
        half.count(0) >= 0.9 * len(half) and other.count(0) == 0
        for half, other in ((even, odd), (odd, even))
    )


def _file_kind(mode: int) -> str:
    kinds = (
        (S_ISFIFO, "a named pipe"),
        (S_ISSOCK, "a socket"),
        (S_ISCHR, "a character device"),
        (S_ISBLK, "a block device"),
        (S_ISDIR, "a folder"),
    )
    return next((name for test, name in kinds if test(mode)), "a special file")


def _content_digest(raw: bytes) -> str:
    from portlint.writer import content_digest  # hashlib: only runs that write need it

    return content_digest(raw)


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
    """What the file's analyser emits, in the order it emits them: the engine's sink for the
    file, which selection, suppressions, sorting, the cache and fix selection then consume."""
    analyser = ANALYSERS[language]
    sink = FindingList()
    analyser.load(analyser.analyse)(source, catalog, settings, sink)
    if language in PYTHON_LANGUAGES or not sink.findings:
        return sink.findings
    from portlint.vendor_folders import apply_scope  # Python modules read their folders themselves

    return apply_scope(source.path, sink.findings, catalog, by_name=language != "cxx")


def select_findings(
    findings: Iterable[Finding], source: SourceFile, settings: Settings
) -> tuple[Finding, ...]:
    """Apply rule selection, per-file ignores, suppression comments and the target filter, and
    report the suppression comments that matched nothing."""
    ignored = tuple(
        code
        for pattern, codes in settings.per_file_ignores
        if matches_glob(_config_relative(source.path, settings), pattern)
        for code in codes
    )
    selected = [
        finding
        for finding in findings
        if settings.is_enabled(finding.code)
        and not any(finding.code.startswith(code) or code == "ALL" for code in ignored)
    ]
    # Here, not at the top: a run the cache answers for never reads a suppression.
    from portlint.suppress import check_suppressions

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
    from portlint.suppress import UNUSED_SUPPRESSION, may_hold_suppressions, unused_suppressions

    if not settings.is_enabled(UNUSED_SUPPRESSION) or not may_hold_suppressions(source.text):
        return []
    if any(f.code in INPUT_PROBLEMS for f in selected):
        return []
    catalog = load_catalog()
    rule = catalog.rules[UNUSED_SUPPRESSION]

    def enabled(prefix: str) -> bool:
        return any(settings.is_enabled(code) for code in catalog.rules if code.startswith(prefix))

    python = is_python_path(source.path)
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
    analyser = ANALYSERS[language]
    if (
        fixing is None
        and analyser.in_parts
        and len(source.text) > analyser.part_threshold
        and not _in_vendor_folder(source.path, language)
    ):
        parts = analyser.load(analyser.in_parts)(source, settings, catalog)
        if parts is not None:
            return FileResult(source.path, parts)
    findings = select_findings(
        analyse_source(source, language, catalog, settings), source, settings
    )
    if fixing is None:
        return FileResult(source.path, findings)
    return fix_source(source, language, settings, fixing, findings)


def _in_vendor_folder(path: str, language: str) -> bool:
    """A large C++ file whose folders decide who runs it (``vendor_folders``) is analysed whole,
    as a smaller one is: its findings are folded or narrowed as a file's, not a part's."""
    if language in PYTHON_LANGUAGES:
        return False
    from portlint.vendor_folders import NO_SCOPE, folder_scope

    return folder_scope(path) != NO_SCOPE


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
    before = findings
    if analyser.apply_fixes:
        apply = analyser.load(analyser.apply_fixes)
        text, applied, problem = apply(source.text, findings, fixing, settings)
        current = source
        # A fix can make another one possible (``"cuda" if torch.cuda.is_available() else
        # "cpu"``: the check is rewritten once the string is): fix the new text again, as the
        # text-edit analysers do, so that a second ``--fix`` has nothing left to do.
        for _ in range(MAX_ROUNDS - 1):
            if problem is not None or not applied:
                break
            fixed = source._replace(text=text)
            again = select_findings(
                analyse_source(fixed, language, catalog, settings), fixed, settings
            )
            if not any(fixing.allows(finding.fix) for finding in again):
                break  # nothing new to fix: no second pass over the text
            more_text, more, more_problem = apply(text, again, fixing, settings)
            if more_problem is not None or not more or more_text == text:
                break  # a round that cannot be written leaves the rounds before it
            text, applied = more_text, [*applied, *more]
    else:
        current, applied, problem = source, [], None
        for _ in range(MAX_ROUNDS):
            text, chosen = apply_fixes(current.text, findings, fixing)
            if not chosen:
                break
            applied.extend(chosen)
            current = current._replace(text=text)
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
        current = current._replace(text=text)
        findings = select_findings(
            analyse_source(current, language, catalog, settings), current, settings
        )
    return FileResult(
        source.path,
        findings,
        fixed_text=text,
        fixes_applied=tuple(applied),
        source=source,
        findings_before_fix=before,
    )


def _lint_job(job: tuple[SourceFile, str, Settings, FixPolicy | None]) -> FileResult:
    # Each file's syntax tree is garbage once the file is done, and freed by reference counting:
    # collector passes during a parse only rescan the growing tree (a third of the parse time).
    collecting = gc.isenabled()
    gc.disable()
    try:
        return lint_source(*job)
    except Exception as error:  # a bug in portlint: report it for this file, go on with the rest
        message = f"internal error: {type(error).__name__}: {error} (please report this)"
        return FileResult(job[0].path, (), error=message, internal_error=True)
    finally:
        if collecting:
            gc.enable()


class Job(NamedTuple):
    """One file to read, prefilter and lint, in this process or a worker."""

    path: str
    language: str
    settings: Settings
    fixing: FixPolicy | None
    #: Cache in use: also return the file's stamp (time, size, content hash).
    stamp: bool = False
    #: The content hash the cache holds for this file: equal content needs no analysis.
    known_hash: str | None = None


#: What a job gives back: its result (None when the content matched ``known_hash``) and the
#: stamp under which the result may be cached (None when it must not be).
Outcome = tuple[FileResult | None, list | None]


def run_job(job: Job) -> Outcome:
    """Read, prefilter and lint one file."""
    path = job.path
    try:
        raw, stat = read_bytes(path, job.settings.max_file_size)
        stamp = None
        if job.stamp:
            from portlint.cache import content_hash

            stamp = [stat.st_mtime_ns, stat.st_size, content_hash(raw)]
            if stamp[2] == job.known_hash:
                return None, stamp
        source = decode_source(path, raw, job.language, digest=job.fixing is not None)
        del raw  # the text is what is analysed: a large file is not held twice
    except NotRegularFile as error:
        return FileResult(job.path, (), error=str(error)), None
    except UnreadableFile as error:
        finding = unreadable_finding(job.path, str(error), load_catalog())
        return FileResult(job.path, (finding,), error=str(error)), None
    analyser = ANALYSERS[job.language]
    if analyser.load(analyser.candidate)(source.text) or (
        analyser.path_candidate is not None and analyser.load(analyser.path_candidate)(path)
    ):
        result = _lint_job((source, job.language, job.settings, job.fixing))
    else:
        # No rule can fire, so every portlint suppression in the file is unused; finding them
        # needs the text only, no parser.
        result = FileResult(source.path, select_findings((), source, job.settings))
    # A file analysed in parts is not cached: its findings may be many more than a cache entry
    # should hold, and they are compressed here (``sink.FindingParts``).
    cacheable = result.fixed_text is None and result.error is None
    cacheable = cacheable and isinstance(result.findings, tuple)
    return result, stamp if cacheable else None


def _run_batch(jobs: list[Job]) -> list[Outcome]:
    return [run_job(job) for job in jobs]


def lint_paths(
    candidates: Iterable[Candidate],
    settings: Settings,
    jobs: int | None = None,
    fixing: FixPolicy | None = None,
    cache: Cache | None = None,
    early: EarlyWorkers | None = None,
    notice: Callable[[str], None] | None = None,
) -> Iterator[FileResult]:
    """Results for every candidate file, clean files too, in the order of their paths (the
    order every output format lists findings in), so that a caller can write each file's
    findings when it is done and keep nothing. Each file uses its own settings
    (``candidate.settings``) when it has them, and its own cache entry.

    The files the cache answers for are not read. The rest are read, prefiltered and linted in
    this process when there are few of them, else by worker processes that take paths in
    batches (a bounded number in flight), so this process only walks, looks up and prints.
    ``early``: workers started during the walk; they are used or shut down. ``notice`` is
    given one line for each CUDA-API layer of the project found among the files.
    """
    try:
        yield from _lint_paths(candidates, settings, jobs, fixing, cache, early, notice)
    finally:
        if early is not None:
            early.close()


def _lint_paths(
    candidates: Iterable[Candidate],
    settings: Settings,
    jobs: int | None,
    fixing: FixPolicy | None,
    cache: Cache | None,
    early: EarlyWorkers | None,
    notice: Callable[[str], None] | None = None,
) -> Iterator[FileResult]:
    # Each entry: a clean file's result from the cache, a file with findings in the cache, or a
    # job to run.
    entries: list[FileResult | Cached | Job] = []
    ordered = sorted(candidates, key=lambda candidate: candidate.path)
    layered = _with_layers(ordered, settings, cache, notice)
    for candidate in ordered:
        if candidate.language not in ANALYSERS:
            continue
        path = candidate.path
        own = candidate.settings or settings  # its closest configuration, else the run's
        own = layered(candidate, own)  # and the project's CUDA-API layers it loads
        policy = fixing and fixing._replace(targets=own.targets)
        known = None
        if cache is not None:
            stored, known = cache.stored(path, own)  # decoded when its turn comes (``_cached``)
            # Fixing needs the analysis of a file with findings; a clean file needs nothing.
            if stored is not None and not stored:
                entries.append(FileResult(path, ()))
                continue
            if stored is not None and fixing is None:
                entries.append(Cached(Job(path, candidate.language, own, policy, True)))
                continue
        if fixing is not None:
            known = None
        entries.append(Job(path, candidate.language, own, policy, cache is not None, known))
    done = run_jobs([entry for entry in entries if isinstance(entry, Job)], jobs, early)
    from portlint.vendor_folders import FolderSummaries

    summaries = FolderSummaries()  # one summary per backend folder of C++ or build files
    for entry in entries:
        if isinstance(entry, FileResult):
            yield entry
            continue
        if isinstance(entry, Cached):
            yield summaries.once(_cached(entry.job, cache))
            continue
        job, (result, stamp) = next(done)
        if result is None:
            assert cache is not None and stamp is not None
            result = FileResult(job.path, cache.hit_by_content(job.path, job.settings, stamp))
        elif stamp is not None and cache is not None:
            cache.store(job.path, job.settings, stamp, result.findings)
        yield summaries.once(result)


def _with_layers(
    ordered: list[Candidate],
    settings: Settings,
    cache: Cache | None,
    notice: Callable[[str], None] | None = None,
) -> Callable[[Candidate, Settings], Settings]:
    """The settings of each file, completed with the run's facts about it: those of a Python
    file (``_python_layers``), and for a C++/CUDA file whether PyTorch's build compiles it
    (``cxx.includes``)."""
    scripts = _setup_scripts(ordered, settings)
    python = _python_layers(ordered, settings, cache, scripts, notice)
    built = _torch_built(ordered, settings, cache, scripts)
    if not built:
        return python
    marked: dict[int, tuple[Settings, Settings]] = {}

    def layered(candidate: Candidate, own: Settings) -> Settings:
        own = python(candidate, own)
        if candidate.language != CXX or os.path.normpath(candidate.path) not in built:
            return own
        done = marked.get(id(own))
        if done is None or done[0] is not own:
            done = marked[id(own)] = (own, own._replace(torch_built=True))
        return done[1]

    return layered


def _setup_scripts(ordered: list[Candidate], settings: Settings) -> dict[str, str]:
    """The text of each of the run's ``setup.py`` scripts, by path, read once for the facts that
    the Python and the C++/CUDA files take from them."""
    from portlint.python.layers import read_file

    scripts: dict[str, str] = {}
    for candidate in ordered:
        if candidate.language == "python-setup":
            raw = read_file(candidate.path, settings.max_file_size)
            scripts[candidate.path] = raw.decode("utf-8", "replace") if raw is not None else ""
    return scripts


def _torch_built(
    ordered: list[Candidate], settings: Settings, cache: Cache | None, scripts: dict[str, str]
) -> frozenset[str]:
    """The run's C++/CUDA files (normalised paths) that PyTorch's extension build compiles, as
    the run's setup.py scripts and the project's own includes show (``cxx.includes``)."""
    paths = [candidate.path for candidate in ordered if candidate.language == CXX]
    if not paths:
        return frozenset()
    from portlint.cxx import includes
    from portlint.python.layers import read_file

    sources: list[str] = []
    for path, text in scripts.items():
        sources.extend(includes.extension_sources(text, path))

    extension = load_catalog().table("cxx").get("torch_extension", {})
    prefixes = extension.get("include_prefixes", ())

    def read(path: str) -> list | None:
        raw = read_file(path, settings.max_file_size)
        return None if raw is None else includes.file_facts(raw, prefixes)

    def facts_of(path: str) -> list | None:
        return cache.facts(path, read, includes.valid_facts) if cache else read(path)

    return includes.torch_built(paths, facts_of, sources)


def _python_layers(
    ordered: list[Candidate],
    settings: Settings,
    cache: Cache | None,
    scripts: dict[str, str],
    notice: Callable[[str], None] | None = None,
) -> Callable[[Candidate, Settings], Settings]:
    """The settings of each Python file, completed with the CUDA-API layers that the file reaches
    among the run's Python files (``python.layers``), the targets that cannot load it and the
    CUDA-only packages that are its own project (``python.package_loads``): one settings object
    for each configuration, set of layers, of targets and of packages, so that the cache and the
    workers see as few distinct ones as before."""
    from portlint.python import layers as found
    from portlint.python import package_loads as loads
    from portlint.python.extension_tests import cuda_extension_names
    from portlint.python.import_refusals import catalogue_tests

    paths = [candidate.path for candidate in ordered if candidate.language == "python"]
    if not paths:
        return lambda candidate, own: own
    finders: list[found.Finder] = []

    def read(path: str) -> list | None:
        raw = found.read_file(path, settings.max_file_size)
        if raw is None:
            return None
        if b"torch" not in raw:
            return found.imports_only(raw)  # no layer: the catalogue is not needed
        if not finders:
            catalog = load_catalog()
            tools = catalog.table("device").get("backend", {}).get("migration", {})
            finders.append(found.Finder(tools, TARGETS, catalogue_tests(catalog, TARGETS)))
        return finders[0].file_facts(raw)

    def facts_of(path: str) -> list | None:
        return cache.facts(path, read, found.valid_facts) if cache else read(path)

    facts = {path: facts_of(path) for path in paths}
    known = {path: fact for path, fact in facts.items() if fact is not None}
    layers = found.layers_of(known, TARGETS)
    # Python runs the __init__.py of every package above a module before the module, whether or
    # not the run names it: what those load counts for the run's modules
    named = {os.path.abspath(path) for path in paths}
    inits = [p for p in loads.package_inits(paths) if os.path.abspath(p) not in named]
    loaded = {**known, **{p: f for p in inits if (f := facts_of(p)) is not None}}
    imports = {path: fact[4] for path, fact in loaded.items()}
    choices = {path: fact[5] for path, fact in loaded.items() if fact[5]}
    unloadable: dict[str, loads.Unloadable] = {}
    refusers: list[str] = []  # the modules that refuse some targets when they load
    homes: dict[str, frozenset[str]] = {}
    chosen = [arm for chains in choices.values() for chain in chains for arm in chain]
    if loads.imports_third_party([*imports.values(), *chosen]):  # else nothing is absent
        catalog = load_catalog()
        backend = catalog.table("device").get("backend", {})
        absent_on = loads.with_vendor_stacks(
            backend.get("absent_on", {}), backend.get("packages", {}), TARGETS
        )
        # the project's own CUDA extensions: built on ROCm by PyTorch's hipify, nowhere else;
        # those a setup.py builds, and the modules that build one when they load
        elsewhere = [target for target in TARGETS if target != "rocm"]
        for text in scripts.values():
            for module in cuda_extension_names(text):
                absent_on.setdefault(module, elsewhere)
        builders = [path for path, fact in loaded.items() if fact[6]]
        for module in loads.builder_names(builders, loaded) if builders else ():
            absent_on.setdefault(module, elsewhere)
        # the modules whose top level refuses some targets (``import_refusals``): like a
        # builder, the refusal is their own site, and the modules that load them cannot load
        refusing = {
            path: (fact[7], fact[8])
            for path, fact in loaded.items()
            if fact[7] and path not in builders
        }
        for path, (refused, _) in refusing.items():
            for module in loads.builder_names([path], loaded):
                absent_on.setdefault(module, refused)
                refusers.append(module)
        unloadable = loads.unloadable(imports, absent_on, choices, builders, refusing)
        packages = catalog.table("packages").get("package", {})
        homes = loads.package_homes(paths, {name.split(".")[0] for name in packages})
    if not layers and not unloadable and not homes:
        return lambda candidate, own: own
    if notice is not None:
        for layer, reach in layers.items():
            notice(found.describe(layer, reach))
        for line in loads.packages_described(unloadable, refusers):
            notice(line)
    completed: dict[tuple[int, tuple, tuple, tuple], tuple[Settings, Settings]] = {}

    def layered(candidate: Candidate, own: Settings) -> Settings:
        fact = known.get(candidate.path) if candidate.language == "python" else None
        if fact is None:
            return own
        reaching = found.reached(candidate.path, fact, layers)
        absent = unloadable.get(candidate.path)
        absent_targets = absent.targets if absent is not None else ()
        owned = loads.own_packages(candidate.path, homes) if homes else ()
        if not reaching and not absent_targets and not owned:
            return own
        key = (id(own), reaching, absent_targets, owned)
        done = completed.get(key)
        if done is None or done[0] is not own:
            completed_settings = own._replace(
                cuda_layers=reaching, absent_targets=absent_targets, own_packages=owned
            )
            done = completed[key] = (own, completed_settings)
        return done[1]

    return layered


class Cached(NamedTuple):
    """A file with findings that the cache answered for when the run started: its findings are
    looked up again and decoded when its turn comes, so that a warm run does not hold them all."""

    job: Job


def _cached(job: Job, cache: Cache | None) -> FileResult:
    """The result of a ``Cached`` file."""
    assert cache is not None
    findings, _ = cache.lookup(job.path, job.settings)
    if findings is not None:
        return FileResult(job.path, findings)
    outcome, stamp = run_job(job._replace(known_hash=None))  # it changed meanwhile
    assert outcome is not None
    if stamp is not None:
        cache.store(job.path, job.settings, stamp, outcome.findings)
    return outcome


def worker_count(jobs: int | None) -> int:
    """The worker processes a run may use: ``--jobs``, else one per CPU."""
    return jobs if jobs is not None else (os.cpu_count() or 1)


def run_jobs(
    pending: list[Job], jobs: int | None, early: EarlyWorkers | None = None
) -> Iterator[tuple[Job, Outcome]]:
    """Each job with its outcome, in the order of ``pending``.

    Jobs run in this process first; once that has taken ``INLINE_SECONDS`` and enough jobs are
    left, the rest go to worker processes (starting them costs more than a short run takes).
    A run of ``AT_ONCE`` files or more starts its workers at once.
    """
    workers = worker_count(jobs)
    if workers > 1 and len(pending) >= AT_ONCE:
        yield from _run_in_workers(pending, workers, early)
        return
    started = time.perf_counter()
    index = 0
    while index < len(pending):
        many = workers > 1 and len(pending) - index >= PARALLEL_THRESHOLD
        if many and time.perf_counter() - started > INLINE_SECONDS:
            break
        job = pending[index]
        index += 1
        yield job, run_job(job)
    if index < len(pending):
        yield from _run_in_workers(pending[index:], workers, early)


def _run_in_workers(
    pending: list[Job], workers: int, early: EarlyWorkers | None = None
) -> Iterator[tuple[Job, Outcome]]:
    """Batches go to the workers in order, a bounded number ahead of the one whose outcomes are
    given back next: outcomes come back in the order of ``pending``, and only the batches in
    flight are held. ``early``: workers started during the walk, used if they were."""
    from collections import deque
    from concurrent.futures.process import BrokenProcessPool

    in_flight: deque[tuple[Future[list[Outcome]] | None, list[Job]]] = deque()
    flying = 0  # files in the batches in flight
    if early is not None and early.pool is not None:
        # An analyser not seen when they started is loaded by each worker as it needs it.
        pool = early.pool
        early.pool = None
    else:
        # Loaded once here rather than in every worker: forked workers inherit them.
        _prepare({job.language for job in pending})
        pool = _start_pool(workers)
    try:
        for batch in _batches(pending, workers):
            try:
                in_flight.append((pool.submit(_run_batch, batch), batch))
            except BrokenProcessPool:
                in_flight.append((None, batch))
            flying += len(batch)
            while flying >= workers * IN_FLIGHT_PER_WORKER:
                future, done = in_flight.popleft()
                flying -= len(done)
                yield from _outcomes(future, done)
        while in_flight:
            yield from _outcomes(*in_flight.popleft())
    finally:
        pool.shutdown(cancel_futures=True)


def _batches(pending: list[Job], workers: int) -> Iterator[list[Job]]:
    """``pending`` in order, cut into batches of ``BATCH_SIZE`` files, smaller towards the end:
    each batch at most a ``BATCHES_PER_WORKER``-th of a worker's share of the files left."""
    start = 0
    while start < len(pending):
        left = len(pending) - start
        size = max(1, min(BATCH_SIZE, left // (workers * BATCHES_PER_WORKER)))
        yield pending[start : start + size]
        start += size


def _outcomes(
    future: Future[list[Outcome]] | None, batch: list[Job]
) -> Iterator[tuple[Job, Outcome]]:
    from concurrent.futures.process import BrokenProcessPool

    try:
        outcomes = future.result() if future is not None else None
    except BrokenProcessPool:
        outcomes = None
    if outcomes is None:
        yield from _died(batch)
    else:
        yield from zip(batch, outcomes, strict=True)


def _died(batch: list[Job]) -> Iterator[tuple[Job, Outcome]]:
    """A worker was killed (out of memory?): an error for each file it or the pool held."""
    message = "internal error: a worker process died (out of memory?) (please report this)"
    for job in batch:
        yield job, (FileResult(job.path, (), error=message, internal_error=True), None)


def _start_pool(workers: int, languages: Iterable[str] = ()) -> ProcessPoolExecutor:
    """The worker processes; ``languages``: analysers each worker loads as it starts (with the
    rule catalogue), for workers started before this process has loaded them."""
    # Imported here: a run that parses a handful of files never needs them.
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    context = multiprocessing.get_context("fork" if os.name == "posix" else "spawn")
    if languages:
        return ProcessPoolExecutor(
            max_workers=workers,
            mp_context=context,
            initializer=_prepare,
            initargs=(sorted(languages),),
        )
    return ProcessPoolExecutor(max_workers=workers, mp_context=context)


def _prepare(languages: Iterable[str]) -> None:
    """Load the rule catalogue and the analysers of ``languages``."""
    load_catalog()
    for language in languages:
        importlib.import_module(ANALYSERS[language].module)


class EarlyWorkers:
    """Worker processes started while the files are still being found, for a run that will
    need them: they load the catalogue and the analysers on the other CPUs meanwhile, instead
    of this process doing it between the walk and the first batch (about 0.1 s, 4% of a cold
    run over the transformers tree on two CPUs, ``benchmarks/README.md``).

    The walk calls ``found`` for each file; from ``AT_ONCE`` files on (a run that starts its
    workers at once, ``run_jobs``), the workers start. ``lint_paths`` takes them over, and
    ``close`` shuts them down if it did not."""

    def __init__(self, jobs: int | None) -> None:
        self.workers = worker_count(jobs)
        self.languages: set[str] = set()
        self.files = 0
        self.pool: ProcessPoolExecutor | None = None

    def found(self, candidate: Candidate) -> None:
        if self.files >= AT_ONCE or self.workers < 2 or candidate.language not in ANALYSERS:
            return
        self.languages.add(candidate.language)
        self.files += 1
        if self.files == AT_ONCE:
            self.pool = _start_pool(self.workers, self.languages)
            self.pool.submit(int)  # the processes start with the first job

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(cancel_futures=True)
            self.pool = None

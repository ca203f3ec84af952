"""The command line: the only module that prints. Exit 0 clean, 1 findings, 2 usage/config error."""

from __future__ import annotations

import argparse
import io
import os
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TextIO

from portlint import __version__
from portlint.catalog import LazyCatalog, load_catalog, rules_dir
from portlint.config import (
    ConfigError,
    Configurations,
    Overrides,
    Settings,
    parse_rocm_version,
    parse_selectors,
    parse_size,
    parse_targets,
)
from portlint.discover import Walker
from portlint.engine import EarlyWorkers, lint_paths
from portlint.fix import FixPolicy
from portlint.gitdiff import MODES
from portlint.model import ALL_TARGETS, FileResult, Finding, SourceFile
from portlint.output import FORMATS, Output, writer
from portlint.output.report import Report, Writer, printable

if TYPE_CHECKING:
    from portlint.cache import Cache

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


class UsageError(Exception):
    pass


class Formatter(argparse.RawDescriptionHelpFormatter):
    """argparse's (descriptions and epilogs kept as written), without its ``import shutil``
    (which loads bz2 and lzma) on every run."""

    def __init__(self, prog: str) -> None:
        try:
            columns = int(os.environ["COLUMNS"])
        except (KeyError, ValueError):
            stream = sys.__stdout__
            try:
                columns = os.get_terminal_size(stream.fileno()).columns if stream else 80
            except (ValueError, OSError):
                columns = 80
        super().__init__(prog, width=max(columns - 2, 20))


class Parser(argparse.ArgumentParser):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **{**kwargs, "formatter_class": Formatter})

    def error(self, message: str) -> NoReturn:  # one line and exit 2, as the rest of portlint
        raise UsageError(message)


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="portlint",
        usage="portlint [check] [options] [PATHS ...]\n       portlint rule [CODE | --all]",
        description="Find CUDA-only code and say, per accelerator, how to port it.",
        epilog="subcommands:\n"
        "  check                 lint PATHS (the default when no subcommand is given)\n"
        "  rule CODE             show a rule's documentation; `portlint rule --all` lists them\n"
        "\nexit status: 0 no findings, 1 findings, 2 usage, configuration or internal error",
    )
    parser.add_argument("--version", action="version", version=f"portlint {__version__}")
    parser.add_argument("paths", nargs="*", type=Path, help="files or folders (default: .)")
    parser.add_argument(
        "--target",
        help="comma-separated targets: rocm,npu,mlu,xpu,mps,cpu or all (default: all), "
        "and arm64 for Arm hosts (only when named)",
    )
    parser.add_argument(
        "--rocm-version",
        metavar="X.Y",
        help="oldest ROCm release to support: HIP names added later are reported as unsupported "
        "(default: the newest release in portlint's HIP table)",
    )
    parser.add_argument("--select", help="rule codes or prefixes to enable (replaces the config)")
    parser.add_argument("--ignore", help="rule codes or prefixes to disable")
    parser.add_argument("--extend-select", help="rule codes or prefixes to enable in addition")
    parser.add_argument(
        "--output-format",
        "--format",
        dest="output_format",
        choices=sorted(FORMATS),
        default="text",
        help="how findings are printed (default: text)",
    )
    parser.add_argument("-o", "--output-file", type=Path, help="write the report to this file")
    parser.add_argument(
        "--statistics",
        action="store_true",
        help="print only how many findings each rule produced (text, or json with "
        "--output-format json)",
    )
    parser.add_argument("--exit-zero", action="store_true", help="exit 0 even with findings")
    parser.add_argument("-q", "--quiet", action="store_true", help="print findings only")
    parser.add_argument("--config", type=Path, help="read settings from this file")
    parser.add_argument("--isolated", action="store_true", help="ignore every configuration file")
    parser.add_argument(
        "--max-file-size",
        metavar="SIZE",
        help='files larger than this get one "too large" finding (default: 10MB)',
    )
    parser.add_argument(
        "--force-exclude",
        action="store_true",
        help="apply excludes to paths given on the command line too",
    )
    parser.add_argument(
        "--no-respect-gitignore", action="store_true", help="lint files that .gitignore excludes"
    )
    parser.add_argument("-j", "--jobs", type=int, help="worker processes (default: CPU count)")
    parser.add_argument(
        "--no-cache", action="store_true", help="read and analyse every file (ignore the cache)"
    )
    parser.add_argument(
        "--cache-dir",
        type=Path,
        metavar="DIR",
        help="where results are cached (default: .portlint_cache in the project root)",
    )
    fixes = parser.add_argument_group("fixes")
    fixes.add_argument("--fix", action="store_true", help="apply safe fixes to the files")
    fixes.add_argument(
        "--unsafe-fixes", action="store_true", help="also apply fixes marked unsafe (with --fix)"
    )
    fixes.add_argument(
        "--diff", action="store_true", help="print the fixes as a unified diff; write nothing"
    )
    fixes.add_argument("--show-fixes", action="store_true", help="list what --fix changed")
    review = parser.add_argument_group("pull requests and legacy code")
    review.add_argument(
        "--diff-base",
        metavar="REF",
        help="report only findings on lines added since the merge base of REF and HEAD",
    )
    review.add_argument(
        "--diff-mode",
        choices=MODES,
        help="with --diff-base: added lines (default), lines near a change, or changed files",
    )
    review.add_argument("--baseline", type=Path, metavar="FILE", help="hide findings in FILE")
    review.add_argument(
        "--update-baseline",
        action="store_true",
        help="write this run's findings to the --baseline FILE and exit 0",
    )
    review.add_argument(
        "--add-noqa",
        action="store_true",
        help="add a suppression comment at every finding and exit 0",
    )
    return parser


def check_review_flags(args: argparse.Namespace) -> bool:
    """Whether any pull-request or baseline flag is given (they need git and more imports)."""
    if args.diff_mode and not args.diff_base:
        raise UsageError("--diff-mode needs --diff-base REF")
    if args.update_baseline and args.baseline is None:
        raise UsageError("--update-baseline needs --baseline FILE")
    return bool(args.diff_base or args.baseline or args.add_noqa)


def run_review(
    args: argparse.Namespace, findings: list[Finding], linted: list[str]
) -> tuple[list[Finding], int | None]:
    """--update-baseline, --baseline, --diff-base, --add-noqa, in that order: the findings left
    to report, and an exit status when the run ends here."""
    from portlint import pipeline

    options = pipeline.ReviewOptions(args.diff_base, args.diff_mode or "added", args.baseline)
    try:
        if args.update_baseline:
            update = pipeline.record(findings, linted, options)
            counts = f"{update.added} new, {update.removed} removed"
            info(f"{args.baseline}: {update.written} entries ({counts})")
            return findings, EXIT_CLEAN
        findings = pipeline.narrow(findings, options)
        if args.add_noqa:
            added = pipeline.insert_noqa(findings)
            for problem in added.problems:
                warn(problem)
            counts = f"{added.files} files ({added.skipped} skipped)"
            info(f"Added {added.added} noqa directives to {counts}.")
            return findings, EXIT_FINDINGS if added.problems else EXIT_CLEAN
    except (pipeline.BaselineError, pipeline.GitError) as error:
        raise UsageError(str(error)) from None
    return findings, None


def build_rule_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="portlint rule", description="Show a rule's documentation.")
    parser.add_argument("code", nargs="?", help="rule code or name, e.g. PRT201")
    parser.add_argument("--all", action="store_true", help="list every rule")
    parser.add_argument(
        "--output-format",
        choices=("text", "json"),
        default="text",
        help="text for people, json for tools (default: text)",
    )
    return parser


def resolve_configurations(args: argparse.Namespace) -> Configurations:
    overrides = Overrides(
        targets=parse_targets(args.target, "--target") if args.target else None,
        select=parse_selectors(args.select, "--select") if args.select else None,
        ignore=parse_selectors(args.ignore, "--ignore") if args.ignore else (),
        extend_select=(
            parse_selectors(args.extend_select, "--extend-select") if args.extend_select else ()
        ),
        max_file_size=(
            parse_size(args.max_file_size, "--max-file-size") if args.max_file_size else None
        ),
        rocm_version=(
            parse_rocm_version(args.rocm_version, "--rocm-version") if args.rocm_version else None
        ),
    )
    return Configurations(config=args.config, isolated=args.isolated, overrides=overrides)


def report_targets(configurations: Configurations) -> tuple[str, ...]:
    """The targets the run's files were checked for, in the usual order."""
    used = {t for settings in configurations.all() for t in settings.targets}
    used.update(configurations.default.targets)
    return tuple(t for t in ALL_TARGETS if t in used)


def run_check(argv: Sequence[str]) -> int:
    args = build_parser().parse_args(argv)
    reviewing = check_review_flags(args)  # a usage error must stop the run before any --fix
    configurations = resolve_configurations(args)
    settings = configurations.default
    paths = args.paths or [Path(".")]
    missing = [str(p) for p in paths if not p.exists()]
    if missing:
        raise UsageError(f"no such file or directory: {', '.join(missing)}")
    catalog = LazyCatalog()  # a clean run's report needs no rule: nothing to parse
    walker = Walker(configurations, respect_gitignore=not args.no_respect_gitignore)
    cache = open_cache(args, settings)
    early = None
    if any(path.is_dir() for path in paths) and (cache is None or cache.is_empty(settings)):
        early = EarlyWorkers(args.jobs)  # a folder that the cache cannot answer for
    candidates = []
    for candidate in walker.walk(paths, force_exclude=args.force_exclude):
        candidates.append(candidate)
        if early is not None:
            early.found(candidate)
    if cache is not None:
        cache.know_listings(walker.listings)
    for candidate in candidates:
        if candidate.language == "unknown":
            warn(f"{candidate.path}: not a file type portlint checks; skipped")
    fixing = None
    if args.fix or args.diff:
        fixing = FixPolicy(unsafe=args.unsafe_fixes, targets=settings.targets)
    # In path order, one file at a time: each file's findings are written as it is done.
    notice = None if args.quiet else info  # the layers that make findings list fewer targets
    results = lint_paths(candidates, settings, args.jobs, fixing, cache, early, notice)
    if show_progress(args):
        from portlint.progress import with_progress

        results = with_progress(results, sum(c.language != "unknown" for c in candidates))
    linted = [c.path for c in candidates if c.language != "unknown"]
    run = RunResults()
    if args.diff:
        for result in results:
            handle_result(result, args, run)
        save_cache(cache)
        if run.fixed:
            plural = "s" if run.fixed != 1 else ""
            sys.stderr.write(f"Would fix {run.fixed} finding{plural}.\n")
        return EXIT_FINDINGS if run.fixed else EXIT_CLEAN
    output_results: Iterable[tuple[Sequence[Finding], Sequence[Finding]]]
    if reviewing:
        # Baselines, diffs against a branch and noqa comments need every finding first.
        findings: list[Finding] = []
        fixed: list[Finding] = []
        for result in results:
            found, applied = handle_result(result, args, run)
            findings.extend(found)
            fixed.extend(applied)
        save_cache(cache)
        findings, status = run_review(args, findings, linted)
        if status is not None:
            return status
        fixes_first: list[tuple[Sequence[Finding], Sequence[Finding]]] = [((), fixed)]
        output_results = [*fixes_first, *((group, ()) for group in _by_file(findings))]
    else:
        output_results = (handle_result(result, args, run) for result in results)
    stream, close = _open_output(args.output_file)
    try:
        report = Report(
            findings=[],
            targets=report_targets(configurations),
            catalog=catalog,
            terminal=stream.isatty() and "NO_COLOR" not in os.environ,
            unsafe_fixes=args.unsafe_fixes,
            show_fixes=args.show_fixes,
            quiet=args.quiet,
        )
        output = Output(report, _format_writer(args, report, stream))
        for found, applied in output_results:
            output.file(found, applied)
        if not reviewing:
            save_cache(cache)
        output.finish(files_checked=len(linted) - run.skipped)
    finally:
        if close:
            stream.close()
    if run.internal_errors:
        return EXIT_ERROR
    if run.not_written:
        return EXIT_FINDINGS  # even with --exit-zero: the run did not do what it was asked
    if output.findings and not args.exit_zero:
        return EXIT_FINDINGS
    return EXIT_CLEAN


def _format_writer(args: argparse.Namespace, report: Report, stream: TextIO) -> Writer:
    if args.statistics:  # the counts only, as ruff prints them
        from portlint.output import statistics

        return statistics.Writer(report, stream, json_format=args.output_format == "json")
    return writer(args.output_format, report, stream)


def _by_file(findings: list[Finding]) -> Iterable[list[Finding]]:
    from itertools import groupby

    ordered = sorted(findings, key=lambda f: (f.path, f.span, f.code))
    return (list(group) for _, group in groupby(ordered, key=lambda f: f.path))


def save_cache(cache: Cache | None) -> None:
    problem = cache.save() if cache is not None else None
    if problem:
        warn(problem)


def open_cache(args: argparse.Namespace, settings: Settings) -> Cache | None:
    if args.no_cache or os.environ.get("PORTLINT_NO_CACHE"):
        return None
    from portlint.cache import Cache, cache_dir

    given = args.cache_dir.absolute() if args.cache_dir else None  # relative to where we are
    return Cache(cache_dir(settings, given), rules_dir())


#: Output formats read by people (the rest are read by programs: no progress bar beside them).
HUMAN_FORMATS = ("text", "concise", "grouped", "full")


def show_progress(args: argparse.Namespace) -> bool:
    """A progress bar on a terminal only: never in CI, in a pipe, with -q or a machine format."""
    return (
        not args.quiet
        and args.output_format in HUMAN_FORMATS
        and not os.environ.get("CI")
        and sys.stderr.isatty()
    )


class RunResults:
    """What a run counts besides the findings (the output counts those)."""

    def __init__(self) -> None:
        #: Findings fixed (with --diff: that would be fixed).
        self.fixed = 0
        self.internal_errors = 0
        #: Files whose fixes could not be written (their findings are all still reported).
        self.not_written = 0
        #: Files not linted at all (named pipes, sockets, devices).
        self.skipped = 0


def handle_result(
    result: FileResult, args: argparse.Namespace, run: RunResults
) -> tuple[Sequence[Finding], Sequence[Finding]]:
    """One file's result: its problems reported, its fixes written (or, with --diff, their diff
    printed). Returns the findings to report and the fixes applied."""
    if result.internal_error:
        run.internal_errors += 1
        sys.stderr.write(f"portlint: error: {printable(result.path)}: {result.error}\n")
    elif result.error and (not result.findings or args.fix or args.diff):
        warn(f"{result.path}: {result.error}")  # skipped, or left unfixed
        run.skipped += not result.findings
    if result.fixed_text is None or result.source is None:
        return result.findings, ()
    if args.diff:
        sys.stdout.write(unified_diff(result.source, result.fixed_text))
    else:
        # Imported here (tempfile, shutil): a check run writes nothing.
        from portlint.writer import FileChanged, NotWritable, write_source

        try:
            write_source(result.source, result.fixed_text)
        except (FileChanged, NotWritable, OSError) as error:
            # Nothing lost: the file keeps every finding it had, and the run fails.
            reason = error.strerror if isinstance(error, OSError) else str(error)
            warn(f"{result.path}: not fixed: {reason or error}")
            run.not_written += 1
            return result.findings_before_fix or result.findings, ()
    run.fixed += len(result.fixes_applied)
    return result.findings, result.fixes_applied


def unified_diff(source: SourceFile, fixed_text: str) -> str:
    import difflib

    before = source.text.splitlines(keepends=True)
    after = fixed_text.splitlines(keepends=True)
    lines = difflib.unified_diff(before, after, f"a/{source.path}", f"b/{source.path}")
    return "".join(line if line.endswith(("\n", "\r")) else line + "\n" for line in lines)


def _open_output(path: Path | None) -> tuple[TextIO, bool]:
    if path is None:
        return sys.stdout, False
    try:
        return path.open("w", encoding="utf-8", errors="backslashreplace"), True
    except OSError as error:
        raise UsageError(f"cannot write {path}: {error.strerror}") from None


def run_rule(argv: Sequence[str]) -> int:
    from portlint import ruledoc

    args = build_rule_parser().parse_args(argv)
    catalog = load_catalog()
    if args.all:
        sys.stdout.write(ruledoc.rule_list(catalog, args.output_format))
        return EXIT_CLEAN
    if not args.code:
        raise UsageError("give a rule code (portlint rule PRT201) or --all")
    rule = catalog.rule(args.code)
    if rule is None:
        raise UsageError(f"unknown rule {args.code!r}; see `portlint rule --all`")
    sys.stdout.write(ruledoc.rule_page(rule, catalog, args.output_format))
    return EXIT_CLEAN


def info(message: str) -> None:
    sys.stderr.write(f"portlint: {printable(message)}\n")


def warn(message: str) -> None:
    sys.stderr.write(f"portlint: warning: {printable(message)}\n")


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    for stream in (sys.stdout, sys.stderr):
        # A file name that is not valid UTF-8 must not end the run (JSON keeps it escaped).
        if isinstance(stream, io.TextIOWrapper) and stream.errors != "backslashreplace":
            stream.reconfigure(errors="backslashreplace")
    try:
        if argv[:1] == ["rule"]:
            return run_rule(argv[1:])
        if argv[:1] == ["check"]:
            argv = argv[1:]
        return run_check(argv)
    except (UsageError, ConfigError) as error:
        sys.stderr.write(f"portlint: error: {printable(str(error))}\n")
        return EXIT_ERROR
    except KeyboardInterrupt:
        sys.stderr.write("portlint: interrupted\n")
        return EXIT_ERROR
    except BrokenPipeError:
        return EXIT_CLEAN


if __name__ == "__main__":
    sys.exit(main())

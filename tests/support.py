"""Helpers shared by the tests: run portlint in-process and render findings for comparison."""

from __future__ import annotations

import io
import os
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

from portlint.cli import main
from portlint.config import Settings
from portlint.discover import language_of
from portlint.engine import lint_source, read_source
from portlint.model import Finding

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures"
UPDATE = os.environ.get("PORTLINT_UPDATE_FIXTURES") == "1"


def run_cli(*args: str, cwd: Path | None = None) -> tuple[int, str, str]:
    """Run ``portlint ARGS`` in this process; returns (exit status, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    previous = Path.cwd()
    try:
        if cwd is not None:
            os.chdir(cwd)
        with redirect_stdout(out), redirect_stderr(err):
            status = main(list(args))
    finally:
        os.chdir(previous)
    return status, out.getvalue(), err.getvalue()


def lint_file(path: Path, settings: Settings | None = None) -> list[Finding]:
    language = language_of(path)
    source = read_source(path, language)
    return list(lint_source(source, language, settings or Settings()).findings)


def describe(finding: Finding) -> str:
    """Two lines per finding: position, code, severity, symbol, message; then per-target advice."""
    span = finding.span
    head = (
        f"{span.line}:{span.column + 1}-{span.end_line}:{span.end_column + 1} "
        f"{finding.code} {finding.severity.value} `{finding.symbol}`: {finding.message}"
    )
    advice = " | ".join(
        f"{target}={advice.status.value}" + (f" {advice.replacement}" if advice.replacement else "")
        for target, advice in finding.targets.items()
    )
    return head + ("\n    " + advice if advice else "")


def describe_all(findings: list[Finding]) -> str:
    return "".join(describe(f) + "\n" for f in findings)


def check_against_expected(actual: str, expected_path: Path) -> None:
    if UPDATE or not expected_path.exists():
        if not UPDATE:
            raise AssertionError(
                f"{expected_path} is missing; run with PORTLINT_UPDATE_FIXTURES=1 and review it"
            )
        expected_path.write_text(actual, encoding="utf-8")
        return
    expected = expected_path.read_text(encoding="utf-8")
    assert actual == expected, f"output differs from {expected_path.name}"

"""The progress bar: on a terminal only, never in CI, in a pipe, with -q or a machine format;
and it hands every result through unchanged."""

from __future__ import annotations

import io

import pytest

from portlint import cli
from portlint.progress import with_progress


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(
    ("argv", "environment", "terminal", "expected"),
    [
        (["."], {}, True, True),
        (["--output-format", "concise", "."], {}, True, True),
        (["."], {"CI": "true"}, True, False),
        (["."], {}, False, False),
        (["-q", "."], {}, True, False),
        (["--output-format", "json", "."], {}, True, False),
        (["--output-format", "sarif", "."], {}, True, False),
    ],
)
def test_progress_only_for_people_at_a_terminal(monkeypatch, argv, environment, terminal, expected):
    monkeypatch.delenv("CI", raising=False)
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr("sys.stderr", Terminal() if terminal else io.StringIO())
    args = cli.build_parser().parse_args(argv)
    assert cli.show_progress(args) is expected


def test_progress_passes_every_item_through_and_clears_the_bar(monkeypatch):
    stream = Terminal()
    monkeypatch.setattr("sys.stderr", stream)
    items = list(range(50))
    assert list(with_progress(iter(items), len(items), delay=0.0)) == items
    assert "Checking" in stream.getvalue()  # the bar was drawn on stderr


def test_a_short_run_shows_no_bar(monkeypatch):
    stream = Terminal()
    monkeypatch.setattr("sys.stderr", stream)
    assert list(with_progress(iter(range(5)), 5)) == list(range(5))
    assert stream.getvalue() == ""

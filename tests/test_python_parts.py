"""A large Python file analysed in parts (``portlint.python.parts``) gets the findings the whole
analysis gives, kept compressed (``sink.FindingParts``) and written by every output format."""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import pytest

from portlint import engine
from portlint.catalog import load_catalog
from portlint.cli import main
from portlint.config import Settings
from portlint.engine import lint_source, read_source
from portlint.model import SourceFile
from portlint.python import parts
from portlint.sink import FindingParts

FIXTURES = Path(__file__).parent.parent / "fixtures" / "python"


@pytest.fixture
def tiny_parts(monkeypatch):
    """Every file in parts, cut at every place a cut can go, whatever its context."""
    python = engine.ANALYSERS["python"]
    monkeypatch.setitem(engine.ANALYSERS, "python", python._replace(part_threshold=0))
    monkeypatch.setattr(parts, "WHOLE_UP_TO", 0)
    monkeypatch.setattr(parts, "SMALLEST_PART", 1)
    monkeypatch.setattr(parts, "PARTS_PER_FILE", 1 << 62)
    monkeypatch.setattr(parts, "CONTEXT_PARTS", 1 << 62)


def whole_findings(source: SourceFile) -> list:
    python = engine.ANALYSERS["python"]
    engine.ANALYSERS["python"] = python._replace(part_threshold=1 << 62)
    try:
        return list(lint_source(source, "python", Settings()).findings)
    finally:
        engine.ANALYSERS["python"] = python


@pytest.mark.parametrize("path", sorted(FIXTURES.rglob("*.py")), ids=str)
def test_fixtures_in_parts_match_the_whole_analysis(path, tiny_parts):
    source = read_source(path, "python")
    whole = whole_findings(source)
    result = lint_source(source, "python", Settings()).findings
    assert list(result) == whole


def test_a_part_that_does_not_parse_sends_the_file_to_the_whole_analysis(tiny_parts):
    source = SourceFile("bad.py", "import torch\nx = torch.cuda.current_device()\ndef f(:\n")
    result = lint_source(source, "python", Settings()).findings
    assert isinstance(result, tuple)  # not in parts
    assert [f.code for f in result] == ["PRT001"]


def test_a_syntax_error_early_in_a_large_file_is_not_parsed_again_with_every_part(monkeypatch):
    """With parts of one statement, the part with the error is merged with the next few only:
    then the whole parse reports it."""
    monkeypatch.setattr(parts, "WHOLE_UP_TO", 0)
    monkeypatch.setattr(parts, "SMALLEST_PART", 1)
    monkeypatch.setattr(parts, "PARTS_PER_FILE", 1 << 62)
    attempts = []
    parse = parts.ast.parse

    def counted(text, **options):
        attempts.append(len(text))
        return parse(text, **options)

    monkeypatch.setattr(parts.ast, "parse", counted)
    text = "import torch\ndef f(:\n" + "x = torch.cuda.current_device()\n" * 500
    assert parts.lint_in_parts(SourceFile("bad.py", text), Settings(), load_catalog()) is None
    assert len(attempts) < 20


def test_a_lone_carriage_return_sends_the_file_to_the_whole_analysis(tiny_parts):
    source = SourceFile("cr.py", "import torch\rx = torch.cuda.current_device()\r")
    result = lint_source(source, "python", Settings()).findings
    assert isinstance(result, tuple)
    assert [(f.code, f.span.line) for f in result] == [("PRT201", 2)]


def test_a_file_suppressed_whole_reports_nothing(tiny_parts):
    # the comment in the last part silences the first part too
    text = "import torch\nx = torch.cuda.current_device()\ny = 1\n# portlint: noqa\n"
    assert list(lint_source(SourceFile("s.py", text), "python", Settings()).findings) == []


def test_cuts_go_between_statements_only():
    text = (
        "s = '''\ndef fake():\n    pass\n'''\n"  # a definition inside a string
        "x = [\n1,\n2]\n"  # brackets continued at column 0
        "@decorator\ndef real():\n    pass\n"  # a decorator stays with its definition
        "try:\n    pass\nexcept Exception:\n    pass\n"  # a clause continues its statement
        "y = 1\n"
    )
    pieces = list(parts._chunks(text, 1))
    assert "".join(pieces) == text
    assert pieces == [
        "s = '''\ndef fake():\n    pass\n'''\n",
        "x = [\n1,\n2]\n",
        "@decorator\ndef real():\n    pass\n",
        "try:\n    pass\nexcept Exception:\n    pass\n",
        "y = 1\n",
    ]


def test_a_generated_file_above_the_threshold_is_analysed_in_parts(tmp_path, capsys, monkeypatch):
    """Through the command line, in the worst case of one finding per line (the threshold made
    small, so that the file is cut into a dozen parts): the same report as the whole analysis,
    and nothing cached for it."""
    python = engine.ANALYSERS["python"]
    monkeypatch.setitem(engine.ANALYSERS, "python", python._replace(part_threshold=10_000))
    body = "import torch\n" + "torch.cuda.synchronize()\n" * 2_000  # 50 kB
    path = tmp_path / "generated.py"
    path.write_text(body)
    args = ["--isolated", "--output-format", "json", "--cache-dir", str(tmp_path / "c"), str(path)]
    assert main(args) == 1
    in_parts = json.loads(capsys.readouterr().out)
    assert not list((tmp_path / "c").rglob("*.json"))
    monkeypatch.setitem(engine.ANALYSERS, "python", python)
    assert main(args) == 1
    whole = json.loads(capsys.readouterr().out)
    assert [item["line"] for item in in_parts] == list(range(2, 2_002))
    assert in_parts == whole
    assert len(list((tmp_path / "c").rglob("*.json"))) == 1  # the whole analysis is cached


def test_which_files_are_analysed_in_parts():
    """Above 100 kB, a file with more than a thousand candidate words (generated) goes in parts,
    a hand-written one (none of several real trees has more than 200) stays whole."""
    call = "torch.cuda.synchronize()\n"
    dense = SourceFile("dense.py", "import torch\n" + call * 4_800)  # 120 kB, 4,800 words
    assert isinstance(lint_source(dense, "python", Settings()).findings, FindingParts)
    sparse = SourceFile("sparse.py", "import torch\n" + (call + "x = 1\n" * 40) * 500)  # 148 kB
    assert isinstance(lint_source(sparse, "python", Settings()).findings, tuple)
    small = SourceFile("small.py", "import torch\n" + call * 3_000)  # 75 kB
    assert isinstance(lint_source(small, "python", Settings()).findings, tuple)


def test_finding_parts_read_in_order_and_travel_between_processes(tiny_parts):
    source = read_source(FIXTURES / "train.py", "python")
    findings = whole_findings(source)
    kept = FindingParts()
    kept.add(findings[:5])
    kept.add([])
    kept.add(findings[5:])
    assert len(kept) == len(findings)
    assert list(kept) == findings == list(kept)  # read twice
    assert kept[0] == findings[0] and kept[-1] == findings[-1] and kept[6] == findings[6]
    assert list(kept[2:4]) == findings[2:4]
    with pytest.raises(IndexError):
        kept[len(findings)]
    assert list(pickle.loads(pickle.dumps(kept))) == findings

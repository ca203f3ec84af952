"""The catalogue's TOML files are parsed once and then read in their compiled form."""

from __future__ import annotations

import sys

import pytest

from portlint.catalog import Catalog, read_toml, rules_dir
from portlint.toml import tomllib

TABLE = '[device]\nwords = ["npu", "mlu"]\nlimit = 3\n'


@pytest.fixture
def writes_compiled(monkeypatch):
    """As a run without PYTHONDONTWRITEBYTECODE."""
    monkeypatch.setattr(sys, "dont_write_bytecode", False)


def compiled_of(path):
    return path.parent / "__pycache__" / f"{path.name}.{sys.implementation.cache_tag}.marshal"


def refuse_to_parse(monkeypatch):
    def parse(handle):
        raise AssertionError("parsed although the compiled form is current")

    monkeypatch.setattr(tomllib, "load", parse)


def test_a_parsed_file_is_read_back_from_its_compiled_form(tmp_path, monkeypatch, writes_compiled):
    path = tmp_path / "device.toml"
    path.write_text(TABLE, encoding="utf-8")
    expected = {"device": {"words": ["npu", "mlu"], "limit": 3}}
    assert read_toml(path) == expected
    assert compiled_of(path).is_file()
    refuse_to_parse(monkeypatch)
    assert read_toml(path) == expected


def test_a_changed_file_is_parsed_again(tmp_path, writes_compiled):
    path = tmp_path / "device.toml"
    path.write_text(TABLE, encoding="utf-8")
    read_toml(path)
    path.write_text(TABLE.replace("3", "42"), encoding="utf-8")
    assert read_toml(path)["device"]["limit"] == 42
    assert read_toml(path)["device"]["limit"] == 42


@pytest.mark.parametrize("damage", [b"", b"\x00garbage", b"\xe9"])
def test_a_damaged_compiled_form_is_made_again(tmp_path, writes_compiled, damage):
    path = tmp_path / "device.toml"
    path.write_text(TABLE, encoding="utf-8")
    read_toml(path)
    compiled_of(path).write_bytes(damage)
    assert read_toml(path)["device"]["limit"] == 3
    assert compiled_of(path).read_bytes() != damage


def test_nothing_is_written_without_bytecode(tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    path = tmp_path / "device.toml"
    path.write_text(TABLE, encoding="utf-8")
    assert read_toml(path)["device"]["limit"] == 3
    assert not (tmp_path / "__pycache__").exists()


def test_a_folder_that_cannot_hold_the_compiled_form_is_parsed_each_time(
    tmp_path, monkeypatch, writes_compiled
):
    path = tmp_path / "device.toml"
    path.write_text(TABLE, encoding="utf-8")
    (tmp_path / "__pycache__").write_text("a file, not a folder", encoding="utf-8")
    assert read_toml(path)["device"]["limit"] == 3
    parses = []
    load = tomllib.load
    monkeypatch.setattr(tomllib, "load", lambda h: parses.append(1) or load(h))
    assert read_toml(path)["device"]["limit"] == 3
    assert parses == [1]


def test_a_value_marshal_cannot_hold_is_parsed_each_time(tmp_path, writes_compiled):
    path = tmp_path / "dated.toml"
    path.write_text("released = 2026-11-30\n", encoding="utf-8")
    assert str(read_toml(path)["released"]) == "2026-11-30"
    assert not compiled_of(path).exists()


def test_the_catalogue_read_compiled_is_the_catalogue_parsed(tmp_path, monkeypatch):
    rules = tmp_path / "rules"
    rules.mkdir()
    for path in rules_dir().glob("*.toml"):
        (rules / path.name).write_bytes(path.read_bytes())
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    parsed = Catalog(rules)
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    Catalog(rules)  # writes the compiled forms
    refuse_to_parse(monkeypatch)
    compiled = Catalog(rules)
    assert compiled.rules == parsed.rules
    assert compiled.tables == parsed.tables

"""Every rule is documented, and its documentation's examples are tests: the example is flagged
with the rule's code, the "use instead" code is not."""

from __future__ import annotations

import pytest

from portlint.catalog import load_catalog
from portlint.config import Settings
from portlint.discover import language_of
from portlint.engine import lint_source
from portlint.model import SourceFile
from support import run_cli

CATALOG = load_catalog()
RULES = sorted(CATALOG.rules.values(), key=lambda r: r.code)
WITH_EXAMPLES = [r for r in RULES if r.example]


def codes_in(text: str, suffix: str, tmp_path) -> list[str]:
    path = tmp_path / f"example{suffix}"
    path.write_text(text + "\n", encoding="utf-8")
    source = SourceFile(str(path), text + "\n")
    result = lint_source(source, language_of(path), Settings())
    return [f.code for f in result.findings]


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.code)
def test_rule_is_documented(rule):
    assert rule.name and rule.summary and rule.what and rule.why and rule.fix_safety
    status, out, _ = run_cli("rule", rule.code)
    assert status == 0
    assert out.startswith(f"# {rule.name} ({rule.code})")
    for heading in ("## What it does", "## Why is this bad?", "## Fix safety"):
        assert heading in out


@pytest.mark.parametrize("rule", WITH_EXAMPLES, ids=lambda r: r.code)
def test_example_is_flagged(rule, tmp_path):
    assert rule.code in codes_in(rule.example, rule.example_suffix, tmp_path)


@pytest.mark.parametrize("rule", WITH_EXAMPLES, ids=lambda r: r.code)
def test_use_instead_is_not_flagged(rule, tmp_path):
    assert rule.use_instead, f"{rule.code} has an example but no 'use instead'"
    assert rule.code not in codes_in(rule.use_instead, rule.example_suffix, tmp_path)


def test_every_rule_but_unreadable_file_has_an_example():
    missing = [r.code for r in RULES if not r.example and r.code != "PRT002"]
    assert missing == []


def test_rule_lookup_by_name_and_unknown_code():
    status, out, _ = run_cli("rule", "torch-cuda-api")
    assert status == 0 and out.startswith("# torch-cuda-api (PRT201)")
    status, _, err = run_cli("rule", "PRT999")
    assert status == 2 and "unknown rule 'PRT999'" in err


def test_rule_all_lists_every_rule_with_fix_availability():
    status, out, _ = run_cli("rule", "--all")
    assert status == 0
    rows = out.splitlines()[1:]
    assert [row.split()[0] for row in rows] == [r.code for r in RULES]
    assert "PRT102  cuda-method-call" in out and "safe" in out


def test_examples_are_fenced_in_their_own_language():
    pages = {code: run_cli("rule", code)[1] for code in ("PRT101", "PRT706", "PRT705", "PRT921")}
    assert "## Example\n```python\n" in pages["PRT101"]
    assert "## Example\n```cpp\n" in pages["PRT706"]
    assert "## Use instead\n```cuda\n" in pages["PRT705"]
    assert "```python" not in pages["PRT921"]

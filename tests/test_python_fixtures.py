"""Each fixtures/python/*.py against its .expected file: exact findings, positions, advice."""

from __future__ import annotations

import pytest

from support import FIXTURES, check_against_expected, describe_all, lint_file

PYTHON_FIXTURES = sorted((FIXTURES / "python").rglob("*.py"))


@pytest.mark.parametrize("path", PYTHON_FIXTURES, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_fixture_findings(path):
    actual = describe_all(lint_file(path))
    check_against_expected(actual, path.with_suffix(".expected"))

"""fixtures/project: findings that depend on where a file sits in the project, linted from there."""

from __future__ import annotations

import json

from support import FIXTURES, run_cli


def test_a_package_imports_itself_without_a_finding():
    status, out, _ = run_cli(
        "bitsandbytes", "--output-format", "json", "--isolated", cwd=FIXTURES / "project"
    )
    findings = json.loads(out)
    assert status == 1
    assert [(f["path"], f["line"], f["code"], f["symbol"]) for f in findings] == [
        ("bitsandbytes/optim/adam.py", 7, "PRT501", "apex"),
    ]

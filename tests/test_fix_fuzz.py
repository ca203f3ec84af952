"""A fixed slice of the --fix fuzzer (benchmarks/fix_fuzz.py): random programs with CUDA
snippets spliced in, replayed from fixtures/fix/fuzz_slice.json so the suite needs neither the
generator nor any randomness. Each must fix without a crash, parse with the Python 3.10
grammar, stay as it is on a second --fix, and change no line that no fix touched."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from support import FIXTURES

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from fix_fuzz import check_case

CASES = json.loads((FIXTURES / "fix" / "fuzz_slice.json").read_text(encoding="utf-8"))


def test_the_slice_is_the_size_the_docs_say():
    assert len(CASES) == 200


@pytest.mark.parametrize("case", CASES, ids=lambda case: f"seed{case['seed']}")
def test_fuzzed_program_fixes_cleanly(case):
    assert check_case(case) == []

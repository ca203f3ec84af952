"""fixtures/cxx: every finding is stated by a ``// CHECK:`` line above its line, and every CHECK
line is met; and ``--fix --unsafe-fixes --target rocm`` hipifies a file exactly."""

from __future__ import annotations

import pytest
from cxx_checks import CheckSyntaxError, canonical, compare, parse_checks

from portlint.config import Settings
from portlint.engine import lint_source, read_source
from portlint.fix import MAX_ROUNDS, FixPolicy, apply_fixes
from support import FIXTURES

CXX = FIXTURES / "cxx"
CHECKED = sorted(p for p in CXX.iterdir() if p.suffix in (".cu", ".cpp") and p.is_file())
HIPIFIED = sorted((CXX / "hipified").glob("*.hip.cu"))
#: Sources of backend packages (``backends/<kernels>/<vendor>/``): what they report depends on
#: the folders beside theirs.
IN_PACKAGES = sorted((CXX / "backends").rglob("*.cu"))
#: Sources with twins for other targets beside them (``twins/``): the same, on their files.
TWINS = CXX / "twins"
WITH_TWINS = sorted(p for p in TWINS.rglob("*") if p.suffix in (".cu", ".cpp"))


def lint(source):
    return list(lint_source(source, "cxx", Settings()).findings)


@pytest.mark.parametrize("path", CHECKED, ids=lambda p: p.name)
def test_findings_match_check_lines(path):
    source = read_source(path, "cxx")
    problems = compare(lint(source), source.text)
    assert problems == [], "\n".join(problems)


@pytest.mark.parametrize("path", IN_PACKAGES, ids=lambda p: str(p.relative_to(CXX)))
def test_backend_package_sources_match_check_lines(path):
    source = read_source(path, "cxx")
    problems = compare(lint(source), source.text)
    assert problems == [], "\n".join(problems)


@pytest.mark.parametrize("path", WITH_TWINS, ids=lambda p: str(p.relative_to(CXX)))
def test_sources_with_twins_match_check_lines(path):
    source = read_source(path, "cxx")
    problems = compare(lint(source), source.text)
    assert problems == [], "\n".join(problems)


@pytest.mark.parametrize(
    ("name", "targets"),
    [
        # nms_rotated_cpu.cpp beside it: the CPU build compiles that instead
        ("rotated/nms_rotated_cuda.cu", {"rocm", "npu", "mlu", "xpu", "mps"}),
        # cpu/roi_kernel.cpp beside its cuda/ folder
        ("ops/cuda/roi_kernel.cu", {"npu", "mlu", "xpu", "mps"}),
        # no twin: the CPU needs a port like the others
        ("rotated/deform_conv_cuda.cu", {"npu", "mlu", "xpu", "mps", "cpu"}),
    ],
)
def test_a_twin_source_answers_for_its_target(name, targets):
    findings = lint(read_source(TWINS / name, "cxx"))
    assert findings
    assert set().union(*(f.targets for f in findings)) == targets


def test_fixture_set_covers_every_cxx_rule():
    seen = set()
    for path in CHECKED:
        for counter in parse_checks(read_source(path, "cxx").text).values():
            seen.update(item.split()[0] for item in counter)
    assert seen >= {f"PRT70{n}" for n in range(1, 7)} | {f"PRT80{n}" for n in range(1, 9)}


def test_check_parser_is_strict():
    with pytest.raises(CheckSyntaxError, match="malformed"):
        parse_checks("// CHECK: PRT701 cudaMalloc\nx();\n")
    with pytest.raises(CheckSyntaxError, match="check nothing"):
        parse_checks("x();\n// CHECK: PRT701 `x`")
    with pytest.raises(CheckSyntaxError, match="blank line"):
        parse_checks("// CHECK: PRT701 `x`\n\nx();\n")


def test_unexpected_and_missing_findings_are_both_reported(tmp_path):
    path = tmp_path / "one.cu"
    path.write_text("// CHECK: PRT701 `cudaFree` rocm=hipFree\ncudaMalloc(p, n);\n")
    source = read_source(path, "cxx")
    assert compare(lint(source), source.text) == [
        "line 2: unexpected PRT701 `cudaMalloc` rocm=hipMalloc",
        "line 2: missing PRT701 `cudaFree` rocm=hipFree",
    ]


def test_hipified_outputs_exist():
    assert [p.name for p in HIPIFIED] == [
        "macros_split.hip.cu",
        "runtime_driver.hip.cu",
        "same_name_on_a_line.hip.cu",
    ]


def hipify(path, policy: FixPolicy) -> str:
    """Apply fixes round after round, as ``--fix`` does, until nothing changes."""
    source = read_source(path, "cxx")
    text = source.text
    for _ in range(MAX_ROUNDS):
        new_text, applied = apply_fixes(text, lint(source._replace(text=text)), policy)
        if not applied or new_text == text:
            break
        text = new_text
    return text


@pytest.mark.parametrize("expected", HIPIFIED, ids=lambda p: p.name)
def test_unsafe_fixes_for_rocm_alone_hipify_the_file(expected):
    original = CXX / expected.name.replace(".hip.cu", ".cu")
    result = hipify(original, FixPolicy(unsafe=True, targets=("rocm",)))
    assert result == expected.read_text(encoding="utf-8")


@pytest.mark.parametrize("expected", HIPIFIED, ids=lambda p: p.name)
def test_hipified_file_has_no_fixable_finding_left(expected):
    remaining = [f for f in lint(read_source(expected, "cxx")) if f.fix is not None]
    assert [canonical(f) for f in remaining] == []


@pytest.mark.parametrize(
    "policy",
    [FixPolicy(unsafe=True, targets=("rocm", "npu")), FixPolicy(unsafe=False, targets=("rocm",))],
    ids=["several-targets", "safe-only"],
)
@pytest.mark.parametrize("expected", HIPIFIED, ids=lambda p: p.name)
def test_no_rewrite_without_unsafe_fixes_for_rocm_alone(expected, policy):
    original = CXX / expected.name.replace(".hip.cu", ".cu")
    assert hipify(original, policy) == original.read_text(encoding="utf-8")

"""What the C++ hazard findings say: PRT801 names the expression to write, PRT804 quotes the
whole condition it reports once, PRT805 the block size read in the launch's scope."""

from __future__ import annotations

from portlint.config import Settings
from portlint.engine import lint_source, read_source
from support import FIXTURES

CXX = FIXTURES / "cxx"


def messages(name: str, code: str) -> dict[int, list[str]]:
    source = read_source(CXX / name, "cxx")
    found: dict[int, list[str]] = {}
    for finding in lint_source(source, "cxx", Settings()).findings:
        if finding.code == code:
            found.setdefault(finding.span.line, []).append(finding.message)
    return found


def line_of(name: str, text: str, after: str = "") -> int:
    """The first line holding ``text`` below the first line holding ``after``."""
    lines = (CXX / name).read_text(encoding="utf-8").splitlines()
    start = next(number for number, line in enumerate(lines) if after in line)
    return next(n for n, line in enumerate(lines[start:], start=start + 1) if text in line)


def test_lane_arithmetic_names_the_expression_to_write():
    found = messages("lane_arithmetic.cu", "PRT801")
    expected = {
        "#define LANE_ID": "use `threadIdx.x & (warpSize - 1)`",
        "#define WARP_ID": "use `(t) / warpSize`",
        "for (int offset = 16": "start at `warpSize / 2`",
        "int lane = threadIdx.x % 32": "use `threadIdx.x % warpSize`",
        "int src = (threadIdx.x + 1) & 31": "use `(threadIdx.x + 1) & (warpSize - 1)`",
        "if (lane == 31)": "use `lane == warpSize - 1`",
    }
    for text, suggestion in expected.items():
        [message] = found[line_of("lane_arithmetic.cu", text)]
        assert message.endswith(suggestion), message


def test_capability_condition_is_quoted_whole_once():
    found = messages("arch_checks.cu", "PRT804")
    line = line_of("arch_checks.cu", "if (prop.major > 7 ||")
    [message] = found[line]
    assert message.startswith(
        "`prop.major > 7 || (prop.major == 7 && prop.minor >= 5)` tests an NVIDIA compute"
    )
    [message] = found[line_of("arch_checks.cu", "if (cc < 80)")]
    assert message.startswith("`cc < 80` tests")


def test_condition_continued_on_the_next_line_is_quoted_as_one_line():
    found = messages("inactive_branches.cu", "PRT804")
    [message] = found[line_of("inactive_branches.cu", "#if !defined(USE_MUSA)")]
    assert message.startswith(
        "`!defined(USE_MUSA) && defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 800)` compares"
    )


def test_block_size_comes_from_the_launching_function():
    found = messages("launch_scope.cu", "PRT805")
    [local] = found[line_of("launch_scope.cu", "scale<<<4, threads>>>", after="local_literal")]
    assert "with 768 threads per block" in local
    [file_wide] = found[line_of("launch_scope.cu", "block_size>>>", after="file_constants")]
    assert "with 1024 threads per block" in file_wide


def test_a_32_bit_mask_is_an_error_and_a_narrow_ballot_a_warning():
    """HIP's ``*_sync`` functions static_assert a 64-bit mask, so a 32-bit one does not build;
    a ballot kept in 32 bits builds and loses lanes 32-63."""
    source = read_source(CXX / "warp_hazards.cu", "cxx")
    found = {
        (finding.span.line, finding.symbol): finding.severity.value
        for finding in lint_source(source, "cxx", Settings()).findings
        if finding.code == "PRT802"
    }
    vote = line_of("warp_hazards.cu", "unsigned vote")
    assert found == {
        (line_of("warp_hazards.cu", "__shfl_down_sync(0xffffffff"), "0xffffffff"): "error",
        (line_of("warp_hazards.cu", "__shfl_xor_sync(FULL_MASK"), "FULL_MASK"): "error",
        (vote, "~0u"): "error",
        (vote, "unsigned"): "warning",
        (line_of("warp_hazards.cu", "unsigned active"), "unsigned"): "warning",
    }

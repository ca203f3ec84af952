"""C++/CUDA analysis beyond the CHECK fixtures: the prefilter, lazy parser import, character
columns in JSON, undecodable bytes, and the answers for targets without CUDA."""

from __future__ import annotations

import json
import subprocess
import sys

from portlint.catalog import load_catalog
from portlint.config import Settings
from portlint.cxx.analyser import is_candidate
from portlint.cxx.table import load_table
from portlint.engine import lint_source, read_source
from portlint.fix import FixPolicy, apply_fixes
from portlint.writer import write_source
from support import FIXTURES, ROOT, check_against_expected, describe_all, run_cli

CXX = FIXTURES / "cxx"


def test_prefilter_admits_every_name_of_the_table():
    table = load_table(load_catalog())
    # Device intrinsics only occur in __device__/__global__ code, which the prefilter admits.
    missed = [n for n, e in table.names.items() if e.api != "device" and not is_candidate(n)]
    assert missed == []
    assert all(is_candidate(f"#include <{header}>") for header in table.headers)
    libraries = load_catalog().table("cxx")["nvidia_libraries"]["header_prefixes"]
    assert all(is_candidate(f"#include <{prefix}tensor.hpp>") for prefix in libraries)


def test_prefilter_skips_plain_cpp():
    assert not is_candidate((CXX / "plain.cpp").read_text(encoding="utf-8"))
    assert is_candidate((CXX / "warp_hazards.cu").read_text(encoding="utf-8"))


def test_files_without_cuda_text_import_no_parser(tmp_path):
    (tmp_path / "plain.cpp").write_text((CXX / "plain.cpp").read_text(encoding="utf-8"))
    script = (
        "import sys\n"
        "from portlint.cli import main\n"
        f"status = main([{str(tmp_path)!r}, '--isolated', '-q'])\n"
        "assert 'tree_sitter' not in sys.modules, 'tree_sitter was imported'\n"
        "sys.exit(status)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr + done.stdout


def test_json_columns_count_characters_on_non_ascii_lines():
    status, out, _ = run_cli(
        str(CXX / "non_ascii.cu"), "--isolated", "--target", "rocm", "--output-format", "json"
    )
    assert status == 1
    lines = (CXX / "non_ascii.cu").read_text(encoding="utf-8").splitlines()
    for item in json.loads(out):
        line = lines[item["line"] - 1]
        start = item["column"] - 1
        assert line[start : start + len(item["symbol"])] == item["symbol"]
    malloc = next(i for i in json.loads(out) if i["symbol"] == "cudaMalloc")
    assert malloc["column"] == lines[malloc["line"] - 1].index("cudaMalloc") + 1
    assert len(lines[malloc["line"] - 1].encode()) > len(lines[malloc["line"] - 1])


def test_undecodable_bytes_are_kept_when_fixes_are_written(tmp_path):
    path = tmp_path / "latin1.cu"
    original = (CXX / "invalid_utf8.cu").read_bytes()
    path.write_bytes(original)
    source = read_source(path, "cxx")
    findings = lint_source(source, "cxx", Settings()).findings
    assert "PRT002" not in {f.code for f in findings}
    fixed, applied = apply_fixes(source.text, findings, FixPolicy(unsafe=True, targets=("rocm",)))
    assert len(applied) == 2
    write_source(source, fixed)
    expected = original.replace(b"<cuda_runtime.h>", b"<hip/hip_runtime.h>").replace(
        b"{ cudaMalloc(", b"{ hipMalloc("
    )
    assert path.read_bytes() == expected


def test_targets_without_cuda_get_host_sites_and_one_finding_per_kernel():
    path = CXX / "runtime_driver.cu"
    settings = Settings(targets=("npu",))
    actual = describe_all(list(lint_source(read_source(path, "cxx"), "cxx", settings).findings))
    check_against_expected(actual, CXX / "runtime_driver.npu.expected")


def test_table_size_and_unsupported_share():
    table = load_table(load_catalog())
    unsupported = sum(1 for e in table.names.values() if not e.hip)
    assert len(table.names) > 4000
    assert 0.25 < unsupported / len(table.names) < 0.5
    assert table.names["cudnnCreate"].hip == "miopenCreate" and table.names["cudnnCreate"].manual


def test_rules_ship_in_the_package_data():
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert '"portlint.cxx"' in pyproject


def test_a_file_whose_conditionals_do_not_balance_has_no_inactive_lines():
    from portlint.cxx.preprocessor import read_branches

    def inactive_lines(lines: list[str]) -> list[tuple[int, int]]:
        return read_branches(lines, ()).inactive

    # the "#if 0" of a block comment opens a group that nothing closes: nothing is decided
    lines = ["/*", "#if 0", "*/", "cudaFree(p);"]
    assert inactive_lines(lines) == []
    assert inactive_lines(["#endif", "#if 0", "x", "#endif"]) == []
    assert inactive_lines(["#if 0", "x", "#if A", "y", "#endif", "#endif", "z"]) == [(2, 5)]


def test_conditions_are_read_with_three_answers():
    from portlint.cxx.preprocessor import read_branches

    def inactive_lines(lines: list[str]) -> list[tuple[int, int]]:
        return read_branches(lines, ()).inactive

    def hip_skipped_lines(lines: list[str], nvcc: list[str]) -> list[tuple[int, int]]:
        return read_branches(lines, nvcc).hip_skipped

    def inactive(condition: str) -> bool:
        return inactive_lines(["#define ONE 1", f"#if {condition}", "x", "#endif"]) == [(3, 3)]

    assert inactive("0") and inactive("!ONE") and inactive("ONE && 0") and inactive("(ONE < 1)")
    assert inactive("defined(OTHER) && !defined ONE") and inactive("!(OTHER || 1)")
    assert not inactive("OTHER && ONE")  # OTHER is the build's to decide
    assert inactive("ONE + 0 == 0") and inactive("ONE * 10000 + 2 * 100 >= 10300")
    assert not inactive("ONE * 10000 + 3 * 100 >= 10300") and inactive("7 / 2 - 7 % 2 != 2")
    assert not inactive("OTHER * 2 > 1") and not inactive("ONE / 0")  # the build's, no answer
    assert not inactive("F(1)") and not inactive("ONE << 1 == 1")  # calls, shifts: not read
    hip = ["#if __CUDA_ARCH__ >= 800", "a", "#elif X", "b", "#else", "c", "#endif"]
    nvcc = ["__CUDA_ARCH__", "__CUDACC_VER_MAJOR__"]
    assert hip_skipped_lines(hip, nvcc) == [(2, 2)]
    assert hip_skipped_lines(
        ["#if !defined(__CUDA_ARCH__) || X", "a", "#else", "b", "#endif"], nvcc
    ) == [(4, 4)]
    assert hip_skipped_lines(["#if __CUDACC_VER_MAJOR__ >= 11", "a", "#endif"], nvcc) == [(2, 2)]
    # a directive continued on the next line is read whole, and its second line is no branch's
    continued = ["#if !defined(MUSA) && defined(__CUDA_ARCH__) && \\", "  (X >= 9)", "a", "#endif"]
    assert hip_skipped_lines(continued, nvcc) == [(3, 3)]
    assert inactive_lines(["#if ONE && \\", "    0", "a", "#endif"]) == [(3, 3)]
    # a macro defined only where hip-clang does not look is undefined there too, and so is one
    # defined only under it; one defined on a line hip-clang reads too is the build's
    version = "#if (__CUDACC_VER_MAJOR__ * 10000 + __CUDACC_VER_MINOR__ * 100 >= 120400)"
    derived = [version, "#define FAST", "#endif", "#ifdef FAST", "#define FASTER", "#endif"]
    derived += ["#ifdef FASTER", "a", "#else", "b", "#endif"]
    versions = [*nvcc, "__CUDACC_VER_MINOR__"]
    # (line 5 has no #else: hip-clang compiles nothing in its place, so it stays a ROCm site)
    assert hip_skipped_lines(derived, versions) == [(2, 2), (8, 8)]
    refused = [*derived[:8], "#else", "assert(0);", "#endif"]
    assert read_branches(refused, versions, (), ["assert"]).hip_skipped == [(2, 2)]
    both = ["#if __CUDA_ARCH__ >= 800", "#define FAST 1", "#else", "#define FAST 0", "#endif"]
    assert hip_skipped_lines([*both, "#if defined(FAST)", "a", "#endif"], nvcc) == [(2, 2)]
    assert inactive_lines(derived) == []

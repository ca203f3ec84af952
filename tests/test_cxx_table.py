"""The HIP table's versions: `rocm-version`, the ROCm release each answer needs, deprecations, and
the ROC library names given as further advice."""

from __future__ import annotations

import json

import pytest

from portlint.catalog import load_catalog
from portlint.config import Settings
from portlint.cxx.api_sites import name_message
from portlint.cxx.table import Entry, load_table, version_key
from portlint.engine import lint_source, read_source
from portlint.model import Status
from support import FIXTURES, run_cli

LIBRARIES = FIXTURES / "cxx" / "table_libraries.cu"
RUNTIME_DRIVER = FIXTURES / "cxx" / "runtime_driver.cu"


def rocm_findings(path, rocm_version=None):
    source = read_source(path, "cxx")
    findings = lint_source(source, "cxx", Settings(rocm_version=rocm_version)).findings
    return {f.symbol: f for f in findings if f.code.startswith("PRT70")}


def test_default_is_the_newest_release_in_the_table():
    table = load_table(load_catalog())
    assert table.newest == "7.0.0"  # hipBLAS 3, the newest release the table's answers need
    findings = rocm_findings(LIBRARIES)
    gemm = findings["cublasGemmEx"]
    assert gemm.code == "PRT701"
    assert gemm.targets["rocm"].replacement == "hipblasGemmEx"
    assert gemm.targets["rocm"].since == "7.0.0"
    assert gemm.message == "`cublasGemmEx` (cuBLAS) is `hipblasGemmEx` in HIP (ROCm 7.0.0+)"


def test_a_name_added_after_rocm_version_is_unsupported_there():
    findings = rocm_findings(LIBRARIES, rocm_version="6.2")
    gemm = findings["cublasGemmEx"]
    assert gemm.code == "PRT702"
    assert gemm.targets["rocm"].status is Status.UNSUPPORTED
    assert gemm.targets["rocm"].replacement is None
    assert gemm.message == (
        "`cublasGemmEx` (cuBLAS) is `hipblasGemmEx` in HIP, added in ROCm 7.0.0: not available "
        "on ROCm 6.2.0 (rocm-version)"
    )
    assert gemm.fix is None
    # hipblasSetMathMode came with ROCm 6.1: still a rename on 6.2, not on 6.0.
    assert findings["cublasSetMathMode"].code == "PRT701"
    assert rocm_findings(LIBRARIES, rocm_version="6.0")["cublasSetMathMode"].code == "PRT702"


def test_a_deprecated_name_says_so():
    ctx = rocm_findings(RUNTIME_DRIVER)["cuCtxCreate"]
    assert ctx.code == "PRT701"
    assert ctx.message.endswith("; deprecated since ROCm 1.9.0")


def test_a_deprecated_name_with_a_known_successor_names_it():
    table = load_table(load_catalog())
    entry = table.names["cudaMemcpyToArray"]
    newest = table.rocm_key(None)
    assert entry.deprecated and entry.replacement == "hipMemcpy2DToArray"
    assert name_message(entry, entry.status_on(newest), newest).endswith(
        "; deprecated since ROCm 3.8.0: use `hipMemcpy2DToArray`"
    )


def test_a_removed_name_is_unsupported_from_its_release_on():
    entry = Entry("cudaX", "hipX", "runtime", since="1.6.0", removed="6.0.0", replacement="hipY")
    assert entry.status_on(version_key("5.7")) is Status.RENAME
    assert entry.status_on(version_key("6.0")) is Status.UNSUPPORTED
    message = name_message(entry, Status.UNSUPPORTED, version_key("6.1"))
    assert (
        message == "`cudaX` (the CUDA runtime) was `hipX` in HIP, removed in ROCm 6.0.0: use `hipY`"
    )


def test_json_carries_since_and_the_roc_name():
    status, out, _ = run_cli(
        "--isolated", "--target", "rocm", "--output-format", "json", str(LIBRARIES)
    )
    assert status == 1
    by_symbol = {f["symbol"]: f["targets"]["rocm"] for f in json.loads(out)}
    assert by_symbol["cublasGemmEx"] == {
        "status": "rename",
        "replacement": "hipblasGemmEx",
        "since": "7.0.0",
        "roc": "rocblas_gemm_ex",
    }
    # Headers have no version: the added fields are left out rather than null.
    assert by_symbol["cublas_v2.h"] == {"status": "rename", "replacement": "hipblas/hipblas.h"}


def test_rocm_version_option_and_config_key(tmp_path):
    status, out, _ = run_cli(
        "--isolated", "--rocm-version", "6.2", "--output-format", "json", str(LIBRARIES)
    )
    findings = {f["symbol"]: f for f in json.loads(out)}
    assert findings["cublasGemmEx"]["code"] == "PRT702"
    (tmp_path / "pyproject.toml").write_text('[tool.portlint]\nrocm-version = "6.2"\n')
    copy = tmp_path / "libraries.cu"
    copy.write_text(LIBRARIES.read_text())
    status, out, _ = run_cli("--output-format", "json", "libraries.cu", cwd=tmp_path)
    assert status == 1
    findings = {f["symbol"]: f for f in json.loads(out)}
    assert findings["cublasGemmEx"]["code"] == "PRT702"


@pytest.mark.parametrize("value", ["latest", "6", "6.x"])
def test_bad_rocm_version_is_one_line_and_exit_2(value):
    status, _, err = run_cli("--isolated", "--rocm-version", value, str(LIBRARIES))
    assert status == 2
    assert err.strip().count("\n") == 0
    assert "--rocm-version" in err and value in err


def test_a_name_only_the_roc_library_has_gets_it_as_advice():
    table = load_table(load_catalog())
    entry = table.names["cublasHSHgemvBatched"]
    newest = table.rocm_key(None)
    assert entry.status_on(newest) is Status.UNSUPPORTED
    assert name_message(entry, Status.UNSUPPORTED, newest) == (
        "`cublasHSHgemvBatched` (cuBLAS) has no HIP equivalent; rocBLAS (AMD GPUs only) has "
        "`rocblas_hshgemv_batched`"
    )

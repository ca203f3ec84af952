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
VERSIONS = FIXTURES / "cxx" / "table_versions.cu"


def rocm_findings(path, rocm_version=None):
    source = read_source(path, "cxx")
    findings = lint_source(source, "cxx", Settings(rocm_version=rocm_version)).findings
    return {f.symbol: f for f in findings if f.code.startswith("PRT70")}


def test_default_is_the_newest_release_in_the_table():
    table = load_table(load_catalog())
    # hip-python 7.2.0; the rocm-bindings (ROCm 10.0.0 but HIP 7.15) are a development build.
    assert table.newest == "7.2.0"
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
    assert ctx.message.endswith(
        "; deprecated since ROCm 1.9.0, no one-to-one replacement: HIP deprecates its context API "
        "(one context per device): select the device with hipSetDevice and use the hipDevice* "
        "calls"
    )


def test_a_name_hipify_does_not_date_carries_the_release_of_its_oldest_declarations():
    findings = rocm_findings(VERSIONS)
    dated = {
        "cuFuncSetCacheConfig": "5.2.3",  # Debian's HIP 5.2.3 headers
        "cusparseSideMode_t": "5.3.3",  # Debian's hipSPARSE 5.3.3 headers
        "cudaExternalMemoryGetMappedMipmappedArray": "6.2.0",  # hip-python 6.2.0
    }
    for name, since in dated.items():
        assert findings[name].code == "PRT701"
        assert findings[name].targets["rocm"].since == since
        assert findings[name].message.endswith(f" in HIP (ROCm {since}+)")
    # rocm-version excludes them before that release and includes them from it on.
    older = rocm_findings(VERSIONS, rocm_version="5.2")
    assert older["cuFuncSetCacheConfig"].code == "PRT702"
    assert older["cuFuncSetCacheConfig"].message == (
        "`cuFuncSetCacheConfig` (the CUDA driver API) is `hipFuncSetCacheConfig` in HIP, added in "
        "ROCm 5.2.3: not available on ROCm 5.2.0 (rocm-version)"
    )
    assert older["CU_FUNC_CACHE_PREFER_SHARED"].code == "PRT701"  # HIPIFY's 1.6.0
    on_6_1 = rocm_findings(VERSIONS, rocm_version="6.1")
    assert on_6_1["cuFuncSetCacheConfig"].code == "PRT701"
    assert on_6_1["cusparseSideMode_t"].code == "PRT701"
    assert on_6_1["cudaExternalMemoryGetMappedMipmappedArray"].code == "PRT702"
    assert (
        rocm_findings(VERSIONS, rocm_version="6.2")[
            "cudaExternalMemoryGetMappedMipmappedArray"
        ].code
        == "PRT701"
    )


def test_a_name_only_development_headers_declare_has_no_release():
    name = "CUBLASLT_EPILOGUE_RELU_AUX"
    finding = rocm_findings(VERSIONS)[name]
    assert finding.code == "PRT701"
    assert finding.targets["rocm"].since is None
    assert finding.message == (
        "`CUBLASLT_EPILOGUE_RELU_AUX` (cuBLASLt) is `HIPBLASLT_EPILOGUE_RELU_AUX` in HIP (declared "
        "by current HIP development headers; the first release is not known to portlint)"
    )
    # Unknown is not too new: no rocm-version reports it as unsupported.
    for rocm_version in ("5.2", "7.2"):
        assert rocm_findings(VERSIONS, rocm_version=rocm_version)[name].code == "PRT701"
    assert rocm_json(VERSIONS)[name] == {
        "status": "rename",
        "replacement": "HIPBLASLT_EPILOGUE_RELU_AUX",
    }


def test_no_name_is_dated_by_a_development_build():
    table = load_table(load_catalog())
    assert not [e.cuda for e in table.names.values() if e.since == "10.0.0"]
    unknown = [e for e in table.names.values() if e.release_unknown]
    assert unknown and all(not e.since and e.hip for e in unknown)


def rocm_json(path):
    """{symbol: targets.rocm} of the JSON output on ``path``."""
    status, out, _ = run_cli("--isolated", "--target", "rocm", "--output-format", "json", str(path))
    assert status == 1
    return {f["symbol"]: f["targets"]["rocm"] for f in json.loads(out)}


def test_json_carries_a_since_dated_from_declarations():
    by_symbol = rocm_json(VERSIONS)
    assert by_symbol["CUSPARSE_SIDE_LEFT"] == {
        "status": "rename",
        "replacement": "HIPSPARSE_SIDE_LEFT",
        "since": "5.3.3",
    }


def test_every_rename_has_a_version_unless_no_declarations_read_name_it():
    table = load_table(load_catalog())
    undated = sorted(
        e.cuda
        for e in table.names.values()
        if e.status is Status.RENAME and not e.since and not e.release_unknown
    )
    # NVML -> ROCm SMI answers, torch's own macro, a pointer type and rocTX's roctxMark macro:
    # no HIP declarations that are read name them.
    assert all(
        n.startswith(("NVML_", "nvml", "AT_", "CUoccupancyB2DSize", "nvtxMark")) for n in undated
    ), undated


@pytest.mark.parametrize(
    "name, ending",
    [
        ("cuMemAllocHost", "; deprecated since ROCm 3.0.0: use `hipHostMalloc`"),
        ("cuCtxSynchronize", "; deprecated since ROCm 1.9.0: use `hipDeviceSynchronize`"),
        (
            "cuProfilerStart",
            "; deprecated since ROCm 3.0.0, no one-to-one replacement: HIP's deprecation message "
            "says to use roctracer/rocTX",
        ),
        (
            "cusparseScsrilu02",
            "; deprecated since ROCm 6.2.0, no one-to-one replacement: hipSPARSE deprecates this "
            "legacy call and names no successor: port it to the generic API (hipsparseSp*) where "
            "that has the operation; AMD's ROC library has `rocsparse_scsrilu0` (AMD GPUs only)",
        ),
    ],
)
def test_a_deprecated_name_names_its_successor_or_says_there_is_none(name, ending):
    finding = rocm_findings(VERSIONS)[name]
    assert finding.code == "PRT701"
    assert finding.message.endswith(ending)


def test_every_deprecated_or_removed_name_has_a_successor_or_advice():
    table = load_table(load_catalog())
    stale = [e for e in table.names.values() if e.hip and (e.deprecated or e.removed)]
    assert len(stale) > 300
    assert [e.cuda for e in stale if not (e.replacement or e.no_successor)] == []


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
    by_symbol = rocm_json(LIBRARIES)
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

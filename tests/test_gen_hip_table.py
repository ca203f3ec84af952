"""scripts/gen_hip_table.py: reading HIPIFY's tables and choosing each answer.

The inputs are rows in the exact layout of ROCm/HIPIFY's docs/tables/*.md (copied from the pinned
commit's tables) and Cython declarations in the layout of the rocm-bindings wheels, small enough
to read; the generator itself runs on the full sources (see its docstring).
"""

from __future__ import annotations

import importlib.util

import pytest

from support import ROOT

SPEC = importlib.util.spec_from_file_location(
    "gen_hip_table", ROOT / "scripts" / "gen_hip_table.py"
)
gen = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(gen)

CUBLAS = (
    "# CUBLAS API supported by HIP and ROC\n\n"
    "|**CUDA**|**A**|**D**|**C**|**R**|**HIP**|**A**|**D**|**C**|**R**|**E**|"
    "**ROC**|**A**|**D**|**C**|**R**|**E**|\n"
    "|:--|:-:|:-:|:-:|:-:|:--|:-:|:-:|:-:|:-:|:-:|:--|:-:|:-:|:-:|:-:|:-:|\n"
    "|`cublasGemmEx`|8.0| | | |`hipblasGemmEx_v2`|6.0.0| | | | |`rocblas_gemm_ex`|1.8.2| | | | |\n"
    "|`cublasSetMathMode`|9.0| | | |`hipblasSetMathMode`|6.1.0| | | | |"
    "`rocblas_set_math_mode`|5.7.0| | | | |\n"
    "|`cublasGemmEx_64`|12.0| | | | | | | | | | | | | | | |\n"
    "|`cublasHSHgemvBatched`|11.6| | | | | | | | | |`rocblas_hshgemv_batched`|6.2.0| | | | |\n"
    "|`cublasSgemmEx_64`|12.0| | | | | | | | | | | | | | | |\n"
)
DRIVER = (
    "|**CUDA**|**A**|**D**|**C**|**R**|**HIP**|**A**|**D**|**C**|**R**|**E**|\n"
    "|:--|:-:|:-:|:-:|:-:|:--|:-:|:-:|:-:|:-:|:-:|\n"
    "|`cuCtxCreate`| | | | |`hipCtxCreate`|1.6.0|1.9.0| | | |\n"
    "|`CU_JIT_MAX_REGISTERS`| | | | |`HIPRTC_JIT_MAX_REGISTERS`|5.3.0| | | | |\n"
    "|`CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD_GROUP_ID`| | | | |"
    "`hipDeviceAttributeMultiGpuBoardGroupId`|5.0.0| | | | |\n"
    "|`cuMemsetD2D32`| | | | | | | | | | |\n"
)
BINDINGS = {
    "cyhip": "cdef hipError_t hipCtxCreate(hipCtx_t * ctx)\n"
    "cdef enum hipJitOption:\n    hipJitOptionMaxRegisters\n"
    "cdef hipError_t hipMemsetD2D32(hipDeviceptr_t dst, size_t pitch, unsigned int v)\n",
    "cyhiprtc": "cdef enum hiprtcJIT_option:\n    HIPRTC_JIT_MAX_REGISTERS\n",
    "cyhipblas": 'cdef extern from "hipblas/hipblas.h":\n'
    "cdef hipblasStatus_t hipblasGemmEx(hipblasHandle_t handle)\n"
    "cdef hipblasStatus_t hipblasSetMathMode(hipblasHandle_t handle)\n"
    "cdef hipblasStatus_t hipblasGemmEx_64(hipblasHandle_t handle)\n",
}


@pytest.fixture(scope="module")
def decls():
    stems = {s for stems in gen.BINDING_FILES.values() for s in stems}
    return gen.Declarations({**dict.fromkeys(stems, ""), **BINDINGS}, {})


def hipify_rows(text, api, column="HIP"):
    return {r["cuda"]: {**r, "api": api} for r in gen.parse_hipify_table(text, column)}


def test_rows_carry_the_answer_its_versions_and_the_roc_name():
    rows = gen.parse_hipify_table(CUBLAS, "HIP")
    assert rows[0] == {
        "cuda": "cublasGemmEx",
        "answer": {"name": "hipblasGemmEx_v2", "A": "6.0.0"},
        "roc": "rocblas_gemm_ex",
    }
    assert rows[2]["answer"] == {"name": ""}
    (ctx, *_) = gen.parse_hipify_table(DRIVER, "HIP")
    assert ctx["answer"] == {"name": "hipCtxCreate", "A": "1.6.0", "D": "1.9.0"}


def test_each_answer_is_checked_against_the_declarations(decls):
    rows = {**hipify_rows(CUBLAS, "cublas"), **hipify_rows(DRIVER, "driver")}
    secondary = {
        "CU_JIT_MAX_REGISTERS": {"hip": "hipJitOptionMaxRegisters", "_src": "interop"},
        "cuMemsetD2D32": {"hip": "hipMemsetD2D32", "_src": "interop"},
    }
    entries, why = gen.merge_hipify(rows, secondary, decls)
    # hipBLAS 3 declares the name without _v2; it takes hipDataType from ROCm 7.0 on.
    assert entries["cublasGemmEx"] == {
        "hip": "hipblasGemmEx",
        "api": "cublas",
        "since": gen.HIPBLAS_V3,
        "roc": "rocblas_gemm_ex",
    }
    assert entries["cublasSetMathMode"]["hip"] == "hipblasSetMathMode"
    assert entries["cublasSetMathMode"]["since"] == "6.1.0"
    # HIPIFY has no answer: the declared hipBLAS twin, or a lower source's declared name.
    assert entries["cublasGemmEx_64"]["hip"] == "hipblasGemmEx_64"
    assert entries["cuMemsetD2D32"]["hip"] == "hipMemsetD2D32"
    # Nothing declared anywhere: unsupported, with the ROC name as advice.
    assert entries["cublasHSHgemvBatched"] == {
        "hip": "",
        "api": "cublas",
        "roc": "rocblas_hshgemv_batched",
    }
    assert entries["cublasSgemmEx_64"]["hip"] == ""
    # HIPIFY's name is not declared by current HIP: unsupported, and said why.
    assert entries["CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD_GROUP_ID"]["hip"] == ""
    assert why["CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD_GROUP_ID"].startswith("undeclared")
    # CUjit_option is hipJitOption, so its options keep hipJitOption's enumerators.
    assert entries["CU_JIT_MAX_REGISTERS"] == {"hip": "hipJitOptionMaxRegisters", "api": "driver"}
    # Deprecation is kept with the name.
    assert entries["cuCtxCreate"] == {
        "hip": "hipCtxCreate",
        "api": "driver",
        "since": "1.6.0",
        "deprecated": "1.9.0",
    }


def test_plain_words_are_left_out(tmp_path):
    tables = tmp_path / "docs" / "tables"
    tables.mkdir(parents=True)
    for file in gen.HIPIFY_TABLES:
        (tables / file).write_text("")
    (tables / "CUDA_Runtime_API_functions_supported_by_HIP.md").write_text(
        "|**CUDA**|**A**|**D**|**C**|**R**|**HIP**|**A**|**D**|**C**|**R**|**E**|\n"
        "|`texture`| | | | |`texture`|1.6.0| | | | |\n"
        "|`cudaMalloc`| | | | |`hipMalloc`|1.5.0| | | | |\n"
    )
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "CUDA2HIP.cpp").write_text(
        "const std::map <llvm::StringRef, hipCounter> CUDA_INCLUDE_MAP {\n"
        '  {"cublas_v2.h", {"hipblas.h", "rocblas.h", CONV_INCLUDE_CUDA_MAIN_V2_H, API_BLAS, 0}},\n'
        "};\n"
    )
    names, headers = gen.read_hipify(tmp_path)
    assert set(names) == {"cudaMalloc"}
    assert headers == {"cublas_v2.h": ("hipblas.h", "rocblas.h")}


def test_undated_names_get_the_oldest_release_that_declares_them():
    dated = gen.dated_declarations(
        [
            ("6.2.0", "hip-python 6.2.0", {"hipFoo", "hipBar"}),
            ("5.2.3", "Debian HIP 5.2.3 headers", {"hipFoo"}),
        ]
    )
    assert [release for release, _, _ in dated] == ["5.2.3", "6.2.0"]
    development = [("rocm-bindings", {"hipFoo", "hipBar", "hipBaz"})]
    names = {
        "cudaFoo": {"hip": "hipFoo", "api": "runtime"},
        "cudaBar": {"hip": "hipBar", "api": "runtime"},
        "cudaBaz": {"hip": "hipBaz", "api": "runtime"},
        "cudaOld": {"hip": "hipFoo", "api": "runtime", "since": "1.6.0"},  # HIPIFY's version stays
        "cudaNone": {"hip": "", "api": "runtime"},
        "cudaUnknown": {"hip": "hipUnknown", "api": "runtime"},
    }
    counts = gen.date_from_declarations(names, dated, development)
    assert [names[n].get("since") for n in names] == [
        "5.2.3", "6.2.0", None, "1.6.0", None, None,
    ]  # fmt: skip
    # Only the development build declares hipBaz: it exists, its first release is not known.
    assert [n for n in names if names[n].get("release_unknown")] == ["cudaBaz"]
    assert counts == {
        "Debian HIP 5.2.3 headers": 1,
        "hip-python 6.2.0": 1,
        "rocm-bindings (development build: release unknown)": 1,
        "undated": 1,
    }


def test_a_build_whose_hip_is_not_its_rocm_release_is_a_development_build():
    bindings = (
        'ROCM_VERSION_NAME = rocm_version_name = "10.0.0"\n'
        'HIP_VERSION_NAME = hip_version_name = "7.15.26333-0000000"\n'
    )  # rocm-bindings-core 10.0.0.0.1.2's rocm/version.py
    assert gen.rocm_and_hip_versions(bindings) == ("10.0.0", "7.15.26333")
    assert gen.release_of(*gen.rocm_and_hip_versions(bindings)) is None
    hip_python = (
        'ROCM_VERSION_NAME = rocm_version_name = "7.2.0"\n'
        'HIP_VERSION_NAME = hip_version_name = "7.2.26015-fc0010cf6a"\n'
    )  # hip-python 7.2.0.562.43's hip/__init__.py
    assert gen.release_of(*gen.rocm_and_hip_versions(hip_python)) == "7.2.0"
    assert gen.release_of(gen.TRITON_HIP_ROCM, "6.2") == "6.2.4"
    with pytest.raises(SystemExit):
        gen.rocm_and_hip_versions("VERSION = '1'\n")


HEADER = """
#define DEPRECATED(msg) __attribute__ ((deprecated(msg)))
DEPRECATED("use hipHostMalloc instead")
hipError_t hipMemAllocHost(void** ptr, size_t size);
DEPRECATED("use roctracer/rocTX instead")
hipError_t hipProfilerStart();
DEPRECATED(DEPRECATED_MSG)
hipError_t hipCtxCreate(hipCtx_t* ctx, unsigned int flags, hipDevice_t device);
"""
PXD = """
# @brief Allocate pinned host memory [Deprecated]
#
# @warning  This API is deprecated, use hipHostMalloc() instead
cdef hipError_t hipMallocHost(void ** ptr,size_t size) nogil

# @brief Allocate pinned host memory
# @see hipHostFree, use hipHostMalloc() instead of nothing
cdef hipError_t hipHostMalloc(void ** ptr,size_t size,unsigned int flags) nogil
"""


def test_deprecation_messages_are_read_from_headers_and_declaration_comments():
    messages = gen.deprecation_messages({"hip_runtime_api.h": HEADER}, {"cyhip": PXD})
    assert messages == {
        "hipMemAllocHost": "use hipHostMalloc instead",
        "hipProfilerStart": "use roctracer/rocTX instead",
        "hipMallocHost": "@warning  This API is deprecated, use hipHostMalloc() instead",
    }


def test_a_deprecated_name_gets_its_successor_or_what_to_do():
    stems = {s for stems in gen.BINDING_FILES.values() for s in stems}
    declared = {
        "cyhip": BINDINGS["cyhip"] + "cdef hipError_t hipDeviceSynchronize()\n"
        "cdef hipError_t hipHostMalloc(void ** ptr,size_t size,unsigned int flags)\n",
        "cyhipsparse": "cdef hipsparseStatus_t hipsparseScsrgeam2(hipsparseHandle_t handle)\n",
    }
    decls = gen.Declarations({**dict.fromkeys(stems, ""), **declared}, {})
    entries = {
        "cuMemAllocHost": {"hip": "hipMemAllocHost", "api": "driver", "deprecated": "3.0.0"},
        "cuProfilerStart": {"hip": "hipProfilerStart", "api": "driver", "deprecated": "3.0.0"},
        "cuCtxSynchronize": {"hip": "hipCtxSynchronize", "api": "driver", "deprecated": "1.9.0"},
        "cuCtxCreate": {"hip": "hipCtxCreate", "api": "driver", "deprecated": "1.9.0"},
        "cusparseScsrgeam": {"hip": "hipsparseScsrgeam", "api": "cusparse", "removed": "6.0.0"},
        "cusparseScsrilu02": {"hip": "hipsparseScsrilu02", "api": "cusparse", "deprecated": "6.2"},
        "cudaBindTexture": {"hip": "hipBindTexture", "api": "runtime", "deprecated": "3.8.0"},
        "cudaDeviceSynchronize": {"hip": "hipDeviceSynchronize", "api": "runtime"},
        "cudaMallocHost": {"hip": "hipHostMalloc", "api": "runtime"},
        "cusparseScsrgeam2": {"hip": "hipsparseScsrgeam2", "api": "cusparse"},
    }
    messages = gen.deprecation_messages({"hip_runtime_api.h": HEADER}, {})
    overrides = {"replacement_patterns": {"^hipBindTexture": "hipCreateTextureObject"}}
    advice: dict[str, str] = {}
    counts = gen.deprecation_successors(entries, decls, messages, overrides, advice)
    got = {c: e.get("replacement") or e.get("no_successor") for c, e in entries.items()}
    assert got == {
        "cuMemAllocHost": "hipHostMalloc",  # HIP's message
        "cuProfilerStart": "use_roctracer_roctx",  # HIP's message names no single call
        "cuCtxSynchronize": "hipDeviceSynchronize",  # the device-level spelling
        "cuCtxCreate": "context",
        "cusparseScsrgeam": "hipsparseScsrgeam2",  # the next version of the call
        "cusparseScsrilu02": "hipsparse_legacy",
        "cudaBindTexture": None,  # hip_overrides.toml's pattern, applied when portlint loads
        "cudaDeviceSynchronize": None,
        "cudaMallocHost": None,
        "cusparseScsrgeam2": None,
    }
    assert advice["use_roctracer_roctx"] == "HIP's deprecation message says to use roctracer/rocTX"
    assert advice["context"].startswith("HIP deprecates its context API")
    assert set(advice) == {"use_roctracer_roctx", "context", "hipsparse_legacy"}
    assert counts["successor: hip_overrides.toml"] == 1
    assert "none found" not in counts


def test_a_successor_that_is_itself_deprecated_is_not_proposed(decls):
    entries = {
        "cusparseScsrmm": {"hip": "hipsparseScsrmm", "api": "cusparse", "deprecated": "5.0"},
        "cusparseScsrmm2": {"hip": "hipsparseScsrmm2", "api": "cusparse", "deprecated": "5.0"},
    }
    gen.deprecation_successors(entries, decls, {}, {}, {})
    assert "replacement" not in entries["cusparseScsrmm"]
    assert entries["cusparseScsrmm"]["no_successor"] == "hipsparse_legacy"


def test_debian_headers_are_read_per_release_without_the_nvidia_platform(tmp_path, monkeypatch):
    releases = {"libamdhip64-dev": "5.2.3", "libhiprand-dev": "5.3.3"}
    monkeypatch.setattr(gen, "debian_version", lambda package: releases.get(package, "5.3.3"))
    (tmp_path / "hip" / "nvidia_detail").mkdir(parents=True)
    (tmp_path / "hip" / "hip_runtime_api.h").write_text("hipError_t hipMalloc(void**, size_t);")
    (tmp_path / "hip" / "nvidia_detail" / "nvidia_hip_runtime_api.h").write_text(
        "#define __shfl_sync __shfl_sync_cuda"
    )
    (tmp_path / "hiprand").mkdir()
    (tmp_path / "hiprand" / "hiprand.h").write_text("hiprandStatus_t hiprandCreateGenerator();")
    (tmp_path / "hiprand" / "hiprand_kernel_nvcc.h").write_text("curandState hiprandState;")
    found = gen.read_debian_headers(tmp_path)
    assert sorted(found) == ["5.2.3", "5.3.3"]
    assert [p.split("/")[-1] for p in found["5.2.3"]] == ["hip_runtime_api.h"]
    assert [p.split("/")[-1] for p in found["5.3.3"]] == ["hiprand.h"]

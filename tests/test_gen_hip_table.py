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

#!/usr/bin/env python3
"""Generate ``rules/cxx/hip_map.toml``: the CUDA -> HIP identifier and header table.

Stdlib only. The HIPIFY tables are read from a local checkout; the other sources are fetched with
``pip download`` into a temporary directory and read as text out of the wheel zips. Nothing
foreign is imported or executed (the torch table is parsed with :mod:`ast`, the Cython
``.pxd``/``.pyx`` files and the C headers with regexes).

Getting the HIPIFY checkout (MIT-licensed; only its facts are used)::

    git clone https://github.com/ROCm/HIPIFY /tmp/HIPIFY
    git -C /tmp/HIPIFY checkout 014177bc2e434ce3e834aa4f3d0e2abb1efa9796
    python scripts/gen_hip_table.py /tmp/HIPIFY [--report]

Sources, and which one answers a CUDA name (first that applies wins):

1. ``rules/cxx/hip_overrides.toml`` -- hand corrections, each with its reason; merged over this
   table when portlint loads it, so they win over everything below.
2. HIPIFY ``docs/tables/*.md`` at ``HIPIFY_COMMIT``: one row per CUDA name with the HIP name (the
   MIOpen name for cuDNN), the ROC name (rocBLAS, rocSPARSE, ...) and the ROCm versions that added,
   deprecated, removed the HIP name or marked it experimental. Headers: ``src/CUDA2HIP.cpp``.
3. ``torch`` -- ``torch/utils/hipify/cuda_to_hip_mappings.py``: names HIPIFY lacks, and the
   answer where HIPIFY's HIP name is not declared by current HIP but torch's is.
4. ``hip-python-interop`` -- AMD's CUDA-named aliases of HIP (``cimport hipX as cudaY``): names
   neither table lists, and CUDA names HIPIFY marks unsupported that HIP has since gained.
5. The CUDA headers (from the ``triton`` wheel): the remaining functions, types, enum tags,
   enumerators, macros and device functions; a runtime ``cudaX`` is ``hipX`` when HIP declares it.

Declaration check: every HIP name the table proposes for the runtime, driver, device code,
cuComplex, NVRTC, cuBLAS(Lt), cuRAND, cuFFT, cuSPARSE, cuSOLVER and NCCL is looked up in current
HIP's declarations (``rocm-bindings-*`` Cython ``.pxd`` files, plus the HIP headers shipped with
``triton`` for macros and device functions). An undeclared name is replaced by its declared
spelling without ``_v2`` (hipBLAS 3, hipSOLVER) or with ``_t``, then by a lower source's declared
answer; failing that, the name is marked unsupported (or, when HIPIFY says HIP removed it, kept
with its ``removed`` version). MIOpen, hipCUB and device-side hipRAND have no declarations in those
packages; ``[unchecked]`` in ``hip_overrides.toml`` says why they are kept as HIPIFY gives them.
The names declared are also written to ``tests/data/hip_declared_names.txt`` for the tests.

Versions: HIPIFY's tables date most HIP names (``since``, ``deprecated``, ``removed``). A supported
name they do not date gets the oldest release whose HIP declarations are read here that declares
its HIP name (``dated_declarations``): Debian's HIP header packages (``libamdhip64-dev`` 5.2.3,
``libhiprand-dev``/``libhipsparse-dev``/``librocprim-dev`` 5.3.3: ``apt-get install`` them), the
hip-python releases built for ROCm 6.2.0 to 7.2.0 and triton's HIP 6.2 headers. Such a version
means "declared by the HIP X headers": the name may be older. Only ROCm releases date a name: a
source counts as one when the HIP version it records has its ROCm version's major.minor (ROCm
X.Y ships HIP X.Y; ``release_of``). The rocm-bindings are a development build (ROCm 10.0.0 but
HIP 7.15 in rocm-bindings-core's ``rocm/version.py``): a name only they declare gets no
``since`` but ``release_unknown = true``, and the releases are listed in ``[source] releases``.

Successors: a deprecated or removed HIP name gets the successor HIP's own deprecation message
names (``DEPRECATED("use hipHostMalloc instead")`` in the headers, "deprecated, use X() instead"
in the declarations' comments), else a declared, non-deprecated other spelling of it
(``successor_of``), else ``hip_overrides.toml``'s ``[replacements]``; where there is none, the key
of what to do instead (``[no_successor]``: HIP's message naming no single call, ``NO_SUCCESSOR``).

Run: ``python scripts/gen_hip_table.py HIPIFY_CHECKOUT [--out rules/cxx/hip_map.toml] [--report]``.
"""

from __future__ import annotations

import argparse
import ast
import re
import subprocess
import sys
import tempfile
import time
import zipfile
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEFAULT_OUT = REPO / "rules" / "cxx" / "hip_map.toml"
DECLARED_OUT = REPO / "tests" / "data" / "hip_declared_names.txt"

HIPIFY_REPO = "ROCm/HIPIFY"
HIPIFY_COMMIT = "014177bc2e434ce3e834aa4f3d0e2abb1efa9796"
#: HIPIFY table -> (portlint api, the column that holds the ROCm answer). cuDNN's HIP column is
#: hipDNN, which AMD retired: its answer is the MIOpen column.
HIPIFY_TABLES = {
    "CUDA_Runtime_API_functions_supported_by_HIP.md": ("runtime", "HIP"),
    "CUDA_Driver_API_functions_supported_by_HIP.md": ("driver", "HIP"),
    "CUDA_Device_API_supported_by_HIP.md": ("device", "HIP"),
    "cuComplex_API_supported_by_HIP.md": ("complex", "HIP"),
    "CUDA_RTC_API_supported_by_HIP.md": ("nvrtc", "HIP"),
    "CUBLAS_API_supported_by_HIP_and_ROC.md": ("cublas", "HIP"),
    "CURAND_API_supported_by_HIP_and_ROC.md": ("curand", "HIP"),
    "CUFFT_API_supported_by_HIP.md": ("cufft", "HIP"),
    "CUSPARSE_API_supported_by_HIP_and_ROC.md": ("cusparse", "HIP"),
    "CUSOLVER_API_supported_by_HIP_and_ROC.md": ("cusolver", "HIP"),
    "CUDNN_API_supported_by_HIP_and_MIOPEN.md": ("cudnn", "MIOPEN"),
    "CUB_API_supported_by_HIP.md": ("cub", "HIP"),
}
#: hipBLAS 3 (ROCm 7.0) dropped the ``_v2`` suffixes: the plain name takes hipDataType from then on.
HIPBLAS_V3 = "7.0.0"

TORCH = ("torch", "2.10.0", "macosx_11_0_arm64")
HIP_PY = "10.0.0.0.1.2"
INTEROP = ("hip-python-interop", HIP_PY, "manylinux_2_28_x86_64")
RB_HIP = ("rocm-bindings-hip", HIP_PY, "manylinux_2_28_x86_64")
RB_LIBS = ("rocm-bindings-libraries", HIP_PY, "manylinux_2_28_x86_64")
RB_SYS = ("rocm-bindings-systems", HIP_PY, "manylinux_2_28_x86_64")
# triton ships the CUDA headers (NVIDIA backend) and HIP 6.2 headers (AMD backend) side by side.
TRITON = ("triton", "3.5.1", "manylinux_2_27_x86_64")
TRITON_CUDA = "triton/backends/nvidia/include/"
TRITON_HIP = "triton/backends/amd/include/hip/"
# The HIP release of triton's HIP headers: hip_version.h says HIP 6.2.41134, the HIP of ROCm 6.2.1
# to 6.2.4; the last of those is taken, so that a version read from them is never too early.
TRITON_HIP_ROCM = "6.2.4"
# Versioned HIP declarations that date the names HIPIFY gives no version for (see
# ``dated_declarations``). hip-python releases are built per ROCm release (its version starts
# with the ROCm version) and ship the Cython declarations of HIP and its libraries (hip/c*.pxd);
# their wheels are for CPython 3.10. Debian ships HIP 5.2 headers as packages.
HIP_PYTHON = "hip-python"
HIP_PYTHON_RELEASES = (
    "6.2.0.499.16", "6.3.0.540.30", "6.4.0.549.36", "7.0.0.555.40", "7.1.0.555.40", "7.2.0.562.43",
)  # fmt: skip
HIP_PYTHON_PLATFORM = ("manylinux_2_17_x86_64", "3.10")
RB_CORE = ("rocm-bindings-core", HIP_PY, "manylinux_2_28_x86_64")  # rocm/version.py
DEBIAN_HIP_HEADERS = {  # Debian package -> the folder of /usr/include it installs
    "libamdhip64-dev": "hip",
    "libhiprand-dev": "hiprand",
    "libhipsparse-dev": "hipsparse",
    "librocprim-dev": "rocprim",
}
# CUDA headers that declare device functions (intrinsics, atomics, math, fp16/bf16, warp ops).
CUDA_DEVICE_HEADERS = [
    "sm_20_intrinsics.h",
    "sm_30_intrinsics.h",
    "sm_32_intrinsics.h",
    "sm_35_intrinsics.h",
    "sm_61_intrinsics.h",
    "sm_20_atomic_functions.h",
    "sm_32_atomic_functions.h",
    "sm_35_atomic_functions.h",
    "sm_60_atomic_functions.h",
    "device_atomic_functions.h",
    "crt/device_functions.h",
    "crt/device_double_functions.h",
    "crt/math_functions.h",
    "crt/sm_70_rt.h",
    "crt/sm_80_rt.h",
    "crt/sm_90_rt.h",
    "cuda_fp16.h",
    "cuda_bf16.h",
    "surface_functions.h",
    "texture_fetch_functions.h",
    "texture_indirect_functions.h",
    "surface_indirect_functions.h",
]
# CUDA host API headers: every function, type, enumerator and macro they declare is listed.
CUDA_API_HEADERS = [
    "cuda.h",
    "cuda_runtime_api.h",
    "driver_types.h",
    "texture_types.h",
    "surface_types.h",
    "library_types.h",
    "cuda_gl_interop.h",
    "cudaGL.h",
]
PY_VERSION = "3.11"

TORCH_FILE = "torch/utils/hipify/cuda_to_hip_mappings.py"
TORCH_NAME_MAPS = ("CUDA_IDENTIFIER_MAP", "CUDA_TYPE_NAME_MAP", "CUDA_SPECIAL_MAP")
TORCH_INCLUDE_MAP = "CUDA_INCLUDE_MAP"
INTEROP_FILES = tuple(
    f"cuda/bindings/{stem}.{ext}"
    for stem in ("cyruntime", "cydriver", "cynvrtc")
    for ext in ("pxd",)
) + tuple(f"cuda/bindings/{stem}.pyx" for stem in ("runtime", "driver", "nvrtc"))

# api -> rocm-bindings Cython declaration files whose names the HIP side of that api must be in.
BINDING_FILES = {
    "runtime": ("cyhip",),
    "driver": ("cyhip",),
    "nvrtc": ("cyhiprtc", "cyhip"),
    "cublas": ("cyhipblas",),
    "cublaslt": ("cyhipblaslt", "cyhipblas"),
    "curand": ("cyhiprand",),
    "cufft": ("cyhipfft",),
    "cusparse": ("cyhipsparse", "cyhipsparselt"),
    "cusolver": ("cyhipsolver",),
    "nccl": ("cyrccl",),
    "nvtx": ("cyroctx",),
}
# HIP names whose spelling marks them as a HIP (or HIP library) API symbol. Only those are
# checked against the declarations; device functions, hipCUB/rocThrust and plain C types are not
# covered by the bindings and are kept as the source gives them.
HIP_API_NAME = re.compile(r"^(hip|HIP|rocblas|ROCBLAS|rccl|nccl|NCCL)")
# Parts of an api that the bindings do not declare (device-side hipRAND, hipfftXt.h, rocTX macros).
NOT_CHECKABLE = re.compile(
    r"^(hiprand(_|State|Make|[0-9]*$)|hipfftXt|hipfftCallback|HIPFFT_CB_|roctx)"
)

# CUDA library headers -> the api whose HIP header the bindings declare (``cdef extern from``).
# The CUDA header names are fixed facts of the CUDA toolkit; the HIP side comes from the source.
LIBRARY_HEADERS = {
    "cublas.h": "cublas",
    "cublas_v2.h": "cublas",
    "cublas_api.h": "cublas",
    "cublasLt.h": "cublaslt",
    "curand.h": "curand",
    "cufft.h": "cufft",
    "cusparse.h": "cusparse",
    "cusparse_v2.h": "cusparse",
    "cusolverDn.h": "cusolver",
    "cusolverSp.h": "cusolver",
    "cusolverRf.h": "cusolver",
    "cusolver_common.h": "cusolver",
    "nccl.h": "nccl",
    "nvrtc.h": "nvrtc",
    "nvToolsExt.h": "nvtx",
}
# The one header no registry source names: cuDNN's counterpart, MIOpen, has no Python binding
# or Debian package here. portlint's DOMAIN.md (section 3) states cuDNN -> MIOpen.
DOMAIN_HEADERS = {"cudnn.h": "miopen/miopen.h"}

# CUB/Thrust/cooperative-groups identifiers live in namespaces; HIP keeps the member names.
NAMESPACES_FIXED = {
    "cub": "hipcub",  # torch: "cub::" -> "hipcub::"
    "thrust": "thrust",  # rocThrust keeps thrust::
    "cooperative_groups": "cooperative_groups",  # hip/hip_cooperative_groups.h
}


IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
COMPLEX = re.compile(
    r"^(cuC(add|sub|mul|div|abs|fma|real|imag)f?|cuConjf?|make_cu(Float|Double)?Complex|"
    r"cu(Float|Double)?Complex)$"
)
PREFIX_API = (
    (re.compile(r"^(cudnn|CUDNN_)"), "cudnn"),
    (re.compile(r"^(cublasLt|CUBLASLT_)"), "cublaslt"),
    (re.compile(r"^(cublas|CUBLAS_)"), "cublas"),
    (re.compile(r"^(curand|CURAND_|mtgp32)"), "curand"),
    (re.compile(r"^(cufft|CUFFT_)"), "cufft"),
    (re.compile(r"^(cusparse|CUSPARSE)"), "cusparse"),
    (re.compile(r"^(cusolver|CUSOLVER_|syevj|gesvdj)"), "cusolver"),
    (re.compile(r"^(nvrtc|NVRTC_)"), "nvrtc"),
    (re.compile(r"^(nccl|NCCL_)"), "nccl"),
    (re.compile(r"^(nvtx|NVTX_)"), "nvtx"),
    (re.compile(r"^(nvml|NVML_)"), "other"),
    (re.compile(r"^__"), "device"),
)
TORCH_API = {
    "API_DRIVER": "driver",
    "API_RUNTIME": "runtime",
    "API_BLAS": "cublas",
    "API_RAND": "curand",
    "API_FFT": "cufft",
    "API_RTC": "nvrtc",
    "API_ROCTX": "nvtx",
    "API_ROCMSMI": "other",
}


def classify(name: str, torch_api: str | None = None) -> str:
    """The portlint ``api`` of a CUDA identifier, from its spelling (torch's tag breaks ties)."""
    if COMPLEX.match(name):
        return "complex"
    for pattern, api in PREFIX_API:
        if pattern.match(name):
            return api
    if name.startswith(("cuda", "CUDART_")):
        return "runtime"
    if name.startswith("CUDA"):
        return "driver" if torch_api == "API_DRIVER" else "runtime"
    if re.match(r"^(cu[A-Z]|CU)", name):
        return "runtime" if torch_api == "API_RUNTIME" else "driver"
    return TORCH_API.get(torch_api or "", "other")


# --------------------------------------------------------------------------- fetching


def pip_download(spec: tuple[str, str, str], dest: Path, python: str = PY_VERSION) -> Path:
    name, version, platform = spec
    cmd = [
        sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
        "--only-binary=:all:", "--platform", platform, "--python-version", python,
        f"{name}=={version}", "-d", str(dest),
    ]  # fmt: skip
    subprocess.run(cmd, check=True)
    stem = name.replace("-", "_")
    wheels = sorted(dest.glob(f"{stem}-{version}-*.whl"))
    if not wheels:
        raise SystemExit(f"pip download of {name}=={version} produced no wheel in {dest}")
    return wheels[0]


def read_members(wheel: Path, names) -> dict[str, str]:
    with zipfile.ZipFile(wheel) as zf:
        have = set(zf.namelist())
        out = {}
        for n in names:
            if n not in have:
                raise SystemExit(f"{wheel.name} lacks {n}")
            out[n] = zf.read(n).decode("utf-8")
        return out


def read_matching(wheel: Path, pattern: str) -> dict[str, str]:
    rx = re.compile(pattern)
    with zipfile.ZipFile(wheel) as zf:
        return {n: zf.read(n).decode("utf-8") for n in sorted(zf.namelist()) if rx.search(n)}


# --------------------------------------------------------------------------- parsing


def parse_torch(text: str) -> dict[str, list[tuple[str, list[str]]]]:
    """Return {map name: [(cuda, [hip, annotations...])]} for the OrderedDict literals."""

    def value(node: ast.AST) -> str:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        if isinstance(node, ast.Name):  # API_* / CONV_* / HIP_UNSUPPORTED / _RCCL_HEADER
            return node.id
        raise ValueError(f"unexpected node {ast.dump(node)}")

    maps: dict[str, list[tuple[str, list[str]]]] = {}
    for stmt in ast.parse(text).body:
        if not (isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Call)):
            continue
        target = stmt.targets[0]
        args = stmt.value.args
        if not (isinstance(target, ast.Name) and args and isinstance(args[0], ast.List)):
            continue
        entries = []
        for elt in args[0].elts:
            key, val = elt.elts
            vals = [value(v) for v in val.elts] if isinstance(val, ast.Tuple) else [value(val)]
            entries.append((value(key), vals))
        maps[target.id] = entries
    for needed in (*TORCH_NAME_MAPS, TORCH_INCLUDE_MAP):
        if needed not in maps:
            raise SystemExit(f"torch table lacks {needed}: layout changed")
    return maps


_CIMPORT_AS = re.compile(r"^from rocm\.bindings\.(cyhip|cyhiprtc) cimport (\w+) as (\w+)\s*$", re.M)
_PYX_ALIAS = re.compile(r"^\s*(\w+) = (?:cy)?(?:hip|hiprtc)\.(\w+)\s*$", re.M)
_CUDA_SIDE = re.compile(r"^(cu|CU|nvrtc|NVRTC)")


def parse_interop(files: dict[str, str]) -> dict[str, str]:
    """CUDA name -> HIP name for every alias the HIP Python interop layer defines."""
    pairs: dict[str, str] = {}
    for path, text in sorted(files.items()):
        if path.endswith(".pxd"):
            found = [(m.group(3), m.group(2)) for m in _CIMPORT_AS.finditer(text)]
        else:
            found = [(m.group(1), m.group(2)) for m in _PYX_ALIAS.finditer(text)]
        for cuda, hip in found:
            if _CUDA_SIDE.match(cuda) and not cuda.startswith(("hip", "HIP")):
                pairs.setdefault(cuda, hip)
    return pairs


_PXD_COMMENT = re.compile(r"#.*$", re.M)
_PXD_STRING = re.compile(r'"[^"\n]*"')
_TOKEN = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]*\b")
_EXTERN = re.compile(r'^cdef extern from "([^"]+)"', re.M)


def declared_names(text: str) -> set[str]:
    body = _PXD_STRING.sub(" ", _PXD_COMMENT.sub("", text))
    return set(_TOKEN.findall(body))


# Float/double math intrinsics of crt/device_functions.h that clang's HIP math header provides.
MATH_INTRINSIC = re.compile(
    r"^(__[df](add|sub|mul|div|rcp|sqrt)_r[dnuz]|__fmaf?_(ieee_)?r[dnuz]|__frsqrt_rn|"
    r"__(cos|sin|tan|tanh|exp|exp10|log|log2|log10|pow|sincos)f|__fdividef|fdividef?|__saturatef)$"
)
_C_COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
_DEVICE_DECL = re.compile(
    r"(?:__device__|DECL__|__device_builtin__)[^;{}()]*?\b([A-Za-z_]\w*)\s*\("
)
_API_FUNC = re.compile(r"\b(?:CUDAAPI|CUDARTAPI)\s+(\w+)\s*\(")
_ENUMERATOR = re.compile(r"^\s*((?:cu|CU|cuda|CUDA)\w*)\s*(?:=[^,\n]*)?,?\s*$", re.M)
_TYPEDEF = re.compile(
    r"\btypedef\b[^;{]*?\b((?:cu|CU|cuda|CUDA)\w*)\s*;|}\s*((?:cu|CU|cuda|CUDA)\w*)\s*;"
)
# Enum and struct tags: ``enum __device_builtin__ cudaMemPoolAttr {``, ``enum CUarray_format_enum``.
_TAG = re.compile(r"\b(?:enum|struct)\s+(?:__device_builtin__\s+)?((?:cu|CU|cuda|CUDA)\w*)\s*\{")
_DEFINE = re.compile(r"^\s*#\s*define\s+((?:cu|CU|cuda|CUDA)\w*)\b(?!\()", re.M)
_DEFINE_ANY = re.compile(r"^\s*#\s*define\s+(\w+)\b(?!\()", re.M)
_INTERNAL = re.compile(
    r"(_ptds|_ptsz|_H_?|_INCLUDED|_DEPRECATED\w*|API|APIENTRY|API_CDECL|_CB)$|^_"
)


def c_tokens(text: str) -> set[str]:
    return set(_TOKEN.findall(_C_COMMENT.sub(" ", text)))


def cuda_device_functions(files: dict[str, str]) -> dict[str, str]:
    """Device function name -> the first CUDA header (in CUDA_DEVICE_HEADERS order) declaring it."""
    out: dict[str, str] = {}
    for header in CUDA_DEVICE_HEADERS:
        for m in _DEVICE_DECL.finditer(_C_COMMENT.sub(" ", files.get(header, ""))):
            name = m.group(1)
            if name.isupper() or name.startswith(("__nv", "__cuda", "__internal", "_cuda")):
                continue
            out.setdefault(name, header)
    return out


def cuda_api_names(files: dict[str, str]) -> set[str]:
    out: set[str] = set()
    for text in files.values():
        body = _C_COMMENT.sub(" ", text)
        out.update(_API_FUNC.findall(body))
        out.update(_ENUMERATOR.findall(body))
        out.update(a or b for a, b in _TYPEDEF.findall(body))
        out.update(_DEFINE.findall(body))
        out.update(_TAG.findall(body))
    return {n for n in out if not _INTERNAL.search(n)}


class Declarations:
    """What current HIP declares: the rocm-bindings Cython files per library, and the HIP headers
    (macros, device functions, cuComplex) for the runtime, driver and device code."""

    def __init__(self, bindings: dict[str, str], hip_headers: dict[str, str]) -> None:
        self.by_stem = {stem: declared_names(text) for stem, text in bindings.items()}
        # The bindings leave out most object-like macros (flags such as hipHostRegisterReadOnly):
        # a macro the HIP headers define counts as declared for the runtime/driver apis.
        macros = {
            m
            for text in hip_headers.values()
            for m in _DEFINE_ANY.findall(_C_COMMENT.sub(" ", text))
        }
        self.by_stem["cyhip"] = self.by_stem["cyhip"] | macros
        self.hip_tokens = set().union(*(c_tokens(t) for t in hip_headers.values()))
        self.externs = {stem: _EXTERN.findall(text) for stem, text in bindings.items()}
        self.header_checked = (self.hip_tokens, self.by_stem["cyhip"], self.by_stem["cyhiprtc"])

    def checkable(self, api: str, hip: str, cuda: str = "") -> bool:
        if api == "device" and hip == cuda:
            # Same-named device and math functions come from clang's HIP headers, which no
            # package here ships.
            return False
        if api in HEADER_CHECKED:
            return bool(IDENT.match(hip)) and not NOT_CHECKABLE.match(hip)
        return (
            bool(BINDING_FILES.get(api))
            and bool(HIP_API_NAME.match(hip))
            and not (NOT_CHECKABLE.match(hip))
        )

    def is_declared(self, api: str, hip: str, cuda: str = "") -> bool | None:
        """True/False when the declarations cover this HIP name, None when they cannot tell."""
        if not self.checkable(api, hip, cuda):
            return None
        if api in HEADER_CHECKED:
            return any(hip in names for names in self.header_checked)
        return any(hip in self.by_stem[s] for s in BINDING_FILES[api])

    def variant(self, api: str, hip: str) -> str | None:
        """A declared spelling of a stale HIP name: without a _v2/_v3 suffix, or with _t."""
        for cand in (re.sub(r"_v[0-9](?=(_64)?$)", "", hip), hip + "_t"):
            if cand != hip and self.is_declared(api, cand):
                return cand
        return None

    def names(self) -> set[str]:
        """Every declared HIP-side identifier (for the tests' committed list)."""
        out = set(self.hip_tokens)
        for stem in {s for stems in BINDING_FILES.values() for s in stems}:
            out |= self.by_stem.get(stem, set())
        return {n for n in out if DECLARED_LIST_NAME.match(n)}


# The runtime, driver, device and cuComplex answers are checked whatever their spelling (hipX,
# HIP_X, make_hipX, __hip_X) against the HIP and hipRTC bindings and the HIP headers.
HEADER_CHECKED = frozenset({"runtime", "driver", "device", "complex"})
DECLARED_LIST_NAME = re.compile(r"^_*(hip|HIP|make_hip|rocblas|rccl|nccl|NCCL|roctx)\w*$")


# --------------------------------------------------------------------------- HIPIFY

#: How CUDA's own names are spelled (prefixes no user code should use for its own names).
CUDA_SPELLING = re.compile(r"^(cu|CU|_*[Cc]ub|_*CUB|__|nv|NV|make_cu|atomic)")
_ROW = re.compile(r"^\|`([^`]+)`\|")
_VERSION = re.compile(r"^\d+\.\d+(\.\d+)?$")


def _column_block(columns: list[str], cells: list[str], name: str) -> dict[str, str]:
    """The name under column ``name`` and the versions in the A/D/C/R/E columns after it."""
    if name not in columns:
        return {}
    i = columns.index(name)
    out = {"name": cells[i]}
    for key, cell in zip(columns[i + 1 : i + 6], cells[i + 1 : i + 6], strict=True):
        if len(key) == 1 and key in "ADCRE" and _VERSION.match(cell):
            out[key] = cell
    return out


def parse_hipify_table(text: str, answer_column: str) -> list[dict]:
    """Rows of one HIPIFY markdown table: the CUDA name, the ROCm answer with its versions
    (A = added, D = deprecated, C = changed, R = removed, E = experimental) and the ROC name."""
    rows = []
    columns: list[str] = []
    for line in text.splitlines():
        if line.startswith("|**CUDA**"):
            columns = [c.strip("*") for c in line.strip().strip("|").split("|")]
            continue
        if not _ROW.match(line) or not columns:
            continue
        cells = [c.strip().strip("`") for c in line.strip().strip("|").split("|")]
        if len(cells) != len(columns):
            raise SystemExit(f"HIPIFY row with {len(cells)} cells, header has {len(columns)}")
        rows.append(
            {
                "cuda": cells[0],
                "answer": _column_block(columns, cells, answer_column),
                "roc": _column_block(columns, cells, "ROC").get("name", ""),
            }
        )
    return rows


def read_hipify(root: Path) -> tuple[dict[str, dict], dict[str, tuple[str, str]]]:
    """{CUDA name: row with api} from every table, and {CUDA header: (HIP header, ROC header)}."""
    names: dict[str, dict] = {}
    for file, (api, column) in HIPIFY_TABLES.items():
        path = root / "docs" / "tables" / file
        if not path.is_file():
            raise SystemExit(f"{path}: missing (is {root} a HIPIFY checkout?)")
        for row in parse_hipify_table(path.read_text(encoding="utf-8"), column):
            if not IDENT.match(row["cuda"]):
                continue
            answer = row["answer"].get("name", "")
            if not CUDA_SPELLING.match(row["cuda"]) and (not answer or answer == row["cuda"]):
                # A plain word (texture, saturate, umin, GLenum, csrqrInfo): as likely a user's
                # own identifier as CUDA's, and there is nothing to rename it to.
                continue
            row["api"] = classify(row["cuda"]) if api == "cublas" else api
            names.setdefault(row["cuda"], row)
    cpp = (root / "src" / "CUDA2HIP.cpp").read_text(encoding="utf-8")
    body = cpp[cpp.index("CUDA_INCLUDE_MAP") :]
    body = body[: body.index("};")]
    headers = {
        m.group(1): (m.group(2), m.group(3))
        for m in re.finditer(r'\{"([^"]+)",\s*\{"([^"]*)",\s*"([^"]*)"', body)
    }
    return names, headers


def hipify_commit(root: Path) -> str | None:
    try:
        out = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True
        )
    except OSError:
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def vt(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in version.split("."))


#: CUDA names whose HIPIFY answer contradicts HIPIFY's own answer for their type: CUjit_option is
#: hipJitOption, but its CU_JIT_* options go to hiprtcJIT_option's HIPRTC_JIT_*, which C++ does not
#: convert to hipJitOption (what hipModuleLoadDataEx takes). The lower sources' hipJitOption*
#: answers are used. (CU_JIT_INPUT_* stay with CUjitInputType -> hiprtcJITInputType.)
PREFER_OTHER = re.compile(r"^CU_JIT_(?!INPUT_|NUM_INPUT_TYPES)")
VERSION_COLUMNS = (("A", "since"), ("D", "deprecated"), ("R", "removed"), ("E", "experimental"))


#: Libraries whose hip* layer mirrors the CUDA library name for name (hipBLAS, hipSPARSE...):
#: a CUDA name HIPIFY leaves unanswered is answered by its declared twin (cublasX_64 ->
#: hipblasX_64, CUSPARSE_SIDE_LEFT -> HIPSPARSE_SIDE_LEFT). Not the runtime or driver, whose
#: lookalikes can differ in arguments (cudaGraphAddNode_v2 and hipGraphAddNode).
LIBRARY_TWINS = {
    "cublas": ("cublas", "hipblas"),
    "cublaslt": ("cublasLt", "hipblasLt"),
    "curand": ("curand", "hiprand"),
    "cufft": ("cufft", "hipfft"),
    "cusparse": ("cusparse", "hipsparse"),
    "cusolver": ("cusolver", "hipsolver"),
}


def library_twin(api: str, cuda: str, decls: Declarations) -> str | None:
    lower, hip_lower = LIBRARY_TWINS[api]
    for cuda_prefix, hip_prefix in (
        (lower, hip_lower),
        (lower.upper() + "_", hip_lower.upper() + "_"),
    ):
        if cuda.startswith(cuda_prefix):
            twin = hip_prefix + cuda[len(cuda_prefix) :]
            for cand in (twin, re.sub(r"_v2(?=(_64)?$)", "", twin)):
                if decls.is_declared(api, cand):
                    return cand
    return None


def merge_hipify(hipify: dict[str, dict], secondary: dict[str, dict], decls: Declarations):
    """The HIPIFY rows as table entries, each checked against current HIP's declarations.
    Returns (entries, why) where ``why[cuda]`` explains an answer that differs from HIPIFY's."""
    entries: dict[str, dict] = {}
    why: dict[str, str] = {}
    for cuda, row in hipify.items():
        api = row["api"]
        answer = row["answer"]
        hip = answer.get("name", "")
        entry = {"hip": hip, "api": api}
        for key, field in VERSION_COLUMNS:
            if key in answer and hip:
                entry[field] = answer[key]
        if row["roc"]:
            entry["roc"] = row["roc"]
        if api == "cudnn" and hip:
            entry["manual"] = True  # MIOpen is not cuDNN under new names: PRT703
        roc = {"roc": row["roc"]} if row["roc"] else {}
        other = secondary.get(cuda, {})
        other_hip = other.get("hip", "")
        source = {"torch": "torch", "interop": "hip-python-interop", "rccl": "RCCL"}.get(
            other.get("_src", ""), "the CUDA headers"
        )
        if hip and PREFER_OTHER.match(cuda) and other_hip and decls.is_declared(api, other_hip):
            entry = {"hip": other_hip, "api": api, **roc}  # HIPIFY's versions are its name's
            why[cuda] = f"consistency: {other_hip} ({source}) instead of {hip}"
        elif hip and decls.is_declared(api, hip, cuda) is False:
            variant = decls.variant(api, hip)
            if variant:
                entry["hip"] = variant
                if api.startswith("cublas") and "_v2" in hip:
                    entry["since"] = HIPBLAS_V3
                why[cuda] = f"declared-variant: HIP declares {variant}, not {hip}"
            elif other_hip and decls.is_declared(api, other_hip):
                entry = {"hip": other_hip, "api": api, **roc}
                why[cuda] = f"other-source: {hip} is not declared; {source} gives {other_hip}"
            elif "removed" in entry:
                why[cuda] = f"removed: HIP removed {hip} in {entry['removed']}"
            else:
                entry = {"hip": "", "api": api, **roc}
                why[cuda] = f"undeclared: current HIP does not declare {hip}"
        elif not hip and other_hip:
            if other_hip == cuda:  # a device function HIP now has under the CUDA name
                declared = api == "device" and cuda in decls.hip_tokens
            else:
                declared = decls.is_declared(api, other_hip, cuda)
            if declared:
                entry["hip"] = other_hip
                why[cuda] = f"revived: HIPIFY has no answer; {source} gives {other_hip}, declared"
        if not entry["hip"] and api in LIBRARY_TWINS:
            twin = library_twin(api, cuda, decls)
            if twin:
                entry["hip"] = twin
                why[cuda] = f"twin: HIPIFY has no answer; current {api} twin {twin} is declared"
        if other.get("manual") and entry["hip"]:
            entry["manual"] = True
            if other.get("note"):
                entry["note"] = other["note"]
        entries[cuda] = entry
    return entries, why


def final_headers(
    hipify_headers: dict[str, tuple[str, str]], secondary_headers: dict[str, str], decls
) -> dict[str, str]:
    """Headers: the secondary sources' answers (current paths such as ``hipblas/hipblas.h``)
    win; HIPIFY adds the rest, with a bare library header moved to the folder current ROCm
    installs it in."""
    installed = {Path(h).name: h for paths in decls.externs.values() for h in paths if "/" in h}
    headers = dict(secondary_headers)
    for cuda, (hip, _roc) in hipify_headers.items():
        if not hip or cuda in headers or not re.search(r"\.(h|hpp|cuh)$", cuda):
            continue
        if cuda.startswith("caffe2/"):  # PyTorch's own headers, not CUDA's
            continue
        headers[cuda] = installed.get(hip, hip) if "/" not in hip else hip
    return headers


def build_secondary(
    torch_text: str,
    interop_files: dict[str, str],
    decls: Declarations,
    cuda_headers: dict[str, str],
):
    stats: Counter = Counter()
    notes: dict[str, list[str]] = {
        "removed": [], "revived": [], "added": [], "renamed": [], "device_renamed": [],
    }  # fmt: skip
    decl = decls.by_stem
    hip_tokens = decls.hip_tokens
    externs = decls.externs
    is_declared = decls.is_declared
    declared_variant = decls.variant

    maps = parse_torch(torch_text)
    names: dict[str, dict] = {}
    namespaces: dict[str, str] = dict(NAMESPACES_FIXED)

    # 1. torch
    for map_name in TORCH_NAME_MAPS:
        for cuda, vals in maps[map_name]:
            hip = vals[0]
            torch_api = next((v for v in vals[1:] if v.startswith("API_")), None)
            unsupported = "HIP_UNSUPPORTED" in vals
            stats["torch_entries"] += 1
            if "::" in cuda:
                ns_c, _, member_c = cuda.rpartition("::")
                ns_h, _, member_h = hip.rpartition("::")
                if member_c == member_h or not member_c:
                    namespaces.setdefault(ns_c, ns_h)
                elif IDENT.match(member_c) and IDENT.match(member_h):
                    stats["torch_namespaced_renames"] += 1
                stats["torch_namespaced"] += 1
                continue
            if not IDENT.match(cuda) or not IDENT.match(hip):
                stats["torch_skipped_not_identifier"] += 1
                continue
            if cuda in names:
                stats["torch_duplicates"] += 1
                continue
            api = classify(cuda, torch_api)
            names[cuda] = {
                "hip": "" if unsupported else hip,
                "api": api,
                "_cand": hip,
                "_src": "torch",
            }
            stats["torch_unsupported" if unsupported else "torch_supported"] += 1

    # 2. hip-python-interop: names current HIP supports under a CUDA spelling.
    interop = parse_interop(interop_files)
    stats["interop_pairs"] = len(interop)
    for cuda, hip in sorted(interop.items()):
        if not (IDENT.match(cuda) and IDENT.match(hip)):
            continue
        entry = names.get(cuda)
        if entry is None:
            names[cuda] = {"hip": hip, "api": classify(cuda), "_cand": hip, "_src": "interop"}
            notes["added"].append(cuda)
        elif not entry["hip"]:
            entry["hip"] = entry["_cand"] = hip
            entry["_src"] = "interop"
            notes["revived"].append(cuda)
        elif entry["hip"] != hip and is_declared(entry["api"], entry["hip"]) is False:
            notes["renamed"].append(f"{cuda}: {entry['hip']} -> {hip}")
            entry["hip"] = entry["_cand"] = hip
        entry = names[cuda]
        entry["_interop"] = True

    # 3. NCCL: RCCL declares the NCCL API under the same names.
    for name in sorted(decl.get("cyrccl", ())):
        if re.match(r"^(nccl|NCCL_)", name):
            names.setdefault(name, {"hip": name, "api": "nccl", "_cand": name, "_src": "rccl"})
            stats["nccl_names"] += 1

    # 4. device functions: HIP keeps the CUDA names; a *_sync warp op HIP lacks falls back to
    # the maskless form (arguments differ: manual).
    # The CUDA math library (crt/math_functions.h, device_double_functions.h) is provided on
    # AMD by clang's __clang_hip_math.h, which no registry package here ships: a math name the
    # HIP headers do not mention is left out rather than called unsupported.
    for name, header in sorted(cuda_device_functions(cuda_headers).items()):
        if name in names or not IDENT.match(name):
            continue
        stats["device_functions"] += 1
        if name in hip_tokens:
            names[name] = {"hip": name, "api": "device"}
        elif name.endswith("_sync") and name[: -len("_sync")] in hip_tokens:
            names[name] = {
                "hip": name[: -len("_sync")],
                "api": "device",
                "manual": True,
                "note": "HIP declares only the form without _sync, whose arguments differ",
            }
            notes["device_renamed"].append(name)
        elif header in ("crt/math_functions.h", "crt/device_double_functions.h") or (
            MATH_INTRINSIC.match(name)
        ):
            stats["device_math_left_out"] += 1
        else:
            names[name] = {"hip": "", "api": "device"}

    # 5. the rest of the CUDA host API (functions, types, enumerators, macros of the CUDA
    # headers) that neither table maps: a runtime cudaX is supported when HIP declares hipX,
    # anything else is unsupported.
    api = {k: v for k, v in cuda_headers.items() if k in CUDA_API_HEADERS}
    for name in sorted(cuda_api_names(api)):
        if name in names or not IDENT.match(name):
            continue
        kind = classify(name, "API_DRIVER" if re.match(r"^(cu[A-Z]|CU)", name) else None)
        hip = ""
        if name.startswith("cuda") and "hip" + name[4:] in decl["cyhip"]:
            hip = "hip" + name[4:]
        names[name] = {"hip": hip, "api": kind, "_interop": True, "_src": "cuda-headers"}
        stats["cuda_header_names_supported" if hip else "cuda_header_names_unsupported"] += 1

    # 6. check proposed HIP names against the current HIP declarations.
    for cuda, entry in names.items():
        hip = entry["hip"]
        if hip and not entry.get("_interop") and is_declared(entry["api"], hip) is False:
            variant = declared_variant(entry["api"], hip)
            entry["hip"] = variant or ""
            notes["renamed" if variant else "removed"].append(f"{cuda}: {hip} -> {variant or '-'}")

    # headers
    headers: dict[str, str] = {}
    for cuda, vals in maps[TORCH_INCLUDE_MAP]:
        hip = vals[0]
        if hip == "_RCCL_HEADER":
            hip = "rccl/rccl.h"
        cuda = re.sub(r'^include [<"]', "", cuda).strip("<>")
        hip = re.sub(r'^include [<"]', "", hip).strip("<>")
        if not re.search(r"\.(h|hpp|cuh)$", cuda):
            stats["headers_skipped_prefix"] += 1  # e.g. thrust/system/cuda path prefix
            continue
        headers.setdefault(cuda, "" if "HIP_UNSUPPORTED" in vals else hip)
    for cuda_header, api in LIBRARY_HEADERS.items():
        hip_headers = [h for s in BINDING_FILES.get(api, ())[:1] for h in externs.get(s, ())]
        if hip_headers and cuda_header not in headers:
            headers[cuda_header] = hip_headers[0]
    for cuda_header, hip_header in DOMAIN_HEADERS.items():
        headers.setdefault(cuda_header, hip_header)

    return names, headers, namespaces, stats, notes


# --------------------------------------------------------------------------- versions


def version_key(text: str) -> tuple[int, ...]:
    parts = [int(p) for p in text.split(".")]
    return tuple(parts + [0] * (3 - len(parts)))


def debian_version(package: str) -> str | None:
    """The upstream release of an installed Debian package (``5.2.3-8`` -> ``5.2.3``)."""
    try:
        out = subprocess.run(
            ["dpkg-query", "-W", "-f=${Version}", package], capture_output=True, text=True
        )
    except OSError:
        return None
    m = re.match(r"^(?:\d+:)?(\d+\.\d+\.\d+)", out.stdout.strip())
    return m.group(1) if out.returncode == 0 and m else None


#: Headers for HIP's NVIDIA platform (nvidia_detail/, hiprand_nvcc.h): a name they declare need
#: not exist on AMD GPUs.
NVIDIA_SIDE = re.compile(r"nvidia_detail|nvcc")


def read_debian_headers(root: Path = Path("/usr/include")) -> dict[str, dict[str, str]]:
    """{release: {path: text}} of the Debian HIP header packages installed here."""
    out: dict[str, dict[str, str]] = {}
    for package, folder in DEBIAN_HIP_HEADERS.items():
        version = debian_version(package)
        if version is None:
            raise SystemExit(f"{package} is not installed: apt-get install {package}")
        for path in sorted((root / folder).rglob("*")):
            if (
                path.suffix in (".h", ".hpp")
                and path.is_file()
                and not NVIDIA_SIDE.search(path.name + str(path.parent))
            ):
                text = path.read_text(encoding="utf-8", errors="replace")
                out.setdefault(version, {})[str(path)] = text
    return out


def rocm_and_hip_versions(version_py: str) -> tuple[str, str]:
    """The ROCm and HIP versions a hip-python or rocm-bindings version module records."""
    found = []
    for field in ("ROCM_VERSION_NAME", "HIP_VERSION_NAME"):
        m = re.search(rf'^{field} = \w+ = "(\d+\.\d+[\d.]*)', version_py, re.M)
        if not m:
            raise SystemExit(f"version module lacks {field}: layout changed")
        found.append(m.group(1).rstrip("."))
    return found[0], found[1]


def release_of(rocm: str, hip: str) -> str | None:
    """``rocm`` when it is a ROCm release, else None: ROCm X.Y ships HIP X.Y, so a build whose HIP
    version has another major.minor (rocm-bindings 10.0.0: HIP 7.15) is a development build."""
    return rocm if rocm.split(".")[:2] == hip.split(".")[:2] else None


def dated_declarations(
    releases: list[tuple[str, str, set[str]]],
) -> list[tuple[str, str, set[str]]]:
    """The (ROCm release, source, declared identifiers) triples, oldest release first."""
    return sorted(releases, key=lambda r: version_key(r[0]))


def date_from_declarations(names: dict[str, dict], dated, development=()) -> Counter:
    """Give a supported name with no version its ``since``: the oldest release in ``dated`` that
    declares its HIP name. Such a version is an upper bound (the name may be older than the
    oldest declarations read). A name only a development build in ``development`` ((source,
    declared identifiers) pairs) declares gets ``release_unknown``: it exists, but in which
    release is not known. Returns how many names each source dated."""
    counts: Counter = Counter()
    for entry in names.values():
        hip = entry.get("hip", "")
        if not hip or entry.get("since") or not IDENT.match(hip):
            continue
        found = next(((v, src) for v, src, declared in dated if hip in declared), None)
        if found is not None:
            entry["since"] = found[0]
            counts[found[1]] += 1
        elif dev := next((src for src, declared in development if hip in declared), None):
            entry["release_unknown"] = True
            counts[f"{dev} (development build: release unknown)"] += 1
        else:
            counts["undated"] += 1
    return counts


# --------------------------------------------------------------------------- successors

#: ``DEPRECATED("use hipHostMalloc instead")``, ``__attribute__((deprecated("...")))``,
#: ``[[deprecated("...")]]`` before a declaration: (message, declared name).
_C_DEPRECATED = re.compile(
    r'\b(?:DEPRECATED|deprecated|__deprecated__)\s*\(\s*"([^"]*)"\s*\)[\s)\]]*'
    r"[^;{}()\"]*?\b([A-Za-z_]\w*)\s*\("
)
_PXD_DECL = re.compile(r"^cdef\s+[^#\n]*?\b([A-Za-z_]\w*)\s*\(")
#: "use hipHostMalloc instead", "use hipHostMalloc() instead", "use roctracer/rocTX instead".
_USE_INSTEAD = re.compile(r"\buse\s+`?([\w/:.]+?)(?:\(\))?`?\s+instead\b", re.I)


def deprecation_messages(headers: dict[str, str], pxds: dict[str, str]) -> dict[str, str]:
    """HIP name -> the deprecation message its declaration carries: the C headers' deprecated
    attributes and the doc comments of the Cython declarations (generated from HIP's headers)."""
    out: dict[str, str] = {}
    for text in headers.values():
        for message, name in _C_DEPRECATED.findall(_C_COMMENT.sub(" ", text)):
            out.setdefault(name, message)
    for text in pxds.values():
        doc: list[str] = []
        for line in text.splitlines():
            stripped = line.strip()
            if stripped.startswith("#"):
                doc.append(stripped.lstrip("#").strip())
                continue
            m = _PXD_DECL.match(stripped)
            if m and any("deprecated" in d.lower() for d in doc):
                said = next((d for d in doc if _USE_INSTEAD.search(d)), None)
                if said:
                    out.setdefault(m.group(1), said)
            if stripped:
                doc = []
    return out


#: Families HIP deprecates without a one-to-one successor, by pattern over the HIP name: what to
#: do instead (first match wins). Facts: HIP's deprecated API list (context management, texture
#: references) and hipSPARSE's documentation of its legacy API.
NO_SUCCESSOR = {
    "context": (
        re.compile(r"^hip(Ctx|DevicePrimaryCtx)"),
        "HIP deprecates its context API (one context per device): select the device with "
        "hipSetDevice and use the hipDevice* calls",
    ),
    "texture_reference": (
        re.compile(r"^hip(GetTexture|TexRef|BindTexture|UnbindTexture)"),
        "texture references give way to texture objects (hipCreateTextureObject)",
    ),
    "mipmapped_array": (
        re.compile(r"^hipMipmappedArray(Create|Destroy|GetLevel)$"),
        "use the runtime's hipMallocMipmappedArray / hipFreeMipmappedArray / "
        "hipGetMipmappedArrayLevel",
    ),
    "hipsparse_legacy": (
        re.compile(r"^hipsparse"),
        "hipSPARSE deprecates this legacy call and names no successor: port it to the generic "
        "API (hipsparseSp*) where that has the operation",
    ),
}


def successor_of(hip: str, live: set[str], decls: Declarations, api: str) -> str | None:
    """A deprecated HIP name's successor that is another spelling of it and is declared and not
    deprecated: ``hipX_v2``, ``hipX`` without ``_v2``, ``hipX2`` (hipsparseScsrgeam ->
    hipsparseScsrgeam2), ``hipCtxX`` -> ``hipDeviceX`` (hipCtxSynchronize ->
    hipDeviceSynchronize)."""
    cands = [hip + "_v2", re.sub(r"_v[0-9]$", "", hip)]
    cands += [re.sub(r"^(hipsparse[SDCZX]?[a-z]+)(?=[A-Z_]|$)", r"\g<1>2", hip)]
    if hip.startswith("hipCtx"):
        cands.append("hipDevice" + hip[len("hipCtx") :])
    for cand in cands:
        if cand != hip and cand in live and decls.is_declared(api, cand) is not False:
            return cand
    return None


def deprecation_successors(
    entries: dict[str, dict],
    decls: Declarations,
    messages: dict[str, str],
    overrides: dict,
    advice: dict[str, str],
) -> Counter:
    """Give each deprecated or removed HIP name its successor (``replacement``) or, where there
    is no single one, the key in ``advice`` of what to do instead (``no_successor``). Sources,
    first that applies: HIP's own deprecation message naming a declared name; a successor that is
    another spelling of the name (``successor_of``); ``[replacements]``/``[replacement_patterns]``
    of hip_overrides.toml (applied by portlint when it loads the table, so not written here);
    HIP's message naming no single name; ``NO_SUCCESSOR``. Returns the count per source."""
    stale = {e["hip"] for e in entries.values() if "deprecated" in e or "removed" in e}
    live = ({e["hip"] for e in entries.values() if e.get("hip")} | decls.names()) - stale
    by_name = overrides.get("replacements", {})
    patterns = [re.compile(p) for p in overrides.get("replacement_patterns", {})]
    counts: Counter = Counter()
    for entry in entries.values():
        hip = entry.get("hip", "")
        if not hip or not ("deprecated" in entry or "removed" in entry):
            continue
        said = _USE_INSTEAD.search(messages.get(hip, ""))
        named = said.group(1) if said else ""
        if named and IDENT.match(named) and named in live:
            entry["replacement"] = named
            counts["successor: HIP's deprecation message"] += 1
        elif cand := successor_of(hip, live, decls, entry["api"]):
            entry["replacement"] = cand
            counts["successor: another spelling of the name"] += 1
        elif hip in by_name or any(p.match(hip) for p in patterns):
            counts["successor: hip_overrides.toml"] += 1
        elif named:
            key = "use_" + re.sub(r"\W+", "_", named).lower()
            advice[key] = f"HIP's deprecation message says to use {named}"
            entry["no_successor"] = key
            counts["no single successor: HIP's deprecation message"] += 1
        elif key := next((k for k, (p, _) in NO_SUCCESSOR.items() if p.match(hip)), None):
            advice[key] = NO_SUCCESSOR[key][1]
            entry["no_successor"] = key
            counts[f"no single successor: {key}"] += 1
        else:
            counts["none found"] += 1
    return counts


# --------------------------------------------------------------------------- output


def toml_str(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def toml_key(k: str) -> str:
    return k if re.match(r"^[A-Za-z0-9_-]+$", k) else toml_str(k)


FIELDS = (
    "hip", "api", "since", "deprecated", "removed", "experimental", "replacement", "no_successor",
    "roc", "note",
)  # fmt: skip


def render(
    names, headers, namespaces, sources, advice=None, override_since=None, releases=(),
    development=(),
) -> str:  # fmt: skip
    out = [
        "# Generated by scripts/gen_hip_table.py — do not edit by hand.",
        "[source]",
        'generator = "scripts/gen_hip_table.py"',
        f'hipify = "{HIPIFY_REPO}@{HIPIFY_COMMIT}"',
        "sources = [",
        *[f"    {toml_str(s)}," for s in sources],
        "]",
        "# releases: the ROCm releases of the declaration sources above (HIP X.Y for ROCm X.Y);",
        "# the newest is portlint's default rocm-version. development: the sources that are",
        "# development builds, which never date a name.",
        f"releases = [{', '.join(toml_str(v) for v in sorted(set(releases), key=version_key))}]",
        "development = [",
        *[f"    {toml_str(s)}," for s in development],
        "]",
        "",
        '[headers]   # CUDA include name -> HIP include name ("" when unsupported)',
        *[f"{toml_str(k)} = {toml_str(headers[k])}" for k in sorted(headers)],
        "",
        "[namespaces]   # CUDA C++ namespace -> HIP namespace (members keep their names)",
        *[f"{toml_str(k)} = {toml_str(namespaces[k])}" for k in sorted(namespaces)],
        "",
        "[override_since]   # HIP name proposed by hip_overrides.toml -> since, dated like below",
        '# ("" = declared only by a development build: release unknown)',
        *[f"{toml_key(k)} = {toml_str(v)}" for k, v in sorted((override_since or {}).items())],
        "",
        "[no_successor]   # what to do instead of a deprecated name that has no single successor",
        *[f"{toml_key(k)} = {toml_str(v)}" for k, v in sorted((advice or {}).items())],
        "",
        '# every CUDA identifier; hip = "" means HIP has no equivalent. since / deprecated /',
        "# removed / experimental: the ROCm version of that event for the HIP name, from HIPIFY's",
        "# tables. For a name HIPIFY gives no version, since means 'declared by the HIP X",
        "# headers; may be older': the oldest release whose declarations read here declare the",
        "# HIP name (Debian's HIP 5.2.3 and hipSPARSE/hipRAND 5.3.3 headers, hip-python",
        "# 6.2.0-7.2.0, triton's HIP 6.2 headers as 6.2.4). release_unknown: only a development",
        "# build (the rocm-bindings) declares the HIP name, so its first release is not known.",
        "# replacement: the successor of a deprecated or removed HIP name; no_successor:",
        "# the key in [no_successor] of what to do where there is no single one. roc: the",
        "# rocBLAS/rocSPARSE/... name below the portable hip* layer (advice only).",
        "[names]",
    ]
    for cuda in sorted(names):
        e = names[cuda]
        fields = [f"{k} = {toml_str(e[k])}" for k in FIELDS if e.get(k) or k in ("hip", "api")]
        if e.get("manual"):
            fields.append("manual = true")
        if e.get("release_unknown"):
            fields.append("release_unknown = true")
        out.append(f"{toml_key(cuda)} = {{ {', '.join(fields)} }}")
    return "\n".join(out) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("hipify", type=Path, help=f"checkout of {HIPIFY_REPO} at {HIPIFY_COMMIT}")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--declared-out", type=Path, default=DECLARED_OUT)
    ap.add_argument("--report", action="store_true", help="print what each source contributed")
    args = ap.parse_args(argv)
    commit = hipify_commit(args.hipify)
    if commit is not None and commit != HIPIFY_COMMIT:
        raise SystemExit(f"{args.hipify} is at {commit}, expected {HIPIFY_COMMIT}")
    t0 = time.monotonic()
    hipify, hipify_headers = read_hipify(args.hipify)
    with tempfile.TemporaryDirectory(prefix="gen_hip_table_") as tmp:
        tmpd = Path(tmp)
        torch_whl = pip_download(TORCH, tmpd)
        interop_whl = pip_download(INTEROP, tmpd)
        rb_wheels = [pip_download(spec, tmpd) for spec in (RB_HIP, RB_LIBS, RB_SYS)]
        triton_whl = pip_download(TRITON, tmpd)
        core_whl = pip_download(RB_CORE, tmpd)
        bindings_rocm, bindings_hip = rocm_and_hip_versions(
            read_members(core_whl, ["rocm/version.py"])["rocm/version.py"]
        )
        bindings_release = release_of(bindings_rocm, bindings_hip)
        hip_python: dict[str, dict[str, str]] = {}
        for version in HIP_PYTHON_RELEASES:
            platform, python = HIP_PYTHON_PLATFORM
            whl = pip_download((HIP_PYTHON, version, platform), tmpd, python)
            release = release_of(
                *rocm_and_hip_versions(read_members(whl, ["hip/__init__.py"])["hip/__init__.py"])
            )
            if release is None or not version.startswith(release + "."):
                raise SystemExit(f"{HIP_PYTHON} {version} is not a ROCm release build")
            hip_python[release] = read_matching(whl, r"^hip/c\w+\.pxd$")
        cuda_headers = {
            k[len(TRITON_CUDA) :]: v
            for k, v in read_matching(triton_whl, "^" + re.escape(TRITON_CUDA) + r".*\.h$").items()
        }
        hip_headers = read_matching(triton_whl, "^" + re.escape(TRITON_HIP) + r".*\.h$")
        triton_hip = ".".join(
            re.findall(
                r"#define HIP_VERSION_(?:MAJOR|MINOR) (\d+)",
                hip_headers.get(TRITON_HIP + "hip_version.h", ""),
            )
        )
        if release_of(TRITON_HIP_ROCM, triton_hip) is None:
            raise SystemExit(
                f"triton's HIP headers are HIP {triton_hip!r}, not ROCm {TRITON_HIP_ROCM}"
            )
        torch_text = read_members(torch_whl, [TORCH_FILE])[TORCH_FILE]
        interop_files = read_members(interop_whl, INTEROP_FILES)
        bindings: dict[str, str] = {}
        for whl in rb_wheels:
            for path, text in read_matching(whl, r"^rocm/bindings/cy\w+\.pxd$").items():
                bindings[Path(path).stem] = text
    decls = Declarations(bindings, hip_headers)
    secondary, headers, namespaces, stats, _notes = build_secondary(
        torch_text, interop_files, decls, cuda_headers
    )
    entries, why = merge_hipify(hipify, secondary, decls)
    debian = read_debian_headers()
    import tomllib  # Python 3.11+, like running this generator

    overrides = tomllib.loads((REPO / "rules" / "cxx" / "hip_overrides.toml").read_text("utf-8"))
    newest_pxds = hip_python[max(hip_python, key=version_key)]
    messages = deprecation_messages(
        {p: t for files in debian.values() for p, t in files.items()} | hip_headers,
        {**newest_pxds, **bindings},
    )
    advice: dict[str, str] = {}
    successor_counts = deprecation_successors(entries, decls, messages, overrides, advice)
    names = dict(entries)
    for cuda, entry in secondary.items():
        if cuda not in names:
            names[cuda] = {k: v for k, v in entry.items() if not k.startswith("_")}
    dated = dated_declarations(
        [
            *[
                (v, f"Debian HIP {v} headers", set().union(*(c_tokens(t) for t in f.values())))
                for v, f in debian.items()
            ],
            *[
                (v, f"hip-python {v}", set().union(*(declared_names(t) for t in f.values())))
                for v, f in hip_python.items()
            ],
            (TRITON_HIP_ROCM, f"triton {TRITON[1]} HIP 6.2 headers", decls.hip_tokens),
        ]
    )
    bindings_source = (
        f"rocm-bindings {HIP_PY}",
        set().union(*(declared_names(t) for t in bindings.values())),
    )
    if bindings_release:  # a release build of the bindings dates names like the others
        dated = dated_declarations([*dated, (bindings_release, *bindings_source)])
        development = []
    else:
        development = [bindings_source]
    since_counts = date_from_declarations(names, dated, development)
    # hip_overrides.toml's answers replace generated entries when portlint loads the table: their
    # HIP names are dated here too ([override_since]).
    override_since = {
        cuda: {"hip": e["hip"], "api": e.get("api", "")}
        for cuda, e in overrides.get("names", {}).items()
        if e.get("hip") and not e.get("since")
    }
    date_from_declarations(override_since, dated, development)
    override_since = {
        e["hip"]: e.get("since", "")
        for e in override_since.values()
        if e.get("since") or e.get("release_unknown")
    }
    headers = final_headers(hipify_headers, headers, decls)
    sources = [
        f"{HIPIFY_REPO}@{HIPIFY_COMMIT} docs/tables/*.md (names, versions) and src/CUDA2HIP.cpp "
        "(headers)",
        f"{TORCH[0]} {TORCH[1]} {TORCH_FILE}",
        f"{INTEROP[0]} {INTEROP[1]} cuda/bindings/cy{{runtime,driver,nvrtc}}.pxd, "
        "{runtime,driver,nvrtc}.pyx",
        *[
            f"{spec[0]} {spec[1]} rocm/bindings/cy*.pxd (HIP declarations)"
            for spec in (RB_HIP, RB_LIBS, RB_SYS)
        ],
        f"{TRITON[0]} {TRITON[1]} {TRITON_CUDA} (CUDA headers) and {TRITON_HIP} (HIP 6.2 headers)",
        f"{HIP_PYTHON} {', '.join(HIP_PYTHON_RELEASES)} hip/c*.pxd (HIP declarations per ROCm "
        "release: versions of the names HIPIFY does not date)",
        "Debian "
        + ", ".join(f"{p} {debian_version(p)}" for p in DEBIAN_HIP_HEADERS)
        + " (HIP headers: versions and deprecation messages)",
        f"{RB_CORE[0]} {RB_CORE[1]} rocm/version.py (the bindings are ROCm {bindings_rocm} with "
        f"HIP {bindings_hip}: " + ("a release)" if bindings_release else "a development build)"),
    ]
    releases = [v for v, _src, _names in dated]
    development_note = (
        []
        if bindings_release
        else [f"rocm-bindings {HIP_PY}: ROCm {bindings_rocm} with HIP {bindings_hip}"]
    )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(
        render(
            names, headers, namespaces, sources, advice, override_since, releases, development_note
        ),
        encoding="utf-8",
    )
    declared = sorted(decls.names())
    args.declared_out.parent.mkdir(parents=True, exist_ok=True)
    args.declared_out.write_text(
        "# Generated by scripts/gen_hip_table.py: HIP identifiers declared by "
        + ", ".join(f"{s[0]} {s[1]}" for s in (RB_HIP, RB_LIBS, RB_SYS))
        + f" and the HIP headers of {TRITON[0]} {TRITON[1]}.\n"
        + "\n".join(declared)
        + "\n",
        encoding="utf-8",
    )
    unsupported = sum(1 for e in names.values() if not e["hip"])
    print(
        f"wrote {args.out}: {len(names)} names ({len(hipify)} from HIPIFY, {unsupported} "
        f"unsupported), {len(headers)} headers, {len(namespaces)} namespaces; "
        f"{len(declared)} declared names to {args.declared_out} in {time.monotonic() - t0:.1f}s"
    )
    if args.report:
        print("per api:", dict(sorted(Counter(e["api"] for e in names.values()).items())))
        print("differences from HIPIFY:", dict(Counter(w.split(":")[0] for w in why.values())))
        for cuda in sorted(why):
            print(f"  {cuda}: {why[cuda]}")
        disagree = [
            f"{c}: hipify {e['hip']} / {secondary[c]['hip']}"
            for c, e in entries.items()
            if c in secondary
            and secondary[c].get("hip")
            and e["hip"]
            and e["hip"] != secondary[c]["hip"]
            and c not in why
        ]
        print(f"HIPIFY and the secondary sources disagree ({len(disagree)}):")
        print("\n".join("  " + d for d in disagree))
        print("stats:", dict(stats))
    print("since from declarations:", dict(since_counts))
    print("deprecated/removed successors:", dict(successor_counts))
    return 0


if __name__ == "__main__":
    sys.exit(main())

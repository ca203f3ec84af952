"""The HIP names portlint suggests for C++/CUDA code exist: checked against real HIP headers.

Debian ships the headers of HIP 5.2 and of hipRAND, hipSPARSE and rocPRIM (`libamdhip64-dev`,
`libhiprand-dev`, `libhipsparse-dev`, `librocprim-dev`; `.ci/run` installs them). Every HIP
identifier and header that portlint gives as the rocm answer on the C++ fixtures must be declared
there, or be listed below as newer than those headers. Libraries Debian does not package (hipBLAS,
hipFFT, hipSOLVER, hipCUB, MIOpen, RCCL, roctx) are not checked here.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from portlint.catalog import tomllib
from support import FIXTURES, ROOT, run_cli

INCLUDE = Path("/usr/include")
HEADER_FOLDERS = ("hip", "hiprand", "hipsparse", "rocprim")
#: Families whose headers are in those packages.
CHECKABLE = re.compile(r"^(?:hip(?!blas|fft|solver|cub)[A-Za-z0-9_]+|HIP(?!BLAS|FFT)[A-Z0-9_]+)$")
CHECKABLE_HEADER = re.compile(r"^(?:hip|hiprand|hipsparse|rocprim)/[\w/]+\.h(?:pp)?$")
#: Names newer than HIP 5.2, with the release that added them (HIP's changelog).
NEWER_THAN_DEBIAN = {"hipGraphInstantiateWithParams": "HIP 6.1"}

pytestmark = pytest.mark.skipif(
    not (INCLUDE / "hip" / "hip_runtime_api.h").exists(),
    reason="needs Debian's libamdhip64-dev, libhiprand-dev, libhipsparse-dev, librocprim-dev",
)


def declared_names() -> tuple[set[str], set[str]]:
    names: set[str] = set()
    headers: set[str] = set()
    for folder in HEADER_FOLDERS:
        for path in (INCLUDE / folder).rglob("*"):
            if path.is_file():
                headers.add(path.relative_to(INCLUDE).as_posix())
                names.update(re.findall(r"[A-Za-z_]\w*", path.read_text(errors="replace")))
    return names, headers


def suggested_names() -> set[str]:
    _, out, _ = run_cli(
        "--isolated", "--target", "rocm", "--output-format", "json", str(FIXTURES / "cxx")
    )
    return {
        advice["replacement"]
        for finding in json.loads(out)
        for advice in finding["targets"].values()
        if advice["replacement"]
    }


def test_suggested_hip_names_are_declared_in_hip_headers():
    names, headers = declared_names()
    suggested = suggested_names()
    checked = {s for s in suggested if CHECKABLE.match(s) or CHECKABLE_HEADER.match(s)}
    assert len(checked) >= 40  # the fixtures cover the runtime, driver, hipRAND and hipSPARSE
    missing = sorted(
        name
        for name in checked
        if name not in names and name not in headers and name not in NEWER_THAN_DEBIAN
    )
    assert missing == []


def test_corrections_name_hip_functions_and_types_that_exist():
    names, _ = declared_names()
    corrections = tomllib.loads((ROOT / "rules" / "cxx" / "hip_overrides.toml").read_text())
    suggested = {entry["hip"] for entry in corrections["names"].values()}
    assert suggested and sorted(suggested - names) == []

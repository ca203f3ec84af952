"""Compare portlint's CUDA -> HIP table with HIPIFY's published tables, library by library.

For each library: how many CUDA names HIPIFY lists, how many it supports, how many portlint
answers identically and how many differently (and why), and how many HIP names portlint proposes
that current HIP does not declare (``tests/data/hip_declared_names.txt``), besides the families
``rules/cxx/hip_overrides.toml`` lists under ``[unchecked]`` with their reason.

Run: ``python benchmarks/hip_table_report.py HIPIFY_CHECKOUT [--markdown]``, with a checkout of
ROCm/HIPIFY at the commit ``rules/cxx/hip_map.toml`` names (see ``scripts/gen_hip_table.py``).
"""

from __future__ import annotations

import argparse
import importlib.util
import re
import sys
from collections import Counter
from pathlib import Path

from portlint.catalog import load_catalog
from portlint.cxx.table import load_table, unchecked_family
from portlint.model import Status
from portlint.toml import tomllib

REPO = Path(__file__).resolve().parent.parent
DECLARED = REPO / "tests" / "data" / "hip_declared_names.txt"
OVERRIDES = REPO / "rules" / "cxx" / "hip_overrides.toml"
#: HIPIFY table -> the library row it feeds.
LIBRARY = {
    "CUDA_Runtime_API_functions_supported_by_HIP.md": "runtime",
    "CUDA_Driver_API_functions_supported_by_HIP.md": "driver",
    "CUDA_Device_API_supported_by_HIP.md": "device",
    "cuComplex_API_supported_by_HIP.md": "cuComplex",
    "CUBLAS_API_supported_by_HIP_and_ROC.md": "cuBLAS (+Lt, ILP64)",
    "CURAND_API_supported_by_HIP_and_ROC.md": "cuRAND",
    "CUFFT_API_supported_by_HIP.md": "cuFFT",
    "CUSPARSE_API_supported_by_HIP_and_ROC.md": "cuSPARSE",
    "CUSOLVER_API_supported_by_HIP_and_ROC.md": "cuSOLVER",
    "CUDNN_API_supported_by_HIP_and_MIOPEN.md": "cuDNN -> MIOpen",
    "CUDA_RTC_API_supported_by_HIP.md": "NVRTC",
    "CUB_API_supported_by_HIP.md": "CUB",
}
DECLARED_SPELLING = re.compile(r"^_*(hip|HIP|make_hip|rocblas|rccl|nccl|NCCL|roctx)\w*$")
REASONS = (
    ("spelling", "HIP declares another spelling of HIPIFY's name (hipBLAS 3 without _v2, _t)"),
    (
        "newer",
        "HIPIFY has no answer; current HIP declares one (torch, hip-python, HIP headers,"
        " or the hip* library's twin of the name: cublasX_64 -> hipblasX_64)",
    ),
    ("undeclared", "HIPIFY's HIP name is not declared by current HIP: unsupported"),
    (
        "other",
        "another source's declared name: HIPIFY's CU_JIT_* options are hiprtcJIT_option's,"
        " although HIPIFY maps CUjit_option to hipJitOption",
    ),
    ("override", "hand correction with its reason (hip_overrides.toml)"),
    ("plain", "a plain word, not CUDA's spelling (texture, umin, GLenum): left out"),
)


def load_generator():
    spec = importlib.util.spec_from_file_location("gen", REPO / "scripts" / "gen_hip_table.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def why_different(cuda: str, hipify_hip: str, ours, overrides) -> str:
    if cuda in overrides:
        return "override"
    if ours is None:
        return "plain"
    if not hipify_hip:
        return "newer"
    if not ours.hip:
        return "undeclared"
    if ours.hip in (re.sub(r"_v[0-9](?=(_64)?$)", "", hipify_hip), hipify_hip + "_t"):
        return "spelling"
    return "other"


def report(hipify_root: Path) -> list[dict]:
    gen = load_generator()
    table = load_table(load_catalog())
    newest = table.rocm_key(None)
    declared = set(DECLARED.read_text(encoding="utf-8").splitlines()[1:])
    overrides = tomllib.loads(OVERRIDES.read_text(encoding="utf-8"))["names"]
    ignored = set(load_catalog().table("cxx")["api_sites"]["ignore_names"])
    rows = []
    for file, library in LIBRARY.items():
        api, column = gen.HIPIFY_TABLES[file]
        text = (hipify_root / "docs" / "tables" / file).read_text(encoding="utf-8")
        counts: Counter = Counter()
        for row in gen.parse_hipify_table(text, column):
            cuda, hipify_hip = row["cuda"], row["answer"].get("name", "")
            if not gen.IDENT.match(cuda):
                continue
            counts["names"] += 1
            counts["hipify_supported" if hipify_hip else "hipify_unsupported"] += 1
            ours = table.names.get(cuda)
            if ours is None and cuda in ignored:
                counts["same"] += 1  # generic words portlint ignores on purpose
                continue
            if ours is None and api == "device" and hipify_hip == cuda:
                counts["same"] += 1  # same-named device function: kept, never reported
                continue
            our_hip = ours.hip if ours else None
            if ours is not None and our_hip == hipify_hip and cuda not in overrides:
                counts["same"] += 1
            else:
                counts[why_different(cuda, hipify_hip, ours, overrides)] += 1
            if ours is None or not ours.hip or ours.status_on(newest) is Status.UNSUPPORTED:
                continue
            counts["proposed"] += 1
            if unchecked_family(ours) or not DECLARED_SPELLING.match(ours.hip):
                counts["not_checkable"] += 1
            elif ours.hip not in declared:
                counts["undeclared_proposals"] += 1
        rows.append({"library": library, **counts})
    return rows


def versions(hipify_root: Path) -> list[dict]:
    """Per api of portlint's table: renames (on the newest ROCm) by where their ``since`` comes
    from, and deprecated or removed names with a successor or with advice."""
    gen = load_generator()
    table = load_table(load_catalog())
    newest = table.rocm_key(None)
    hipify_since: dict[str, str] = {}
    for file, (_api, column) in gen.HIPIFY_TABLES.items():
        text = (hipify_root / "docs" / "tables" / file).read_text(encoding="utf-8")
        for row in gen.parse_hipify_table(text, column):
            hipify_since.setdefault(row["cuda"], row["answer"].get("A", ""))
    rows: dict[str, Counter] = {}
    for entry in table.names.values():
        counts = rows.setdefault(entry.api, Counter())
        if entry.status_on(newest) is Status.RENAME:
            counts["renames"] += 1
            if entry.release_unknown:
                counts["release_unknown"] += 1
            elif not entry.since:
                counts["undated"] += 1
            elif hipify_since.get(entry.cuda) == entry.since or (
                entry.since == gen.HIPBLAS_V3 and hipify_since.get(entry.cuda)
            ):
                counts["since_hipify"] += 1
            else:
                counts["since_declarations"] += 1
        if entry.hip and (entry.deprecated or entry.removed):
            counts["stale"] += 1
            counts["successor" if entry.replacement else "no_successor"] += 1
            if not entry.replacement and not entry.no_successor:
                counts["stale_silent"] += 1
    return [{"api": api, **rows[api]} for api in sorted(rows) if rows[api]]


VERSION_COLUMNS = (
    ("api", "api"),
    ("renames", "renames"),
    ("since_hipify", "since: HIPIFY"),
    ("since_declarations", "since: oldest declarations"),
    ("release_unknown", "release unknown (development headers only)"),
    ("undated", "no since"),
    ("stale", "deprecated or removed"),
    ("successor", "with successor"),
    ("no_successor", "no one-to-one successor (advice)"),
    ("stale_silent", "neither"),
)


def print_table(rows: list[dict], columns, first: str) -> None:
    total: Counter = Counter()
    for row in rows:
        total.update({k: v for k, v in row.items() if k != first})
    rows = [*rows, {first: "**total**", **total}]
    print("| " + " | ".join(title for _, title in columns) + " |")
    print("|" + "---|" * len(columns))
    for row in rows:
        print("| " + " | ".join(str(row.get(key, 0)) for key, _ in columns) + " |")
    print()


COLUMNS = (
    ("library", "library"),
    ("names", "HIPIFY names"),
    ("hipify_supported", "HIPIFY supported"),
    ("hipify_unsupported", "HIPIFY unsupported"),
    ("same", "portlint same"),
    *[(key, f"differs: {key}") for key, _ in REASONS],
    ("proposed", "HIP names proposed"),
    ("not_checkable", "not checkable"),
    ("undeclared_proposals", "fail the declaration check"),
)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("hipify", type=Path, help="checkout of ROCm/HIPIFY")
    args = parser.parse_args(argv)
    print_table(report(args.hipify), COLUMNS, "library")
    for key, text in REASONS:
        print(f"- {key}: {text}")
    print()
    print_table(versions(args.hipify), VERSION_COLUMNS, "api")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

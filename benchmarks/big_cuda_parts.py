"""Peak memory of one run on a large generated ``.cu`` file, analysed in parts and whole.

    python benchmarks/big_cuda_parts.py [--mb 1 4 16] [--lines 50]

The file is made of ``cudaMalloc`` lines (one finding per 21 bytes, the worst case) in host
functions of ``--lines`` lines each, the shape of generated sources (``portlint.cxx.parts`` cuts
between them), or with ``--lines 0`` in one function, as ``big_inputs.py``'s CUDA file (cut
between its statements). Each size is linted in a fresh process (``--output-format concise``,
``--no-cache``, ``--max-file-size 1GB``) twice: as portlint runs (in parts above a million
characters), and with the part threshold out of reach (whole). Prints the findings, seconds and
peak resident memory, and the memory beyond a run on a one-line file as a multiple of the size.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CUDA_LINE = "  cudaMalloc(&p, 4);\n"
#: Runs portlint's command line in a child, the part threshold set by the first argument, and
#: prints the lines it wrote and the child's peak memory (ru_maxrss, KiB).
RUNNER = """
import resource, subprocess, sys
code = (
    "import sys, dataclasses\\n"
    "from portlint import engine\\n"
    "from portlint.cli import main\\n"
    "cxx = engine.ANALYSERS['cxx']\\n"
    "engine.ANALYSERS['cxx'] = dataclasses.replace(cxx, part_threshold=int(sys.argv[1]))\\n"
    "sys.exit(main(sys.argv[2:]))\\n"
)
proc = subprocess.run([sys.executable, "-c", code, *sys.argv[1:]], stdout=subprocess.PIPE)
print(proc.stdout.count(b"\\n"), resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
"""


def generate(folder: Path, megabytes: float, lines: int) -> Path:
    path = folder / f"parts{megabytes}.cu"
    if lines == 0:  # one function
        lines = max(1, int(megabytes * 1e6 / len(CUDA_LINE)))
    body = "  void *p;\n" + CUDA_LINE * lines + "}\n"
    count = max(1, int(megabytes * 1e6 / len("void f0() {\n" + body)))
    with path.open("w") as out:
        for number in range(count):
            out.write(f"void f{number}() {{\n{body}")
    return path


def measure(path: Path, threshold: int) -> tuple[int, float, int]:
    """(output lines, seconds, peak resident memory in bytes)."""
    options = ["--isolated", "--no-cache", "--max-file-size", "1GB", "--output-format", "concise"]
    command = [sys.executable, "-c", RUNNER, str(threshold), *options, str(path)]
    start = time.perf_counter()
    out = subprocess.run(command, capture_output=True, text=True, check=True).stdout.split()
    return int(out[0]), time.perf_counter() - start, int(out[1]) * 1024


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mb", type=float, nargs="+", default=[1.0, 4.0, 16.0])
    parser.add_argument(
        "--lines", type=int, default=50, help="cudaMalloc lines per function (0: one function)"
    )
    args = parser.parse_args()
    from portlint.engine import ANALYSERS

    runs = {"parts": ANALYSERS["cxx"].part_threshold, "whole": 1 << 62}
    print(
        "| file | size MB | analysis | output lines | seconds | peak RSS MB "
        "| RSS beyond a one-line file, MB | beyond / size |"
    )
    print("|---|---:|---|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as folder:
        small = Path(folder) / "small.cu"
        small.write_text(CUDA_LINE)
        baseline = min(measure(small, 1 << 62)[2] for _ in range(3))
        for megabytes in args.mb:
            path = generate(Path(folder), megabytes, args.lines)
            size = path.stat().st_size
            for label, threshold in runs.items():
                lines, seconds, peak = measure(path, threshold)
                beyond = peak - baseline
                print(
                    f"| {path.name} | {size / 1e6:.1f} | {label} | {lines:,} | {seconds:.1f} | "
                    f"{peak / 1e6:.0f} | {beyond / 1e6:.0f} | {beyond / size:.1f} |",
                    flush=True,
                )
            path.unlink()
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Time and peak memory of one run on one large generated file, against the file's size.

    python benchmarks/big_inputs.py [--mb 1 2 4] [--kinds python cuda] [--format concise]
                                    [--per-finding]

For each size: a Python file of ``torch.cuda.synchronize()`` lines (one finding per 25 bytes) and a
``.cu`` file of ``cudaMalloc`` calls, each linted in a fresh process (with ``--max-file-size
1GB``: by default a file above 10MB is not read at all, it gets one "file too large" finding);
prints the findings, seconds and the process's peak resident memory, also as a multiple of the file
size, and what the run takes beyond a run on a file of the same kind with one finding (the
interpreter, portlint's modules and its tables), as a multiple of the file size.

``--per-finding`` measures in this process, with tracemalloc, what one finding costs once the file
is analysed (the memory its result keeps, per finding) and the analysis's peak (the syntax tree
and the checks' state), per byte of input.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PYTHON_LINE = "torch.cuda.synchronize()\n"
CUDA_LINE = "  cudaMalloc(&p, 4);\n"


def generate(folder: Path, kind: str, megabytes: float) -> Path:
    if kind == "python":
        path = folder / f"big{megabytes}.py"
        lines = max(1, int(megabytes * 1e6 / len(PYTHON_LINE)))
        path.write_text("import torch\n" + PYTHON_LINE * lines)
    else:
        path = folder / f"big{megabytes}.cu"
        lines = max(1, int(megabytes * 1e6 / len(CUDA_LINE)))
        path.write_text("void f() {\n  void *p;\n" + CUDA_LINE * lines + "}\n")
    return path


def measure(path: Path, fmt: str) -> tuple[int, float, int]:
    """(output lines, seconds, peak resident memory of the run in bytes; ru_maxrss is KiB)."""
    code = (
        "import resource, subprocess, sys\n"
        "proc = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE)\n"
        "lines = proc.stdout.count(b'\\n')\n"
        "print(lines, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
    )
    command = [
        sys.executable,
        "-m",
        "portlint",
        "--isolated",
        "--no-cache",
        "--max-file-size",
        "1GB",
        "--output-format",
        fmt,
        str(path),
    ]
    start = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-c", code, *command], capture_output=True, text=True, check=True
    ).stdout.split()
    seconds = time.perf_counter() - start
    return int(out[0]), seconds, int(out[1]) * 1024


def per_finding(sites: int = 10_000) -> None:
    import gc
    import tracemalloc

    from portlint.config import Settings
    from portlint.engine import lint_source
    from portlint.model import SourceFile

    print("| file | findings | bytes kept per finding | analysis peak / input size |")
    print("|---|---:|---:|---:|")
    inputs = {
        "big.py": ("python", "import torch\n" + PYTHON_LINE * sites),
        "big.cu": ("cxx", "void f() {\n  void *p;\n" + CUDA_LINE * sites + "}\n"),
    }
    for name, (language, text) in inputs.items():
        source = SourceFile(name, text)
        lint_source(source, language, Settings())  # imports and tables, outside the count
        gc.collect()
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        result = lint_source(source, language, Settings())
        gc.collect()
        kept, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        count = len(result.findings)
        print(
            f"| {name} | {count:,} | {(kept - before) / count:,.0f} | "
            f"{(peak - before) / len(text.encode()):.0f} |"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mb", type=float, nargs="+", default=[1.0, 2.0, 4.0])
    parser.add_argument("--kinds", nargs="+", default=["python", "cuda"])
    parser.add_argument("--format", default="concise")
    parser.add_argument("--per-finding", action="store_true", help="tracemalloc, in-process")
    args = parser.parse_args()
    if args.per_finding:
        per_finding()
        return 0
    print(
        "| file | size MB | output lines | seconds | peak RSS MB | RSS / size "
        "| RSS beyond a run with one finding, MB | beyond / size |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as folder:
        baseline = {}
        for kind in args.kinds:
            path = generate(Path(folder), kind, 0.0)
            baseline[kind] = min(measure(path, args.format)[2] for _ in range(3))
        for megabytes in args.mb:
            for kind in args.kinds:
                path = generate(Path(folder), kind, megabytes)
                size = path.stat().st_size
                lines, seconds, peak = measure(path, args.format)
                beyond = peak - baseline[kind]
                print(
                    f"| {path.name} | {size / 1e6:.1f} | {lines:,} | {seconds:.1f} | "
                    f"{peak / 1e6:.0f} | {peak / size:.1f} | {beyond / 1e6:.0f} | "
                    f"{beyond / size:.1f} |"
                )
                path.unlink()
    return 0


if __name__ == "__main__":
    sys.exit(main())

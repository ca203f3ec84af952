"""Lint a large tree of real C++/CUDA and print MB/s; compare with PyTorch's hipify.

Default tree: the CUDA toolkit headers (/usr/local/cuda*/include). Without a toolkit, give a
folder, for example the C++ headers of an installed torch wheel (site-packages/torch/include).

portlint is timed twice: in this process alone (parse + analysis per file, no process pool), and
through ``engine.lint_paths`` with one worker per CPU (what the command line does). hipify is
``torch.utils.hipify.hipify_python.hipify`` run on a copy of the same files (it rewrites them),
with the interpreter given by ``--torch-python`` when this one has no torch.

Run: ``python benchmarks/cxx_bench.py [FOLDER] [--torch-python /path/to/python]``.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from portlint.catalog import load_catalog
from portlint.config import Settings
from portlint.cxx.analyser import analyse_cxx, is_candidate
from portlint.discover import LANGUAGE_BY_SUFFIX, Candidate
from portlint.engine import UnreadableFile, lint_paths, read_source
from portlint.sink import collect

CXX_SUFFIXES = {s for s, language in LANGUAGE_BY_SUFFIX.items() if language == "cxx"}
HIPIFY_SCRIPT = """
import json, sys, time
from torch.utils.hipify.hipify_python import hipify
start = time.perf_counter()
result = hipify(project_directory=sys.argv[1], output_directory=sys.argv[2], includes=["*"],
                show_progress=False, show_detailed=False)
elapsed = time.perf_counter() - start
changed = sum(1 for r in result.values() if getattr(r, "hipified_path", None)
              and getattr(r, "status", "").startswith("[ok]"))
print(json.dumps({"seconds": elapsed, "files": len(result), "changed": changed}))
"""


def default_tree() -> Path | None:
    found = sorted(glob.glob("/usr/local/cuda*/include"))
    return Path(found[-1]) if found else None


def cxx_files(tree: Path) -> list[Path]:
    return sorted(p for p in tree.rglob("*") if p.suffix.lower() in CXX_SUFFIXES and p.is_file())


def time_in_process(files: list[Path]) -> tuple[float, int, int]:
    """(seconds, files past the prefilter, findings) for analysing every file here."""
    catalog = load_catalog()
    parsed = findings = 0
    start = time.perf_counter()
    for path in files:
        try:
            source = read_source(path, "cxx")
        except UnreadableFile:
            continue
        if is_candidate(source.text):
            parsed += 1
            findings += len(collect(analyse_cxx, source, catalog, None))
    return time.perf_counter() - start, parsed, findings


def time_engine(files: list[Path]) -> tuple[float, int]:
    settings = Settings()
    start = time.perf_counter()
    count = sum(
        len(r.findings) for r in lint_paths((Candidate(str(p), "cxx") for p in files), settings)
    )
    return time.perf_counter() - start, count


def time_hipify(tree: Path, files: list[Path], python: str) -> dict | None:
    with tempfile.TemporaryDirectory() as scratch:
        source, output = Path(scratch) / "src", Path(scratch) / "out"
        for path in files:
            target = source / path.relative_to(tree)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
        done = subprocess.run(
            [python, "-c", HIPIFY_SCRIPT, str(source), str(output)],
            capture_output=True,
            text=True,
        )
    if done.returncode != 0:
        print(f"hipify failed: {done.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
        return None
    return json.loads(done.stdout.strip().splitlines()[-1])


def torch_python(given: str | None) -> str | None:
    if given:
        return given
    try:
        import torch.utils.hipify  # noqa: F401
    except ImportError:
        return None
    return sys.executable


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tree", nargs="?", type=Path, default=default_tree())
    parser.add_argument("--torch-python", help="a Python interpreter that has torch")
    args = parser.parse_args(argv)
    if args.tree is None or not args.tree.is_dir():
        print("no CUDA toolkit headers found: give a folder of C++/CUDA sources", file=sys.stderr)
        return 2
    files = cxx_files(args.tree)
    megabytes = sum(p.stat().st_size for p in files) / 1e6
    print(f"tree: {args.tree} ({len(files)} C++/CUDA files, {megabytes:.1f} MB)")
    seconds, parsed, findings = time_in_process(files)
    print(
        f"portlint, one process: {seconds:.2f} s, {megabytes / seconds:.1f} MB/s "
        f"({parsed} files past the prefilter, {findings} findings)"
    )
    seconds, count = time_engine(files)
    print(
        f"portlint, {os.cpu_count()} workers: {seconds:.2f} s, {megabytes / seconds:.1f} MB/s "
        f"({count} findings)"
    )
    python = torch_python(args.torch_python)
    if python is None:
        print("torch not importable: hipify comparison skipped (use --torch-python)")
        return 0
    result = time_hipify(args.tree, files, python)
    if result is not None:
        print(
            f"torch.utils.hipify: {result['seconds']:.2f} s, "
            f"{megabytes / result['seconds']:.1f} MB/s ({result['files']} files)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""Fuzz the command line with broken inputs: it must never crash, hang or change a file unasked.

    python benchmarks/fuzz_cli.py [--inputs 2000] [--per-run 25] [--seed 1] [--timeout 60]

Generates ``--inputs`` files from the shipped fixtures (Python, C++/CUDA, Dockerfiles, YAML,
requirement files, ...): random bytes, truncated files, files re-encoded in a random encoding
(UTF-16, UTF-32, Latin-1, Shift JIS, ...), line endings swapped, NUL bytes and BOMs inserted,
absurd nesting; and random file kinds in the tree (named pipes, sockets, dangling and looping
symbolic links, links to /dev/null, folders named like source files, unreadable files). They are
spread over trees of ``--per-run`` files; on each tree portlint runs in check mode in a random
output format, then with ``--fix``, each under a timeout. Counted as failures: a traceback or
"internal error" on stderr, a run past the timeout, an exit status other than 0, 1 or 2, exit 2
with more than one stderr line, and any file changed by a run without ``--fix``.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures"
ENCODINGS = (
    "utf-16",
    "utf-16-le",
    "utf-16-be",
    "utf-32",
    "latin-1",
    "cp1252",
    "shift_jis",
    "gb18030",
    "utf-8-sig",
    "cp037",
)
FORMATS = (
    "text",
    "concise",
    "json",
    "json-lines",
    "grouped",
    "github",
    "sarif",
    "rdjson",
    "gitlab",
    "junit",
)


def seeds() -> list[Path]:
    return [
        p
        for p in sorted(FIXTURES.rglob("*"))
        if p.is_file() and p.suffix != ".expected" and p.stat().st_size < 200_000
    ]


def mutate(data: bytes, rng: random.Random) -> bytes:
    kind = rng.randrange(9)
    if kind == 0:
        return rng.randbytes(rng.randrange(1, 4096))
    if kind == 1:
        return data[: rng.randrange(len(data) + 1)]
    if kind == 2:
        text = data.decode("utf-8", "replace")
        return text.encode(rng.choice(ENCODINGS), "replace")
    if kind == 3:
        swap = rng.choice([(b"\n", b"\r\n"), (b"\n", b"\r"), (b"\r\n", b"\n")])
        return data.replace(*swap)
    if kind == 4:
        at = rng.randrange(len(data) + 1)
        return data[:at] + rng.choice([b"\0", b"\xef\xbb\xbf", b"\xff\xfe", b"\x1b[2J"]) + data[at:]
    if kind == 5:
        at = rng.randrange(len(data) + 1)
        return data[:at] + rng.randbytes(rng.randrange(1, 64)) + data[at:]
    if kind == 6:
        depth = rng.choice([100, 1000, 5000])
        return data + b"\nx = " + b"(" * depth + b"1" + b")" * rng.choice([0, depth]) + b"\n"
    if kind == 7:
        lines = data.splitlines(keepends=True)
        rng.shuffle(lines)
        return b"".join(lines)
    return b""


def special(path: Path, rng: random.Random) -> str:
    """Make ``path`` a file of another kind; returns the kind."""
    kind = rng.choice(["fifo", "socket", "dangling", "loop", "devnull", "folder", "unreadable"])
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "socket":
        with socket.socket(socket.AF_UNIX) as server:
            try:
                server.bind(str(path))
            except OSError:  # path too long for a socket address
                os.mkfifo(path)
    elif kind == "dangling":
        path.symlink_to(path.parent / "missing-target")
    elif kind == "loop":
        path.symlink_to(path)
    elif kind == "devnull":
        path.symlink_to("/dev/null")
    elif kind == "folder":
        path.mkdir()
    else:
        path.write_bytes(b"import torch\ntorch.cuda.synchronize()\n")
        path.chmod(0)
    return kind


def make_tree(root: Path, count: int, pool: list[Path], rng: random.Random) -> None:
    for index in range(count):
        seed = rng.choice(pool)
        folder = root / f"d{index % 5}"
        folder.mkdir(exist_ok=True)
        name = seed.name if rng.random() < 0.5 else f"f{index}{seed.suffix}"
        path = folder / name
        while path.exists() or path.is_symlink():
            path = folder / f"x{rng.randrange(10**6)}{seed.suffix}"
        if rng.random() < 0.12:
            special(path, rng)
        else:
            path.write_bytes(mutate(seed.read_bytes(), rng))


def snapshot(root: Path) -> dict[str, tuple[str, bytes | None]]:
    state = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = Path(folder, name)
            mode = path.lstat().st_mode
            content = None
            if stat.S_ISREG(mode) and os.access(path, os.R_OK):
                content = path.read_bytes()
            elif stat.S_ISLNK(mode):
                content = os.readlink(path).encode()
            state[str(path.relative_to(root))] = (stat.filemode(mode), content)
    return state


def cleanup(tree: Path) -> None:
    for folder, dirs, files in os.walk(tree):
        for name in dirs + files:
            path = Path(folder, name)
            if not path.is_symlink():
                path.chmod(0o700)
    shutil.rmtree(tree)


def run(args: list[str], cwd: Path, timeout: float) -> tuple[int | None, str, float]:
    start = time.perf_counter()
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "portlint", *args],
            cwd=cwd,
            capture_output=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        return None, "", time.perf_counter() - start
    return proc.returncode, proc.stderr.decode("utf-8", "replace"), time.perf_counter() - start


def problem(status: int | None, stderr: str) -> str | None:
    if status is None:
        return "hang (timeout)"
    if "Traceback" in stderr:
        return "traceback"
    if "internal error" in stderr:
        return "internal error"
    if status not in (0, 1, 2):
        return f"exit status {status}"
    if status == 2 and stderr.count("\n") != 1:
        return "exit 2 without a one-line error"
    return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--inputs", type=int, default=2000)
    parser.add_argument("--per-run", type=int, default=25)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=60.0)
    parser.add_argument("--keep", type=Path, help="copy the trees that fail into this folder")
    parser.add_argument(
        "--start", type=int, default=0, help="generate but do not run the first START inputs"
    )
    args = parser.parse_args()
    rng = random.Random(args.seed)
    pool = seeds()
    failures: list[str] = []
    changed = runs = 0
    slowest = 0.0
    statuses: dict[int, int] = {}
    made = 0
    work = Path(tempfile.mkdtemp(prefix="portlint-fuzz-"))
    try:
        while made < args.inputs:
            count = min(args.per_run, args.inputs - made)
            tree = work / f"t{made}"
            tree.mkdir()
            make_tree(tree, count, pool, rng)
            made += count
            before = snapshot(tree)
            fmt = rng.choice(FORMATS)
            extra = ["--max-file-size", "2k"] if rng.random() < 0.2 else []
            if made <= args.start:
                cleanup(tree)
                continue
            failed = len(failures)
            for fixing in (False, True):
                flags = ["--fix"] if fixing else []
                status, stderr, seconds = run(
                    ["--output-format", fmt, *extra, *flags, "."], tree, args.timeout
                )
                runs += 1
                slowest = max(slowest, seconds)
                if status is not None:
                    statuses[status] = statuses.get(status, 0) + 1
                issue = problem(status, stderr)
                if issue:
                    failures.append(f"{tree.name} {'--fix ' if fixing else ''}{fmt}: {issue}")
                    print(failures[-1], stderr[-2000:], sep="\n", file=sys.stderr)
                if not fixing:
                    after = snapshot(tree)
                    diff = [
                        k for k in before.keys() | after.keys() if before.get(k) != after.get(k)
                    ]
                    changed += len(diff)
                    if diff:
                        failures.append(f"{tree.name}: changed without --fix: {sorted(diff)[:5]}")
            if args.keep and len(failures) > failed:
                with contextlib.suppress(shutil.Error):  # sockets and pipes are not copied
                    shutil.copytree(tree, args.keep / tree.name, symlinks=True, dirs_exist_ok=True)
            cleanup(tree)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    crashes = sum("hang" not in f and "changed" not in f for f in failures)
    hangs = sum("hang" in f for f in failures)
    print(f"inputs: {made}   runs: {runs}   exit statuses: {dict(sorted(statuses.items()))}")
    print(f"tracebacks/internal errors/bad exits: {crashes}")
    print(f"hangs (>{args.timeout:.0f} s): {hangs}   slowest run: {slowest:.1f} s")
    print(f"files changed without --fix: {changed}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

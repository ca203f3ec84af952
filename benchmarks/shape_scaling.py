"""How the Python analysis's time grows with the size of one file, shape by shape.

    python benchmarks/shape_scaling.py [--sizes 1000 4000] [--shapes tries modif ...]

Each shape is a generated file of N repetitions of one pattern that real code has a few of: a
function of N ``try`` blocks, N module-level ``if torch.cuda.is_available():`` blocks, N backend
classes on one base, and so on. Each file is linted in a fresh process (``--no-cache``, JSON
output); the table gives the seconds at each size and the growth from the smallest size to the
largest. Linear work grows as the size does (4x for 1000 -> 4000); a check that walks a whole
scope or block at every site of it grows with the square (16x).

Standard library only; portlint must be installed in the running interpreter.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HEADER = "import os\nimport argparse\nimport torch\nimport torch.distributed as dist\n\n"

#: shape -> (text before the repetitions, one repetition with {i} for its number)
SHAPES = {
    "tries": (
        "def f(x):\n",
        "    try:\n        y{i} = torch.cuda.current_device()\n    except Exception:\n"
        "        y{i} = None\n",
    ),
    "device-variables": (
        "def f(x):\n",
        "    d{i} = 'cuda' if x else 'cpu'\n    t{i} = torch.zeros(1, device=d{i})\n",
    ),
    "module-ifs": (
        "",
        "if torch.cuda.is_available():\n    torch.cuda.manual_seed({i})\nelse:\n    pass\n",
    ),
    "backend-classes": (
        "",
        "class CUDA_Acc{i}(Base):\n    def sync(self):\n        torch.cuda.synchronize()\n\n"
        "class NPU_Acc{i}(Base):\n    def sync(self):\n        torch.npu.synchronize()\n\n",
    ),
    "cuda-named-functions": (
        "",
        "def get_cuda_{i}():\n    return torch.device('cuda')\n\n"
        "def use_{i}():\n    return get_cuda_{i}()\n\n",
    ),
    "methods": (
        "class Big:\n",
        "    def cuda_m{i}(self, x):\n        if torch.cuda.is_available():\n"
        "            return x.cuda()\n        return x\n\n",
    ),
    "environment": (
        "",
        "os.environ['NCCL_P2P_DISABLE'] = '{i}'\nos.environ['CUDA_VISIBLE_DEVICES'] = '{i}'\n",
    ),
    "device-tests": (
        "def f(device):\n",
        "    if device in ('cuda', 'xpu'):\n        y = {i}\n"
        "    if str(device).startswith('cuda'):\n        z = {i}\n",
    ),
    "argparse-options": (
        "p = argparse.ArgumentParser()\n",
        "p.add_argument('--device{i}', default='cuda')\ntorch.device(p.parse_args().device{i})\n",
    ),
    "elif-chain": (
        "def f(d):\n    if d == 'x':\n        pass\n",
        "    elif d == 'cuda{i}':\n        torch.cuda.synchronize()\n",
    ),
    "early-returns": (
        "def f(d):\n",
        "    if d == {i}:\n        return torch.device('cuda')\n",
    ),
    "cuda-flags": (
        "def f():\n",
        "    use_cuda{i} = torch.cuda.is_available()\n    if use_cuda{i}:\n"
        "        torch.cuda.synchronize()\n",
    ),
    "set-device": (
        "def main(rank):\n",
        "    torch.cuda.set_device(rank)\n    m{i} = torch.nn.Linear(2, 2).cuda()\n"
        "    print(torch.cuda.memory_allocated())\n",
    ),
}


def generate(folder: Path, shape: str, size: int) -> Path:
    before, repeated = SHAPES[shape]
    path = folder / f"{shape}-{size}.py"
    path.write_text(HEADER + before + "".join(repeated.format(i=i) for i in range(size)))
    return path


def seconds(path: Path) -> float:
    command = [sys.executable, "-m", "portlint", "--isolated", "--no-cache"]
    command += ["--output-format", "json", str(path)]
    start = time.perf_counter()
    subprocess.run(command, stdout=subprocess.DEVNULL, check=False)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 4000])
    parser.add_argument("--shapes", nargs="+", choices=sorted(SHAPES), default=list(SHAPES))
    options = parser.parse_args()
    sizes = sorted(options.sizes)
    print(f"{'shape':22}" + "".join(f"{size:>10}" for size in sizes) + "    growth")
    with tempfile.TemporaryDirectory() as folder:
        for shape in options.shapes:
            times = [seconds(generate(Path(folder), shape, size)) for size in sizes]
            growth = times[-1] / times[0] if times[0] else float("nan")
            cells = "".join(f"{t:>9.2f}s" for t in times)
            print(f"{shape:22}{cells}    {growth:.1f}x (size {sizes[-1] / sizes[0]:.0f}x)")


if __name__ == "__main__":
    main()

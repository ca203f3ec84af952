"""cxx.includes: which files PyTorch's extension build compiles, through the project's includes."""

from __future__ import annotations

from portlint.cxx import includes

PREFIXES = ("torch/", "ATen/", "c10/")


def built(folder, names):
    def facts_of(path):
        with open(path, "rb") as stream:
            return includes.file_facts(stream.read(), PREFIXES)

    found = includes.torch_built([str(folder / name) for name in names], facts_of)
    return sorted(path[len(str(folder)) + 1 :] for path in found)


def test_file_facts_reads_the_direct_test_and_the_quoted_includes():
    raw = (
        b'#include <c10/cuda/CUDAGuard.h>\n  #  include "a.h"\n#include <vector>\n#include "a.h"\n'
    )
    assert includes.file_facts(raw, PREFIXES) == [True, ["a.h"]]
    assert includes.file_facts(b'#include "torch_like.h"\n', PREFIXES) == [False, ["torch_like.h"]]
    assert includes.valid_facts([False, ["a.h"]])
    assert not includes.valid_facts([False, "a.h"])
    assert not includes.valid_facts([1, [], 2])


def test_a_cycle_of_headers_ends_and_reaches_pytorch_through_either(tmp_path):
    (tmp_path / "a.cuh").write_text('#include "b.cuh"\n')
    (tmp_path / "b.cuh").write_text('#include "a.cuh"\n#include "ops.h"\n')
    (tmp_path / "ops.h").write_text("#include <torch/extension.h>\n")
    (tmp_path / "k.cu").write_text('#include "a.cuh"\n')
    assert built(tmp_path, ["k.cu", "a.cuh", "b.cuh", "ops.h"]) == [
        "a.cuh",
        "b.cuh",
        "k.cu",
        "ops.h",
    ]


def test_an_include_that_is_not_beside_the_file_is_not_followed(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "ops.h").write_text("#include <ATen/ATen.h>\n")
    (tmp_path / "sub" / "k.cu").write_text('#include "ops.h"\n#include "missing.h"\n')
    (tmp_path / "sub" / "plain.cu").write_text('#include "local.h"\n')
    (tmp_path / "sub" / "local.h").write_text("#include <cuda_runtime.h>\n")
    assert built(tmp_path, ["sub/k.cu", "sub/plain.cu", "sub/local.h"]) == []


def test_extension_sources_are_the_files_a_setup_py_lists(tmp_path):
    (tmp_path / "src").mkdir()
    for name in ("src/ops.cu", "src/bind.cpp", "src/other.cu", "bench.cu"):
        (tmp_path / name).write_text("")
    setup = tmp_path / "setup.py"
    text = (
        "import os\n"
        "from torch.utils.cpp_extension import CUDAExtension\n"
        "src = os.path.join(os.path.dirname(__file__), 'src')\n"
        "ext = CUDAExtension('ops', [os.path.join(src, f) for f in ['ops.cu', 'missing.cu']]\n"
        "                    + ['src/bind.cpp'])\n"
        "tool = 'bench.cu'  # not an extension's source\n"
    )
    found = includes.extension_sources(text, str(setup))
    assert sorted(p[len(str(tmp_path)) + 1 :] for p in found) == ["src/bind.cpp", "src/ops.cu"]
    assert includes.extension_sources("setup(name='x')\n", str(setup)) == []
    assert includes.extension_sources("CUDAExtension(\n", str(setup)) == []  # a syntax error

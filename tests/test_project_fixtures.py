"""fixtures/project: findings that depend on where a file sits in the project, linted from there."""

from __future__ import annotations

import json
import shutil

import portlint.python.backend_packages
from support import FIXTURES, run_cli


def test_a_package_imports_itself_without_a_finding():
    status, out, _ = run_cli(
        "bitsandbytes", "--output-format", "json", "--isolated", cwd=FIXTURES / "project"
    )
    findings = json.loads(out)
    assert status == 1
    assert [(f["path"], f["line"], f["code"], f["symbol"]) for f in findings] == [
        ("bitsandbytes/nn.py", 9, "PRT101", '"cuda"'),
        ("bitsandbytes/optim/adam.py", 7, "PRT501", "apex"),
    ]
    # a class named for the package is the package's own code inside it: every target
    assert sorted(findings[0]["targets"]) == ["cpu", "mlu", "mps", "npu", "xpu"]


def _targets_by_site(out: str) -> list[tuple[str, int, str, str, list[str]]]:
    return [
        (f["path"], f["line"], f["code"], f["severity"], sorted(f["targets"]))
        for f in json.loads(out)
    ]


def _sites(*paths: str) -> list[tuple[str, int, str, str, list[str]]]:
    """The findings of one uncached, isolated run over ``paths`` in fixtures/project."""
    status, out, _ = run_cli(
        *paths, "--output-format", "json", "--isolated", "--no-cache", cwd=FIXTURES / "project"
    )
    assert status == 1
    return _targets_by_site(out)


#: fixtures/project/cuda_layers, linted as one run: Ascend's migration tool, imported by the
#: ``ascendapp`` package, covers npu in the modules that import the package; the web UI's own
#: Intel layer covers xpu for the ``torch.cuda`` names it (and the module beside it) rebinds.
CUDA_LAYER_FINDINGS = [
    # a module of the package that imports nothing of the migration tool runs without it
    (
        "cuda_layers/ascendapp/tools/bench.py",
        7,
        "PRT201",
        "error",
        ["cpu", "mlu", "mps", "npu", "xpu"],
    ),
    ("cuda_layers/ascendapp/train.py", 9, "PRT301", "error", ["cpu", "mlu", "mps", "xpu"]),
    # what follows the NCCL group set up on line 9 is no concern of cpu and mps
    ("cuda_layers/ascendapp/train.py", 10, "PRT201", "error", ["mlu", "xpu"]),
    ("cuda_layers/ascendapp/train.py", 11, "PRT102", "error", ["mlu", "xpu"]),
    ("cuda_layers/ascendapp/train.py", 12, "PRT101", "error", ["mlu", "xpu"]),
    # the migration tool does not patch ``.is_cuda``
    ("cuda_layers/ascendapp/train.py", 14, "PRT103", "warning", ["mlu", "npu", "xpu"]),
    # a stand-alone script that imports nothing of the package runs without the tool
    ("cuda_layers/eval_script.py", 6, "PRT101", "error", ["cpu", "mlu", "mps", "npu", "xpu"]),
    ("cuda_layers/webui/memory.py", 8, "PRT201", "error", ["cpu", "mlu", "mps", "npu"]),
    # a no-op on a CPU-only build: nothing to do there
    ("cuda_layers/webui/memory.py", 9, "PRT201", "info", ["mlu", "mps", "npu"]),
    # a name the layer leaves alone
    ("cuda_layers/webui/memory.py", 11, "PRT201", "error", ["cpu", "mlu", "mps", "npu", "xpu"]),
    # a module of the rebinding layer's package is loaded by the application that rebinds
    ("cuda_layers/webui/vendored/matting.py", 7, "PRT201", "error", ["cpu", "mlu", "mps", "npu"]),
]


def test_cuda_layers_of_the_project_cover_their_target():
    assert _sites("cuda_layers") == CUDA_LAYER_FINDINGS


def test_a_file_linted_without_the_layer_lists_every_target():
    # the layer is found among the files of the run: a run over one module does not see it
    assert [site[-1] for site in _sites("cuda_layers/webui/memory.py")] == [
        ["cpu", "mlu", "mps", "npu", "xpu"],
        ["mlu", "mps", "npu", "xpu"],
        ["cpu", "mlu", "mps", "npu", "xpu"],
    ]


def test_the_cache_follows_a_layer_that_goes_away(tmp_path):
    project = tmp_path / "project"
    shutil.copytree(FIXTURES / "project" / "cuda_layers", project)
    first = run_cli(".", "--output-format", "json", "--isolated", cwd=project)
    again = run_cli(".", "--output-format", "json", "--isolated", cwd=project)
    assert first == again
    assert ["cpu", "mlu", "mps", "xpu"] in [site[-1] for site in _targets_by_site(first[1])]
    tool = project / "ascendapp" / "npu_config.py"
    tool.write_text(tool.read_text().replace("from torch_npu.contrib import", "# no "))
    _, out, _ = run_cli(".", "--output-format", "json", "--isolated", cwd=project)
    train = [site for site in _targets_by_site(out) if site[0] == "ascendapp/train.py"]
    # npu is listed again; after the NCCL group (line 9) cpu and mps are not
    assert [site[-1] for site in train][:4] == [
        ["cpu", "mlu", "mps", "npu", "xpu"],
        *[["mlu", "npu", "xpu"]] * 3,
    ]


def test_a_damaged_facts_cache_is_read_again(tmp_path):
    project = tmp_path / "project"
    shutil.copytree(FIXTURES / "project" / "cuda_layers", project)
    first = run_cli(".", "--output-format", "json", "--isolated", cwd=project)
    (stored,) = (project / ".portlint_cache").glob("*.facts")
    entries = json.loads(stored.read_text())
    for entry in entries.values():
        entry[2] = {"damaged": True}
    stored.write_text(json.dumps(entries))
    assert run_cli(".", "--output-format", "json", "--isolated", cwd=project) == first
    repaired = json.loads(stored.read_text())
    assert all(isinstance(entry[2], list) for entry in repaired.values())


def test_the_run_says_which_layers_it_found():
    status, _, err = run_cli("cuda_layers", "--isolated", "--no-cache", cwd=FIXTURES / "project")
    assert status == 1
    assert err.splitlines() == [
        "portlint: npu migration tool imported in cuda_layers/ascendapp/npu_config.py: files that"
        ' import ascendapp list no npu site for the `torch.cuda` API, `.cuda()`, "cuda" devices'
        " and NCCL",
        "portlint: xpu layer in cuda_layers/webui/intel/__init__.py (5 `torch.cuda` names rebound"
        " there and beside it): the modules of webui and the files that import it list no xpu"
        " site for those names",
    ]
    _, _, quiet = run_cli("cuda_layers", "-q", "--isolated", "--no-cache", cwd=FIXTURES / "project")
    assert quiet == ""


#: fixtures/project/triton_packages: a package whose ``__init__`` loads a module that imports
#: ``triton`` loads on no mps machine, nor does a script that imports it; a package that only
#: tries to import ``triton`` loads everywhere.
TRITON_PACKAGE_FINDINGS = [
    ("triton_packages/bench.py", 6, "PRT101", "error", ["cpu", "mlu", "npu", "xpu"]),
    ("triton_packages/kernelpkg/generation.py", 6, "PRT201", "error", ["cpu", "mlu", "npu", "xpu"]),
    ("triton_packages/kernelpkg/generation.py", 7, "PRT101", "error", ["cpu", "mlu", "npu", "xpu"]),
    ("triton_packages/kernelpkg/ops/norm.py", 7, "PRT101", "error", ["cpu", "mlu", "npu", "xpu"]),
    (
        "triton_packages/optionalpkg/train.py",
        6,
        "PRT101",
        "error",
        ["cpu", "mlu", "mps", "npu", "xpu"],
    ),
]


def test_a_package_that_loads_triton_lists_no_mps_in_its_modules():
    assert _sites("triton_packages") == TRITON_PACKAGE_FINDINGS


def _notes(path: str) -> list[str]:
    """The lines a run over ``path`` in fixtures/project writes to stderr."""
    _, _, err = run_cli(path, "--isolated", "--no-cache", cwd=FIXTURES / "project")
    return err.splitlines()


def test_the_run_says_which_package_loads_triton():
    assert (
        "portlint: package kernelpkg imports triton when it loads (in"
        " triton_packages/kernelpkg/ops/norm.py), which no mps machine has: its modules list no"
        " mps site"
    ) in _notes("triton_packages")


#: fixtures/project/import_refusals: ``distlib/platform.py`` raises at its top level unless the
#: build is NVIDIA's or AMD's or the machine Ascend's, and ``distlib/__init__.py`` loads it, so
#: every module of ``distlib`` and the script that imports one (``scripts/bench.py``) list npu
#: alone; ``distlib/models/utils.py`` refuses npu too, before ``dense.py``, which imports it,
#: could: its chain's test is the site for npu, and after the chain nothing is left.
#: ``attnlib/weights.py`` refuses every target but ROCm before it imports ``sage.py``, which
#: refuses ROCm: its test stays the site, and nothing else in ``attnlib``, nor in
#: ``scripts/generate.py``, is one. ``settings.py``'s chain tests a setting, not a vendor;
#: ``scripts/optional.py`` tries the import.
IMPORT_REFUSAL_FINDINGS = [
    ("import_refusals/attnlib/weights.py", 3, "PRT201", "error", ["mlu", "mps", "npu", "xpu"]),
    ("import_refusals/distlib/engine.py", 6, "PRT201", "error", ["npu"]),
    ("import_refusals/distlib/engine.py", 9, "PRT101", "error", ["npu"]),
    ("import_refusals/distlib/models/utils.py", 3, "PRT601", "error", ["npu"]),
    ("import_refusals/distlib/platform.py", 10, "PRT601", "error", ["cpu", "mlu", "mps", "xpu"]),
    ("import_refusals/distlib/platform.py", 21, "PRT201", "error", ["npu"]),
    ("import_refusals/scripts/bench.py", 6, "PRT201", "error", ["npu"]),
    (
        "import_refusals/scripts/optional.py",
        9,
        "PRT201",
        "error",
        ["cpu", "mlu", "mps", "npu", "xpu"],
    ),
    ("import_refusals/settings.py", 16, "PRT201", "info", ["mlu", "mps", "npu", "xpu"]),
]


def test_a_module_that_refuses_a_target_when_it_loads_refuses_its_importers():
    assert _sites("import_refusals") == IMPORT_REFUSAL_FINDINGS


def test_the_run_says_which_module_refuses():
    assert (
        "portlint: package distlib loads distlib.platform (in"
        " import_refusals/distlib/__init__.py), which refuses cpu, mlu, mps, xpu when it loads:"
        " its modules list no cpu, mlu, mps, xpu site"
    ) in _notes("import_refusals")


def test_a_module_linted_without_the_refusing_one_keeps_its_targets():
    assert _sites("import_refusals/distlib/engine.py")[0][-1] == [
        "cpu",
        "mlu",
        "mps",
        "npu",
        "xpu",
    ]


def test_a_module_linted_without_its_package_keeps_mps():
    # what the package's __init__.py imports (ops/norm.py) is read among the files of the run
    assert _sites("triton_packages/kernelpkg/generation.py")[0][-1] == [
        "cpu",
        "mlu",
        "mps",
        "npu",
        "xpu",
    ]


def test_the_cache_follows_what_a_package_loads(tmp_path):
    project = tmp_path / "project"
    shutil.copytree(FIXTURES / "project" / "triton_packages", project)
    first = run_cli(".", "--output-format", "json", "--isolated", cwd=project)
    assert first == run_cli(".", "--output-format", "json", "--isolated", cwd=project)
    norm = project / "kernelpkg" / "ops" / "norm.py"
    norm.write_text(
        norm.read_text().replace(
            "import triton\n", "try:\n    import triton\nexcept ImportError:\n    triton = None\n"
        )
    )
    _, out, _ = run_cli(".", "--output-format", "json", "--isolated", cwd=project)
    generation = [site for site in _targets_by_site(out) if site[0] == "kernelpkg/generation.py"]
    assert [site[-1] for site in generation] == [["cpu", "mlu", "mps", "npu", "xpu"]] * 2


#: fixtures/project/cuda_extensions: ``setup.py`` builds ``fused_norm_C``,
#: ``fusedpkg._allocator`` and ``attn_cuda`` with ``CUDAExtension``. The modules that import them
#: at their top load only where they were built (CUDA and, hipified, ROCm): nothing after the
#: import is another target's site, and ROCm runs the CUDA calls as they are. So does ``model.py``,
#: which imports ``norm.py`` at its top. ``fused_norm``, which setup.py does not build, is no
#: extension: what follows it keeps its targets, and so does ``driver.py``, which imports
#: ``plain.py``. ``kernels.py`` picks ``aiter`` (ROCm only) or ``fused_norm_C`` in an
#: ``if``/``else``: no other target has either; ``fallback.py`` picks ``fused_norm_C`` or a module
#: every target has, and keeps its targets. The ``attnpkg`` package's ``__init__.py`` loads
#: ``interface.py``, which picks ``aiter`` or ``attn_cuda``: none of its modules lists a target.
NOT_ROCM = ["cpu", "mlu", "mps", "npu", "xpu"]
CUDA_EXTENSION_FINDINGS = [
    ("cuda_extensions/fusedpkg/driver.py", 8, "PRT102", "error", NOT_ROCM),
    ("cuda_extensions/fusedpkg/fallback.py", 13, "PRT101", "error", NOT_ROCM),
    ("cuda_extensions/fusedpkg/plain.py", 7, "PRT101", "error", NOT_ROCM),
    ("cuda_extensions/setup.py", 8, "PRT502", "error", NOT_ROCM),
    ("cuda_extensions/setup.py", 9, "PRT502", "error", NOT_ROCM),
    ("cuda_extensions/setup.py", 10, "PRT502", "error", NOT_ROCM),
]


def test_modules_after_an_import_of_a_cuda_extension_of_setup_py_have_no_site():
    assert _sites("cuda_extensions") == CUDA_EXTENSION_FINDINGS


def test_a_run_without_the_package_init_still_reads_what_it_loads():
    # Python runs attnpkg/__init__.py before utils/bench.py: the run reads it, though it does not
    # name it, and follows it to interface.py, which the run names
    base = "cuda_extensions/"
    found = _sites(
        base + "attnpkg/utils/bench.py", base + "attnpkg/interface.py", base + "setup.py"
    )
    assert [site[0] for site in found] == [base + "setup.py"] * 3
    # without interface.py in the run, what the __init__.py imports is not read
    found = _sites(base + "attnpkg/utils/bench.py", base + "setup.py")
    assert found[0] == (base + "attnpkg/utils/bench.py", 7, "PRT201", "error", NOT_ROCM)


#: fixtures/project/jit_extensions: ``ngp/backend.py`` and ``quant/csrc/load.py`` compile a CUDA
#: extension with ``torch.utils.cpp_extension.load`` when they load (in ``quant``'s namespace
#: folder ``csrc/``): the build is their site, and the modules that import them load only where
#: it succeeds (``quant/codebook.py``, and through ``quant``'s ``__init__.py`` the script beside
#: ``app/t2i/utils.py``). ``ngp/march.py`` imports the extension ``setup.py`` builds, or in its
#: ``except ImportError`` the module that compiles it: neither loads on another target, nor does
#: the rest of ``ngp``. ``soft.py``'s handler sets a name and imports nothing, ``settings``
#: loads a file with json's ``load``, and ``app/fill/utils.py`` loads everywhere: they keep
#: their targets.
JIT_EXTENSION_FINDINGS = [
    ("jit_extensions/app/fill/run.py", 6, "PRT201", "error", NOT_ROCM),
    ("jit_extensions/ngp/backend.py", 10, "PRT502", "error", NOT_ROCM),
    ("jit_extensions/quant/csrc/load.py", 4, "PRT502", "error", NOT_ROCM),
    ("jit_extensions/settings/reader.py", 8, "PRT101", "error", NOT_ROCM),
    ("jit_extensions/settings/tools.py", 5, "PRT101", "error", NOT_ROCM),
    ("jit_extensions/setup.py", 6, "PRT502", "error", NOT_ROCM),
    ("jit_extensions/soft.py", 9, "PRT102", "error", NOT_ROCM),
]


def test_modules_that_load_an_extension_compiled_at_import_have_no_site():
    assert _sites("jit_extensions") == JIT_EXTENSION_FINDINGS


#: fixtures/project/held_extensions: each ``ops/setup.py`` builds its extension with a class it
#: holds in a name. ``deform``'s holds ``CUDAExtension`` where CUDA is there and raises
#: otherwise, so ``deform_attn_C`` exists only where PyTorch built it with CUDA, and
#: ``ops/test.py``, a module of the package run as a script from its folder, imports it through
#: ``functions/`` beside it by the bare name: none of its ``.cuda()`` calls is a site. ``blend``'s
#: builds with ``CppExtension`` without CUDA: ``blend_C`` loads everywhere, and its test keeps
#: its finding.
HELD_EXTENSION_FINDINGS = [
    ("held_extensions/blend/ops/setup.py", 7, "PRT201", "warning", ["mlu", "mps", "npu", "xpu"]),
    ("held_extensions/blend/ops/test.py", 4, "PRT102", "error", NOT_ROCM),
    ("held_extensions/deform/ops/setup.py", 8, "PRT201", "error", ["mlu", "mps", "npu", "xpu"]),
]


def test_an_extension_built_by_a_held_class_that_refuses_elsewhere_loads_only_on_cuda():
    assert _sites("held_extensions") == HELD_EXTENSION_FINDINGS


#: fixtures/project/own_package: the project that holds ``mii/`` imports it in its tests and
#: examples: that is the project itself, not a CUDA-only package to install (PRT501); what follows
#: is the project's own code, reported as usual. A package vendored in a folder of its own
#: (``third_party/apex/apex``) is held by that folder, not by the project: ``train.py`` still
#: imports a CUDA-only package.
EVERY_TARGET = ["cpu", "mlu", "mps", "npu", "rocm", "xpu"]
OWN_PACKAGE_FINDINGS = [
    ("own_package/tests/test_api.py", 11, "PRT102", "error", NOT_ROCM),
    ("own_package/train.py", 2, "PRT501", "error", EVERY_TARGET),
]


def test_the_projects_own_tests_import_its_package_without_a_finding():
    assert _sites("own_package") == OWN_PACKAGE_FINDINGS


def test_a_run_without_the_package_keeps_the_import():
    # the package is found among the files of the run: the tests alone import an install
    assert _sites("own_package/tests") == [
        ("own_package/tests/test_api.py", 3, "PRT501", "error", EVERY_TARGET),
    ]


#: fixtures/project/vendor_stacks: a package whose ``__init__`` loads a module that imports a
#: vendor's own PyTorch stack loads only where that stack is: ``ascendkit`` (``torch_npu``) on
#: npu alone, ``gaudikit`` (``habana_frameworks``, Intel Gaudi) on no target; a script beside
#: them that imports neither keeps every target.
VENDOR_STACK_FINDINGS = [
    ("vendor_stacks/ascendkit/train.py", 7, "PRT201", "error", ["npu"]),
    ("vendor_stacks/eval_script.py", 3, "PRT102", "error", NOT_ROCM),
]


def test_a_package_that_loads_a_vendor_stack_lists_that_vendor_alone():
    assert _sites("vendor_stacks") == VENDOR_STACK_FINDINGS


def test_the_run_says_which_package_loads_a_vendor_stack():
    assert (
        "portlint: package gaudikit imports habana_frameworks when it loads (in"
        " vendor_stacks/gaudikit/ops.py), which no cpu, mlu, mps, npu, rocm, xpu machine has:"
        " its modules list no cpu, mlu, mps, npu, rocm, xpu site"
    ) in _notes("vendor_stacks")


#: fixtures/project/torch_includes: scale.cu reaches PyTorch through its own header util.cuh,
#: and includes check.h: PyTorch's build compiles (and on ROCm hipifies) all three, so rocm is
#: listed on none of their names; so is launch.cu, which setup.py lists among the extension's
#: sources. tools/bench.cu shares check.h but nvcc builds it on its own.
TORCH_INCLUDE_FINDINGS = [
    ("torch_includes/csrc/check.h", 6, "PRT701", "error", ["cpu", "mlu", "mps", "npu", "xpu"]),
    ("torch_includes/csrc/check.h", 7, "PRT701", "error", ["cpu", "mlu", "mps", "npu", "xpu"]),
    ("torch_includes/csrc/check.h", 7, "PRT701", "error", ["cpu", "mlu", "mps", "npu", "xpu"]),
    ("torch_includes/csrc/launch.cu", 3, "PRT704", "error", ["cpu", "mlu", "mps", "npu", "xpu"]),
    ("torch_includes/csrc/launch.cu", 5, "PRT701", "error", ["cpu", "mlu", "mps", "npu", "xpu"]),
    ("torch_includes/csrc/launch.cu", 6, "PRT701", "error", ["cpu", "mlu", "mps", "npu", "xpu"]),
    ("torch_includes/csrc/scale.cu", 6, "PRT705", "error", ["cpu", "mlu", "mps", "npu", "xpu"]),
    ("torch_includes/csrc/scale.cu", 13, "PRT701", "error", ["cpu", "mlu", "mps", "npu", "xpu"]),
    # PyTorch's CUDA header and stream getter (rules/cxx.toml [torch_cuda_api]) beside the
    # runtime's cudaStream_t: portable on ROCm, a port for the rest
    ("torch_includes/csrc/util.cuh", 4, "PRT704", "error", ["cpu", "mlu", "mps", "npu", "xpu"]),
    ("torch_includes/csrc/util.cuh", 6, "PRT701", "error", ["cpu", "mlu", "mps", "npu", "xpu"]),
    ("torch_includes/csrc/util.cuh", 6, "PRT701", "error", ["cpu", "mlu", "mps", "npu", "xpu"]),
    ("torch_includes/setup.py", 6, "PRT502", "error", ["cpu", "mlu", "mps", "npu", "xpu"]),
    (
        "torch_includes/tools/bench.cu",
        7,
        "PRT701",
        "error",
        ["cpu", "mlu", "mps", "npu", "rocm", "xpu"],
    ),
]


def test_sources_that_reach_pytorch_through_their_own_headers_are_extension_sources():
    assert _sites("torch_includes") == TORCH_INCLUDE_FINDINGS


def test_a_source_linted_alone_still_follows_its_includes():
    # linted on its own, scale.cu still follows its includes to util.cuh on disk
    sites = _sites("torch_includes/csrc/scale.cu")
    assert sites == [s for s in TORCH_INCLUDE_FINDINGS if s[0].endswith("scale.cu")]


def test_cached_include_facts_give_the_same_answer(tmp_path):
    project = tmp_path / "torch_includes"
    shutil.copytree(FIXTURES / "project" / "torch_includes", project)
    (project / "setup.py").unlink()  # what scale.cu is then follows from its includes alone

    def rocm_sites() -> set[tuple[str, int]]:
        status, out, _ = run_cli(
            "torch_includes", "--output-format", "json", "--isolated", cwd=tmp_path
        )
        assert status == 1
        return {
            (path, line) for path, line, _, _, targets in _targets_by_site(out) if "rocm" in targets
        }

    assert (
        rocm_sites()
        == rocm_sites()
        == {
            ("torch_includes/csrc/launch.cu", 3),  # no longer an extension source
            ("torch_includes/csrc/launch.cu", 5),
            ("torch_includes/csrc/launch.cu", 6),
            ("torch_includes/tools/bench.cu", 7),
        }
    )
    # the header stops including PyTorch: the sources that reached it through it are plain CUDA
    util = project / "csrc" / "util.cuh"
    util.write_text(util.read_text().replace("#include <ATen/cuda/CUDAContext.h>\n", ""))
    assert ("torch_includes/csrc/scale.cu", 13) in rocm_sites()


#: fixtures/project/vendor_folders: a benchmark suite with one folder per vendor. NVIDIA's
#: folder is the CUDA backend (one summary per file instead of its sites), Ascend's config lists
#: npu alone, Kunlunxin's and MetaX's files none (no portlint target); a CUDA folder beside a
#: CPU one (one extension's two builds) and a "GPU" folder (any vendor's) keep their sites. A
#: build file named for a vendor (`requirements-xpu.txt`) or for one of its products
#: (`config_MI300X_1x8.sh`, an AMD Instinct GPU) is that vendor's too.
NVIDIA_SIBLINGS = (
    "CUDA backend package `nvidia/`: siblings npu, kunlun, maca;"
    " no backend for rocm, mlu, xpu, mps, cpu"
)
VENDOR_FOLDER_FINDINGS = [
    ("vendor_folders/configs/config_H100_1x8.sh", 1, "PRT921", ""),
    ("vendor_folders/configs/config_H100_1x8.sh", 2, "PRT922", ""),
    ("vendor_folders/configs/config_MI300X_1x8.sh", 2, "PRT922", ""),
    ("vendor_folders/docker/GPU/Dockerfile", 1, "PRT901", ""),
    ("vendor_folders/kernels/cuda/reduce.cu", 2, "PRT704", ""),
    ("vendor_folders/kernels/cuda/reduce.cu", 4, "PRT705", ""),
    ("vendor_folders/requirements/requirements-gpu.txt", 1, "PRT933", ""),
    ("vendor_folders/requirements/requirements-xpu.txt", 1, "PRT933", ""),
    ("vendor_folders/toolkits/gemm/ascend/A3/main.sh", 1, "PRT921", ""),
    # one summary for the backend folder, on its first file: main.sh beside it has sites too
    ("vendor_folders/toolkits/gemm/nvidia/A100/gemm.cu", 1, "PRT105", NVIDIA_SIBLINGS),
]


def test_files_of_a_vendors_folder_are_that_vendors():
    status, out, _ = run_cli(
        "vendor_folders",
        "--output-format",
        "json",
        "--isolated",
        "--no-cache",
        cwd=FIXTURES / "project",
    )
    assert status == 1
    findings = json.loads(out)
    summaries = [
        (f["path"], f["line"], f["code"], f["message"] if f["code"] == "PRT105" else "")
        for f in findings
    ]
    assert summaries == VENDOR_FOLDER_FINDINGS
    targets = {f["path"]: sorted(f["targets"]) for f in findings}
    assert targets["vendor_folders/toolkits/gemm/ascend/A3/main.sh"] == ["npu"]
    # a requirements file named for Intel's XPUs is theirs; one named "gpu" is anybody's
    assert targets["vendor_folders/requirements/requirements-xpu.txt"] == ["xpu"]
    # a launch config named for an AMD Instinct GPU is ROCm's: its NCCL variable is RCCL's, and
    # nvidia-smi is ROCm's to replace; the one named for NVIDIA's H100 keeps every target
    assert targets["vendor_folders/configs/config_MI300X_1x8.sh"] == ["rocm"]
    assert len(targets["vendor_folders/requirements/requirements-gpu.txt"]) == 6
    assert targets["vendor_folders/toolkits/gemm/nvidia/A100/gemm.cu"] == [
        "cpu",
        "mlu",
        "mps",
        "rocm",
        "xpu",
    ]


def test_a_backend_folders_file_linted_alone_carries_the_summary():
    main = "vendor_folders/toolkits/gemm/nvidia/A100/main.sh"
    status, out, _ = run_cli(
        main, "--output-format", "json", "--isolated", "--no-cache", cwd=FIXTURES / "project"
    )
    assert status == 1
    found = [(f["path"], f["line"], f["code"], f["message"]) for f in json.loads(out)]
    assert found == [(main, 1, "PRT105", NVIDIA_SIBLINGS)]


def test_a_backend_folder_takes_no_rocm_rename(tmp_path):
    # the fix follows check mode: the CUDA backend's names are no site, so nothing is renamed
    project = tmp_path / "suite"
    shutil.copytree(FIXTURES / "project" / "vendor_folders", project)
    gemm = project / "toolkits" / "gemm" / "nvidia" / "A100" / "gemm.cu"
    before = gemm.read_text()
    run_cli(
        str(gemm),
        "--fix",
        "--unsafe-fixes",
        "--target",
        "rocm",
        "--isolated",
        "--no-cache",
        cwd=project,
    )
    assert gemm.read_text() == before


def test_the_cache_follows_the_folders_beside_a_vendors_folder(tmp_path):
    project = tmp_path / "suite"
    shutil.copytree(FIXTURES / "project" / "vendor_folders", project)
    gemm = "toolkits/gemm/nvidia/A100/gemm.cu"

    def codes():
        _, out, _ = run_cli(".", "--output-format", "json", "--isolated", cwd=project)
        return [site[2] for site in _targets_by_site(out) if site[0] == gemm]

    assert codes() == ["PRT105"]
    assert codes() == ["PRT105"]  # from the cache
    for vendor in ("ascend", "kunlunxin", "metax"):
        shutil.rmtree(project / "toolkits" / "gemm" / vendor)
    portlint.python.backend_packages._listing.cache_clear()  # (one process: runs are one each)
    # no other vendor's folder is left beside it: its sites are reported again
    assert "PRT701" in codes()

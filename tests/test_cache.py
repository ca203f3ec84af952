"""The results cache: what hits, what misses, and that a damaged or shared cache never breaks a run.

Runs are in-process with one job, and every analysis is counted (``analysed``), so a hit is seen as
"no file analysed" and not inferred from timing.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import portlint.cache
import portlint.cxx.analyser
import portlint.engine
import portlint.python.backend_packages
import portlint.python.backends
import portlint.python.extension_tests
from portlint.cache import PACKAGE, Cache, decode_findings, encode_findings, files_below
from portlint.catalog import rules_dir
from portlint.config import Settings
from portlint.discover import Candidate
from portlint.engine import lint_paths, lint_source, read_source
from support import run_cli

TRAIN = "import torch\n\nmodel = Net().cuda()\n"
CLEAN = "import os\n\nprint(os.getcwd())\n"
#: What ``TRAIN`` gives in JSON: the file with findings.
CUDA_METHOD = "PRT102"


@pytest.fixture
def analysed(monkeypatch) -> list[str]:
    """Paths analysed (parsed) by the engine during the test."""
    paths: list[str] = []

    def counting(source, *rest):
        paths.append(Path(source.path).name)
        return lint_source(source, *rest)

    monkeypatch.setattr(portlint.engine, "lint_source", counting)
    return paths


@pytest.fixture
def project(tmp_path, monkeypatch) -> Path:
    monkeypatch.delenv("PORTLINT_NO_CACHE", raising=False)
    (tmp_path / "train.py").write_text(TRAIN, encoding="utf-8")
    (tmp_path / "util.py").write_text(CLEAN, encoding="utf-8")
    return tmp_path


def check(project: Path, *args: str) -> tuple[int, list[dict]]:
    status, out, err = run_cli("--output-format", "json", "-j", "1", *args, ".", cwd=project)
    assert err == ""
    return status, json.loads(out)


def codes(findings: list[dict]) -> list[tuple[str, str]]:
    return sorted((f["path"].replace(os.sep, "/"), f["code"]) for f in findings)


def shard_files(project: Path) -> list[Path]:
    return sorted((project / ".portlint_cache").glob("*.json"))


def test_second_run_analyses_nothing_and_reports_the_same(project, analysed):
    first = check(project)
    assert analysed == ["train.py"]
    second = check(project)
    assert analysed == ["train.py"]
    assert second == first
    assert codes(first[1]) == [("train.py", CUDA_METHOD)]
    assert (project / ".portlint_cache" / ".gitignore").read_text().splitlines()[-1] == "*"
    assert len(shard_files(project)) == 1


def test_unchanged_time_and_size_is_trusted_without_reading(project, analysed):
    check(project)
    stat = (project / "train.py").stat()
    # Same size, same time, different text: the cache answers (as ruff's does).
    (project / "train.py").write_text(TRAIN.replace("cuda", "cpu_"), encoding="utf-8")
    os.utime(project / "train.py", ns=(stat.st_atime_ns, stat.st_mtime_ns))
    _, findings = check(project)
    assert codes(findings) == [("train.py", CUDA_METHOD)]
    assert analysed == ["train.py"]


def test_a_changed_file_misses(project, analysed):
    check(project)
    (project / "util.py").write_text(CLEAN + "x = y.cuda()\n", encoding="utf-8")
    _, findings = check(project)
    assert analysed == ["train.py", "util.py"]
    assert codes(findings) == [("train.py", CUDA_METHOD), ("util.py", CUDA_METHOD)]


def test_a_touched_file_with_the_same_content_hits(project, analysed):
    check(project)
    stat = (project / "train.py").stat()
    os.utime(project / "train.py", ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
    _, findings = check(project)
    assert analysed == ["train.py"]  # read and hashed, not analysed again
    assert codes(findings) == [("train.py", CUDA_METHOD)]


def test_a_changed_setting_misses(project, analysed):
    check(project)
    _, findings = check(project, "--ignore", CUDA_METHOD)
    assert analysed == ["train.py", "train.py"]
    assert findings == []
    check(project)
    check(project, "--ignore", CUDA_METHOD)
    assert analysed == ["train.py", "train.py"]  # each setting has its own cache file
    assert len(shard_files(project)) == 2


def test_a_changed_configuration_file_misses(project, analysed):
    check(project)
    (project / "portlint.toml").write_text(f'ignore = ["{CUDA_METHOD}"]\n', encoding="utf-8")
    _, findings = check(project)
    assert findings == []
    assert analysed == ["train.py", "train.py"]


def test_a_changed_catalogue_misses(project, tmp_path_factory):
    settings = Settings(config_path=project / "portlint.toml")
    findings = lint_source(read_source(project / "train.py", "python"), "python", settings)
    copy = tmp_path_factory.mktemp("catalogue") / "rules"
    shutil.copytree(rules_dir(), copy)
    stamp = [0, 0, "hash"]
    cache = Cache(project / "cache", copy)
    cache.store(str(project / "train.py"), settings, stamp, findings.findings)
    assert cache.save() is None
    assert Cache(project / "cache", copy).lookup(str(project / "train.py"), settings)[1] == "hash"

    first = sorted(copy.glob("*.toml"))[0]
    first.write_text(first.read_text(encoding="utf-8") + "\n# changed\n", encoding="utf-8")
    assert Cache(project / "cache", copy).lookup(str(project / "train.py"), settings) == (
        None,
        None,
    )


def test_a_new_version_misses(project, analysed, monkeypatch):
    check(project)
    monkeypatch.setattr(portlint.cache, "__version__", "99.0.0")
    check(project)
    assert analysed == ["train.py", "train.py"]


def test_a_corrupt_cache_file_is_ignored_and_rewritten(project, analysed):
    first = check(project)
    (shard,) = shard_files(project)
    shard.write_text('{"truncated": [1, 2', encoding="utf-8")
    assert check(project) == first
    assert analysed == ["train.py", "train.py"]
    assert check(project) == first
    assert analysed == ["train.py", "train.py"]  # rewritten: the third run hits again
    assert len(json.loads(shard.read_text(encoding="utf-8"))) == 2


def test_a_corrupt_entry_is_ignored_and_rewritten(project, analysed):
    first = check(project)
    (shard,) = shard_files(project)
    entries = json.loads(shard.read_text(encoding="utf-8"))
    key = str((project / "train.py").resolve())
    entries[key][3] = [["not a span"], "PRT102"]
    shard.write_text(json.dumps(entries), encoding="utf-8")
    assert check(project) == first
    assert analysed == ["train.py", "train.py"]
    decode_findings(json.loads(shard.read_text(encoding="utf-8"))[key][3], "train.py")


def test_entries_of_deleted_files_are_dropped(project):
    check(project)
    (project / "util.py").unlink()
    (project / "new.py").write_text(CLEAN, encoding="utf-8")
    check(project)
    (shard,) = shard_files(project)
    names = sorted(Path(key).name for key in json.loads(shard.read_text(encoding="utf-8")))
    assert names == ["new.py", "train.py"]


def test_two_concurrent_runs_leave_a_valid_cache(project, analysed):
    for index in range(40):
        (project / f"module_{index}.py").write_text(f"x = {index}\nmodel.cuda()\n", "utf-8")
    command = [sys.executable, "-m", "portlint", "--output-format", "json", "-j", "1", "."]
    runs = [
        subprocess.Popen(command, cwd=project, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        for _ in range(2)
    ]
    outputs = [run.communicate() for run in runs]
    assert [run.returncode for run in runs] == [1, 1]
    assert [err for _, err in outputs] == [b"", b""]
    assert outputs[0][0] == outputs[1][0]
    (shard,) = shard_files(project)
    assert len(json.loads(shard.read_text(encoding="utf-8"))) == 42
    assert not list((project / ".portlint_cache").glob(".tmp-*"))
    _, findings = check(project)
    assert analysed == []  # everything from the cache the two runs left
    assert len(findings) == 41


def test_no_cache_reads_and_writes_no_cache(project, analysed):
    check(project, "--no-cache")
    check(project, "--no-cache")
    assert analysed == ["train.py", "train.py"]
    assert not (project / ".portlint_cache").exists()


def test_cache_dir_option_and_setting(project, analysed):
    check(project, "--cache-dir", "elsewhere")
    assert len(list((project / "elsewhere").glob("*.json"))) == 1
    (project / "portlint.toml").write_text('cache-dir = "configured"\n', encoding="utf-8")
    check(project)
    check(project)
    assert len(list((project / "configured").glob("*.json"))) == 1
    assert analysed == ["train.py", "train.py"]
    assert not (project / ".portlint_cache").exists()


def test_an_unwritable_cache_is_a_warning(project):
    (project / "blocked").write_text("a file, not a folder", encoding="utf-8")
    status, out, err = run_cli("--cache-dir", "blocked/cache", "-q", ".", cwd=project)
    assert status == 1
    assert "train.py:3:14: PRT102" in out
    assert err.startswith("portlint: warning: cannot write the cache in ")
    assert err.count("\n") == 1


def test_fix_mode_reanalyses_cached_files_with_findings_only(project, analysed):
    check(project)
    run_cli("--fix", "-q", "-j", "1", ".", cwd=project)
    assert analysed[1:] == ["train.py"] * (len(analysed) - 1)
    assert "util.py" not in analysed
    fixed = (project / "train.py").read_text(encoding="utf-8")
    assert fixed != TRAIN
    # The fixed file is new content: the next check analyses it and agrees with a fresh run.
    _, cached = check(project)
    _, fresh = check(project, "--no-cache")
    assert cached == fresh


def test_findings_round_trip_through_the_cache_format(project):
    settings = Settings()
    result = lint_source(read_source(project / "train.py", "python"), "python", settings)
    assert result.findings and any(f.fix is not None for f in result.findings)
    encoded = json.loads(json.dumps(encode_findings(result.findings)))
    assert decode_findings(encoded, result.findings[0].path) == result.findings


def test_every_advice_field_round_trips_through_the_cache_format():
    from portlint.model import Advice, Finding, Severity, Span, Status

    advice = Advice(Status.RENAME, "hipblasGemmEx", "a note", since="7.0.0", roc="rocblas_gemm_ex")
    finding = Finding(
        "k.cu",
        Span(3, 4, 3, 16),
        "PRT701",
        "cuda-api-renamed",
        Severity.ERROR,
        "m",
        "cublasGemmEx",
        {"rocm": advice},
    )
    encoded = json.loads(json.dumps(encode_findings((finding,))))
    assert decode_findings(encoded, "k.cu") == (finding,)


CUDA_BACKEND = "import torch\n\n\ndef synchronize():\n    torch.cuda.synchronize()\n"


def test_a_module_added_beside_a_file_misses(project, analysed):
    """cuda.py is a vendor backend (PRT105) only while npu.py sits beside it."""
    (project / "cuda.py").write_text(CUDA_BACKEND, encoding="utf-8")
    assert [c for _, c in codes(check(project)[1]) if c != CUDA_METHOD] == ["PRT201"]
    (project / "npu.py").write_text(CUDA_BACKEND.replace("cuda", "npu"), encoding="utf-8")
    analysed.clear()
    # Each CLI run is a new process; this test runs them in one, whose listing memo is stale.
    portlint.python.backends._python_stems.cache_clear()
    findings = check(project)[1]
    assert "cuda.py" in analysed  # (and the other modules of that folder)
    assert [f["code"] for f in findings if f["path"].endswith("cuda.py")] == ["PRT105"]


def test_a_vendor_package_added_beside_a_cuda_package_misses(project, analysed):
    """ops/cuda/ is a backend package (PRT105) only while another vendor's folder sits beside
    it: its files are looked at again when one is added, though nothing in their own folder
    changed."""
    (project / "ops" / "cuda").mkdir(parents=True)
    (project / "ops" / "cuda" / "kernels.py").write_text(CUDA_BACKEND, encoding="utf-8")
    assert [c for _, c in codes(check(project)[1]) if c != CUDA_METHOD] == ["PRT201"]
    (project / "ops" / "npu").mkdir()
    analysed.clear()
    portlint.python.backend_packages._listing.cache_clear()  # (as above: one process)
    findings = check(project)[1]
    assert analysed == ["kernels.py"]  # looked at again (the analysis sees its name)
    assert [f for f in findings if f["path"].startswith("ops")] == []


def test_a_cpu_twin_added_beside_a_cuda_source_misses(project, analysed):
    """nms_cuda.cu lists cpu only while no nms_cpu.cpp sits beside it: the CUDA source is
    looked at again when its twin is added, though the source itself did not change."""
    kernel = "__global__ void nms(float* p) { p[threadIdx.x] = 0.0f; }\n"
    (project / "nms_cuda.cu").write_text(kernel, encoding="utf-8")

    def kernel_targets() -> list[list[str]]:
        found = check(project)[1]
        return [sorted(f["targets"]) for f in found if f["path"] == "nms_cuda.cu"]

    assert kernel_targets() == [["cpu", "mlu", "mps", "npu", "xpu"]]
    (project / "nms_cpu.cpp").write_text("void nms_cpu(float* p) { p[0] = 0.0f; }\n")
    analysed.clear()
    portlint.cxx.analyser._sources_in.cache_clear()  # (one process, as above)
    assert kernel_targets() == [["mlu", "mps", "npu", "xpu"]]
    assert "nms_cuda.cu" in analysed


def test_a_cuda_source_added_above_a_test_folder_misses(project, analysed):
    """A test in ``tests/`` tests the CUDA extension beside that folder once a CUDA source
    sits there: its cached findings are not reused when the source is added."""
    (project / "tests").mkdir()
    (project / "tests" / "test_kernel.py").write_text(
        "import torch\n\n\ndef test_kernel():\n    torch.ones(2).cuda()\n", encoding="utf-8"
    )

    def test_codes() -> list[str]:
        return [f["code"] for f in check(project)[1] if f["path"] == "tests/test_kernel.py"]

    assert test_codes() == ["PRT102"]
    kernel = "__global__ void scale(float* p) { p[threadIdx.x] *= 2.0f; }\n"
    (project / "scale_cuda.cu").write_text(kernel, encoding="utf-8")
    analysed.clear()
    portlint.python.extension_tests.extension_sources.cache_clear()  # (one process, as above)
    assert test_codes() == []
    assert "test_kernel.py" in analysed


def test_a_cuda_extension_added_to_setup_py_misses(project, analysed):
    """What follows ``import fused_C`` runs only where the extension was built once the
    project's ``setup.py`` builds it with ``CUDAExtension``: the module's cached findings are
    not reused when that line is added."""
    (project / "norm.py").write_text(
        'import torch\n\nimport fused_C\n\n\ndef norm(x):\n    return x.to("cuda")\n',
        encoding="utf-8",
    )
    (project / "setup.py").write_text("from setuptools import setup\n\nsetup()\n", "utf-8")

    def norm_codes() -> list[str]:
        return [f["code"] for f in check(project)[1] if f["path"] == "norm.py"]

    assert norm_codes() == ["PRT101"]
    (project / "setup.py").write_text(
        "from setuptools import setup\nfrom torch.utils.cpp_extension import CUDAExtension\n\n"
        'setup(ext_modules=[CUDAExtension("fused_C", ["fused.cu"])])\n',
        encoding="utf-8",
    )
    analysed.clear()
    portlint.python.extension_tests._setup_names.cache_clear()  # (one process, as above)
    portlint.python.extension_tests._extensions_from.cache_clear()
    assert norm_codes() == []
    assert "norm.py" in analysed


def test_a_package_registering_for_cuda_alone_misses(project, analysed):
    """A module of a package is the CUDA backend's once the package's ``__init__.py`` registers
    it for CUDA alone: its cached findings are not reused when that registration is added."""
    (project / "impl").mkdir()
    (project / "impl" / "__init__.py").write_text("NAME = 'impl'\n", encoding="utf-8")
    (project / "impl" / "ops.py").write_text(
        "import torch\n\n\ndef launch():\n    return torch.cuda.current_stream()\n",
        encoding="utf-8",
    )

    def impl_codes() -> list[tuple[str, str]]:
        return [
            (f["path"].replace(os.sep, "/"), f["code"])
            for f in check(project)[1]
            if f["path"].startswith("impl")
        ]

    assert impl_codes() == [("impl/ops.py", "PRT201")]
    (project / "impl" / "__init__.py").write_text(
        "from registry import register_impl\n\nregister_impl(name='impl', devices=('cuda',))\n",
        encoding="utf-8",
    )
    analysed.clear()
    portlint.python.backend_packages._registers_cuda_alone.cache_clear()  # (one process)
    portlint.python.backend_packages._registered_in.cache_clear()
    assert impl_codes() == [("impl/__init__.py", "PRT105")]
    assert "ops.py" in analysed


def test_a_sibling_backend_importing_a_cuda_module_misses(project, analysed):
    """A module of a CUDA package that a sibling backend imports is shared with that vendor:
    when the sibling starts importing it, its cached (empty) findings are not reused."""
    (project / "ops" / "cuda").mkdir(parents=True)
    (project / "ops" / "npu").mkdir()
    (project / "ops" / "cuda" / "graph.py").write_text(CUDA_BACKEND, encoding="utf-8")
    (project / "ops" / "npu" / "__init__.py").write_text("X = 1\n", encoding="utf-8")
    assert [f for f in check(project)[1] if f["path"].endswith("graph.py")] == []
    (project / "ops" / "npu" / "__init__.py").write_text(
        "from ops.cuda.graph import synchronize\n", encoding="utf-8"
    )
    analysed.clear()
    portlint.python.backend_packages._shared.cache_clear()  # (one process, as above)
    findings = check(project)[1]
    assert "graph.py" in analysed
    assert [f["code"] for f in findings if f["path"].endswith("graph.py")] == ["PRT201"]


def test_each_file_is_cached_under_its_own_settings(project, analysed):
    """Files with different closest configurations have separate entries."""
    quiet, strict = Settings(ignore=(CUDA_METHOD,)), Settings()

    def run(settings_of_train: Settings) -> dict[str, tuple]:
        cache = Cache(project / "cache", rules_dir())
        candidates = [
            Candidate(str(project / "train.py"), "python", settings=settings_of_train),
            Candidate(str(project / "util.py"), "python", settings=strict),
        ]
        results = lint_paths(candidates, Settings(), jobs=1, cache=cache)
        found = {Path(r.path).name: tuple(f.code for f in r.findings) for r in results}
        assert cache.save() is None
        return found

    assert run(quiet) == {"train.py": (), "util.py": ()}
    assert len(list((project / "cache").glob("*.json"))) == 2
    assert run(strict) == {"train.py": (CUDA_METHOD,), "util.py": ()}
    assert run(quiet) == {"train.py": (), "util.py": ()}
    assert analysed == ["train.py", "train.py"]


@pytest.mark.skipif(os.sep != "/", reason="the string form of the key is the POSIX one")
@pytest.mark.parametrize(
    "path",
    [
        "a/b.py",
        "./a/b.py",
        "a/./b.py",
        "a/../b.py",
        "a//b.py",
        ".hidden/b.py",
        "a/..b/c.py",
        "/abs/x.py",
        "/abs/../x.py",
        "a/",
        "..",
        "../up.py",
        "dir/.x./y.py",
    ],
)
@pytest.mark.parametrize("cwd", ["/", "/work/project"])
def test_cache_key_is_the_normalised_absolute_path(tmp_path, path, cwd):
    cache = Cache(tmp_path / "cache", rules_dir())
    cache._cwd = cwd
    expected = os.path.normpath(path if path.startswith("/") else f"{cwd}/{path}")
    assert cache.key(path) == expected


def test_neighbours_from_the_walk_match_a_listing(tmp_path):
    folder = tmp_path / "pkg"
    folder.mkdir()
    for name in ("cuda.py", "npu.py", "notes.txt", "cpu.py"):
        (folder / name).write_text("")
    listed = Cache(tmp_path / "one", rules_dir())
    walked = Cache(tmp_path / "two", rules_dir())
    walked.know_listings({str(folder): sorted(os.listdir(folder), reverse=True)})
    path = str(folder / "cuda.py")
    assert walked.neighbours(path) == listed.neighbours(path)
    other = Cache(tmp_path / "three", rules_dir())
    other.know_listings({str(folder): ["cuda.py", "npu.py"]})  # cpu.py left out of the walk
    assert other.neighbours(path) != listed.neighbours(path)


@pytest.mark.parametrize("suffix", [".py", ".toml"])
def test_fingerprinted_files_are_those_rglob_finds(suffix):
    top = PACKAGE if suffix == ".py" else rules_dir()
    expected = {(str(p.relative_to(top)), str(p)) for p in top.rglob(f"*{suffix}")}
    found = files_below(top, suffix)
    assert found == sorted(found)
    assert set(found) == expected
    assert any(os.sep in relative for relative, _ in found)  # subfolders are included

"""One languages table: discovery, suppression comments, --add-noqa, the C++ grammar and the
pre-commit hooks agree on every suffix."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from portlint.cxx.parsing import GRAMMAR_BY_SUFFIX
from portlint.discover import language_of
from portlint.languages import LANGUAGES
from portlint.noqa import comment_style
from support import ROOT, run_cli

HOOKS = {hook["id"]: hook for hook in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
CUDA_C = "#include <cuda_runtime.h>\nvoid f(void **p) { cudaMalloc(p, 4); }\n"


@pytest.mark.parametrize("suffix", sorted(LANGUAGES))
def test_every_suffix_is_discovered_parsed_and_commentable(suffix):
    language = LANGUAGES[suffix]
    assert language_of(Path(f"src/file{suffix}")) == language.analyser
    assert comment_style(f"file{suffix}") == ("python" if language.comment == "#" else "c")
    assert GRAMMAR_BY_SUFFIX.get(suffix) == language.grammar


@pytest.mark.parametrize("suffix", sorted(LANGUAGES))
def test_every_suffix_reaches_a_pre_commit_hook(suffix):
    tag = LANGUAGES[suffix].hook_tag
    if tag is not None:
        assert tag in HOOKS["portlint"]["types_or"]
    else:
        assert re.search(HOOKS["portlint-hip"]["files"], f"src/kernel{suffix}")
    if LANGUAGES[suffix].analyser == "python" or tag is None:
        return
    assert tag in HOOKS["portlint-fix"]["types_or"]


def test_readme_lists_every_cxx_suffix():
    readme = (ROOT / "README.md").read_text()
    listed = re.search(r"\*\*C\+\+/CUDA\.\*\* `([^`]+)` files", readme).group(1).split()
    assert sorted(listed) == sorted(s for s, lang in LANGUAGES.items() if lang.analyser == "cxx")


def test_c_file_is_linted(tmp_path):
    (tmp_path / "alloc.c").write_text(CUDA_C)
    status, out, _ = run_cli("--isolated", "--output-format", "concise", ".", cwd=tmp_path)
    assert status == 1
    assert out.splitlines()[:2] == [
        "alloc.c:1:11: PRT704 CUDA header `cuda_runtime.h`: include `hip/hip_runtime.h` on ROCm",
        "alloc.c:2:20: PRT701 `cudaMalloc` (the CUDA runtime) is `hipMalloc` in HIP (ROCm 1.5.0+)",
    ]


def test_add_noqa_writes_a_directive_in_a_hip_file(tmp_path, monkeypatch):
    path = tmp_path / "k.hip"
    path.write_text(CUDA_C)
    monkeypatch.setattr("portlint.pipeline.ReviewOptions.root", tmp_path)
    status, _, err = run_cli("--isolated", "--add-noqa", "k.hip", cwd=tmp_path)
    assert status == 0 and "Added 2 noqa directives to 1 files (0 skipped)." in err
    assert [line.rsplit("  ", 1)[-1] for line in path.read_text().splitlines()] == [
        "// NOLINT(portlint-PRT704)",
        "// NOLINT(portlint-PRT701)",
    ]
    assert run_cli("--isolated", "k.hip", cwd=tmp_path)[0] == 0

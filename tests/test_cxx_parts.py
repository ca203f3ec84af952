"""A large C++/CUDA file analysed in parts (``portlint.cxx.parts``) gets the findings the whole
analysis gives; where a cut could change them, the file is analysed whole."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from portlint import engine
from portlint.catalog import load_catalog
from portlint.cli import main
from portlint.config import Settings
from portlint.cxx import parts
from portlint.discover import language_of
from portlint.engine import lint_source, read_source
from portlint.model import SourceFile
from portlint.sink import FindingParts

FIXTURES = Path(__file__).parent.parent / "fixtures" / "cxx"
CXX_FIXTURES = sorted(p for p in FIXTURES.rglob("*") if language_of(p) == "cxx")
#: Fixtures that tree-sitter cannot parse without an error (code split across ``#if`` branches
#: that unexpanded macros complete): in parts they would get other nodes than whole (its error
#: recovery runs on past a cut), so they are analysed whole.
NOT_PARSED = {"macros_split.cu", "macros_split.hip.cu"}
HIP_MACROS = tuple(load_catalog().table("cxx")["guards"]["hip_macros"])


@pytest.fixture
def tiny_parts(monkeypatch):
    """Every file in parts, cut at every place a cut can go, whatever its context."""
    cxx = engine.ANALYSERS["cxx"]
    monkeypatch.setitem(engine.ANALYSERS, "cxx", replace(cxx, part_threshold=0))
    monkeypatch.setattr(parts, "SMALLEST_PART", 1)
    monkeypatch.setattr(parts, "PARTS_PER_FILE", 1 << 62)
    monkeypatch.setattr(parts, "CONTEXT_PARTS", 1 << 62)


def whole_findings(source: SourceFile) -> list:
    cxx = engine.ANALYSERS["cxx"]
    engine.ANALYSERS["cxx"] = replace(cxx, part_threshold=1 << 62)
    try:
        return list(lint_source(source, "cxx", Settings()).findings)
    finally:
        engine.ANALYSERS["cxx"] = cxx


def in_parts(text: str, path: str = "big.cu") -> FindingParts | tuple:
    return lint_source(SourceFile(path, text), "cxx", Settings()).findings


@pytest.mark.parametrize("path", CXX_FIXTURES, ids=lambda p: p.name)
def test_fixtures_in_tiny_parts_match_the_whole_analysis(path, tiny_parts):
    source = read_source(path, "cxx")
    whole = whole_findings(source)
    result = lint_source(source, "cxx", Settings()).findings
    assert list(result) == whole
    assert isinstance(result, FindingParts) == (path.name not in NOT_PARSED)
    if path.name not in NOT_PARSED:
        assert len(parts.cut(source.text, 1, HIP_MACROS)) > 4


def test_cuts_go_between_complete_declarations_only():
    text = (
        '#include "a.h"\n'
        "namespace outer {\n"
        "/* a comment;\n}\n*/\n"
        "struct S {\n  int x;\n}\n;\n"  # the ``;`` still belongs to the struct
        "int f(int a,\n      int b);\n"  # inside parentheses
        'const char *s = R"(\n;\n}\n)";\n'  # a raw string
        "#define M(x) \\\n  x;\n"  # a continued directive
        "void g() {\n  int y;\n}\n"
        "}  // namespace outer\n"
        "int tail;\n"
    )
    pieces = parts.cut(text, 1, HIP_MACROS)
    assert "".join(text[p.start : p.end] for p in pieces) == text
    assert [text[p.start : p.end] for p in pieces] == [
        '#include "a.h"\n',
        "namespace outer {\n",
        "/* a comment;\n}\n*/\n",
        "struct S {\n  int x;\n}\n;\n",
        "int f(int a,\n      int b);\n",
        'const char *s = R"(\n;\n}\n)";\n',
        "#define M(x) \\\n  x;\n",
        "void g() {\n  int y;\n}\n",
        "}  // namespace outer\n",
        "int tail;\n",
    ]
    # inside the namespace, a part is analysed inside it again
    namespace = ((2, "namespace outer {\n"),)
    assert [(p.opening, p.closing) for p in pieces[1:]] == [
        ((), "}\n"),  # it opens the namespace
        *[(namespace, "}\n")] * 6,
        (namespace, ""),  # it closes it
        ((), ""),
    ]
    assert [p.first for p in pieces] == [1, 2, 3, 6, 10, 12, 16, 18, 21, 22]


def test_a_part_inside_an_if_group_is_analysed_inside_it():
    text = "#ifndef GUARD\n#define GUARD\nint a;\n#else\nint b;\nint c;\n#endif\n"
    pieces = parts.cut(text, 1, HIP_MACROS)
    assert [text[p.start : p.end] for p in pieces] == [
        "#ifndef GUARD\n",
        "#define GUARD\n",
        "int a;\n",
        "#else\n",
        "int b;\n",
        "int c;\n",
        "#endif\n",
    ]
    assert pieces[5].opening == ((1, "#ifndef GUARD\n"), (4, "#else\n"))
    assert pieces[5].closing == "#endif\n"


def test_no_cut_inside_a_group_that_has_a_hip_branch():
    text = "#ifdef USE_ROCM\nint a;\nint b;\n#else\nint c;\n#endif\nint d;\n"
    pieces = parts.cut(text, 1, HIP_MACROS)
    assert [text[p.start : p.end] for p in pieces] == [
        "#ifdef USE_ROCM\nint a;\nint b;\n#else\nint c;\n#endif\n",
        "int d;\n",
    ]


def test_no_cut_inside_a_match_the_checks_read_across_lines():
    # the launch checks read ``const int\nkBlock = 512;`` as a constant, comment and all
    text = "int a;\n// const int\nkBlock = 512;\nint b;\n"
    pieces = parts.cut(text, 1, HIP_MACROS)
    assert [text[p.start : p.end] for p in pieces] == [
        "int a;\n",
        "// const int\nkBlock = 512;\n",
        "int b;\n",
    ]


@pytest.mark.parametrize(
    "text",
    [
        # a brace opened in one branch and closed after the group
        '#ifdef __cplusplus\nextern "C" {\n#endif\nint a;\n#ifdef __cplusplus\n}\n#endif\n',
        "int a;\n#if X\n",  # a group never closed
        'const char *s = R"x(never closed\n',
        "int a;\n/*\n#if X\n*/\nint b;\n",  # a directive in a comment (the HIP guards count it)
    ],
)
def test_unsure_structure_is_not_cut(text):
    with pytest.raises(parts.Unsure):
        parts.cut(text, 1, HIP_MACROS)


def test_a_part_tree_sitter_cannot_parse_sends_the_file_to_the_whole_analysis(tiny_parts):
    text = "void f() {\n  cudaFree(p);\n}\nMACRO(a) int b(;\nvoid g() { cudaFree(q); }\n"
    result = in_parts(text)
    assert isinstance(result, tuple)
    assert [f.span.line for f in result] == [2, 5]


def test_a_capability_variable_shared_across_parts_sends_the_file_whole(tiny_parts):
    # ``cc`` is set from a capability outside any function: every part's tests of it count
    text = (
        "int cc = prop.major;\nvoid f() {\n  if (cc >= 8) { g(); }\n}\nvoid h() { cudaFree(0); }\n"
    )
    result = in_parts(text)
    assert isinstance(result, tuple)
    assert {f.code for f in result} >= {"PRT804", "PRT701"}


def test_context_carries_kernels_constants_and_defines(tiny_parts):
    """The launch check reads the kernel's declaration and a constant in other parts; a name
    the file defines itself is not CUDA's in any part."""
    text = (
        "#define THREADS 512\n"
        "constexpr int kBig = 1024;\n"
        "#define cudaFooBar(x) x\n"
        "__global__ void __launch_bounds__(512) bounded(float *p);\n"
        "__global__ void plain(float *p) { p[0] = 0; }\n"
        "void run(float *p) {\n"
        "  bounded<<<1, THREADS>>>(p);\n"
        "  plain<<<1, THREADS>>>(p);\n"
        "  plain<<<1, kBig>>>(p);\n"
        "  other<<<1, kBig>>>(p);\n"
        "  cudaFooBar(1);\n"
        "}\n"
    )
    result = in_parts(text)
    assert isinstance(result, FindingParts)
    assert list(result) == whole_findings(SourceFile("big.cu", text))
    launches = [(f.span.line, f.message.split(";")[1]) for f in result if f.code == "PRT805"]
    assert launches == [
        (
            8,
            " the kernel has no `__launch_bounds__`: declare `__launch_bounds__(512)` so "
            "hip-clang compiles it for that size",
        ),
        (
            9,
            " the kernel has no `__launch_bounds__`: declare `__launch_bounds__(1024)` so "
            "hip-clang compiles it for that size",
        ),
        (
            10,
            " the kernel is defined elsewhere: declare `__launch_bounds__(1024)` so "
            "hip-clang compiles it for that size",
        ),
    ]


def test_a_file_suppressed_whole_reports_nothing(tiny_parts):
    text = "void f() { cudaFree(0); }\nint a;\n// portlint: noqa\n"
    result = in_parts(text)
    assert isinstance(result, FindingParts) and list(result) == []


def test_a_generated_file_above_the_threshold_is_analysed_in_parts(tmp_path, capsys, monkeypatch):
    """Through the command line, with one finding per line (the threshold made small, so that
    the file is cut into parts): the same report as the whole analysis, nothing cached."""
    cxx = engine.ANALYSERS["cxx"]
    monkeypatch.setitem(engine.ANALYSERS, "cxx", replace(cxx, part_threshold=10_000))
    functions = [
        f"__global__ void k{n}(float *p) {{ p[threadIdx.x & 31] = 0; }}\n"
        f"void f{n}(float *p) {{\n  cudaFree(p);\n  k{n}<<<1, 1024>>>(p);\n}}\n"
        for n in range(500)
    ]
    path = tmp_path / "generated.cu"
    path.write_text("#include <cuda_runtime.h>\nnamespace gen {\n" + "".join(functions) + "}\n")
    assert path.stat().st_size > 5 * 10_000
    args = ["--isolated", "--output-format", "json", "--cache-dir", str(tmp_path / "c"), str(path)]
    assert main(args) == 1
    cut = json.loads(capsys.readouterr().out)
    assert not list((tmp_path / "c").rglob("*.json"))
    monkeypatch.setitem(engine.ANALYSERS, "cxx", cxx)
    assert main(args) == 1
    whole = json.loads(capsys.readouterr().out)
    assert len(whole) == 1 + 500 * 4  # the header; per function the kernel, the lane mask,
    assert cut == whole  # cudaFree and the large launch
    assert len(list((tmp_path / "c").rglob("*.json"))) == 1  # the whole analysis is cached


def test_parts_of_the_generated_file_are_cut_inside_the_namespace(monkeypatch):
    text = "namespace gen {\n" + "void f() { cudaFree(0); }\n" * 100 + "}\n"
    pieces = parts.cut(text, 200, HIP_MACROS)
    assert len(pieces) > 10
    assert all(p.opening == ((1, "namespace gen {\n"),) for p in pieces[1:-1])

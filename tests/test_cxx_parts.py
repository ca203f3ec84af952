"""A large C++/CUDA file analysed in parts (``portlint.cxx.parts``) gets the findings the whole
analysis gives; where a cut could change them, the file is analysed whole."""

from __future__ import annotations

import json
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
NOT_PARSED = {"alternative_tokens.cu", "macros_split.cu", "macros_split.hip.cu"}
HIP_MACROS = tuple(load_catalog().table("cxx")["guards"]["hip_macros"])
#: Fixtures with a host function that a cut goes inside of (between its statements).
CUT_IN_FUNCTIONS = {
    "cuda_device_type.cpp",
    "device_hazards.cu",
    "hip_guards.cu",
    "inactive_branches.cu",
    "runtime_driver.hip.cu",
    "libraries.cpp",
    "nccl_device_api.cu",
    "nvidia_libraries.cu",
    "plain.cpp",
    "runtime_driver.cu",
    "same_name_on_a_line.cu",
    "same_name_on_a_line.hip.cu",
    "table_bugs.cu",
    "table_libraries.cu",
    "table_versions.cu",
    "torch_cuda_api.cu",
    "torch_extension.cu",
}


@pytest.fixture
def tiny_parts(monkeypatch):
    """Every file in parts, cut at every place a cut can go, whatever its context."""
    cxx = engine.ANALYSERS["cxx"]
    monkeypatch.setitem(engine.ANALYSERS, "cxx", cxx._replace(part_threshold=0))
    monkeypatch.setattr(parts, "SMALLEST_PART", 1)
    monkeypatch.setattr(parts, "PARTS_PER_FILE", 1 << 62)
    monkeypatch.setattr(parts, "CONTEXT_PARTS", 1 << 62)


def whole_findings(source: SourceFile) -> list:
    cxx = engine.ANALYSERS["cxx"]
    engine.ANALYSERS["cxx"] = cxx._replace(part_threshold=1 << 62)
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
        pieces = parts.cut(source.text, 1, HIP_MACROS)
        assert len(pieces) > 4
        assert any(p.in_function for p in pieces) == (path.name in CUT_IN_FUNCTIONS)


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
        "void g() {\n",
        "  int y;\n",
        "}\n",
        "}  // namespace outer\n",
        "int tail;\n",
    ]
    # inside the namespace, a part is analysed inside it again; inside g, inside both
    namespace = ((2, "namespace outer {\n"),)
    function = (*namespace, (18, "void g() {\n"))
    assert [(p.opening, p.closing) for p in pieces[1:]] == [
        ((), "}\n"),  # it opens the namespace
        *[(namespace, "}\n")] * 5,
        (namespace, "}\n}\n"),  # it opens g
        (function, "}\n}\n"),
        (function, "}\n"),  # it closes g
        (namespace, ""),  # it closes the namespace
        ((), ""),
    ]
    assert [p.first for p in pieces] == [1, 2, 3, 6, 10, 12, 16, 18, 19, 20, 21, 22]


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
    monkeypatch.setitem(engine.ANALYSERS, "cxx", cxx._replace(part_threshold=10_000))
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


HOST_FUNCTION = """#include <cuda_runtime.h>
#define FULL 0xffffffff
namespace host {
static cudaError_t copy(float *dst, const float *src, size_t n, cudaStream_t stream) {
  void *p;
  cudaMalloc(&p, n);  // a comment; with a brace {
  const unsigned mask = 0xffffffffu;
  if (n > 4) {
    cudaMemcpyAsync(dst, src, n, cudaMemcpyDeviceToDevice, stream);
  }
  else
    cudaMemcpy(dst, src, n, cudaMemcpyDeviceToDevice);
  if (n) cudaFree(p);
  else cudaFreeHost(p);
  do
    cudaStreamSynchronize(stream);
  while (0);
  try {
    cudaDeviceSynchronize();
  } catch (...) {
    return cudaErrorUnknown;
  }
  switch (n) {
  case 1:
    cudaFree(p);
    break;
  default:
    break;
  }
  auto release = [&]() {
    cudaFree(p);
  };
  auto run = [&]() {
    cudaFree(p);
  }
  == nullptr;
#if CUDART_VERSION >= 11000
  cudaMallocAsync(&p, n, stream);
#else
  cudaMalloc(&p, n);
#endif
done:
  cudaEventRecord(nullptr, stream);
  const char *s = "}; {";
  return cudaSuccess;
}
}  // namespace host
"""


def test_cuts_inside_a_host_function_go_between_whole_statements():
    pieces = parts.cut(HOST_FUNCTION, 1, HIP_MACROS)
    assert "".join(HOST_FUNCTION[p.start : p.end] for p in pieces) == HOST_FUNCTION
    inside = [HOST_FUNCTION[p.start : p.end] for p in pieces if len(p.opening) >= 2]
    assert inside == [
        "  void *p;\n",
        "  cudaMalloc(&p, n);  // a comment; with a brace {\n",
        "  const unsigned mask = 0xffffffffu;\n",
        "  if (n > 4) {\n    cudaMemcpyAsync(dst, src, n, cudaMemcpyDeviceToDevice, stream);\n"
        "  }\n  else\n    cudaMemcpy(dst, src, n, cudaMemcpyDeviceToDevice);\n",
        "  if (n) cudaFree(p);\n  else cudaFreeHost(p);\n",
        "  do\n    cudaStreamSynchronize(stream);\n  while (0);\n",
        "  try {\n    cudaDeviceSynchronize();\n  } catch (...) {\n    return cudaErrorUnknown;\n"
        "  }\n",
        "  switch (n) {\n  case 1:\n    cudaFree(p);\n    break;\n  default:\n    break;\n  }\n",
        "  auto release = [&]() {\n    cudaFree(p);\n  };\n",
        "  auto run = [&]() {\n    cudaFree(p);\n  }\n  == nullptr;\n",
        # a cut inside a function waits for the next code (an ``else`` would continue)
        "#if CUDART_VERSION >= 11000\n  cudaMallocAsync(&p, n, stream);\n",
        "#else\n  cudaMalloc(&p, n);\n",
        "#endif\ndone:\n  cudaEventRecord(nullptr, stream);\n",
        '  const char *s = "}; {";\n',
        "  return cudaSuccess;\n",
        "}\n",
    ]
    header = (
        4,
        "static cudaError_t copy(float *dst, const float *src, size_t n, cudaStream_t stream) {\n",
    )
    body = [p for p in pieces if len(p.opening) >= 2]
    assert [p for p in pieces if p.in_function] == body
    assert all(p.opening[:2] == ((3, "namespace host {\n"), header) for p in body)
    assert [(p.opening[2:], p.closing) for p in body[10:13]] == [
        ((), "#endif\n}\n}\n"),
        (((37, "#if CUDART_VERSION >= 11000\n"),), "#endif\n}\n}\n"),
        (((37, "#if CUDART_VERSION >= 11000\n"), (39, "#else\n")), "}\n}\n"),
    ]


def test_a_host_function_in_tiny_parts_gives_the_whole_findings(tiny_parts):
    result = in_parts(HOST_FUNCTION)
    assert isinstance(result, FindingParts)
    whole = whole_findings(SourceFile("big.cu", HOST_FUNCTION))
    assert list(result) == whole
    assert len(whole) > 15
    # every statement with a CUDA name and the header (the #if on CUDA's version has an #else,
    # which ROCm builds take: no site, and no cut inside the group)
    lines = {1, 4, 6, 9, 12, 13, 14, 16, 19, 21, 25, 31, 34, 38, 40, 43, 45}
    assert {f.span.line for f in whole} == lines


@pytest.mark.parametrize(
    "function",
    [
        # what the checks read across statements: a launch's block size, a capability
        "void run(float *p) {\n  int threads = 1024;\n  k<<<1, threads>>>(p);\n}\n",
        "void run() {\n  cudaDeviceProp prop;\n  int cc = prop.major;\n  if (cc >= 8) g();\n}\n",
        # device code
        "__global__ void k(float *p) {\n  p[0] = 0;\n  __syncthreads();\n}\n",
        "__device__ float g(float x) {\n  x += 1;\n  return x;\n}\n",
        "__host__ __device__ float g(float x) {\n  x += 1;\n  return x;\n}\n",
        "void h() {\n  auto f = [] __device__ (int i) { return i; };\n  g(f);\n}\n",
        # not surely a function: a macro, a constructor, a parameter list with a directive
        "TEST(Suite, Case) {\n  cudaFree(0);\n  cudaFree(0);\n}\n",
        "Holder::Holder() {\n  cudaFree(0);\n  cudaFree(0);\n}\n",
        "void f(\n#ifdef X\n  int a\n#else\n  int b\n#endif\n) {\n  cudaFree(0);\n  g();\n}\n",
        "auto f() -> int {\n  cudaFree(0);\n  return 0;\n}\n",
    ],
)
def test_no_cut_inside_a_function_the_checks_read_whole(function):
    text = "int a;\n" + function + "int b;\n"
    pieces = parts.cut(text, 1, HIP_MACROS)
    assert function in [text[p.start : p.end] for p in pieces]


def test_braces_split_across_if_branches_in_a_function_are_unsure():
    text = "void f() {\n  g();\n#if A\n  if (a) {\n#else\n  if (b) {\n#endif\n  h();\n  }\n}\n"
    with pytest.raises(parts.Unsure):
        parts.cut(text, 1, HIP_MACROS)


def test_one_huge_function_above_the_threshold_is_analysed_in_parts(tmp_path, capsys, monkeypatch):
    """The shape of a generated file that no declaration boundary cuts: one host function of
    ``cudaMalloc`` lines. Through the command line, the same report as the whole analysis."""
    cxx = engine.ANALYSERS["cxx"]
    monkeypatch.setitem(engine.ANALYSERS, "cxx", cxx._replace(part_threshold=10_000))
    path = tmp_path / "one.cu"
    path.write_text("void f() {\n  void *p;\n" + "  cudaMalloc(&p, 4);\n" * 3000 + "}\n")
    source = read_source(path, "cxx")
    pieces = parts.cut(source.text, parts.part_size(len(source.text)), HIP_MACROS)
    assert len(pieces) > 10
    assert all(p.opening == ((1, "void f() {\n"),) for p in pieces[1:])
    assert isinstance(lint_source(source, "cxx", Settings()).findings, FindingParts)
    args = ["--isolated", "--output-format", "json", "--no-cache", str(path)]
    assert main(args) == 1
    cut = json.loads(capsys.readouterr().out)
    monkeypatch.setitem(engine.ANALYSERS, "cxx", cxx)
    assert main(args) == 1
    whole = json.loads(capsys.readouterr().out)
    assert len(whole) == 3000
    assert cut == whole

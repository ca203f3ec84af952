"""Every analyser reports through the one finding sink, and the engine consumes what it collects."""

from __future__ import annotations

from pathlib import Path

import pytest

from portlint.catalog import load_catalog
from portlint.config import Settings
from portlint.discover import language_of
from portlint.engine import ANALYSERS, lint_source, read_source, select_findings
from portlint.model import Finding, SourceFile

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"


class Recorder:
    """A sink of the test's own: it records what it is given, and nothing else."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, int, int]] = []
        self.findings: list[Finding] = []

    def emit(self, finding: Finding) -> None:
        self.seen.append((finding.code, finding.span.line, finding.span.column))
        self.findings.append(finding)


def emitted(source: SourceFile, language: str) -> Recorder:
    analyser = ANALYSERS[language]
    recorder = Recorder()
    result = analyser.load(analyser.analyse)(source, load_catalog(), Settings(), recorder)
    assert result is None  # findings go to the sink, not back to the caller
    return recorder


@pytest.mark.parametrize(
    ("name", "language", "text", "expected"),
    [
        (
            "train.py",
            "python",
            "import torch\n"
            "torch.cuda.synchronize()\n"
            "x = torch.randn(3).cuda()\n"
            "torch.backends.cudnn.benchmark = True\n",
            [("PRT201", 2, 0), ("PRT102", 3, 18), ("PRT604", 4, 0)],
        ),
        (  # API sites, then kernels, then hazards: the engine sorts them into file order
            "k.cu",
            "cxx",
            "__global__ void k(float *x) {\n"
            "  x[threadIdx.x] = __shfl_sync(0xffffffff, 1.0f, 0);\n"
            "}\n"
            "void f() {\n  float *p;\n  cudaMalloc(&p, 4);\n  k<<<1, 32>>>(p);\n}\n",
            [("PRT701", 6, 2), ("PRT705", 1, 16), ("PRT802", 2, 31)],
        ),
        (
            "Dockerfile",
            "dockerfile",
            "FROM nvidia/cuda:12.1.0-runtime-ubuntu22.04\nRUN pip install cupy-cuda12x\n",
            [("PRT901", 1, 5), ("PRT933", 2, 16)],
        ),
        (
            "requirements.txt",
            "requirements",
            "torch==2.3.0+cu121\ncupy-cuda12x\n",
            [("PRT932", 1, 12), ("PRT933", 2, 0)],
        ),
    ],
)
def test_an_analysers_findings_reach_a_custom_sink_in_order(name, language, text, expected):
    source = SourceFile(name, text)
    recorder = emitted(source, language)
    assert recorder.seen == expected
    # The engine's result is exactly what the sink received, selected and sorted.
    reported = lint_source(source, language, Settings()).findings
    assert reported == select_findings(recorder.findings, source, Settings())


FIXTURE_FILES = sorted(
    path
    for folder in ("python", "cxx", "deploy")
    for path in (FIXTURES / folder).rglob("*")
    if path.is_file() and language_of(path) in ANALYSERS
)


@pytest.mark.parametrize("path", FIXTURE_FILES, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_the_engine_reports_what_the_sink_collected_for_every_fixture(path):
    language = language_of(path)
    source = read_source(path, language)
    recorder = emitted(source, language)
    reported = lint_source(source, language, Settings()).findings
    assert reported == select_findings(recorder.findings, source, Settings())

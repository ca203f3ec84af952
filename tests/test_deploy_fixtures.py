"""fixtures/deploy/ is a small repository with build and deployment files: each file's findings
against its snapshot in fixtures/deploy-snapshots/ (kept outside the repository so that portlint
does not lint the snapshots as Dockerfiles)."""

from __future__ import annotations

from pathlib import Path

import pytest

from portlint.config import Settings
from portlint.discover import Walker, language_of
from portlint.fix import FixPolicy, apply_fixes
from support import FIXTURES, check_against_expected, describe_all, lint_file, run_cli

REPO = FIXTURES / "deploy"
SNAPSHOTS = FIXTURES / "deploy-snapshots"
DEPLOY_FILES = sorted(
    p for p in REPO.rglob("*") if p.is_file() and language_of(p) not in (None, "python")
)
ALL_TARGETS = Settings(targets=("rocm", "npu", "mlu", "xpu", "mps", "cpu", "arm64"))


def snapshot(path):
    return SNAPSHOTS / (path.relative_to(REPO).as_posix().replace("/", "__") + ".expected")


@pytest.mark.parametrize("path", DEPLOY_FILES, ids=lambda p: p.relative_to(REPO).as_posix())
def test_fixture_findings(path):
    check_against_expected(describe_all(lint_file(path, ALL_TARGETS)), snapshot(path))


def test_every_file_of_the_repository_is_recognised():
    found = {
        Path(c.path).relative_to(REPO).as_posix(): c.language
        for c in Walker(Settings()).walk([REPO])
    }
    assert found == {
        ".github/workflows/ci.yml": "yaml",
        "CMakeLists.txt": "cmake",
        "cmake_arch/CMakeLists.txt": "cmake",
        "cuda_option/CMakeLists.txt": "cmake",
        "Dockerfile": "dockerfile",
        "Dockerfile.dev": "dockerfile",
        "docker-compose.rocm.yml": "yaml",
        "docker-compose.yml": "yaml",
        "environment.yml": "yaml",
        "helm/train/values.yaml": "yaml",
        "k8s/broken.yaml": "yaml",
        "k8s/deployment.yaml": "yaml",
        "kernels/setup.py": "python-setup",
        "nvcc_arch_flag/setup.py": "python-setup",
        "plugins/broken/pyproject.toml": "pyproject",
        "plugins/pyproject.toml": "pyproject",
        "plugins/setup.cfg": "setup-cfg",
        "requirements-compiled.txt": "requirements",
        "requirements-cpu.txt": "requirements",
        "requirements-markers.txt": "requirements",
        "requirements-torch-runtime.txt": "requirements",
        "requirements.txt": "requirements",
        "scripts/install_extras.sh": "shell",
        "scripts/launch": "shell",
        "scripts/run.sh": "shell",
        "scripts/serve_engine.sh": "shell",
        "setup.py": "python-setup",
    }


def test_negative_files_have_no_findings():
    assert lint_file(REPO / "docker-compose.rocm.yml", ALL_TARGETS) == []
    # a setup.py with a ROCm build of its own: its -gencode flags are its CUDA build's
    assert not [
        f for f in lint_file(REPO / "kernels" / "setup.py", ALL_TARGETS) if f.code == "PRT923"
    ]
    assert lint_file(REPO / "requirements-cpu.txt", ALL_TARGETS) == []


def test_bad_yaml_and_toml_are_parse_errors_and_the_run_goes_on():
    status, out, err = run_cli(
        "--output-format", "concise", str(REPO / "k8s"), str(REPO / "plugins")
    )
    assert status == 1 and err == ""
    assert "broken.yaml:9:6: PRT001 YAML error: did not find expected '-' indicator" in out
    assert "broken/pyproject.toml:6:3: PRT001 TOML error: Unclosed array" in out
    assert "deployment.yaml:35:15: PRT911" in out


def test_cpu_fix_rewrites_cuda_index_and_local_versions():
    path = REPO / "requirements.txt"
    text = path.read_text(encoding="utf-8")
    findings = lint_file(path, Settings(targets=("cpu",)))
    fixed_text, applied = apply_fixes(text, findings, FixPolicy(targets=("cpu",)))
    assert [f.code for f in applied] == ["PRT931", "PRT932", "PRT932"]
    assert fixed_text.splitlines()[1:4] == [
        "--extra-index-url https://download.pytorch.org/whl/cpu",
        "torch==2.3.0+cpu",
        "torchvision==0.18.0+cpu",
    ]
    # Not for other targets: the ROCm tag depends on the version.
    assert apply_fixes(text, findings, FixPolicy(targets=("rocm",))) == (text, [])


def test_arm64_is_reported_only_when_asked_for():
    default = lint_file(REPO / "scripts" / "run.sh")
    arm = lint_file(REPO / "scripts" / "run.sh", Settings(targets=("arm64",)))
    assert all("arm64" not in f.targets for f in default)
    assert sorted({f.code for f in arm}) == ["PRT902", "PRT924"]


SUPPRESSED = [
    ("Dockerfile", 26, "PRT922"),  # portlint: ignore[PRT922] after an exec-form ENTRYPOINT
    ("Dockerfile.dev", 4, "PRT933"),
    ("docker-compose.yml", 21, "PRT921"),
    ("requirements.txt", 11, "PRT933"),
    ("scripts/launch", 9, "PRT922"),  # portlint: ignore[PRT922] in a shell script
]


@pytest.mark.parametrize(("name", "line", "code"), SUPPRESSED, ids=[s[0] for s in SUPPRESSED])
def test_suppression_comments_work_in_deployment_files(name, line, code, tmp_path):
    original = REPO / name
    assert not [
        f for f in lint_file(original, ALL_TARGETS) if (f.span.line, f.code) == (line, code)
    ]
    lines = original.read_text(encoding="utf-8").splitlines()
    assert "#" in lines[line - 1]
    lines[line - 1] = lines[line - 1][: lines[line - 1].rindex("#")].rstrip()
    copy = tmp_path / original.name
    copy.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert [f for f in lint_file(copy, ALL_TARGETS) if (f.span.line, f.code) == (line, code)]


def test_helm_template_that_is_not_yaml_is_scanned_for_gpu_resources(tmp_path):
    template = tmp_path / "deployment.yaml"
    template.write_text(
        "spec:\n  {{- if .Values.gpu.enabled }}\n"
        "  limits:\n    nvidia.com/gpu: {{ .Values.gpu.count }}\n",
        encoding="utf-8",
    )
    assert [(f.span.line, f.code) for f in lint_file(template)] == [(4, "PRT911")]


def test_target_all_means_the_accelerators_and_arm64_is_added_by_name():
    from portlint.config import parse_targets

    assert "arm64" not in parse_targets("all", "--target")
    assert parse_targets("all,arm64", "--target")[-1] == "arm64"
    assert parse_targets(["arm64", "rocm"], "target") == ("rocm", "arm64")

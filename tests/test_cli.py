"""The command line: exit statuses, options, configuration, discovery, bad input."""

from __future__ import annotations

import json

import pytest

from support import FIXTURES, run_cli

TRAIN = str(FIXTURES / "python" / "train.py")
CLEAN = 'import torch\n\nx = torch.ones(3).to(torch.device("cpu"))\n'
CUDA = "import torch\n\ntorch.cuda.synchronize()\n"


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def json_findings(*args, cwd=None):
    status, out, err = run_cli("--output-format", "json", *args, cwd=cwd)
    return status, json.loads(out), err


def test_exit_status_zero_when_clean_one_with_findings_two_on_usage_error(tmp_path):
    write(tmp_path / "clean.py", CLEAN)
    write(tmp_path / "cuda.py", CUDA)
    assert run_cli(str(tmp_path / "clean.py"))[0] == 0
    assert run_cli(str(tmp_path / "cuda.py"))[0] == 1
    assert run_cli("--exit-zero", str(tmp_path / "cuda.py"))[0] == 0
    status, _, err = run_cli("--bogus-flag")
    assert status == 2 and err.startswith("portlint: error:") and err.count("\n") == 1


def test_check_subcommand_and_default_path(tmp_path):
    write(tmp_path / "pkg" / "cuda.py", CUDA)
    status, out, _ = run_cli("check", "--output-format", "concise", cwd=tmp_path)
    assert status == 1
    assert out.splitlines()[0].startswith("pkg/cuda.py:3:1: PRT201 ")


def test_missing_path_is_exit_two_with_one_line(tmp_path):
    status, out, err = run_cli(str(tmp_path / "nope.py"))
    assert status == 2 and out == ""
    assert err == f"portlint: error: no such file or directory: {tmp_path / 'nope.py'}\n"


def test_json_schema_fields_and_values():
    status, findings, _ = json_findings("--target", "npu,cpu", TRAIN)
    assert status == 1
    sync = next(f for f in findings if f["symbol"] == "torch.cuda.synchronize")
    assert sync == {
        "path": TRAIN,
        "line": 35,
        "column": 5,
        "end_line": 35,
        "end_column": 27,
        "code": "PRT201",
        "name": "torch-cuda-api",
        "severity": "error",
        "message": "`torch.cuda.synchronize` exists only on NVIDIA and ROCm builds; "
        "device-generic: `torch.accelerator.synchronize (torch >= 2.6)`",
        "symbol": "torch.cuda.synchronize",
        "targets": {
            "npu": {"status": "rename", "replacement": "torch.npu.synchronize"},
            "cpu": {"status": "manual", "replacement": None},
        },
        "fix": sync["fix"],
    }


def test_target_rocm_drops_sites_portable_on_rocm():
    _, findings, _ = json_findings("--target", "rocm", TRAIN)
    # On ROCm torch.cuda and "cuda" are portable; TF32 and nvidia-smi are not.
    assert sorted({f["code"] for f in findings}) == ["PRT402", "PRT603"]
    assert all(set(f["targets"]) == {"rocm"} for f in findings)


def test_unknown_target_is_a_usage_error():
    status, _, err = run_cli("--target", "tpu", TRAIN)
    assert status == 2
    assert "unknown target 'tpu'" in err and "rocm, npu, mlu, xpu, mps, cpu" in err


@pytest.mark.parametrize(
    ("args", "codes"),
    [
        (("--select", "PRT4"), ["PRT401", "PRT402"]),
        (("--select", "PRT4", "--ignore", "PRT402"), ["PRT401"]),
        (("--ignore", "PRT1,PRT2,PRT6"), ["PRT401", "PRT402"]),
        (("--select", "PRT102", "--extend-select", "PRT402"), ["PRT102", "PRT402"]),
    ],
)
def test_select_ignore_extend_select(args, codes):
    _, findings, _ = json_findings(*args, TRAIN)
    assert sorted({f["code"] for f in findings}) == codes


def test_statistics_prints_the_counts_only():
    status, out, _ = run_cli("--statistics", "--output-format", "text", TRAIN)
    assert status == 1
    assert out == (
        "    6  PRT201  [*] torch-cuda-api\n"
        "    4  PRT101  [*] hardcoded-cuda-device\n"
        "    2  PRT102  [*] cuda-method-call\n"
        "    1  PRT401  [ ] cuda-environment-variable\n"
        "    1  PRT402  [ ] nvidia-tool-call\n"
        "    1  PRT603  [ ] tf32-switch\n"
        "    1  PRT604  [ ] cudnn-switch\n"
    )
    status, out, _ = run_cli("--statistics", "--output-format", "json", TRAIN)
    assert json.loads(out)[0] == {
        "code": "PRT201",
        "name": "torch-cuda-api",
        "count": 6,
        "fixable": True,
    }


def test_help_lists_the_rule_subcommand_and_every_option_has_help():
    from portlint.cli import build_parser, build_rule_parser

    assert "  rule CODE             show a rule's documentation" in build_parser().format_help()
    for parser in (build_parser(), build_rule_parser()):
        for action in parser._actions:
            assert action.help, f"{parser.prog}: {action.dest} has no help text"


def test_indexed_device_keeps_its_index_for_each_target(tmp_path):
    write(tmp_path / "r.py", 'import torch\nrank = 1\nd = torch.device(f"cuda:{rank}")\n')
    _, findings, _ = json_findings("--isolated", "r.py", cwd=tmp_path)
    replacements = {t: a["replacement"] for t, a in findings[0]["targets"].items()}
    assert replacements == {
        "npu": 'f"npu:{rank}"',
        "mlu": 'f"mlu:{rank}"',
        "xpu": 'f"xpu:{rank}"',
        "mps": '"mps"',
        "cpu": '"cpu"',
    }


def test_output_file_and_quiet(tmp_path):
    target = tmp_path / "report.json"
    status, out, _ = run_cli("-q", "--output-format", "json", "-o", str(target), TRAIN)
    assert status == 1 and out == ""
    assert len(json.loads(target.read_text())) == 16


def test_text_output_shows_source_caret_and_advice(tmp_path):
    write(tmp_path / "cuda.py", CUDA)
    _, out, _ = run_cli("--target", "rocm,npu,cpu", str(tmp_path / "cuda.py"))
    lines = out.splitlines()
    assert lines[0].endswith(
        "cuda.py:3:1: PRT201 [*] `torch.cuda.synchronize` exists only on NVIDIA "
        "and ROCm builds; device-generic: `torch.accelerator.synchronize "
        "(torch >= 2.6)` [error]"
    )
    assert lines[1] == " 3 | torch.cuda.synchronize()"
    assert lines[2] == "   | ^^^^^^^^^^^^^^^^^^^^^^"
    assert lines[3] == "   = rocm: ok · npu: torch.npu.synchronize · cpu: not needed on CPU: remove"
    assert "npu            1       1       0            0" in out
    assert out.rstrip().endswith(
        "Found 1 finding in 1 file (1 checked).\n[*] 1 fixable with `portlint --fix`."
    )


def test_config_in_pyproject_and_cli_override(tmp_path):
    write(tmp_path / "pyproject.toml", '[tool.portlint]\ntarget = ["npu"]\nignore = ["PRT4"]\n')
    write(tmp_path / "train.py", (FIXTURES / "python" / "train.py").read_text())
    _, findings, _ = json_findings("train.py", cwd=tmp_path)
    assert all(set(f["targets"]) == {"npu"} for f in findings)
    assert "PRT401" not in {f["code"] for f in findings}
    _, findings, _ = json_findings("--target", "mlu", "train.py", cwd=tmp_path)
    assert all(set(f["targets"]) == {"mlu"} for f in findings)
    _, findings, _ = json_findings("--isolated", "train.py", cwd=tmp_path)
    assert "PRT401" in {f["code"] for f in findings}


def test_pyproject_without_section_is_skipped_for_portlint_toml_above(tmp_path):
    write(tmp_path / "portlint.toml", 'select = ["PRT5"]\n')
    write(tmp_path / "sub" / "pyproject.toml", "[project]\nname = 'x'\n")
    write(tmp_path / "sub" / "a.py", "import cupy\nimport torch\ntorch.cuda.synchronize()\n")
    _, findings, _ = json_findings("a.py", cwd=tmp_path / "sub")
    assert [f["code"] for f in findings] == ["PRT501"]


@pytest.mark.parametrize(
    ("config", "message"),
    [
        (
            "[tool.portlint]\ntargets = ['npu']\n",
            "unknown key 'targets' in [tool.portlint]; allowed:",
        ),
        ("[tool.portlint]\ntarget = ['tpu']\n", "'target': unknown target 'tpu'"),
        ("[tool.portlint]\nselect = ['E501']\n", "'select': 'E501' is not a rule code or prefix"),
        ("[tool.portlint]\nmin-torch = 2.6\n", "'min-torch' must be a version string"),
        ("[tool.portlint\n", "invalid TOML"),
    ],
)
def test_bad_config_is_one_line_exit_two(tmp_path, config, message):
    write(tmp_path / "pyproject.toml", config)
    write(tmp_path / "a.py", CUDA)
    status, out, err = run_cli("a.py", cwd=tmp_path)
    assert status == 2 and out == ""
    assert err.startswith("portlint: error: pyproject.toml: ")
    assert message in err and err.count("\n") == 1


def test_per_file_ignores(tmp_path):
    write(tmp_path / "portlint.toml", '[per-file-ignores]\n"tests/*" = ["PRT2"]\n')
    write(tmp_path / "tests" / "t.py", CUDA)
    write(tmp_path / "src" / "s.py", CUDA)
    _, findings, _ = json_findings(".", cwd=tmp_path)
    assert [f["path"] for f in findings] == ["src/s.py"]


def test_discovery_honours_gitignore_default_excludes_and_explicit_paths(tmp_path):
    write(tmp_path / ".gitignore", "generated/\n*_gen.py\n!keep_gen.py\n")
    (tmp_path / ".git").mkdir()
    for name in (
        "a.py",
        "generated/b.py",
        "c_gen.py",
        "keep_gen.py",
        ".venv/lib/d.py",
        "build/e.py",
        "third_party/f.py",
        "pkg/site-packages/g.py",
    ):
        write(tmp_path / name, CUDA)
    _, findings, _ = json_findings(".", cwd=tmp_path)
    assert sorted(f["path"] for f in findings) == ["a.py", "keep_gen.py"]
    # Named explicitly: linted, unless --force-exclude.
    _, findings, _ = json_findings("c_gen.py", cwd=tmp_path)
    assert [f["path"] for f in findings] == ["c_gen.py"]
    status, findings, _ = json_findings("--force-exclude", "c_gen.py", cwd=tmp_path)
    assert findings == [] and status == 0


def test_exclude_from_config(tmp_path):
    write(tmp_path / "portlint.toml", 'extend-exclude = ["legacy/**"]\n')
    write(tmp_path / "legacy" / "old.py", CUDA)
    write(tmp_path / "new.py", CUDA)
    _, findings, _ = json_findings(".", cwd=tmp_path)
    assert [f["path"] for f in findings] == ["new.py"]


def test_suppressions(tmp_path):
    write(
        tmp_path / "s.py",
        "import torch\n"
        "torch.cuda.synchronize()  # noqa: PRT201\n"
        "torch.cuda.synchronize()  # noqa\n"
        "torch.cuda.synchronize()  # portlint: ignore[PRT2]\n"
        "torch.cuda.synchronize()  # noqa: PRT101\n"
        "torch.cuda.synchronize()  # portlint: ignore[PRT101, PRT201]\n",
    )
    write(tmp_path / "whole.py", "# portlint: noqa\nimport torch\ntorch.cuda.synchronize()\n")
    _, findings, _ = json_findings(".", cwd=tmp_path)
    # Line 5's noqa names a rule that does not fire there: the finding stays, and the
    # suppression itself is reported as unused; so is line 6's PRT101.
    assert [(f["path"], f["line"], f["code"]) for f in findings] == [
        ("s.py", 5, "PRT201"),
        ("s.py", 5, "PRT003"),
        ("s.py", 6, "PRT003"),
    ]


def test_bad_input_does_not_stop_the_run(tmp_path):
    write(tmp_path / "broken.py", "import torch\ndef f(:\n    torch.cuda.synchronize()\n")
    (tmp_path / "binary.py").write_bytes(b"\x00\x01\x02torch.cuda")
    (tmp_path / "latin.py").write_bytes(b"# caf\xe9\nimport torch\n")
    write(tmp_path / "good.py", CUDA)
    status, findings, err = json_findings(".", cwd=tmp_path)
    assert status == 1 and err == ""
    summary = [(f["path"], f["code"], f["message"]) for f in findings]
    assert summary[:3] == [
        ("binary.py", "PRT002", "binary file (contains NUL bytes)"),
        ("broken.py", "PRT001", "SyntaxError: invalid syntax"),
        ("good.py", "PRT201", summary[2][2]),
    ]
    assert summary[3][:2] == ("latin.py", "PRT002")
    assert summary[3][2].startswith("not valid utf-8: 'utf-8' codec can't decode byte 0xe9")


def test_encoding_declaration_is_honoured(tmp_path):
    (tmp_path / "l1.py").write_bytes(
        b"# -*- coding: latin-1 -*-\n# caf\xe9\nimport torch\ntorch.cuda.synchronize()\n"
    )
    _, findings, _ = json_findings("l1.py", cwd=tmp_path)
    assert [(f["line"], f["code"]) for f in findings] == [(4, "PRT201")]


def test_columns_count_characters_not_bytes(tmp_path):
    write(tmp_path / "u.py", 'import torch\nx = ("ünïcödé", torch.ones(2).to("cuda"))\n')
    _, findings, _ = json_findings("u.py", cwd=tmp_path)
    assert [(f["column"], f["end_column"], f["symbol"]) for f in findings] == [(34, 40, '"cuda"')]


def test_quiet_prints_findings_only(tmp_path):
    write(tmp_path / "cuda.py", CUDA)
    _, out, _ = run_cli("-q", "--output-format", "concise", str(tmp_path / "cuda.py"))
    assert out.count("\n") == 1 and ": PRT201 " in out
    _, out, _ = run_cli("-q", str(tmp_path / "cuda.py"))
    assert "Per target" not in out and "Found" not in out and ": PRT201 " in out


def test_keyword_only_arguments_without_defaults(tmp_path):
    write(
        tmp_path / "k.py",
        "import torch\n\ndef f(*, a, b=1):\n    return torch.cuda.is_available()\n",
    )
    status, findings, err = json_findings("k.py", cwd=tmp_path)
    assert status == 1 and err == "" and [f["code"] for f in findings] == ["PRT201"]


def test_an_internal_error_in_one_file_is_reported_and_the_run_goes_on(tmp_path, monkeypatch):
    import portlint.python.analyser as analyser

    original = analyser.analyse_python

    def explode(source, catalog, settings, sink):
        if source.path.endswith("bad.py"):
            raise RuntimeError("boom")
        original(source, catalog, settings, sink)

    monkeypatch.setattr(analyser, "analyse_python", explode)
    write(tmp_path / "bad.py", CUDA)
    write(tmp_path / "good.py", CUDA)
    status, out, err = run_cli("--output-format", "concise", ".", cwd=tmp_path)
    assert status == 2
    assert (
        err == "portlint: error: bad.py: internal error: RuntimeError: boom (please report this)\n"
    )
    assert "good.py:3:1: PRT201" in out


def test_a_gitignored_folder_named_on_the_command_line_is_linted(tmp_path):
    (tmp_path / ".git").mkdir()
    write(tmp_path / ".gitignore", "vendored/\n")
    write(tmp_path / "vendored" / ".gitignore", "skip_me.py\n")
    write(tmp_path / "vendored" / "a.py", CUDA)
    write(tmp_path / "vendored" / "skip_me.py", CUDA)
    _, findings, _ = json_findings(".", cwd=tmp_path)
    assert findings == []
    _, findings, _ = json_findings("vendored", cwd=tmp_path)
    assert [f["path"] for f in findings] == ["vendored/a.py"]


def test_a_usage_error_stops_the_run_before_any_fix(tmp_path):
    write(tmp_path / "a.py", CUDA)
    status, _, err = run_cli("--fix", "--diff-mode", "file", "a.py", cwd=tmp_path)
    assert status == 2 and "--diff-mode needs --diff-base REF" in err
    assert (tmp_path / "a.py").read_text() == CUDA

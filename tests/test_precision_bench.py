"""The precision benchmark's arithmetic: joining findings with labels, precision, recall.

Synthetic labels and findings only; the benchmark itself needs real checkouts and is not run here.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

RUN_PY = Path(__file__).resolve().parent.parent / "benchmarks" / "precision" / "run.py"
REPO = "owner/lib@0123abcd"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("precision_run", RUN_PY)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def finding(line, code="PRT201", symbol="torch.cuda.synchronize", severity="error", targets=None):
    return {
        "repo": REPO,
        "path": "lib/dev.py",
        "line": line,
        "code": code,
        "symbol": symbol,
        "severity": severity,
        "targets": targets or {"npu": {"status": "rename", "replacement": "torch.npu.synchronize"}},
    }


LABELS = '''\
repo,path,line,rule,symbol,severity,targets,verdict,reason
owner/lib@0123abcd,lib/dev.py,3,PRT201,torch.cuda.synchronize,error,npu=rename,right,raises off CUDA
owner/lib@0123abcd,lib/dev.py,5,PRT201,torch.cuda.synchronize,error,npu=rename,wrong-detail,info
owner/lib@0123abcd,lib/dev.py,7,PRT201,torch.cuda.synchronize,error,npu=rename,false-positive,backend
owner/lib@0123abcd,lib/dev.py,9,PRT101,"""cuda""",error,npu=rename,right,device string
owner/lib@0123abcd,lib/dev.py,11,PRT201,torch.cuda.synchronize,error,npu=rename,right,gone now
'''


@pytest.fixture
def labels(bench, tmp_path):
    path = tmp_path / "labels.csv"
    path.write_text(LABELS)
    return bench.read_labels(path)


def test_join_matches_by_line_rule_and_symbol(bench, labels):
    findings = [
        finding(3),
        finding(5),
        finding(7),
        finding(9, code="PRT101", symbol='"cuda"', severity="warning"),
        finding(13),
    ]
    joined = bench.join(findings, labels)
    assert [(f["line"], lab.verdict) for f, lab in joined.matched] == [
        (3, "right"),
        (5, "wrong-detail"),
        (7, "false-positive"),
        (9, "right"),
    ]
    assert [f["line"] for f in joined.unlabelled] == [13]
    assert [lab.line for lab in joined.gone] == [11]


def test_repeats_on_a_line_share_its_label(bench, labels):
    joined = bench.join([finding(3), finding(3), finding(5)], labels)
    assert [(f["line"], lab.verdict) for f, lab in joined.matched] == [
        (3, "right"),
        (3, "right"),
        (5, "wrong-detail"),
    ]
    assert joined.unlabelled == []


def test_join_keeps_a_label_when_the_span_changes(bench, labels):
    joined = bench.join([finding(3, symbol="torch.cuda.synchronize()")], labels)
    assert [lab.reason for _, lab in joined.matched] == ["raises off CUDA"]
    assert joined.unlabelled == []


def test_a_site_labelled_for_two_analyses_uses_the_matching_label(bench, labels):
    # The same site seen by a newer analysis as a warning, labelled again.
    newer = bench.Label(REPO, "lib/dev.py", 3, "PRT201", "torch.cuda.synchronize", "warning",
                        "npu=rename", "wrong-detail", "raises: error")  # fmt: skip
    both = [*labels, newer]
    joined = bench.join([finding(3)], both)
    assert [lab.severity for _, lab in joined.matched] == ["error"]
    joined = bench.join([finding(3, severity="warning")], both)
    assert [lab.verdict for _, lab in joined.matched] == ["wrong-detail"]
    assert 3 not in [lab.line for lab in joined.gone]  # one site, not one per label


def test_strict_and_site_precision(bench, labels):
    findings = [finding(3), finding(5), finding(7), finding(9, code="PRT101", symbol='"cuda"')]
    scores = bench.score(bench.join(findings, labels).matched)
    overall = scores["all"]
    assert (overall.right, overall.wrong_detail, overall.false_positive) == (2, 1, 1)
    assert overall.strict() == pytest.approx(2 / 4)
    assert overall.site() == pytest.approx(3 / 4)
    assert scores["PRT201"].strict() == pytest.approx(1 / 3)
    assert scores["PRT101"].site() == 1.0


def test_changed_details_leave_strict_but_keep_the_site(bench, labels):
    # Labelled as an error with npu=rename; the analysis now says warning.
    findings = [finding(3, severity="warning"), finding(7)]
    overall = bench.score(bench.join(findings, labels).matched)["all"]
    assert overall.changed == 1
    assert overall.strict() == 0.0  # only the unchanged false positive is left
    assert overall.site() == pytest.approx(1 / 2)


def test_recall_counts_labelled_sites_and_listed_misses(bench, labels):
    files_read = {(REPO, "lib/dev.py")}
    missed = [
        {"repo": REPO, "path": "lib/dev.py", "line": "20", "rule": "PRT401"},
        {"repo": REPO, "path": "lib/dev.py", "line": "22", "rule": "PRT101"},
    ]
    # Expected sites: labelled real sites 3, 5, 9, 11 plus the two misses; 7 is a false positive.
    findings = [finding(3), finding(5), finding(9, code="PRT101", symbol='"cuda"')]
    found, expected, still = bench.recall(findings, labels, missed, files_read)
    assert (found, expected, len(still)) == (3, 6, 2)
    # A later analysis that finds a listed miss gets it counted.
    findings.append(finding(22, code="PRT101", symbol='"cuda"'))
    found, expected, still = bench.recall(findings, labels, missed, files_read)
    assert (found, expected, [row["line"] for row in still]) == (4, 6, ["20"])


def test_a_miss_may_name_the_rule_by_name_and_any_line(bench):
    missed = [
        {"repo": REPO, "path": "lib/dev.py", "line": "1", "rule": "cuda-backend"},
        {"repo": REPO, "path": "lib/cuda.py", "line": "*", "rule": "PRT110"},
        {"repo": REPO, "path": "lib/npu.py", "line": "*", "rule": "PRT110"},
    ]
    backend = finding(1, code="PRT110", symbol="CudaPlatform", severity="info")
    backend["name"] = "cuda-backend"
    module = dict(backend, path="lib/cuda.py", line=40)
    files = {(REPO, "lib/dev.py"), (REPO, "lib/cuda.py"), (REPO, "lib/npu.py")}
    found, expected, still = bench.recall([backend, module], [], missed, files)
    assert (found, expected, [row["path"] for row in still]) == (2, 3, ["lib/npu.py"])
    # Once the file-wide site is labelled, the miss and the label are one site, not two.
    label = bench.Label(REPO, "lib/cuda.py", 40, "PRT110", "", "info", "", "right", "summary")
    found, expected, still = bench.recall([backend, module], [label], missed, files)
    assert (found, expected) == (2, 3)


def test_stratified_sample_covers_every_rule(bench):
    findings = [finding(n) for n in range(100)] + [finding(200, code="PRT604")]
    sample = bench.stratified_sample(findings, 10, seed=1)
    assert {f["code"] for f in sample} == {"PRT201", "PRT604"}
    assert len(sample) == 11


def test_pins_file(bench, tmp_path):
    path = tmp_path / "repos.txt"
    path.write_text("# comment\nowner/lib@0123abcd src tools\nother/app@ffff .\n")
    pins = bench.read_pins(path)
    assert [(p.repo, p.commit, p.subpaths, p.folder) for p in pins] == [
        ("owner/lib", "0123abcd", ("src", "tools"), "owner+lib"),
        ("other/app", "ffff", (".",), "other+app"),
    ]


def test_pins_file_groups(bench, tmp_path):
    path = tmp_path / "repos.txt"
    path.write_text(
        "# comment\nowner/lib@0123abcd src\n## held out\n# note\nother/app@ffff .  # pin\n"
    )
    pins = bench.read_pins(path)
    assert [(p.repo, p.subpaths, p.group) for p in pins] == [
        ("owner/lib", ("src",), "tuning"),
        ("other/app", (".",), "held out"),
    ]


def test_precision_is_reported_per_group(bench, labels, capsys):
    held = "other/app@ffff"
    held_label = bench.Label(held, "app/run.py", 4, "PRT201", "torch.cuda.synchronize", "error",
                             "npu=rename", "false-positive", "backend")  # fmt: skip
    findings = [finding(3), finding(5), dict(finding(4), repo=held, path="app/run.py")]
    joined = bench.join(findings, [*labels, held_label])
    groups = {REPO: "tuning", held: "held out"}
    split = bench.by_group(findings, joined, groups)
    assert list(split) == ["tuning", "held out"]
    tuning = bench.score(split["tuning"][1])["all"]
    held_out = bench.score(split["held out"][1])["all"]
    assert (tuning.right, tuning.wrong_detail, tuning.false_positive) == (1, 1, 0)
    assert tuning.site() == 1.0
    assert (held_out.labelled, held_out.site()) == (1, 0.0)
    # A repository the pins do not name is counted with the tuning set.
    assert list(bench.by_group(findings, joined, {})) == ["tuning"]

    bench.report(findings, [*labels, held_label], [], {}, groups)
    out = capsys.readouterr().out
    tables = out.split("## ")
    assert [t.split("\n", 1)[0] for t in tables[1:]] == [
        "tuning (1 repositories)",
        "held out (1 repositories)",
        "all",
    ]
    all_line = next(line for line in tables[3].splitlines() if line.startswith("all "))
    assert all_line.split()[1:4] == ["3", "3", "1"]  # findings, labelled, right


def test_one_group_prints_one_table(bench, labels, capsys):
    bench.report([finding(3)], labels, [], {}, {REPO: "tuning"})
    assert "## " not in capsys.readouterr().out


def test_unknown_verdict_is_rejected(bench, tmp_path):
    path = tmp_path / "labels.csv"
    path.write_text(LABELS.replace("false-positive", "maybe"))
    with pytest.raises(SystemExit, match="verdict must be one of"):
        bench.read_labels(path)


def test_files_read_groups(bench, tmp_path):
    path = tmp_path / "files_read.txt"
    path.write_text(
        "# comment\nowner/lib@0123abcd a.py\n## held out\nowner/lib@0123abcd b.py  # note\n"
    )
    assert bench.read_files_read(path) == {
        "read": {(REPO, "a.py")},
        "held out": {(REPO, "b.py")},
    }
    # A miss outside the files of a group does not count against it.
    missed = [{"repo": REPO, "path": "b.py", "line": "3", "rule": "PRT101"}]
    assert bench.recall([], [], missed, {(REPO, "a.py")}) == (0, 0, [])


AGREEMENT_PY = RUN_PY.parent / "agreement.py"
HEADER = "repo,path,line,rule,symbol,severity,targets,verdict,reason\n"
FIRST = HEADER + (
    "owner/lib@0123abcd,lib/dev.py,3,PRT201,torch.cuda.synchronize,error,npu=rename,right,a\n"
    "owner/lib@0123abcd,lib/dev.py,5,PRT201,torch.cuda.synchronize,error,npu=rename,right,b\n"
    "owner/lib@0123abcd,lib/dev.py,7,PRT201,torch.cuda.synchronize,error,npu=rename,wrong-detail,c\n"
    "owner/lib@0123abcd,lib/dev.py,9,PRT201,torch.cuda.synchronize,error,npu=rename,false-positive,d\n"
)
SECOND = HEADER + (
    "owner/lib@0123abcd,lib/dev.py,3,PRT201,torch.cuda.synchronize,error,npu=rename,right,a\n"
    "owner/lib@0123abcd,lib/dev.py,5,PRT201,torch.cuda.synchronize,error,npu=rename,false-positive,b\n"
    "owner/lib@0123abcd,lib/dev.py,7,PRT201,torch.cuda.synchronize,error,npu=rename,wrong-detail,c\n"
    "owner/lib@0123abcd,lib/dev.py,9,PRT201,torch.cuda.synchronize,error,npu=rename,wrong-detail,d\n"
    # other targets than the first reading's label of line 3: a different finding
    "owner/lib@0123abcd,lib/dev.py,3,PRT201,torch.cuda.synchronize,error,mlu=rename,right,e\n"
)


@pytest.fixture(scope="module")
def agreement(bench):
    spec = importlib.util.spec_from_file_location("precision_agreement", AGREEMENT_PY)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_agreement_of_two_readings(agreement, tmp_path, capsys):
    first, second = tmp_path / "first.csv", tmp_path / "second.csv"
    first.write_text(FIRST)
    second.write_text(SECOND)
    assert agreement.main(["--first", str(first), "--second", str(second)]) == 0
    assert capsys.readouterr().out == (
        "findings read twice: 4\n"
        "second-reading rows with no first-reading label: 1\n"
        "\n"
        "  first/second           right    wrong-detail  false-positive\n"
        "         right               1               0               1\n"
        "  wrong-detail               0               1               0\n"
        "false-positive               0               1               0\n"
        "\n"
        "verdict                agreement  50.0%  kappa  0.27\n"
        "right in every detail  agreement  75.0%  kappa  0.50\n"
        "a real site            agreement  50.0%  kappa -0.33\n"
        "\n"
        "first reader   strict  50.0%  site  75.0%\n"
        "second reader  strict  25.0%  site  75.0%\n"
        "both readers   strict  25.0%  site  50.0%\n"
    )


def test_agreement_needs_the_second_reading(agreement, tmp_path, capsys):
    with pytest.raises(SystemExit):
        agreement.main(["--second", str(tmp_path / "missing.csv")])
    assert "missing.csv: no such file" in capsys.readouterr().err

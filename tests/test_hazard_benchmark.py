"""benchmarks/hazards: the committed labels are well formed and name pinned repositories and
real rules, and the script reads a pinned commit's C++ files out of a git directory."""

from __future__ import annotations

import csv
import importlib.util
import shutil
import subprocess

import pytest

from portlint.catalog import load_catalog
from support import ROOT

HAZARDS = ROOT / "benchmarks" / "hazards"


def load_script():
    spec = importlib.util.spec_from_file_location("hazard_precision", HAZARDS / "precision.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_labels_are_well_formed_and_pinned():
    pins = {f"{repo}@{commit}" for repo, commit in load_script().read_pins(HAZARDS / "repos.txt")}
    codes = set(load_catalog().rules)
    with (HAZARDS / "labels.csv").open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) >= 100
    keys = set()
    for row in rows:
        assert row["repo"] in pins, row
        assert row["rule"] in codes and row["rule"].startswith("PRT8"), row
        assert row["verdict"] in ("real", "noise"), row
        assert row["reason"].strip() and "\n" not in row["reason"], row
        assert int(row["line"]) > 0, row
        key = (row["repo"], row["path"], row["line"], row["rule"], row["symbol"])
        assert key not in keys, row
        keys.add(key)


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_extract_reads_cxx_files_of_the_pinned_commit(tmp_path):
    repo = tmp_path / "owner+name"
    repo.mkdir()
    (repo / "kernel.cu").write_text(
        "__device__ int lane() { return threadIdx.x & 31; }\n", encoding="utf-8"
    )
    (repo / "notes.txt").write_text("not C++\n", encoding="utf-8")
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "one"], check=True)
    commit = subprocess.run(
        [*git, "rev-parse", "HEAD"], check=True, capture_output=True, text=True
    ).stdout.strip()
    (repo / "kernel.cu").write_text("// changed after the pin\n", encoding="utf-8")

    script = load_script()
    tree = tmp_path / "tree"
    script.extract(script.git_dir(tmp_path, "owner/name"), commit, tree)
    assert sorted(p.name for p in tree.iterdir()) == ["kernel.cu"]
    findings = list(script.hazard_findings(tree))
    assert [(path, line, rule, symbol) for path, line, rule, symbol, _ in findings] == [
        ("kernel.cu", 1, "PRT801", "31")
    ]

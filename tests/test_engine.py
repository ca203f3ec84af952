"""The engine gives the same findings whether files are parsed in this process or in workers."""

from __future__ import annotations

import json
import os
import shutil

import portlint.engine
from portlint.engine import PARALLEL_THRESHOLD
from support import FIXTURES, run_cli


def test_worker_processes_find_what_one_process_finds(tmp_path, monkeypatch):
    pools = []

    def start_pool(workers):
        pools.append(workers)
        return start(workers)

    start = portlint.engine._start_pool
    monkeypatch.setattr(portlint.engine, "_start_pool", start_pool)
    monkeypatch.setattr(portlint.engine, "INLINE_SECONDS", 0.0)  # workers from the first file
    fixtures = sorted((FIXTURES / "python").glob("*.py"))
    copies = 0
    while copies < PARALLEL_THRESHOLD + len(fixtures):  # enough candidates to start workers
        for fixture in fixtures:
            shutil.copy(fixture, tmp_path / f"{copies:02d}_{fixture.name}")
            copies += 1
    (tmp_path / "clean.py").write_text("print('hello')\n", encoding="utf-8")

    runs = {}
    for jobs in ("1", "2"):
        status, out, err = run_cli(
            *("--isolated", "--no-cache", "--output-format", "json", "-j", jobs, "."), cwd=tmp_path
        )
        assert status == 1, err
        runs[jobs] = json.loads(out)
    assert pools == [2]
    assert runs["1"] == runs["2"]
    paths = {finding["path"] for finding in runs["2"]}
    assert len(paths) > PARALLEL_THRESHOLD and "clean.py" not in paths


def _copies_of_python_fixtures(folder, at_least):
    fixtures = sorted((FIXTURES / "python").glob("*.py"))
    copies = 0
    while copies < at_least:
        for fixture in fixtures:
            shutil.copy(fixture, folder / f"{copies:03d}_{fixture.name}")
            copies += 1


def test_workers_start_during_the_walk_of_a_large_tree(tmp_path, monkeypatch):
    pools = []

    def start_pool(workers, languages=()):
        pools.append((workers, sorted(languages)))
        return start(workers, languages)

    start = portlint.engine._start_pool
    monkeypatch.setattr(portlint.engine, "_start_pool", start_pool)
    monkeypatch.setattr(portlint.engine, "AT_ONCE", 40)
    _copies_of_python_fixtures(tmp_path, 60)

    runs = {}
    for jobs in ("1", "2"):
        status, out, err = run_cli(
            *("--isolated", "--no-cache", "--output-format", "json", "-j", jobs, "."), cwd=tmp_path
        )
        assert status == 1, err
        runs[jobs] = json.loads(out)
    # Started once, by the walk (it names the analysers to load), not after it.
    assert pools == [(2, ["python"])]
    assert runs["1"] == runs["2"]
    assert len({finding["path"] for finding in runs["2"]}) > 40


def test_a_run_the_cache_answers_for_starts_no_workers(tmp_path, monkeypatch):
    pools = []

    def start_pool(workers, languages=()):
        pools.append(workers)
        return start(workers, languages)

    start = portlint.engine._start_pool
    monkeypatch.setattr(portlint.engine, "_start_pool", start_pool)
    monkeypatch.setattr(portlint.engine, "AT_ONCE", 40)
    tree = tmp_path / "tree"
    tree.mkdir()
    _copies_of_python_fixtures(tree, 60)
    options = ("--isolated", "--cache-dir", str(tmp_path / "cache"), "--output-format", "json")

    first = run_cli(*options, "-j", "2", ".", cwd=tree)
    assert pools == [2]
    second = run_cli(*options, "-j", "2", ".", cwd=tree)
    assert pools == [2]  # every file answered from the cache: no worker started
    assert first[0] == second[0] == 1
    assert json.loads(first[1]) == json.loads(second[1])


def test_a_worker_that_dies_is_an_error_for_its_files_not_a_traceback(tmp_path, monkeypatch):
    for index in range(PARALLEL_THRESHOLD * 2):
        (tmp_path / f"m{index:02d}.py").write_text("x.cuda()\n", encoding="utf-8")
    run_job = portlint.engine.run_job

    def dies_on_one_file(job):
        if job.path.endswith("m05.py"):
            os._exit(9)  # as the kernel's out-of-memory killer would end it
        return run_job(job)

    monkeypatch.setattr(portlint.engine, "run_job", dies_on_one_file)
    monkeypatch.setattr(portlint.engine, "INLINE_SECONDS", 0.0)
    status, _, err = run_cli("--isolated", "--no-cache", "-q", "-j", "2", ".", cwd=tmp_path)
    assert status == 2
    lines = err.splitlines()
    assert "portlint: error: m05.py: internal error: a worker process died" in "\n".join(lines)
    assert all(line.startswith("portlint: error: m") for line in lines)


def test_batches_keep_the_order_and_shrink_towards_the_end():
    """Every file once, in order; full batches while many files are left, then smaller ones,
    so that the last files to finish are spread over the workers one by one."""
    pending = [f"{number:04d}.py" for number in range(1000)]
    batches = list(portlint.engine._batches(pending, workers=2))
    assert [name for batch in batches for name in batch] == pending
    sizes = [len(batch) for batch in batches]
    assert sizes[0] == portlint.engine.BATCH_SIZE
    assert sizes == sorted(sizes, reverse=True)
    share = 2 * portlint.engine.BATCHES_PER_WORKER
    left = len(pending)
    for size in sizes:
        assert size == max(1, min(portlint.engine.BATCH_SIZE, left // share))
        left -= size
    assert sizes[-share:] == [1] * share
    assert list(portlint.engine._batches([], workers=2)) == []

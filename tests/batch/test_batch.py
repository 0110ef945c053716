"""A batch over the task set: one attempt per task, each a job of the course's engine, on this
machine's cores or on a real Dask cluster (a scheduler and two workers on loopback); scored by
the tests after each attempt; finished attempts skipped, others picked up; an attempt that
fails or overruns ends with a named reason and costs no other its result."""

import json
import shutil

import pytest
from dask_cluster import dask_cluster

from labkit import TASK_RECORDINGS, load_recording, load_tasks, read_results, run_batch
from labkit.batch.command import table_lines
from labkit.batch.results import resolved, summary, summary_lines
from labkit.cli import main

TASKS = list(load_tasks())


def recorded(task: str) -> dict:
    return load_recording(TASK_RECORDINGS / f"{task}.json")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    with dask_cluster(tmp_path_factory.mktemp("dask")) as address:
        yield address


def test_the_recorded_task_set_runs_on_a_dask_cluster_scored_by_its_tests(cluster, tmp_path):
    batch = run_batch(tmp_path, scheduler=cluster)
    assert [row["task"] for row in batch.rows] == TASKS and batch.skipped == []
    for row in batch.rows:
        attempt = recorded(row["task"])
        assert row["stop"] == attempt["events"][-1]["reason"], row["task"]
        assert row["tests_after"] == attempt["checks"]["after"], row["task"]
        assert row["turns"] == attempt["events"][-1]["turns"] and row["tests_unchanged"]
        saved = load_recording(tmp_path / "attempts" / row["task"] / "recording.json")
        assert saved["provenance"]["replayed_from"] == "ReplayModel, in process"
    assert list(read_results(tmp_path / "results.jsonl").values()) == batch.rows
    counts = summary(batch.rows)
    assert (counts["attempts"], counts["resolved"], counts["assistant_finished"]) == (7, 4, 5)
    assert counts["finished_but_unresolved"] == 2 and counts["resolved_without_finishing"] == 1
    assert sorted(row["task"] for row in batch.rows if resolved(row)) == [
        "misspelt_key", "off_by_one", "path_rule", "wrong_default"
    ]  # fmt: skip
    assert summary_lines(counts)[0] == "resolved (the tests after the attempt pass): 4 of 7 (57%)"


def test_finished_attempts_are_skipped_and_redo_starts_one_afresh(tmp_path):
    first = run_batch(tmp_path, only=["wrong_default"], workers=1, sandbox=None)
    again = run_batch(tmp_path, only=["wrong_default"], workers=1, sandbox=None)
    assert again.skipped == ["wrong_default"] and again.rows == first.rows
    journal = tmp_path / "attempts" / "wrong_default" / "journal.jsonl"
    lines = journal.read_text()
    redone = run_batch(tmp_path, only=["wrong_default"], redo=True, workers=1, sandbox=None)
    assert redone.skipped == [] and redone.rows[0]["stop"] == "assistant_finished"
    assert journal.read_text() != lines  # a new journal, from its first line


def test_a_failing_attempt_and_an_overrun_are_named_and_lose_nothing_else(tmp_path):
    recordings = tmp_path / "recordings"
    recordings.mkdir()
    shutil.copyfile(TASK_RECORDINGS / "wrong_default.json", recordings / "wrong_default.json")
    model = {"replay": str(recordings)}  # empty_input has no recording here: its attempt fails
    batch = run_batch(tmp_path / "out", only=["empty_input", "wrong_default"], model=model,
                      workers=2, sandbox=None)  # fmt: skip
    rows = {row["task"]: row for row in batch.rows}
    assert rows["wrong_default"]["stop"] == "assistant_finished"
    assert rows["empty_input"]["stop"] == "attempt_failed"
    assert "empty_input.json: cannot be read" in rows["empty_input"]["detail"]
    assert rows["empty_input"]["tests_after"] is None
    late = run_batch(tmp_path / "late", only=["threshold"], workers=1, sandbox=None, timeout=0.0)
    assert late.rows[0]["stop"] == "attempt_timeout" and "journal keeps" in late.rows[0]["detail"]
    picked_up = run_batch(tmp_path / "late", only=["threshold"], workers=1, sandbox=None)
    assert picked_up.skipped == [] and picked_up.rows[0]["stop"] == "incomplete_model_turn"
    assert picked_up.rows[0]["resumed"] == 1


def test_the_command_prints_each_attempt_and_the_summary(tmp_path, capsys):
    code = main(["batch", "--only", "wrong_default", "--out", str(tmp_path), "--no-sandbox",
                 "--workers", "1"])  # fmt: skip
    printed = capsys.readouterr().out
    assert code == 0
    assert "wrong_default    assistant_finished     3 passed, 0 failed" in printed
    assert "resolved (the tests after the attempt pass): 1 of 1 (100%)" in printed
    assert main(["batch", "--only", "nothing", "--out", str(tmp_path)]) == 2
    assert "no task named nothing" in capsys.readouterr().err


def test_the_table_shows_a_failed_attempt_with_dashes():
    task = load_tasks()["path_rule"]
    from labkit.batch.results import failed_row

    row = failed_row(task, "attempt_timeout", "too slow")
    assert table_lines([row])[1].split() == ["path_rule", "attempt_timeout", "-", "-", "-", "-",
                                             "-"]  # fmt: skip
    assert json.loads(json.dumps(row)) == row

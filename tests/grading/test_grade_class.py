"""Where the sandbox cannot start, grading refuses with one clear message, unless the
instructor says ``--unisolated``; then the summary and the class report say so."""

import shutil

from labkit.cli import main
from labkit.grading import grade_class
from labkit.grading.conventions import lay_out_course
from labkit.grading.grade_class import Summary
from labkit.grading.report import ClassResults, write_report
from labkit.harness.sandbox import SandboxUnavailable
from labkit.settings import NOTEBOOKS_DIR

WHY = "bubblewrap cannot create a user namespace here (kernel.unprivileged_userns_clone=0)"


def test_grading_refuses_where_the_sandbox_cannot_start(tmp_path, monkeypatch, capsys):
    lessons = tmp_path / "lessons"
    lessons.mkdir()
    shutil.copy(NOTEBOOKS_DIR / "01_one_file_read.ipynb", lessons)
    course = tmp_path / "course"
    lay_out_course(course, lessons)
    (course / "gradebook.db").write_bytes(b"")  # refused before the gradebook is read

    def no_sandbox():
        raise SandboxUnavailable(WHY)

    monkeypatch.setattr(grade_class, "check_sandboxes", no_sandbox)
    assert main(["grade", str(course)]) == 2
    said = capsys.readouterr()
    assert said.err == f"grading refused: {WHY}\n" and said.out == ""
    assert not (course / "grading_journal.jsonl").exists()
    assert (course / "gradebook.db").read_bytes() == b""


def test_an_unisolated_run_says_so_in_its_summary_and_in_the_class_report(tmp_path):
    lines = Summary(isolated=False, where="on 2 local worker processes").lines()
    assert lines[1].startswith("UNISOLATED (--unisolated): learners' code ran with your rights")
    assert "UNISOLATED" not in "\n".join(Summary(isolated=True).lines())
    page = write_report(ClassResults([], [], unisolated=True), tmp_path)["html"].read_text()
    assert "Some submissions were graded UNISOLATED (--unisolated)" in page

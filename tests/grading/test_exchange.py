"""A workshop's round trip through nbgrader's exchange, nothing hand-copied between steps.

The instructor lays out the course (``lay_out_course``, lesson 01), generates and releases it
into an exchange folder; three learners, each with a home folder of their own and their own
``~/.jupyter/nbgrader_config.py`` (their student id, the exchange), fetch it, answer (right,
wrong, not at all) and submit; the instructor collects, grades with labkit's parallel grader
(two local workers, each learner's code in its sandbox), generates and releases the feedback;
each learner fetches their own feedback. Every step is nbgrader's command line, as the README
tells a workshop to run it.

What it cannot show on one machine as one Unix user: that learners run as users of their own
(nbgrader takes the id a learner declares; a hub's spawner, or containers, give each learner
their uid). That part is the README's workshop section.
"""

import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import nbformat
import pytest
from answers import RIGHT, WRONG
from classes import grading_sandbox_or_skip, read

from labkit.grading.conventions import exercises, lay_out_course
from labkit.grading.edition import nbgrader
from labkit.settings import NOTEBOOKS_DIR

LESSON = "01_one_file_read"
COURSE_ID = "agent-loop"  # what lay_out_course's config names the course
EMPTIES = next(w.source for w in WRONG["check_tool_message"] if w.mistake.startswith("empties"))
#: learner -> the answer typed into lesson 01's answer cell (None: left unanswered).
ANSWERS = {
    "alice": RIGHT["check_tool_message"].replace("$name", "make_tool_message"),
    "bob": EMPTIES.replace("$name", "make_tool_message"),
    "carol": None,
}
SCORES = {"alice": 1.0, "bob": 0.0, "carol": 0.0}


def as_learner(home: Path, *args) -> subprocess.CompletedProcess:
    """One nbgrader command as a learner runs it: in their home, with their own config."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("JUPYTER")}
    env["HOME"] = str(home)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    command = [sys.executable, "-m", "nbgrader", *args, "--course", COURSE_ID]
    run = subprocess.run(command, cwd=home, env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, f"{home.name}: nbgrader {' '.join(args)}:\n{run.stderr[-3000:]}"
    return run


def instructor(course: Path, *args) -> subprocess.CompletedProcess:
    """``python -m labkit ...`` as the instructor types it, in the course folder."""
    env = {**os.environ, "PATH": os.pathsep.join([str(Path(sys.executable).parent),
                                                  os.environ.get("PATH", "")])}  # fmt: skip
    run = subprocess.run([sys.executable, "-m", "labkit", *args], cwd=course, env=env,
                         capture_output=True, text=True, timeout=600)  # fmt: skip
    assert run.returncode == 0, f"python -m labkit {' '.join(args)}:\n{run.stderr[-3000:]}"
    return run


def learner_submits(home: Path, exchange: Path) -> None:
    (home / ".jupyter").mkdir(parents=True)
    (home / ".jupyter" / "nbgrader_config.py").write_text(
        f"c = get_config()  # noqa: F821\nc.CourseDirectory.student_id = {home.name!r}\n"
        f"c.Exchange.root = {str(exchange)!r}\n"
    )
    as_learner(home, "fetch_assignment", LESSON)
    path = home / LESSON / f"{LESSON}.ipynb"
    answer = ANSWERS[home.name]
    if answer is not None:
        notebook = read(path)
        [exercise] = exercises(notebook)
        notebook.cells[exercise.answer_index].source = answer
        nbformat.write(notebook, path)
    as_learner(home, "submit", LESSON)


@pytest.fixture(scope="module")
def workshop(tmp_path_factory):
    grading_sandbox_or_skip()
    base = tmp_path_factory.mktemp("workshop")
    course, exchange, homes, lessons = (base / name for name in
                                        ("course", "exchange", "homes", "lessons"))  # fmt: skip
    lessons.mkdir()
    (lessons / f"{LESSON}.ipynb").write_bytes((NOTEBOOKS_DIR / f"{LESSON}.ipynb").read_bytes())
    lay_out_course(course, lessons, cell_timeout=15, answer_timeout=10, interrupt_grace=2)
    with (course / "nbgrader_config.py").open("a") as config:
        config.write(f"c.Exchange.root = {str(exchange)!r}\n")
    exchange.mkdir(mode=0o777)
    nbgrader(course, "generate_assignment", LESSON)
    nbgrader(course, "release_assignment", LESSON)
    with ThreadPoolExecutor(len(ANSWERS)) as pool:  # the threads wait on nbgrader's processes
        list(pool.map(learner_submits, [homes / name for name in ANSWERS], [exchange] * 3))
    nbgrader(course, "collect", LESSON)
    graded = instructor(course, "grade", str(course), "--workers", "2")
    nbgrader(course, "generate_feedback", LESSON)
    nbgrader(course, "release_feedback", LESSON)
    with ThreadPoolExecutor(len(ANSWERS)) as pool:
        list(pool.map(as_learner, [homes / name for name in ANSWERS], ["fetch_feedback"] * 3,
                      [LESSON] * 3))  # fmt: skip
    reported = instructor(course, "report", str(course))
    return course, homes, graded.stdout, reported.stdout


def test_every_submission_reached_the_course_and_was_graded_in_the_sandbox(workshop):
    course, _, graded, _ = workshop
    assert graded.startswith(f"graded {len(ANSWERS)} learner-lesson(s) in "), graded
    assert "(on 2 local worker processes)" in graded.splitlines()[0]
    assert "isolation: every learner's kernel and answers ran in the bubblewrap sandbox" in graded
    assert "failed" not in graded and "NOT graded" not in graded
    for name in ANSWERS:
        assert (course / "submitted" / name / LESSON / "timestamp.txt").is_file()


def test_the_class_report_shows_who_passed_and_the_mistake_made(workshop):
    course, _, _, reported = workshop
    assert reported.splitlines()[0] == f"html: {course / 'reports' / 'class_report.html'}"
    rows = (course / "reports" / "class_report.csv").read_text().splitlines()
    assert any(row.startswith(f"{LESSON},check_make_tool_message,3,1,0.33,") for row in rows), rows


def test_the_gradebook_holds_each_learners_score(workshop):
    from nbgrader.api import Gradebook

    course, _, _, _ = workshop
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}", COURSE_ID) as gradebook:
        found = {name: gradebook.find_submission(LESSON, name).score for name in ANSWERS}
        maximum = gradebook.find_assignment(LESSON).max_score
    assert found == {name: share * maximum for name, share in SCORES.items()}


def test_each_learner_fetched_their_own_feedback_with_their_score(workshop):
    _, homes, _, _ = workshop
    for name, share in SCORES.items():
        [page] = (homes / name / LESSON / "feedback").glob(f"*/{LESSON}.html")
        text = page.read_text()
        score = re.search(r"Score: ([\d.]+) / ([\d.]+)", text)
        assert score, f"{name}'s feedback shows no score"
        assert float(score.group(1)) == share * float(score.group(2)), (name, score.group(0))
    bob = next((homes / "bob" / LESSON / "feedback").glob(f"*/{LESSON}.html")).read_text()
    assert "your function changed the result it was given" in bob  # the mistake, named

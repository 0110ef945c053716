"""``python -m labkit report COURSE_DIR``: what a graded class got wrong.

Read from the gradebook (each test cell's score), the autograded notebooks (the feedback
each test cell printed, which names the first case a learner's answer missed) and the
grading journal (the submissions that could not be graded, and why). Per exercise: how many
learners handed it in, how many passed, and the most common mistakes by the name the
feedback gives them (the case missed, "not answered yet", "did not finish in time"...).
Then the learners who need help first (the fewest exercises passed), and a chart of the
pass rate per exercise. Written as ``reports/class_report.html`` (one page, the chart
inside it) and ``reports/class_report.csv`` and ``reports/learners.csv`` for a spreadsheet.
"""

from __future__ import annotations

import argparse
import base64
import csv
import html
import io
import re
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from .conventions import nbgrader_role
from .gradebook_writer import read_journal

NOT_ANSWERED = "not answered yet"
#: Feedback a check gives when the answer's process itself went wrong, and its short name.
PROCESS_MISTAKES = (
    ("NotImplementedError", NOT_ANSWERED),
    ("not answered yet", NOT_ANSWERED),
    ("did not finish within", "did not finish in time"),
    ("stopped unexpectedly", "its process stopped (a crash, an exit)"),
    ("syntax error", "a syntax error"),
    ("did not answer the grader as expected", "did not answer the grader as expected"),
    ("grows faster than the input", "not linear: the work grows faster than the input"),
    ("does not define a function named", "the function the exercise names is missing"),
)
CASE = re.compile(r"^\w+: case \d+ of \d+, (.+)$")  # the heading of a missed case


@dataclass
class Exercise:
    lesson: str
    name: str  # the test cell's grade_id
    learners: int = 0
    passed: int = 0
    mistakes: Counter = field(default_factory=Counter)

    @property
    def pass_rate(self) -> float:
        return self.passed / self.learners if self.learners else 0.0


@dataclass
class Learner:
    name: str
    passed: int = 0
    attempted: int = 0
    failed_lessons: list = field(default_factory=list)  # lessons that could not be graded


@dataclass
class ClassResults:
    exercises: list  # of Exercise, in lesson order
    learners: list  # of Learner, who needs help first first
    unisolated: bool  # some submission was graded outside the sandbox


def mistake_name(feedback: str) -> str:
    """The name of the first miss a test cell's feedback reports."""
    heading = next(
        (
            line[len("Not yet. ") :]
            for line in feedback.splitlines()
            if line.startswith("Not yet. ")
        ),
        "",
    )
    problem = next((line for line in feedback.splitlines() if "problem:" in line), "")
    for phrase, name in PROCESS_MISTAKES:
        if phrase in problem or phrase in heading:
            return name
    case = CASE.match(heading)
    if case:
        label = case.group(1).strip()
        return "a case drawn at random" if label.startswith("drawn case") else label
    if heading:
        return heading.split(": ", 1)[-1].split(":")[0].strip()[:120]
    return "no feedback (the cell was not graded)"


def class_results(course) -> ClassResults:
    """Every exercise's and every learner's results in the graded ``course``."""
    import nbformat
    from nbgrader.api import Gradebook, MissingEntry

    course = Path(course)
    journal = read_journal(course)
    exercises, learners = {}, {}
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        for assignment in gradebook.assignments:
            for notebook in assignment.notebooks:
                for cell in notebook.grade_cells:
                    exercises[assignment.name, cell.name] = Exercise(assignment.name, cell.name)
            for submission in gradebook.assignment_submissions(assignment.name):
                student = submission.student.id
                learner = learners.setdefault(student, Learner(student))
                entry = journal.get((student, assignment.name), {})
                failure = entry.get("reason") if entry.get("outcome") == "failed" else None
                if failure:
                    learner.failed_lessons.append(assignment.name)
                for notebook in assignment.notebooks:
                    try:
                        graded = gradebook.find_submission_notebook(
                            notebook.name, assignment.name, student
                        )
                    except MissingEntry:
                        continue
                    path = (
                        course
                        / "autograded"
                        / student
                        / assignment.name
                        / (notebook.name + ".ipynb")
                    )
                    feedback = _feedback(nbformat.read(path, 4)) if path.is_file() else {}
                    for grade in graded.grades:
                        exercise = exercises[assignment.name, grade.name]
                        exercise.learners += 1
                        learner.attempted += 1
                        if grade.score >= grade.max_score > 0:
                            exercise.passed += 1
                            learner.passed += 1
                        elif failure:
                            exercise.mistakes["not graded: " + failure.split(":")[0]] += 1
                        else:
                            exercise.mistakes[mistake_name(feedback.get(grade.name, ""))] += 1
    ordered = sorted(
        learners.values(), key=lambda who: (who.passed / max(who.attempted, 1), who.name)
    )
    unisolated = any(entry.get("isolated") is False for entry in journal.values())
    return ClassResults(list(exercises.values()), ordered, unisolated)


def _feedback(notebook) -> dict:
    """Each test cell's printed feedback, by its grade_id."""
    found = {}
    for cell in notebook.cells:
        if nbgrader_role(cell) == "test":
            text = "".join(o.get("text", "") for o in cell.get("outputs", []))
            found[cell.metadata["nbgrader"]["grade_id"]] = text
    return found


def write_report(results: ClassResults, folder) -> dict:
    """Write the HTML page and the two CSV files into ``folder``; their paths by kind."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    paths = {
        "html": folder / "class_report.html",
        "csv": folder / "class_report.csv",
        "learners": folder / "learners.csv",
    }
    with open(paths["csv"], "w", newline="", encoding="utf-8") as out:
        table = csv.writer(out)
        table.writerow(
            ["lesson", "exercise", "learners", "passed", "pass_rate", "mistake", "count"]
        )
        for e in results.exercises:
            rows = e.mistakes.most_common() or [("", 0)]
            for mistake, count in rows:
                table.writerow(
                    [e.lesson, e.name, e.learners, e.passed, f"{e.pass_rate:.2f}", mistake, count]
                )
    with open(paths["learners"], "w", newline="", encoding="utf-8") as out:
        table = csv.writer(out)
        table.writerow(["learner", "exercises_passed", "exercises_handed_in", "not_graded"])
        for learner in results.learners:
            table.writerow(
                [learner.name, learner.passed, learner.attempted, " ".join(learner.failed_lessons)]
            )
    paths["html"].write_text(_html(results), encoding="utf-8")
    return paths


def pass_rate_chart(results: ClassResults) -> bytes:
    """A PNG: one bar per exercise, its pass rate."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot

    names = [f"{e.lesson[:2]} {e.name}" for e in results.exercises]
    figure, axes = pyplot.subplots(figsize=(8, 0.35 * len(names) + 1.2))
    axes.barh(names[::-1], [100 * e.pass_rate for e in results.exercises][::-1], color="#4c78a8")
    axes.set_xlim(0, 100)
    axes.set_xlabel("learners who passed (%)")
    axes.set_title("Pass rate per exercise")
    figure.tight_layout()
    image = io.BytesIO()
    figure.savefig(image, format="png", dpi=90)
    pyplot.close(figure)
    return image.getvalue()


def _html(results: ClassResults) -> str:
    chart = base64.b64encode(pass_rate_chart(results)).decode()
    rows = []
    for e in results.exercises:
        mistakes = "<br>".join(
            f"{html.escape(name)}: {count} of {e.learners}"
            for name, count in e.mistakes.most_common(5)
        )
        rows.append(
            f"<tr><td>{html.escape(e.lesson)}</td><td>{html.escape(e.name)}</td>"
            f"<td>{e.passed} of {e.learners} ({100 * e.pass_rate:.0f}%)</td>"
            f"<td>{mistakes}</td></tr>"
        )
    helped = [
        f"<li>{html.escape(who.name)}: passed {who.passed} of {who.attempted}"
        + (
            f"; not graded: {html.escape(', '.join(who.failed_lessons))}"
            if who.failed_lessons
            else ""
        )
        + "</li>"
        for who in results.learners
        if who.passed < who.attempted
    ]
    warning = (
        "<p class='warning'>Some submissions were graded UNISOLATED (--unisolated): their code "
        "ran with the grader's rights.</p>"
        if results.unisolated
        else ""
    )
    return f"""<!doctype html>
<html><head><meta charset="utf-8"><title>Class report</title>
<style>body{{font-family:sans-serif;max-width:60em;margin:2em auto}}
td,th{{border-bottom:1px solid #ddd;padding:.3em .6em;vertical-align:top;text-align:left}}
.warning{{color:#a00;font-weight:bold}}</style></head><body>
<h1>What the class got wrong</h1>{warning}
<img alt="pass rate per exercise" src="data:image/png;base64,{chart}">
<h2>Per exercise</h2>
<table><tr><th>lesson</th><th>exercise</th><th>passed</th><th>most common mistakes</th></tr>
{"".join(rows)}</table>
<h2>Learners who need help first</h2>
<ol>{"".join(helped)}</ol>
</body></html>
"""


def add_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """The options of ``python -m labkit report``."""
    parser.description = (
        "What a graded class got wrong: per exercise the pass rate and the most common "
        "mistakes, the learners who need help first, a chart; an HTML page and CSV files."
    )
    parser.add_argument("course", metavar="COURSE_DIR", help="the graded course folder")
    parser.add_argument("--out", metavar="DIR", help="where to write (default: COURSE_DIR/reports)")
    return parser


def run(args) -> int:
    course = Path(args.course)
    if not (course / "gradebook.db").is_file():
        print(
            f"{course} has no gradebook.db: grade it first (python -m labkit grade)",
            file=sys.stderr,
        )
        return 2
    paths = write_report(class_results(course), args.out or course / "reports")
    print("\n".join(f"{kind}: {path}" for kind, path in paths.items()))
    return 0

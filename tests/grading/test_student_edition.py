"""nbgrader end to end, on the course's own notebooks: a graded class, graded as a workshop is.

nbgrader generates the student edition; ``python -m labkit grade``'s code grades a class of
learners in parallel (two local workers), each learner's kernel and answers in the grading
sandbox, the gradebook written by one process; every score is asserted from the gradebook:

- ``reference``: the reference notebooks (full marks), with probe cells appended: each
  wrong answer of ``tests/answers.py`` followed by its test cell, then the reference
  answer and the test cell again, run in the kernel (the probes are not graded);
- ``untouched``: the student edition as released, its answer and test cells (0 on every test
  cell; that every other cell of the edition runs with no answer given is shown in
  JupyterLab, in tests/browser);
- ``own_style``: right answers written differently from the reference (full marks);
- ``wrong_a``, ``wrong_b``: the wrong answers the issue lists (0 on those cells);
- ``cheater``: each cheat of ``CHEATS`` (0 on those cells, full marks on the honest one);
- ``a_hangs``: an answer cell that loops forever ignoring SIGINT (0 on that cell, full
  marks on the next one, and the learners after it in the same run still graded);
- ``a_kills``: an answer cell that kills its kernel with ``os._exit`` (the same);
- ``x_...``: a cheat aimed at the grader itself each (``tests/grading/grader_cheats.py``):
  0 for its author, nothing changed for anyone else, the course, the gradebook and the
  installed packages as they were, no process of theirs left, and a second run of the same
  course grading nothing again.

The student edition is shown to be the reference with only the answers (and hidden
tests) taken out, so the reference run is the student edition with its answers restored;
and ``edition/``, what labkit carries, is what nbgrader generated here.
"""

import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest
from answers import ANSWER_NAMES, CHEATS, DIES, HANG, RIGHT, WRONG
from classes import (
    gradebook_dump,
    graded_cells_only,
    grading_sandbox_or_skip,
    hand_in,
    read,
)
from grader_cheats import CHEATS as GRADER_CHEATS
from grader_watch import Canary, cheat_notebook, fingerprint, running_with
from nbformat.v4 import new_code_cell

import labkit
from labkit import exercises as exercises_module
from labkit.grading.conventions import (
    BEGIN,
    END,
    HIDDEN_BEGIN,
    HIDDEN_END,
    course_problems,
    exercises,
    lay_out_course,
    nbgrader_role,
)
from labkit.grading.edition import generate_edition, update_student_edition
from labkit.grading.feedback import STUB_ADVICE
from labkit.grading.grade_class import grade_course
from labkit.settings import EDITION_DIR, NOTEBOOKS_DIR

LESSONS = tuple(sorted(path.stem for path in NOTEBOOKS_DIR.glob("[0-9][0-9]_*.ipynb")))
#: Exercises per lesson, as the lessons are written (a test checks the notebooks agree).
EXERCISES = {
    "01_one_file_read": 1,
    "02_streamed_turn": 2,
    "03_tool_results": 1,
    "04_repair_and_verify": 1,
    "05_failure_cases": 2,
    "06_providers": 2,
    "07_permissions": 2,
    "08_context_budget": 2,
    "09_toolkit": 2,
    "10_ground_state": 3,
    "11_extension": 2,
    "12_sandbox": 1,
    "13_finding_code": 2,
    "14_your_loop": 2,
}
STUB = "raise NotImplementedError()"


def wrong(check, mistake):
    return next(w.source for w in WRONG[check] if w.mistake == mistake)


def cheat(check):
    return next(source for target, source in CHEATS.values() if target == check)


#: learner -> {check: the source of its answer cell}; lessons with no answer given are not
#: submitted (fewer notebooks, same proof). "reference" and "untouched" are built apart.
LEARNERS = {
    "own_style": dict(RIGHT),
    "wrong_a": {
        "check_tool_message": wrong("check_tool_message", "empties the result after dumping it"),
        "check_assemble_content": wrong(
            "check_assemble_content",
            "quadratic: the text kept in a dict and rebuilt with + per fragment",
        ),
        "check_may_dispatch": wrong(
            "check_may_dispatch", "a table of the visible cases, by len(chunks)"
        ),
        "check_append_results": wrong(
            "check_append_results", "consumes the calls with tool_calls.pop(0)"
        ),
        "check_repair_verdict": wrong(
            "check_repair_verdict", "ignores the exit code: passed > 0, failed == 0, hashes equal"
        ),
        "check_bounded_prediction": wrong("check_bounded_prediction", "True where an int is asked"),
        "check_stop_predictions": wrong(
            "check_stop_predictions", "a str subclass that equals everything"
        ),
        "check_assemble_calls": wrong("check_assemble_calls", "accepts finish_reason 'length'"),
        "check_result_messages": wrong(
            "check_result_messages", "one user message per result for Anthropic"
        ),
        "check_policy": wrong("check_policy", "substring matching on the joined text"),
        "check_gate_stops": wrong(
            "check_gate_stops", "forgets that the person now denies the first question"
        ),
        "check_head_and_tail": wrong(
            "check_head_and_tail", "quadratic: matches the marker on a slice at every position"
        ),
        "check_compaction": wrong(
            "check_compaction", "removes old results instead of replacing them"
        ),
        "check_apply_edit": wrong("check_apply_edit", "counts non-overlapping matches only"),
        "check_parse_search_replace": wrong(
            "check_parse_search_replace", "a ======= in the replacement ends the block"
        ),
        "check_mcp_to_tool_schema": wrong(
            "check_mcp_to_tool_schema", "drops required: parameters rebuilt from the properties"
        ),
        "check_hook_decision": wrong("check_hook_decision", "garbage on stdout taken as allow"),
        "check_layers": wrong("check_layers", "credits the gate with what only the sandbox stops"),
        "check_system_prompt": wrong("check_system_prompt", "cuts inside a multibyte character"),
        "check_subagent_result": wrong("check_subagent_result", "raises on a child's model_error"),
        "check_ordered_results": wrong("check_ordered_results", "keeps the completion order"),
        "check_rank_chunks": wrong(
            "check_rank_chunks", "raw term frequency, no length normalisation"
        ),
        "check_references_to_result": wrong("check_references_to_result", "leaks absolute paths"),
        "check_my_loop": wrong(
            "check_my_loop", "forgets the assistant message before the tool messages"
        ),
        "check_resolved_rate": wrong(
            "check_resolved_rate", "counts the model's claims: stops with assistant_finished"
        ),
    },
    "wrong_b": {
        "check_repair_verdict": wrong(
            "check_repair_verdict", "parses pytest's text instead of the exit code"
        ),
        "check_bounded_prediction": wrong("check_bounded_prediction", "1.0 where an int is asked"),
        "check_stop_predictions": RIGHT["check_stop_predictions"],
        "check_assemble_calls": wrong(
            "check_assemble_calls", "quadratic: each call's arguments rebuilt with + per fragment"
        ),
        "check_result_messages": wrong(
            "check_result_messages", "a table of the visible cases: at most two results"
        ),
        "check_policy": wrong("check_policy", "ignores what a shell script chains"),
        "check_gate_stops": RIGHT["check_gate_stops"],
        "check_head_and_tail": wrong("check_head_and_tail", "cuts through an earlier marker"),
        "check_compaction": wrong(
            "check_compaction", "replaces the content in the caller's messages"
        ),
    },
    "cheater": {
        **{check: cheat(check) for check, _ in CHEATS.values()},
        "check_may_dispatch": RIGHT["check_may_dispatch"],
    },
    "a_hangs": {"check_assemble_content": HANG, "check_may_dispatch": RIGHT["check_may_dispatch"]},
    "a_kills": {"check_assemble_content": DIES, "check_may_dispatch": RIGHT["check_may_dispatch"]},
}
#: The cells each learner must pass; every other graded cell it submitted must score 0.
PASSES = {
    "own_style": set(RIGHT),
    "wrong_a": set(),
    "wrong_b": {"check_stop_predictions", "check_gate_stops"},
    "cheater": {"check_may_dispatch"},
    "a_hangs": {"check_may_dispatch"},
    "a_kills": {"check_may_dispatch"},
}
#: Seconds per cell (every learner hands in answer and test cells only: no lesson's
#: demonstrations run here), per check outside the kernel (a check cell took up to 6.4 s in
#: `make test`), and for an interrupted kernel to stop. ``a_hangs`` waits out the first.
TIMEOUTS = (20, 10, 3)
#: The grader cheats' learners, by name.
GRADER = {cheat.learner: cheat for cheat in GRADER_CHEATS}
#: What the grader's summary must say of the submissions it could not grade at all (each 0).
REFUSED = {
    "x_bonus_cell": "tampered nbgrader metadata",
    "x_link_to_source": "is a link, not a file",
}


@dataclass
class Course:
    root: Path  # the nbgrader course, graded once
    release: Path  # what nbgrader generate_assignment made: release/<lesson>/<lesson>.ipynb
    autograded: dict  # learner -> lesson -> the notebook as autograde executed it
    student: Path  # what `make student`'s code made, in a fresh folder
    added: list
    kept: list
    summary: object  # what the grading run said (labkit.grading.grade_class.Summary)
    again: object  # the second run over the same course
    before: dict  # what the course and the install held before grading (see fingerprint)
    after: dict  # the same, after both runs
    gradebook_after_first: dict
    canary_calls: list  # what reached a server on this machine's loopback during grading
    marker: str  # in the command line of every process a cheat meant to outlive its kernel
    left_running: list  # processes with the marker, alive after grading


def grade_id(cell):
    return cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")


def outcome(cell) -> tuple:
    """(raised?, everything the cell printed and the error's message)."""
    error = next((o for o in cell.outputs if o.output_type == "error"), None)
    text = "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream")
    return error is not None, text + (f"\n{error.ename}: {error.evalue}" if error else "")


def with_probes(reference):
    """The reference's answer and test cells, with probe cells appended at their end: for each
    exercise, its first wrong answer followed by the test cell, then the reference answer and
    the test cell again. (Every wrong answer meets every check in test_exercises.py.)

    The probes run after the graded cells, so those run exactly as in the reference; nbgrader
    grades only them (the probes carry no nbgrader metadata).
    """
    source = {grade_id(cell): cell.source for cell in reference.cells if grade_id(cell)}
    probes = []
    for exercise in exercises(reference):
        # the visible part: the hidden cases are the instructor's, not in the kernel's sandbox
        test = "\n".join(visible_lines(source[exercise.test_id]))
        probes += [
            new_code_cell(WRONG[exercise.check][0].code(exercise.answer_name)),
            new_code_cell(test, metadata={"probe": ["wrong", exercise.test_id, 0]}),
            new_code_cell(source[exercise.answer_id]),
            new_code_cell(test, metadata={"probe": ["restored", exercise.test_id]}),
        ]
    notebook = graded_cells_only(reference)
    notebook.cells += probes
    return notebook


def submission(release, learner, name):
    """The notebook ``learner`` hands in for lesson ``name``, or None when it hands in none.

    Every learner hands in their answer and test cells only (the untouched edition's, as
    released): the demonstrations are the same for all, and run whole in tests/browser (the
    student edition) and tests/test_package.py (the reference, from the wheel)."""
    if learner == "reference":
        return with_probes(read(NOTEBOOKS_DIR / f"{name}.ipynb"))
    notebook = read(release / name / f"{name}.ipynb")
    if learner == "untouched":
        return graded_cells_only(notebook)
    given = LEARNERS[learner]
    answered = False
    for exercise in exercises(notebook):
        if exercise.check in given:
            source = given[exercise.check].replace("$name", ANSWER_NAMES[exercise.check])
            notebook.cells[exercise.answer_index].source = source
            answered = True
    return graded_cells_only(notebook) if answered else None


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    """nbgrader generates once; one grading run grades the whole class in parallel, each
    learner sandboxed; a second run over the same course follows."""
    grading_sandbox_or_skip()
    missing = [name for name in LESSONS if not (NOTEBOOKS_DIR / f"{name}.ipynb").exists()]
    assert not missing, f"notebooks/ lacks {missing}"
    root, student = tmp_path_factory.mktemp("course"), tmp_path_factory.mktemp("student")
    cell, answer, grace = TIMEOUTS
    lay_out_course(root, NOTEBOOKS_DIR, cell_timeout=cell, answer_timeout=answer,
                   interrupt_grace=grace)  # fmt: skip
    release = generate_edition(root, NOTEBOOKS_DIR, gradebook=True)
    added, kept = update_student_edition(into=student)
    for learner in ("reference", "untouched", *LEARNERS):
        for name in LESSONS:
            notebook = submission(release, learner, name)
            if notebook is not None:
                hand_in(root, learner, name, notebook)
    marker, canary = f"labkit-cheat-{uuid.uuid4().hex}", Canary()
    for cheat in GRADER_CHEATS:
        paths = {
            "course": root,
            "gradebook": root / "gradebook.db",
            "site": Path(sys.prefix).resolve() / "lib" / f"python{sys.version_info[0]}."
            f"{sys.version_info[1]}" / "site-packages",
            "labkit": Path(labkit.__file__).parent,
            "marker": marker,
            "canary_port": canary.port,
            "me": cheat.learner,
        }
        path = hand_in(
            root, cheat.learner, "01_one_file_read", cheat_notebook(release, cheat, paths)
        )
        if cheat.submission == "a link to source/":
            path.unlink()
            path.symlink_to(root / "source" / "01_one_file_read" / "01_one_file_read.ipynb")
        if cheat.submission == "also lesson 02 unanswered":
            unanswered = submission(release, "untouched", "02_streamed_turn")
            hand_in(root, cheat.learner, "02_streamed_turn", graded_cells_only(unanswered))
    before = fingerprint(root)
    try:
        summary = grade_course(root, workers=2)
        first = gradebook_dump(root)
        time.sleep(1)  # what a cheat left running would have acted by now
        again = grade_course(root, workers=2)
    finally:
        canary.close()
    autograded = {
        learner: {
            name: read(path)
            for name in LESSONS
            if (path := root / "autograded" / learner / name / f"{name}.ipynb").exists()
        }
        for learner in ("reference", "untouched", *LEARNERS, *GRADER)
    }
    return Course(root, release, autograded, student, added, kept, summary, again, before,
                  fingerprint(root), first, canary.calls, marker, running_with(marker))  # fmt: skip


@pytest.fixture(scope="module")
def scores(course):
    """(learner, lesson) -> {test cell's grade_id: (score, max score)}, from the gradebook."""
    from nbgrader.api import Gradebook, MissingEntry

    found = {}
    with Gradebook(f"sqlite:///{course.root / 'gradebook.db'}") as gradebook:
        for learner in course.autograded:
            for name in LESSONS:
                try:
                    notebook = gradebook.find_submission_notebook(name, name, learner)
                except MissingEntry:
                    continue
                grades = {g.name: (g.score, g.max_score) for g in notebook.grades}
                if grades:
                    found[learner, name] = grades
    return found


def test_every_learner_gets_exactly_the_scores_their_answers_earn(course, scores):
    checks_by_test = {
        e.test_id: e.check
        for name in LESSONS
        for e in exercises(read(NOTEBOOKS_DIR / f"{name}.ipynb"))
    }
    for learner, given in LEARNERS.items():
        lessons = [name for name in LESSONS if submission(course.release, learner, name)]
        assert lessons, learner
        for name in lessons:
            assert (learner, name) in scores, f"{learner}'s {name} was not graded (dropped?)"
            for test_id, (score, top) in scores[learner, name].items():
                check = checks_by_test[test_id]
                wanted = top if check in PASSES[learner] else 0
                assert check in given or score == 0, (learner, name, test_id, score)
                assert score == wanted, (learner, name, test_id, score, top)


@pytest.mark.parametrize(
    "learner, marker, error, feedback",
    [
        ("a_hangs", "SIG_IGN", "CellTimeoutError", "did not finish within"),
        ("a_kills", "os._exit", "DeadKernelError", "stopped unexpectedly"),
    ],
)
def test_a_hung_or_killed_kernel_scores_zero_without_dropping_the_notebook_or_learners_after_it(
    course, learner, marker, error, feedback
):
    notebook = course.autograded[learner]["02_streamed_turn"]
    answer = next(
        cell for cell in notebook.cells if nbgrader_role(cell) == "answer" and marker in cell.source
    )
    raised, text = outcome(answer)
    assert raised and error in text, text
    test = next(cell for cell in notebook.cells if nbgrader_role(cell) == "test")
    assert feedback in outcome(test)[1], outcome(test)[1]
    assert f"{learner}/02_streamed_turn" in course.summary.graded  # graded, not failed


def test_each_cheat_is_graded_outside_the_kernel_and_scores_zero(course, scores):
    for what, (check, _) in CHEATS.items():
        name, exercise = next(
            (name, e)
            for name in LESSONS
            for e in exercises(read(NOTEBOOKS_DIR / f"{name}.ipynb"))
            if e.check == check
        )
        score, _ = scores["cheater", name][exercise.test_id]
        assert score == 0, what
        cell = next(
            cell
            for cell in course.autograded["cheater"][name].cells
            if grade_id(cell) == exercise.test_id
        )
        raised, text = outcome(cell)
        assert raised and "Graded outside the notebook's kernel" in text, (what, text)


def test_the_grading_time_per_learner_per_lesson_is_reported(course, capsys):
    with capsys.disabled():
        print("\n" + "\n".join(course.summary.lines()))
    assert course.summary.graded and course.summary.isolated


def test_every_lesson_has_valid_graded_exercises_using_every_check():
    paths = [NOTEBOOKS_DIR / f"{name}.ipynb" for name in LESSONS]
    assert course_problems(paths) == {str(path): [] for path in paths}
    found = {path.stem: exercises(read(path)) for path in paths}
    for name, lesson in found.items():
        assert len(lesson) == EXERCISES[name], name
    used = {exercise.check for lesson in found.values() for exercise in lesson}
    assert used == set(exercises_module.__all__)


def test_the_untouched_student_edition_scores_zero_on_every_test_cell(scores):
    for name in LESSONS:
        grades = scores["untouched", name]
        assert grades and all(score == 0 for score, _ in grades.values()), (name, grades)


def test_the_reference_notebooks_score_full_marks_on_every_test_cell(scores):
    for name in LESSONS:
        grades = scores["reference", name]
        assert grades and all(score == top > 0 for score, top in grades.values()), (name, grades)


def test_the_student_edition_is_the_reference_with_answers_and_hidden_tests_taken_out(course):
    """So the autograded reference run is the student edition with the reference answers put
    back."""
    for name in LESSONS:
        reference = read(NOTEBOOKS_DIR / f"{name}.ipynb").cells
        student = read(course.release / name / f"{name}.ipynb").cells
        assert len(student) == len(reference), name
        for mine, theirs in zip(student, reference):
            role = nbgrader_role(theirs)
            if role == "answer":
                before, rest = theirs.source.split(BEGIN)
                solution, after = rest.split(END)
                assert mine.source.startswith(before) and mine.source.endswith(after)
                assert STUB in mine.source and solution.strip() not in mine.source
            elif role == "test":
                assert mine.source.splitlines() == visible_lines(theirs.source), name
            else:
                assert mine.source == theirs.source, name


def visible_lines(source):
    """The lines of a test cell outside its hidden tests."""
    lines, hidden = [], False
    for line in source.splitlines():
        if line.strip() in (HIDDEN_BEGIN, HIDDEN_END):
            hidden = line.strip() == HIDDEN_BEGIN
        elif not hidden:
            lines.append(line)
    return lines


def test_every_test_cell_fails_on_the_unanswered_stub_with_readable_feedback(course):
    for name, notebook in course.autograded["untouched"].items():
        tests = [cell for cell in notebook.cells if nbgrader_role(cell) == "test"]
        assert len(tests) == EXERCISES[name], name
        for cell in tests:
            raised, text = outcome(cell)
            assert raised and "Not yet." in text, (name, cell.source, text)
            assert f"NotImplementedError: {STUB_ADVICE}" in text or "not answered yet" in text, text


def probes(course, kind):
    return [
        (name, cell.metadata["probe"], cell)
        for name, notebook in course.autograded["reference"].items()
        for cell in notebook.cells
        if cell.metadata.get("probe", [None])[0] == kind
    ]


def test_every_test_cell_fails_on_a_wrong_answer_and_names_the_mistake(course):
    tried = set()
    for name, (_, test_id, number), cell in probes(course, "wrong"):
        exercise = next(
            e for e in exercises(read(NOTEBOOKS_DIR / f"{name}.ipynb")) if e.test_id == test_id
        )
        mistake = WRONG[exercise.check][number]
        raised, text = outcome(cell)
        assert raised, (name, test_id, mistake.mistake, text)
        assert mistake.names in text, (name, test_id, mistake.mistake, text)
        tried.add(test_id)
    every_test = {
        e.test_id for name in LESSONS for e in exercises(read(NOTEBOOKS_DIR / f"{name}.ipynb"))
    }
    assert tried == every_test


def test_every_test_cell_passes_again_with_the_reference_answer_restored(course):
    restored = probes(course, "restored")
    assert len(restored) == sum(EXERCISES.values())
    for name, (_, test_id), cell in restored:
        raised, text = outcome(cell)
        assert not raised and "All " in text, (name, test_id, text)


def test_the_edition_labkit_carries_is_what_nbgrader_generates_now(course):
    """edition/ (what `make student` and `python -m labkit lessons` copy, and the wheel carries)
    is nbgrader's student edition of notebooks/ as they are: run `make edition` after a change."""
    assert sorted(path.name for path in EDITION_DIR.glob("*.ipynb")) == [
        f"{name}.ipynb" for name in LESSONS
    ], "edition/ lacks a lesson or has one too many: run `make edition`"
    for name in LESSONS:
        assert (EDITION_DIR / f"{name}.ipynb").read_bytes() == (
            course.release / name / f"{name}.ipynb"
        ).read_bytes(), f"edition/{name}.ipynb is stale: run `make edition`"
    assert course.added == [f"{name}.ipynb" for name in LESSONS] and course.kept == []
    for name in LESSONS:
        assert (course.student / f"{name}.ipynb").read_bytes() == (
            EDITION_DIR / f"{name}.ipynb"
        ).read_bytes()


# --- cheats aimed at the grader ----------------------------------------------------------


def test_every_grader_cheat_scores_zero_for_its_author(course, scores):
    for learner, cheat in GRADER.items():
        lessons = ["01_one_file_read"] + (
            ["02_streamed_turn"] if cheat.submission == "also lesson 02 unanswered" else []
        )
        for name in lessons:
            grades = scores.get((learner, name))
            assert grades, f"{learner} ({cheat.what}): {name} has no grade at all"
            assert all(score == 0 for score, _ in grades.values()), (learner, cheat.what, grades)


def test_each_grader_cheat_ran_and_was_stopped_by_the_sandbox(course):
    """What each cheat printed, from inside: the gradebook absent, the files read-only, no
    network, no other process, no memory, no room. (So each cheat was really tried.)"""
    for learner, cheat in GRADER.items():
        if not cheat.evidence:
            continue
        notebook = course.autograded[learner]["01_one_file_read"]
        role = "test" if cheat.where == "feedback" else None
        cells = [c for c in notebook.cells if c.cell_type == "code" and nbgrader_role(c) == role]
        said = "\n".join(outcome(cell)[1] for cell in cells)
        assert any(phrase in said for phrase in cheat.evidence), (learner, cheat.what, said[:2000])


def test_what_cannot_be_graded_at_all_is_refused_by_name_and_scores_zero(course):
    for learner, reason in REFUSED.items():
        assert reason in course.summary.failed[f"{learner}/01_one_file_read"], learner
    assert set(course.summary.failed) == {f"{learner}/01_one_file_read" for learner in REFUSED}


def test_no_cheat_changed_the_course_the_gradebook_or_the_installed_packages(course):
    before, after = course.before, course.after
    for what in before:
        assert after[what] == before[what], f"{what} changed during grading"
    assert before["triggers"] == []


def test_no_process_a_cheat_started_outlives_grading(course):
    assert course.left_running == [], "a cheat's process outlived its sandbox"


def test_no_cheat_reached_a_server_on_the_grading_machine(course):
    assert course.canary_calls == []


def test_the_next_run_of_the_same_course_grades_nothing_again_and_changes_nothing(course):
    again = course.again
    assert again.graded == [] and again.failed == {} and again.not_graded == {}
    done = len(course.summary.graded) + len(course.summary.failed)
    assert len(again.skipped) == done
    assert gradebook_dump(course.root) == course.gradebook_after_first

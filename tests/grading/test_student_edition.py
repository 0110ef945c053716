"""nbgrader end to end, on the course's own notebooks: a graded class.

nbgrader generates the student edition; one ``nbgrader autograde`` per course copy grades
a class of learners, and every score is asserted from the gradebook:

- ``reference``: the reference notebooks (full marks), with probe cells appended: each
  wrong answer of ``tests/answers.py`` followed by its test cell, then the reference
  answer and the test cell again, run in the kernel (the probes are not graded);
- ``untouched``: the student edition as released (0 on every test cell);
- ``own_style``: right answers written differently from the reference (full marks);
- ``wrong_a``, ``wrong_b``: the wrong answers the issue lists (0 on those cells);
- ``cheater``: each cheat of ``CHEATS`` (0 on those cells, full marks on the honest one);
- ``a_hangs``: an answer cell that loops forever ignoring SIGINT (0 on that cell, full
  marks on the next one, and the learners after it in the same run still graded);
- ``a_kills``: an answer cell that kills its kernel with ``os._exit`` (the same).

The student edition is shown to be the reference with only the answers (and hidden
tests) taken out, so the reference run is the student edition with its answers restored.
"""

import copy
import shutil
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import nbformat
import pytest
from answers import ANSWER_NAMES, CHEATS, DIES, HANG, RIGHT, WRONG
from nbformat.v4 import new_code_cell

from labkit import exercises as exercises_module
from labkit.grading.conventions import (
    BEGIN,
    END,
    HIDDEN_BEGIN,
    HIDDEN_END,
    NOTEBOOKS_DIR,
    course_problems,
    exercises,
    lay_out_course,
    nbgrader_role,
)
from labkit.grading.edition import generate_edition, nbgrader, update_student_edition
from labkit.grading.feedback import STUB_ADVICE

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
#: Two course copies, autograded at the same time (one nbgrader run each, learners in order).
GROUPS = {
    "a": ("reference", "untouched", "own_style"),
    "b": ("a_hangs", "a_kills", "cheater", "wrong_a", "wrong_b"),
}
#: Seconds per cell, per check outside the kernel, and for an interrupted kernel to stop, per
#: group: group b hands in answer and test cells only (each a check of a second or two alone),
#: so a hang there is cut shorter; group a's untouched edition runs whole lessons. A check
#: cell took up to 6.4 s in `make test` (three workers on two cores): group b's limits leave
#: it about twice that.
TIMEOUTS = {"a": (20, 10, 5), "b": (12, 9, 2)}


@dataclass
class Course:
    release: Path  # what nbgrader generate_assignment made: release/<lesson>/<lesson>.ipynb
    roots: dict  # learner -> its nbgrader course directory
    autograded: dict  # learner -> lesson -> the notebook as autograde executed it
    student: Path  # what `make student`'s code made, in a fresh folder
    added: list
    kept: list
    seconds: dict  # group -> (seconds autograde took, notebooks graded)


def read(path):
    return nbformat.read(path, as_version=4)


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
        test = source[exercise.test_id]
        probes += [
            new_code_cell(WRONG[exercise.check][0].code(exercise.answer_name)),
            new_code_cell(test, metadata={"probe": ["wrong", exercise.test_id, 0]}),
            new_code_cell(source[exercise.answer_id]),
            new_code_cell(test, metadata={"probe": ["restored", exercise.test_id]}),
        ]
    notebook = graded_cells_only(reference)
    notebook.cells += probes
    return notebook


def graded_cells_only(notebook):
    """The notebook as a learner who hands in only their answers and the test cells would:
    the lesson's other cells (demonstrations, text) left out. Answer cells are self-contained
    and test cells import their check, so grading is the same; it is just quicker."""
    trimmed = copy.deepcopy(notebook)
    trimmed.cells = [cell for cell in trimmed.cells if nbgrader_role(cell) in ("answer", "test")]
    return trimmed


def submission(release, learner, name):
    """The notebook ``learner`` hands in for lesson ``name``, or None when it hands in none.

    The untouched student edition goes in whole (it shows the lessons run with no answer
    given); the other learners hand in their answer and test cells only."""
    if learner == "reference":
        return with_probes(read(NOTEBOOKS_DIR / f"{name}.ipynb"))
    notebook = read(release / name / f"{name}.ipynb")
    if learner == "untouched":
        return notebook
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
    """nbgrader generates once; two copies of that course are autograded at the same time,
    one nbgrader run each, while `make student`'s code runs here."""
    missing = [name for name in LESSONS if not (NOTEBOOKS_DIR / f"{name}.ipynb").exists()]
    assert not missing, f"notebooks/ lacks {missing}"
    base, student = tmp_path_factory.mktemp("course"), tmp_path_factory.mktemp("student")
    lay_out_course(base)
    with ThreadPoolExecutor(2) as pool:  # the threads only wait on nbgrader's processes
        generated = pool.submit(generate_edition, base, NOTEBOOKS_DIR, gradebook=True)
        added, kept = update_student_edition(into=student, notebooks_dir=NOTEBOOKS_DIR)
        generated.result()
        group_roots, roots, counts = {}, {}, {}
        for group, learners in GROUPS.items():
            root = group_roots[group] = base.parent / f"{base.name}-{group}"
            shutil.copytree(base, root)
            (root / "nbgrader_config.py").unlink()
            cell, answer, grace = TIMEOUTS[group]
            lay_out_course(root, cell_timeout=cell, answer_timeout=answer, interrupt_grace=grace)
            counts[group] = 0
            for learner in learners:
                roots[learner] = root
                for name in LESSONS:
                    notebook = submission(base / "release", learner, name)
                    if notebook is not None:
                        (root / "submitted" / learner / name).mkdir(parents=True)
                        nbformat.write(
                            notebook, root / "submitted" / learner / name / f"{name}.ipynb"
                        )
                        counts[group] += 1

        def autograde(group):
            start = time.perf_counter()
            # minutes, not hours: a grading run that hangs must fail this test, not stall CI
            nbgrader(group_roots[group], "autograde", "*", timeout=600)
            return time.perf_counter() - start

        seconds = dict(zip(GROUPS, pool.map(autograde, GROUPS)))
    autograded = {
        learner: {
            name: read(path)
            for name in LESSONS
            if (path := root / "autograded" / learner / name / f"{name}.ipynb").exists()
        }
        for learner, root in roots.items()
    }
    return Course(
        base / "release",
        roots,
        autograded,
        student,
        added,
        kept,
        {group: (seconds[group], counts[group]) for group in GROUPS},
    )


@pytest.fixture(scope="module")
def scores(course):
    """(learner, lesson) -> {test cell's grade_id: (score, max score)}, from the gradebook."""
    from nbgrader.api import Gradebook, MissingEntry

    found = {}
    for learner, root in course.roots.items():
        with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gradebook:
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
    later = [name for name in GROUPS["b"] if name > learner]
    assert later and all(course.autograded[name] for name in later)


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


def test_autograde_time_per_learner_per_lesson_is_reported(course, capsys):
    with capsys.disabled():
        for group, (seconds, notebooks) in course.seconds.items():
            print(
                f"\nautograde group {group}: {seconds:.0f} s for {notebooks} notebooks, "
                f"{seconds / notebooks:.1f} s per learner per lesson"
            )
    assert all(notebooks for _, notebooks in course.seconds.values())


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


def test_the_untouched_student_edition_runs_with_errors_only_in_test_cells(course):
    """Lesson 05's unanswered predictions included: the demonstrations after them all run."""
    for name, notebook in course.autograded["untouched"].items():
        for index, cell in enumerate(notebook.cells):
            raised, text = outcome(cell) if cell.cell_type == "code" else (False, "")
            if raised:
                assert nbgrader_role(cell) == "test", (name, index, text)


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


def test_make_student_makes_the_same_edition_nbgrader_autograded(course):
    assert course.added == [f"{name}.ipynb" for name in LESSONS] and course.kept == []
    for name in LESSONS:
        made = read(course.student / f"{name}.ipynb")
        graded = read(course.release / name / f"{name}.ipynb")
        assert [(c.source, c.metadata) for c in made.cells] == [
            (c.source, c.metadata) for c in graded.cells
        ]

"""The program a learner's answer runs in is the module file answer_process.py, started as
``python -I -S path``, standard library only; what both sides must agree on (the exceptions a
tool may raise, a test run's summary) is defined once."""

import ast
import sys
from pathlib import Path

from labkit.grading import answer_process, isolated
from labkit.grading.isolated import run_answer, run_counts_value, tools_value
from labkit.harness.sample import Checks

WHERE = """
import importlib.util, os, sys
def where():
    return [sys.flags.isolated, sys.flags.no_site, sys.argv[0], sys.modules["__main__"].__file__,
            importlib.util.find_spec("labkit") is None,
            any(os.path.isfile(os.path.join(p or ".", "isolated.py")) for p in sys.path)]
"""


def test_the_answer_runs_in_the_module_file_isolated_without_site_packages():
    [outcome] = run_answer(WHERE, "where", [[]])
    program = str(Path(answer_process.__file__).resolve())
    assert outcome.raised is None, outcome.raised
    isolated_mode, no_site, argv0, main_file, no_labkit, grading_on_path = outcome.returned
    assert (isolated_mode, no_site, no_labkit, grading_on_path) == (1, 1, True, False)
    assert str(Path(argv0).resolve()) == str(Path(main_file).resolve()) == program
    assert isolated.ANSWER_PROCESS.resolve() == Path(program)


def test_the_answer_process_imports_the_standard_library_only():
    tree = ast.parse(Path(answer_process.__file__).read_text(encoding="utf-8"))
    imported = {
        alias.name for n in ast.walk(tree) if isinstance(n, ast.Import) for alias in n.names
    }
    imported |= {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module} - {
        "__future__"
    }
    assert not [n for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.level]
    assert imported and imported <= sys.stdlib_module_names, imported - sys.stdlib_module_names


CATCHES = """
def caught(tools):
    names = []
    for number in range(10):
        try:
            tools.invoke("fail", {"n": number})
        except Exception as exc:
            names.append([type(exc).__name__, str(exc)])
    return names
"""


def test_the_grader_and_the_answer_process_agree_on_the_exceptions_a_tool_raises():
    """One list, in the answer's program: the grader imports it, and every name on it arrives
    in the answer's process as that exception; a name off it arrives as RuntimeError."""
    assert isolated.RAISABLE is answer_process.RAISABLE
    assert set(answer_process.ERRORS) == set(isolated.RAISABLE)
    names = [*isolated.RAISABLE, "SystemExit", "KeyboardInterrupt"]
    assert len(names) == 10 and len(isolated.RAISABLE) == 8  # ConnectionError: lesson 14's model
    script = [
        ["fail", {"n": number}, {"raise": name, "message": f"raised {name}"}]
        for number, name in enumerate(names)
    ]
    [outcome] = run_answer(CATCHES, "caught", [[tools_value(script)]])
    assert outcome.raised is None, outcome.raised
    arrived = [name for name, _ in outcome.returned]
    assert arrived == [*isolated.RAISABLE, "RuntimeError", "RuntimeError"]
    assert outcome.returned[0] == ["ValueError", "raised ValueError"]


COUNTS = """
def counts(after):
    try:
        after.passed = 99
        changed = "changed"
    except AttributeError as exc:
        changed = str(exc)
    return [after.exit_code, after.passed, after.failed, after.summary, repr(after), changed]
"""


def test_a_test_runs_counts_arrive_read_only_with_labkits_own_summary_and_repr():
    cases = [(1, 3, 1, "1 failed, 3 passed in 0.04s"), (5, 0, 0, "no tests ran"), (0, 4, 0, "")]
    outcomes = run_answer(COUNTS, "counts", [[run_counts_value(*case)] for case in cases])
    got = [outcome.returned for outcome in outcomes]
    assert [summary for *_, summary, _, _ in got] == ["1 failed, 3 passed", "0 passed", "4 passed"]
    for case, returned in zip(cases, got):
        labkit_own = Checks(*case)
        assert returned[:5] == [*case[:3], labkit_own.summary, repr(labkit_own)]
        assert returned[5] == "cannot assign to field 'passed': Checks is read-only"
    assert got[0][4] == (
        "Checks(exit_code=1, passed=3, failed=1, output='1 failed, 3 passed in 0.04s')"
    )

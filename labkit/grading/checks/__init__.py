"""The checks behind the lessons' graded exercises: one function per exercise, one module per
lesson, and :data:`CHECKS`, every check by name.

A notebook's test cell calls a check with the learner's answer. The check takes the
source of the answer cell (not the function object) and runs it in a fresh Python
process (:mod:`labkit.grading.isolated`) on fixed cases, on cases drawn afresh from a
random seed and, for linear-time exercises, on two stream sizes to see how its time
grows. Only after that process ended are its outputs compared, in the grader, with the
expected values, which come from small references in the lesson's module or are written
out by hand (never from the harness's ``turns``, ``loop``, ``tools``, ``gate`` or
``budget``: a bug there must not become the right answer). The first miss is explained
and raises ``AssertionError``, so nbgrader scores the cell 0. ``hidden=True`` (used in
the test cells' hidden part) adds more cases.

- ``common.py``: what several lessons' checks share (the learner's answer, drawn values,
  the tool message and its problems);
- ``lessonNN_<notebook>.py``: one lesson's checks and their references, cases and
  explanations, and nothing else; its ``__all__`` lists its checks.

A new lesson's checks: write ``lessonNN_<notebook>.py`` (a module of this package that
imports what it shares from ``common`` and declares its checks in ``__all__``), then add
its name to the import below and to :data:`LESSONS`. ``labkit.exercises``, where the test
cells import the checks from, ``conventions.py``, which knows a test cell's check by its
name, and :func:`grade`, which autograding runs, all read :data:`CHECKS`; nothing else
changes.
"""

from __future__ import annotations

import contextlib
import io

from ..feedback import Answer, CheckFailed
from . import (
    lesson01_one_file_read,
    lesson02_streamed_turn,
    lesson03_tool_results,
    lesson04_repair_and_verify,
    lesson05_failure_cases,
    lesson06_providers,
    lesson07_permissions,
    lesson08_context_budget,
    lesson09_toolkit,
    lesson10_ground_state,
    lesson11_extension,
    lesson12_sandbox,
    lesson13_finding_code,
    lesson14_your_loop,
)
from .common import HiddenCasesMissing

#: The lessons' check modules, in course order.
LESSONS = (
    lesson01_one_file_read,
    lesson02_streamed_turn,
    lesson03_tool_results,
    lesson04_repair_and_verify,
    lesson05_failure_cases,
    lesson06_providers,
    lesson07_permissions,
    lesson08_context_budget,
    lesson09_toolkit,
    lesson10_ground_state,
    lesson11_extension,
    lesson12_sandbox,
    lesson13_finding_code,
    lesson14_your_loop,
)
#: Every check by name, lesson by lesson, as each module's ``__all__`` declares them.
CHECKS = {name: getattr(lesson, name) for lesson in LESSONS for name in lesson.__all__}


def grade(check: str, source: str, name: str, *, hidden: bool = False) -> tuple:
    """Run the check named ``check`` on an answer cell's source; return ``(passed, feedback
    text)``.

    Every way the check can end without passing is a failed verdict, never an error that
    escapes: autograding must go on to the next cell and the next learner. One exception:
    :class:`HiddenCasesMissing` (grading without the instructor's package) stops grading."""
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        try:
            CHECKS[check](Answer(source, name), hidden=hidden)
        except CheckFailed as exc:
            return False, printed.getvalue() + f"AssertionError: {exc}\n"
        except HiddenCasesMissing:
            raise  # the grading machine lacks the instructor's package: no verdict at all
        except Exception as exc:  # noqa: BLE001 (whatever an answer did to the check)
            return False, (
                printed.getvalue() + f"AssertionError: the check could not finish "
                f"on this answer ({type(exc).__name__}: {str(exc)[:300]})\n"
            )
    return True, printed.getvalue()

"""Try a learner's function on cases and explain, kindly and precisely, the first miss.

An exercise's check is a list of :class:`Case` objects and a ``problem`` function
that says what is wrong with an answer (or ``None`` when it is right). ``run_cases``
calls the learner's function on each case, prints what was tried, what came back,
what was expected and a hint, and raises ``CheckFailed`` (an ``AssertionError``) with
the same short message, so that nbgrader scores the test cell 0. Expected values
always come from the course's own code or are written by hand, never from the
learner's function.
"""

from __future__ import annotations

import traceback
from dataclasses import dataclass
from typing import Any, Callable

#: What a learner sees when they run a check before writing any code.
STUB_ADVICE = "replace the `raise NotImplementedError()` line with your code"


class CheckFailed(AssertionError):
    """An exercise's answer missed a case. In a notebook it shows as one line, not a traceback:
    the feedback printed just before it says what went wrong."""

    def _render_traceback_(self):  # IPython calls this instead of formatting a traceback
        return [f"\x1b[31mAssertionError\x1b[39m: {self}"]


@dataclass(frozen=True)
class Case:
    """One try of the learner's function.

    ``make`` returns fresh arguments each time it is called, so a function that
    changes its input cannot spoil the expected value. ``shown`` says in words what
    the arguments are, for inputs too long to print.
    """

    label: str
    make: Callable[[], tuple]
    expected: Any
    shown: str = ""
    hint: str = ""


def run_cases(function, cases, problem, *, what: str, error_hints: dict | None = None,
              observe=None) -> None:
    """Run ``function`` on every case; print a success line, or explain the first miss and raise.

    ``problem(got, case, arguments)`` returns a sentence naming the mistake, or None.
    ``error_hints`` maps exception types the learner's code may raise to advice.
    ``observe(got, arguments)`` picks what to show as "got" (default: the return value).
    """
    if not callable(function):
        fail(f"{what} should be a function, but it is {show(function, 80)}",
             hint="define it with `def` in the answer cell above and run that cell first")
    name = getattr(function, "__name__", "your function")
    for number, case in enumerate(cases, 1):
        arguments = case.make()
        heading = f"{name}: case {number} of {len(cases)}, {case.label}"
        tried = case.shown or f"{name}({', '.join(show(a, 200) for a in arguments)})"
        try:
            got, error = function(*arguments), None
        except Exception as exc:  # the learner's exception becomes feedback, not a traceback
            got, error = None, exc
        if error is not None:  # raised outside the except block, so no chained traceback
            report(heading, tried=tried, expected=case.expected,
                   mistake=describe_exception(error, function),
                   hint=None if isinstance(error, NotImplementedError)
                   else _error_hint(error, error_hints) or case.hint)
            fail(f"{heading}: your function raised {type(error).__name__}", printed=True)
        mistake = problem(got, case, arguments)
        if mistake:
            shown = observe(got, arguments) if observe else got
            report(heading, tried=tried, got=shown, expected=case.expected, mistake=mistake,
                   hint=case.hint)
            fail(f"{heading}: {mistake}", printed=True)
    print(f"All {len(cases)} cases passed: {'; '.join(case.label for case in cases)}.")


def report(heading, *, tried=None, got=..., expected=..., mistake=None, hint=None) -> None:
    """Print one miss: what was tried, what came back, what was expected, and a hint."""
    lines = [f"Not yet. {heading}"]
    if tried:
        lines.append(f"  tried:    {tried}")
    if got is not ...:
        lines.append(f"  got:      {show(got)}")
    if expected is not ...:
        lines.append(f"  expected: {show(expected)}")
    if mistake:
        lines.append(f"  problem:  {mistake}")
    if hint:
        lines.append(f"  hint:     {hint}")
    print("\n".join(lines))


def fail(message: str, *, hint: str | None = None, printed: bool = False):
    """Raise the AssertionError that scores the cell 0 (printing the message unless done)."""
    if not printed:
        report(message, hint=hint)
    raise CheckFailed(message)


def describe_exception(exc: BaseException, function=None) -> str:
    """Say which exception the learner's code raised, and on which of its lines."""
    if isinstance(exc, NotImplementedError):
        return f"your function raised NotImplementedError: {STUB_ADVICE}"
    text = f"your function raised {type(exc).__name__}"
    if str(exc):
        text += f": {str(exc)[:300]}"
    where = _learner_line(exc, function)
    return f"{text} (at `{where}`)" if where else text


def show(value, limit: int = 300) -> str:
    """``repr`` of a value, shortened in the middle when it is long."""
    text = repr(value)
    if len(text) <= limit:
        return text
    keep = (limit - 5) // 2
    return f"{text[:keep]} ... {text[-keep:]} ({len(text):,} characters)"


def _error_hint(exc: BaseException, hints: dict | None) -> str | None:
    for kind, hint in (hints or {}).items():
        if isinstance(exc, kind):
            return hint
    return None


def _learner_line(exc: BaseException, function) -> str | None:
    """The innermost line of the learner's own code in the traceback, if it can be found."""
    code = getattr(function, "__code__", None)
    frames = traceback.extract_tb(exc.__traceback__)
    mine = [f for f in frames if code is not None and f.filename == code.co_filename]
    frame = (mine or frames[-1:] or [None])[-1]
    return frame.line.strip() if frame is not None and frame.line else None

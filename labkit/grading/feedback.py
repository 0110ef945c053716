"""Try a learner's answer on cases and explain, kindly and precisely, the first miss.

An exercise's check is a list of :class:`Case` objects and a ``problem`` function
that says what is wrong with an answer (or ``None`` when it is right). ``run_cases``
runs the answer on every case in a fresh process (:mod:`labkit.grading.isolated`), then, here,
prints what was tried, what came back, what was expected, where the two first differ (for
messages, the first field, with both values: :mod:`labkit.grading.difference`) and a hint
about that difference, and raises
``CheckFailed`` (an ``AssertionError``) with the same short message, so that nbgrader
scores the test cell 0. Expected values never come from the learner's code.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..harness.words import counted
from .difference import difference_line
from .isolated import AnswerError, TimedInputs, run_answer, same, time_answer, unchanged

#: What a learner sees when they run a check before writing any code.
STUB_ADVICE = "replace the `raise NotImplementedError()` line with your code"
#: How much faster than a linear reference's an answer's time may grow with its input.
MAX_GROWTH = 2.0
#: How many times a growth over the limit is measured before the answer fails.
MEASUREMENTS = 3


class CheckFailed(AssertionError):
    """An exercise's answer missed a case. In a notebook it shows as one line, not a traceback:
    the feedback printed just before it says what went wrong."""

    def _render_traceback_(self):  # IPython calls this instead of formatting a traceback
        return [f"\x1b[31mAssertionError\x1b[39m: {self}"]


@dataclass(frozen=True)
class Miss:
    """What a check's ``problem`` found, with a hint about that very mistake.

    A ``problem`` that returns a plain sentence gets the case's own hint beside it (what
    makes the case tricky), which suits "the value differs"; one that has found what the
    answer did returns a ``Miss`` whose ``hint`` (None: none) replaces the case's, so the
    hint is about the difference found, never about another rule."""

    text: str
    hint: str | None = None
    #: what to show as "got" and "expected" instead of the returned and the expected values,
    #: when the mistake is elsewhere: an input afterwards, beside what it was.
    compared: tuple | None = None


def changed_input(
    what: str, after, before, advice: str = "", hint: str | None = None, *, they: bool = False
) -> Miss:
    """A miss for an input the answer changed (``what``: "the chunks"), shown as it was left
    ("got") beside as it was given ("expected"); ``advice`` ends the sentence."""
    given = "they were" if they else "it was"
    return Miss(
        f"your function changed {what} it was given (got: {what} afterwards; expected: as "
        f"{given} given){advice}",
        hint,
        compared=(after, before),
    )


@dataclass(frozen=True)
class Answer:
    """A learner's answer as the check runs it: the answer cell's source and the name it defines."""

    source: str
    name: str


@dataclass(frozen=True)
class Case:
    """One try of the learner's function.

    ``arguments`` is plain data (see :mod:`labkit.grading.isolated` for the two special values,
    a ``Checks`` and a tools object): the answer gets its own copy in its own process,
    so whatever it changes, these stay as they were. ``shown`` says in words what the
    arguments are, for inputs too long to print.
    """

    label: str
    arguments: list
    expected: Any
    shown: str = ""
    hint: str = ""
    raises: str | None = None  # the name of the exception a right answer lets out, if any


def run_cases(
    answer: Answer,
    cases,
    problem,
    *,
    what: str,
    error_hints: dict | None = None,
    observe=None,
    conversation: bool = False,
    brief=None,
) -> None:
    """Run the answer on every case in a fresh process; print a success line, or explain the
    first miss and raise.

    ``problem(got, case, outcome)`` returns a sentence naming the mistake, or None.
    ``error_hints`` maps names of exception types the learner's code may raise to advice.
    ``observe(got, outcome)`` picks what to show as "got" (default: the return value).
    ``brief(value)``, if given, shows both "got" and "expected" in short (long values).
    """
    try:
        outcomes = run_answer(
            answer.source,
            answer.name,
            [case.arguments for case in cases],
            conversation=conversation,
        )
    except AnswerError as exc:
        fail(f"{what}: {exc}", hint=None)
    name = answer.name
    for number, (case, outcome) in enumerate(zip(cases, outcomes), 1):
        heading = f"{name}: case {number} of {len(cases)}, {case.label}"
        tried = case.shown or f"{name}({', '.join(show(a, 200) for a in case.arguments)})"
        if case.raises is not None:
            if outcome.raised is None or outcome.raised.type != case.raises:
                what_happened = (
                    "returned normally"
                    if outcome.raised is None
                    else f"raised {outcome.raised.type}"
                )
                report(
                    heading,
                    tried=tried,
                    mistake=f"your function {what_happened}, but here "
                    f"{case.raises} must come out of it",
                    hint=case.hint,
                )
                fail(f"{heading}: {case.raises} must come out of your function", printed=True)
            continue
        if outcome.raised is not None:
            error = outcome.raised
            report(
                heading,
                tried=tried,
                expected=case.expected,
                mistake=describe_exception(error),
                hint=None
                if error.type == "NotImplementedError"
                else _error_hint(error, error_hints) or case.hint,
            )
            fail(f"{heading}: your function raised {error.type}", printed=True)
        mistake = problem(outcome.returned, case, outcome)
        if not mistake and not unchanged(outcome.arguments_at_end, outcome.arguments):
            mistake = Miss(
                "after returning, your function still changed what this call was given "
                "(a later call changed it): keep no reference to a call's arguments",
                compared=(outcome.arguments_at_end, outcome.arguments),
            )
        if mistake:
            text, hint = (
                (mistake.text, mistake.hint) if isinstance(mistake, Miss) else (mistake, case.hint)
            )
            if isinstance(mistake, Miss) and mistake.compared is not None:
                observed, wanted = mistake.compared
            else:
                observed = observe(outcome.returned, outcome) if observe else outcome.returned
                wanted = case.expected
                if same(observed, wanted) and not unchanged(outcome.arguments, case.arguments):
                    # the value was right: the difference is in what the answer was given
                    observed, wanted = outcome.arguments, case.arguments
                    text += " (got: what your function was given, afterwards; expected: as given)"
            shown, expected = observed, wanted
            if brief:
                shown, expected = brief(shown), brief(expected)
            report(
                heading,
                tried=tried,
                got=shown,
                expected=expected,
                differs=difference_line(observed, wanted),
                mistake=text,
                hint=hint,
            )
            fail(f"{heading}: {text}", printed=True)
    fixed = [case.label for case in cases if not case.label.startswith("drawn case")]
    drawn = len(cases) - len(fixed)
    print(
        f"All {counted(len(cases), 'case')} passed: {'; '.join(fixed)}"
        + (f"; and {drawn} cases drawn afresh for this run." if drawn else ".")
    )


def check_linear_time(
    answer: Answer,
    reference: tuple,
    inputs: dict,
    expected,
    *,
    what: str,
    unit: str,
    hint: str,
    min_seconds: float = 0.0,
) -> None:
    """Fail when the answer's time grows much faster than a linear reference's.

    ``inputs`` maps two sizes to lists of argument lists (distinct inputs of each size);
    ``expected(arguments)`` is what a right answer returns for one of them. Both the
    answer and ``reference`` (``(source, name)`` of a linear function) run in fresh
    processes whose CPU time is read from outside; each size's least time per call counts
    (a call quicker than ``min_seconds`` is repeated). Only growth is compared, never
    absolute times, so a slow or busy machine passes a right answer and fails a quadratic
    one alike. A growth just over the limit (less than twice it) is measured again, up to
    ``MEASUREMENTS`` times, and fails only if it stays over: a burst of load on a shared
    machine can slow one measurement, not all of them, while a quadratic answer is over
    the limit every time (and most are far over it at once).
    """
    inputs = TimedInputs(inputs)  # encoded once for every process timed on them
    small, large = sorted(inputs)
    heading = f"{answer.name}: {what} of {small:,} and {large:,} {unit} ({large // small}x longer)"
    least = None
    for attempt in range(MEASUREMENTS):
        try:
            mine = time_answer(answer.source, answer.name, inputs, min_seconds=min_seconds)
        except AnswerError as exc:
            fail(f"{answer.name} on long {what}: {exc}", hint=hint)
        if attempt == 0:
            for size, calls in inputs.items():
                for arguments, got in zip(calls, mine[size][1]):
                    if not same(got, expected(arguments)):
                        fail(
                            f"{answer.name} on long {what} ({size:,} {unit}) did not return "
                            "what a right answer returns",
                            hint=hint,
                        )
        linear = time_answer(*reference, inputs, min_seconds=min_seconds)
        growth = mine[large][0] / max(mine[small][0], 1e-6)
        expected_growth = max(linear[large][0] / max(linear[small][0], 1e-6), 1.0)
        if growth <= MAX_GROWTH * expected_growth:
            print(
                f"Linear: on {what} {large // small}x longer your time grew about as much as "
                "a linear reference's."
            )  # no figures: they differ from run to run
            return
        if least is None or growth / expected_growth < least[0] / least[1]:
            least = (growth, expected_growth)
        if growth > 2 * MAX_GROWTH * expected_growth:
            break  # far over: no burst of load explains that
    growth, expected_growth = least
    fail(
        f"{heading}: your function took {growth:.0f}x as long on the longer one, a linear one "
        f"{expected_growth:.0f}x: your work grows faster than the input",
        hint=hint,
    )


def report(
    heading, *, tried=None, got=..., expected=..., differs=None, mistake=None, hint=None
) -> None:
    """Print one miss: what was tried, what came back, what was expected, where they first
    differ, and a hint."""
    lines = [f"Not yet. {heading}"]
    if tried:
        lines.append(f"  tried:    {tried}")
    if got is not ... and expected is not ...:
        mine, theirs = shown_apart(got, expected)
        lines += [f"  got:      {mine}", f"  expected: {theirs}"]
    elif expected is not ...:
        lines.append(f"  expected: {show(expected)}")
    if differs:
        lines.append(f"  differs:  {differs}")
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


def describe_exception(error) -> str:
    """Say which exception the learner's code raised (a :class:`~labkit.grading.isolated.Raised`),
    and on which of its lines."""
    if error.type == "NotImplementedError":
        return f"your function raised NotImplementedError: {STUB_ADVICE}"
    text = f"your function raised {error.type}"
    if error.message:
        text += f": {error.message}"
    return f"{text} (at `{error.line}`)" if error.line else text


def show(value, limit: int = 300) -> str:
    """``repr`` of a value, shortened in the middle when it is long."""
    text = repr(value)
    if len(text) <= limit:
        return text
    keep = (limit - 5) // 2
    return f"{text[:keep]} ... {text[-keep:]} ({len(text):,} characters)"


def shown_apart(got, expected, limit: int = 300) -> tuple:
    """``repr`` of both values; when either is long, a window of each around where they first
    differ, so the learner sees the difference and not two halves cut in the middle."""
    mine, theirs = repr(got), repr(expected)
    if (len(mine) <= limit and len(theirs) <= limit) or mine == theirs:
        return show(got, limit), show(expected, limit)
    at = next(
        (i for i, (a, b) in enumerate(zip(mine, theirs)) if a != b), min(len(mine), len(theirs))
    )
    return _window(mine, at, limit), _window(theirs, at, limit)


def _window(text: str, at: int, limit: int) -> str:
    start = max(0, at - limit // 3)
    end = min(len(text), start + limit)
    return (
        (f"...{text[start:end]}" if start else text[start:end])
        + ("..." if end < len(text) else "")
        + f" ({len(text):,} characters; the first difference is at character {at:,})"
    )


def _error_hint(error, hints: dict | None) -> str | None:
    for kinds, hint in (hints or {}).items():
        if error.type in ((kinds,) if isinstance(kinds, str) else kinds):
            return hint
    return None

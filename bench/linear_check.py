"""Do the time-growth checks of exercises 2a and 6a separate linear answers from super-linear ones?

For several draws of each check's own long streams (2a: text, thinking, tool calls and
missing content mixed; 6a: one OpenAI call whose arguments come in that many fragments;
sizes from each check's TIMING), times each answer in a fresh
process, as the check does (CPU time read from outside the process), and prints its
growth from the small to the large size divided by the linear reference's growth in the
same draw. The check fails a ratio above MAX_GROWTH: right answers must stay well under
it on every draw, quadratic ones well over it. The answers are the ones the test suite
times (tests/grading/answers.py), and two more for 2a: a right one that CPython makes
linear, and a wrong one whose quadratic part is small.

Run: python bench/linear_check.py
"""

import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "grading"))
from answers import ANSWER_NAMES, RIGHT, WRONG  # noqa: E402 (the answers the tests grade)

from labkit.grading.checks import lesson02_streamed_turn as streamed_turn
from labkit.grading.checks import lesson06_providers as providers
from labkit.grading.feedback import MAX_GROWTH
from labkit.grading.isolated import TimedInputs, time_answer

GROWS = "grows faster than the input"  # what the feedback on a too-slow answer must name


def graded(check: str, **extra: str) -> dict:
    """The answers the test suite times for ``check`` (tests/grading/answers.py): its right
    answer and each wrong one whose mistake is its growth, plus ``extra`` ones of this bench."""
    name = ANSWER_NAMES[check]
    answers = {"right (the tests' answer)": RIGHT[check].replace("$name", name)}
    answers.update(
        {wrong.mistake: wrong.code(name) for wrong in WRONG[check] if wrong.names == GROWS}
    )
    return {**answers, **{label: source.replace("$name", name) for label, source in extra.items()}}


ANSWERS = graded(
    "check_assemble_content",
    **{
        "right: += on a local string (CPython grows it in place)": """
def $name(chunks):
    text = ""
    for chunk in chunks:
        text += chunk["message"].get("content") or ""
    return text
""",
        "wrong: insert(0) on a reversed walk (quadratic, with a small constant)": """
def $name(chunks):
    parts = []
    for chunk in reversed(chunks):
        if chunk["message"].get("content"):
            parts.insert(0, chunk["message"]["content"])
    return "".join(parts)
""",
    },
)
CALLS_ANSWERS = graded("check_assemble_calls")
DRAWS = 6


EXERCISES = [
    (
        "2a assemble_content",
        "assemble_content",
        ANSWERS,
        (streamed_turn.LINEAR_REFERENCE, "assemble_content"),
        streamed_turn.long_stream,
        streamed_turn.TIMING,
    ),
    (
        "6a assemble_openai_calls",
        "assemble_openai_calls",
        CALLS_ANSWERS,
        (providers.CALLS_REFERENCE, "_openai_calls"),
        providers.long_stream,
        providers.CALLS_TIMING,
    ),
]


def main() -> None:
    print(f"the check fails a growth above {MAX_GROWTH} x the reference's")
    for title, function, answers, reference_source, stream, timing in EXERCISES:
        (small, large), repeats = timing["sizes"], timing["repeats"]
        print(
            f"{title}: streams of {small:,} and {large:,} fragments, {repeats} of each size "
            "per draw"
        )
        ratios = {name: [] for name in answers}
        for draw_number in range(DRAWS):
            draw = random.Random(draw_number)
            inputs = TimedInputs(
                {size: [[stream(draw, size)] for _ in range(repeats)] for size in (small, large)}
            )
            reference = time_answer(*reference_source, inputs, timeout=120)
            linear = reference[large][0] / reference[small][0]
            for name, source in answers.items():
                timed = time_answer(source, function, inputs, timeout=120)
                ratios[name].append(timed[large][0] / timed[small][0] / linear)
        report(ratios)


def report(ratios: dict) -> None:
    width = max(map(len, ratios))
    for name, values in ratios.items():
        print(
            f"  {name:<{width}} growth / reference growth {min(values):5.2f} .. {max(values):5.2f}"
            f" over {DRAWS} draws"
        )


if __name__ == "__main__":
    main()

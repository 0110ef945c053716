"""Lesson 04's check: a repair's verdict, trusting only the evidence."""

from __future__ import annotations

import hashlib
import random

from ...harness.sample import SAMPLE_DIR, TEST_FILE
from ..feedback import Case, run_cases
from ..isolated import run_counts_value
from .common import DRAWN, hidden_cases, learner_answer, new_seed, verdict_problem

__all__ = ["check_repair_verdict"]


def check_repair_verdict(repair_succeeded, *, hidden: bool = False) -> None:
    """``repair_succeeded(after, test_hash_before, test_hash_after)`` trusts only the evidence."""
    answer = learner_answer(repair_succeeded, "repair_succeeded")
    tests = (SAMPLE_DIR / TEST_FILE).read_bytes()
    same_hash = hashlib.sha256(tests).hexdigest()
    renamed = hashlib.sha256(tests.replace(b"def test_backslash", b"def backslash")).hexdigest()
    verdicts = [
        (
            "repaired: 4 passed, test file unchanged",
            (0, 4, 0, "4 passed in 0.03s"),
            same_hash,
            "exit code 0, no failures, tests that ran and an unchanged test file: a real repair",
        ),
        (
            "still failing: 1 failed, 3 passed",
            (1, 3, 1, "1 failed, 3 passed in 0.04s"),
            same_hash,
            "a failing test means the repair is not done",
        ),
        (
            "all pass, but the failing test was renamed away",
            (0, 3, 0, "3 passed in 0.03s"),
            renamed,
            "the test file's hash changed: tests edited to pass prove nothing",
        ),
        (
            "no tests ran (exit code 5)",
            (5, 0, 0, "no tests ran in 0.01s"),
            same_hash,
            "pytest exits with 5 when it collected no tests: nothing was checked",
        ),
        (
            "a collection error (exit code 2)",
            (2, 0, 1, "1 error in 0.05s"),
            same_hash,
            "exit code 2: the tests could not even be collected",
        ),
        (
            "every test skipped (exit code 0, 0 passed)",
            (0, 0, 0, "4 skipped in 0.02s"),
            same_hash,
            "exit code 0, but not one test passed: nothing was checked",
        ),
        (
            "4 passed, but pytest exited with 3",
            (3, 4, 0, "4 passed in 0.03s"),
            same_hash,
            "the edited module can end the run badly after the tests (an atexit handler calling "
            "os._exit(3)): the rule is exit code 0, whatever the counts and the text say",
        ),
        (
            "exit code 0, but the counts say 1 failed",
            (0, 3, 1, "3 passed in 0.03s"),
            same_hash,
            "trust no single number: a repair has exit code 0, no failure and tests that passed",
        ),
    ]
    other_sample = _random_hash(random.Random("another copy of the sample"))
    verdicts = [(label, counts, same_hash, after, hint) for label, counts, after, hint in verdicts]
    verdicts.append(
        (
            "a repaired copy of another version of the sample",
            (0, 4, 0, "4 passed in 0.03s"),
            other_sample,
            other_sample,
            "compare the hash after with the hash before, whatever file it was",
        )
    )
    verdicts += hidden_cases("check_repair_verdict", same_hash=same_hash) if hidden else []
    seed = new_seed()
    draw = random.Random(seed)
    for number in range(1, DRAWN + 1):
        exit_code, passed, failed = (
            draw.choice([0, 0, 1, 2, 3, 5]),
            draw.randrange(0, 6),
            draw.randrange(0, 3),
        )
        output = ", ".join(
            part
            for part in [f"{failed} failed" if failed else "", f"{passed} passed" if passed else ""]
            if part
        )
        if draw.random() < 0.3:  # a run whose text claims success whatever the counts say
            output = "4 passed"
        hash_before = same_hash if draw.random() < 0.5 else _random_hash(draw)
        hash_after = hash_before if draw.random() < 0.7 else _random_hash(draw)
        verdicts.append(
            (
                f"drawn case {number} (seed {seed})",
                (exit_code, passed, failed, f"{output or 'no tests ran'} in 0.02s"),
                hash_before,
                hash_after,
                "",
            )
        )
    cases = []
    for label, (exit_code, passed, failed, output), hash_before, hash_after, hint in verdicts:
        verdict = exit_code == 0 and failed == 0 and passed > 0 and hash_after == hash_before
        shown = (
            f"repair_succeeded(Checks(exit_code={exit_code}, passed={passed}, "
            f"failed={failed}, output={output!r}), {_short_hash(hash_before)}, "
            f"{_short_hash(hash_after)})"
        )
        cases.append(
            Case(
                label,
                [run_counts_value(exit_code, passed, failed, output), hash_before, hash_after],
                verdict,
                shown=shown,
                hint=hint,
            )
        )
    run_cases(answer, cases, verdict_problem, what="repair_succeeded")


def _short_hash(digest: str) -> str:
    return f"'{digest[:10]}...'"


def _random_hash(draw: random.Random) -> str:
    return "".join(draw.choice("0123456789abcdef") for _ in range(64))

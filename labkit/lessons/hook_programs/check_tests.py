"""A ``stop`` hook: the model says it is done; is it? Runs the independent check (the
sample's tests, in the run's copy, as ``run_checks`` runs them after every attempt) and
says no (exit 2) while a test fails, with the counts as the reason the model reads.
"""

import json
import sys
from pathlib import Path

from labkit.harness.sample import run_checks


def main() -> None:
    event = json.load(sys.stdin)
    checks = run_checks(Path(event["cwd"]))
    if checks.exit_code != 0:
        print(
            f"Not done: the independent check still fails ({checks.failed} failed, "
            f"{checks.passed} passed, exit code {checks.exit_code}). Run the tests, fix the "
            "code, and finish only when they pass.",
            file=sys.stderr,
        )
        sys.exit(2)


if __name__ == "__main__":
    main()

"""How much faster does ``python -m labkit grade`` grade a class than ``nbgrader autograde``?

Generates a class of ``--learners`` learners, each handing in every lesson (half of them the
lessons with the reference answers, half the student edition untouched, whole notebooks as
learners hand them in), in one course; copies it; then, in one run, grades one copy serially
with ``nbgrader autograde`` (one notebook after another, each learner's code in the grading
sandbox: the course's own config) and the other with labkit's parallel grader on
``--workers`` local workers (the same sandbox, one gradebook writer). Prints both wall times,
the speed-up (serial / parallel), the seconds per learner-lesson of each, and the estimate
for 300 learners x the lessons on N cores, computed from the parallel figure on the
assumption that it scales with the workers (an estimate: the one writer, the disk and the
machine's other load are not modelled).

``--sandbox-learners K`` (default 2) also grades K learners' lessons with one worker twice,
with and without the sandbox, interleaved learner by learner, and prints what the sandbox
costs per submission.

The issue's target: at least 1.7x on 2 cores, at most 2 s of wall time per learner-lesson.
The machine's other load counts: compare figures measured in one run.

Run: python bench/parallel_grading.py [--learners 40] [--workers 2] [--sandbox-learners 2]
"""

import argparse
import os
import shutil
import tempfile
import time
from pathlib import Path

from labkit.grading.edition import generate_edition, nbgrader
from labkit.grading.grade_class import grade_course
from labkit.settings import NOTEBOOKS_DIR

LESSONS = sorted(path.stem for path in NOTEBOOKS_DIR.glob("[0-9][0-9]_*.ipynb"))


def hand_in(course: Path, release: Path, learners) -> int:
    """Each of ``learners`` (numbers) hands in every lesson: an even number the lessons with
    the reference answers, an odd one the student edition untouched. Returns how many."""
    for number in learners:
        for lesson in LESSONS:
            origin = NOTEBOOKS_DIR / f"{lesson}.ipynb" if number % 2 == 0 else (
                release / lesson / f"{lesson}.ipynb")  # fmt: skip
            folder = course / "submitted" / f"learner{number:03d}" / lesson
            folder.mkdir(parents=True)
            shutil.copy(origin, folder / f"{lesson}.ipynb")
    return len(learners) * len(LESSONS)


def timed(call) -> float:
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


def sandbox_cost(scratch: Path, empty: Path, release: Path, learners: int) -> None:
    """One worker, ``learners`` learners: each learner's lessons graded with the sandbox and
    without, one after the other, so that the machine's load falls on both alike."""
    seconds = {True: 0.0, False: 0.0}  # sandboxed? -> seconds
    for number in range(learners):
        for sandboxed in seconds:
            course = scratch / f"sandbox-{sandboxed}-{number}"
            shutil.copytree(empty, course, symlinks=True)
            hand_in(course, release, [number])
            seconds[sandboxed] += timed(
                lambda c=course, s=sandboxed: grade_course(c, workers=1, unisolated=not s)
            )
    graded = learners * len(LESSONS)
    with_box, without = seconds[True] / graded, seconds[False] / graded
    print(
        f"sandbox cost ({graded} learner-lessons each way, 1 worker): {with_box:.2f} s with, "
        f"{without:.2f} s without: {with_box - without:+.2f} s per submission "
        f"({with_box / without:.2f}x)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--learners", type=int, default=40)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--sandbox-learners", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="labkit-bench-grade-") as folder:
        scratch = Path(folder)
        serial, parallel = scratch / "serial", scratch / "parallel"
        empty = scratch / "empty"
        release = generate_edition(empty, gradebook=True)
        shutil.copytree(empty, serial, symlinks=True)
        count = hand_in(serial, release, range(args.learners))
        shutil.copytree(serial, parallel, symlinks=True)
        load = os.getloadavg()[0]
        print(f"{args.learners} learners x every lesson: {count} learner-lessons "
              f"(load average {load:.1f} at the start)")  # fmt: skip
        serial_s = timed(lambda: nbgrader(serial, "autograde", "*", timeout=24 * 3600))
        print(f"serial nbgrader autograde: {serial_s:.0f} s, {serial_s / count:.2f} s per "
              "learner-lesson")  # fmt: skip
        summary = grade_course(parallel, workers=args.workers)
        parallel_s = summary.seconds
        print(f"labkit grade, {args.workers} workers: {parallel_s:.0f} s, "
              f"{parallel_s / count:.2f} s per learner-lesson "
              f"({len(summary.graded)} graded, {len(summary.failed)} failed)")  # fmt: skip
        print(f"speed-up: {serial_s / parallel_s:.2f}x on {args.workers} workers "
              f"(load average {os.getloadavg()[0]:.1f} at the end)")  # fmt: skip
        lessons = len(LESSONS)
        whole = 300 * lessons * parallel_s / count * args.workers
        estimate = ", ".join(f"{cores} cores {whole / cores / 3600:.1f} h" for cores in (2, 8, 32))
        print(f"estimate for 300 learners x {lessons} lessons (scaled from this run, not "
              f"measured): {estimate}")  # fmt: skip
        if args.sandbox_learners > 0:
            sandbox_cost(scratch, empty, release, args.sandbox_learners)


if __name__ == "__main__":
    main()

"""How long does nbgrader take to autograde one learner's lesson?

Lays out the course in a scratch directory, generates the student edition, submits
the untouched edition and the reference notebooks as two learners, and runs one
``nbgrader autograde`` over both. Prints the wall time per learner per lesson (the
whole run divided by the number of notebooks graded), which includes the out-of-kernel
regrading of every test cell.

Run: python bench/autograde.py
"""

import shutil
import tempfile
import time
from pathlib import Path

from labkit.grading.edition import generate_edition, nbgrader
from labkit.settings import NOTEBOOKS_DIR


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="labkit-bench-") as scratch:
        course = Path(scratch)
        release = generate_edition(course, gradebook=True)
        lessons = sorted(path.stem for path in NOTEBOOKS_DIR.glob("*.ipynb"))
        learners = {"untouched": release, "reference": NOTEBOOKS_DIR}
        for learner, origin in learners.items():
            for lesson in lessons:
                folder = course / "submitted" / learner / lesson
                folder.mkdir(parents=True)
                found = origin / lesson / f"{lesson}.ipynb"
                shutil.copy(found if found.exists() else origin / f"{lesson}.ipynb", folder)
        start = time.perf_counter()
        nbgrader(course, "autograde", "*", timeout=1800)
        seconds = time.perf_counter() - start
    notebooks = len(learners) * len(lessons)
    print(
        f"autograde: {seconds:.1f} s for {notebooks} notebooks, "
        f"{seconds / notebooks:.1f} s per learner per lesson"
    )


if __name__ == "__main__":
    main()

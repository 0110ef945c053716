"""``python -m labkit.grading``: check the lessons' nbgrader metadata, lay out a course, or
make the student edition afresh.

python -m labkit.grading check [NOTEBOOK ...]   # default: the course's lessons
python -m labkit.grading course DIR [--cell-timeout SECONDS]   # an nbgrader course (0700)
python -m labkit.grading edition [DIR]   # the student edition labkit carries (make edition)
"""

from __future__ import annotations

import sys
from pathlib import Path

from ..settings import CELL_TIMEOUT, EDITION_DIR
from .conventions import course_problems, lay_out_course
from .edition import EditionError, reference_dir, write_edition


def main(argv=None) -> int:
    args = sys.argv[1:] if argv is None else argv
    try:
        return _run(args)
    except EditionError as exc:
        print(exc, file=sys.stderr)
        return 1


def _run(args: list) -> int:
    if args[:1] == ["course"] and len(args) in (2, 4) and args[2:3] in ([], ["--cell-timeout"]):
        timeout = int(args[3]) if len(args) == 4 else CELL_TIMEOUT
        names = lay_out_course(args[1], reference_dir(), cell_timeout=timeout)
        print(f"{args[1]}: an nbgrader course with {len(names)} assignments: {', '.join(names)}")
        return 0
    if args[:1] == ["edition"] and len(args) <= 2:
        into = Path(args[1]) if len(args) == 2 else EDITION_DIR
        names = write_edition(into)
        print(f"{into}: the student edition of {len(names)} lessons, made afresh by nbgrader")
        return 0
    if args[:1] == ["check"]:
        folder = reference_dir()
        paths = [Path(a) for a in args[1:]] or sorted(folder.glob("*.ipynb"))
        if not paths:
            print(f"no notebooks to check in {folder}")
            return 1
        report = course_problems(paths)
        for name, problems in report.items():
            print(f"{name}: " + ("ok" if not problems else f"{len(problems)} problem(s)"))
            for problem in problems:
                print(f"  - {problem}")
        return 1 if any(report.values()) else 0
    print(__doc__.split("\n\n")[-1].rstrip())
    return 2


if __name__ == "__main__":
    sys.exit(main())

"""The instructor's part of the course: the lessons with their reference answers
(``NOTEBOOKS_DIR``) and the hidden test cases (:mod:`labkit_answers.hidden`).

Learners install ``labkit`` alone, which carries the student edition of the lessons and the
checks without their hidden cases; grading (``python -m labkit grade``, nbgrader's hidden
tests) and ``python -m labkit lessons --reference`` need this package as well. In a clone,
``make setup`` installs it (editable) from ``instructor/``; ``notebooks`` here is a link to the
clone's ``notebooks/``, and the wheel carries it as a folder.
"""

from importlib.resources import files
from pathlib import Path

#: The lessons with their reference answers (in a clone: its notebooks/ folder).
NOTEBOOKS_DIR = Path(str(files(__package__).joinpath("notebooks"))).resolve()

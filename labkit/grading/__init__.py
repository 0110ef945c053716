"""The graded exercises: their checks, and how an instructor hands them out and grades them.

- ``checks.py``: one check per exercise, against oracles written out or computed by
  small references here (never by the harness code the exercise teaches);
- ``isolated.py``: a learner's answer runs in a fresh Python process that cannot see
  the checks; ``feedback.py`` compares what came back and explains the first miss;
- ``conventions.py``: nbgrader's answer and test cells as the lessons use them, and an
  nbgrader course laid out from the lessons; ``edition.py``: the student edition;
- ``regrade.py``: autograding that regrades each test cell outside the learner's
  kernel and never drops a submission that hangs.

The lessons' test cells import the checks as ``labkit.exercises``.
"""

# First, whatever is imported: checks.py gathers the checks of lessons 06 to 08 from their
# modules, and lesson 06's build on its helpers.
from . import checks  # noqa: E402,F401

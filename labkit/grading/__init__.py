"""The graded exercises: their checks, and how an instructor hands them out and grades them.

- ``checks/``: one check per exercise, a module per lesson, against oracles written out or
  computed by small references there (never by the harness code the exercise teaches);
- ``isolated.py``: a learner's answer runs in a fresh Python process (``answer_process.py``)
  that cannot see the checks; ``feedback.py`` compares what came back and explains the
  first miss;
- ``conventions.py``: nbgrader's answer and test cells as the lessons use them, and an
  nbgrader course laid out from the lessons; ``edition.py``: the student edition;
- ``regrade.py``: autograding that regrades each test cell outside the learner's
  kernel and never drops a submission that hangs.

The lessons' test cells import the checks as ``labkit.exercises``.
"""

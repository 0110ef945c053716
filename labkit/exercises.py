"""The checks the lessons' test cells call: ``from labkit.exercises import check_tool_message``.

They live in ``labkit.grading.checks``, a module per lesson; this is the name the notebooks
(and every learner's copy of them) import them by. Every check of the registry,
``labkit.grading.checks.CHECKS``, is a name here.
"""

from .grading.checks import CHECKS

__all__ = list(CHECKS)
globals().update(CHECKS)

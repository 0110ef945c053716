"""The checks the lessons' test cells call: ``from labkit.exercises import check_tool_message``.

They live in ``labkit.grading`` (``checks.py``, which gathers lesson 06's, 07's and 08's
from their own modules); this is the name the notebooks (and every learner's copy of
them) import them by.
"""

from .grading.checks import *  # noqa: F401,F403
from .grading.checks import __all__  # noqa: F401

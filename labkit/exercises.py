"""The checks the lessons' test cells call: ``from labkit.exercises import check_tool_message``.

They live in ``labkit.grading.checks`` (lessons 01 to 05) and
``labkit.grading.checks_providers`` (lesson 06); this is the name the notebooks (and every
learner's copy of them) import them by.
"""

from .grading import checks, checks_providers
from .grading.checks import *  # noqa: F401,F403
from .grading.checks_providers import *  # noqa: F401,F403

__all__ = [*checks.__all__, *checks_providers.__all__]

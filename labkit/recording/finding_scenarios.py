"""Lesson 13's scripted runs: the repair of the larger sample (``sample_project``), found
three ways, each with the toolkit.

- ``FOUND_BY_GREP``: the file-based way, the model searches the text (``grep``) and reads;
  grep's answer mixes the method with ``months_between`` and ``summary_between``.
- ``FOUND_BY_SYMBOLS``: the language server's ``references`` lists the method's three uses,
  and only them.
- ``FOUND_BY_RETRIEVAL``: before each request the chunks BM25 finds most like the task are
  in the request already. They hold the failing summary, not the method or its other
  caller: the model still searches, and finds the second caller only when a test fails.

The fault and the repair are the same: ``Ledger.between`` leaves out its last day (fixed by
``<=``), and ``spent_in`` asked for a day more to make up for it (that workaround must go,
or the budget's test fails). ``scenarios.py`` lists these runs as recordings.
"""

from __future__ import annotations

from ..models.chunks import call
from ..models.scripted import PlannedTurn

RUN_TESTS = call("run_command", command=["python", "-m", "pytest", "-qq"])
BETWEEN_OLD = "        return [t for t in self.transactions if start <= t.day < end]"
BETWEEN_NEW = "        return [t for t in self.transactions if start <= t.day <= end]"
WORKAROUND_OLD = "    days = ledger.between(first, last + dt.timedelta(days=1))"
WORKAROUND_NEW = "    days = ledger.between(first, last)"
FIX_BETWEEN = call("edit", path="ledger/models.py", old_string=BETWEEN_OLD, new_string=BETWEEN_NEW)
FIX_WORKAROUND = call(
    "edit", path="ledger/budget.py", old_string=WORKAROUND_OLD, new_string=WORKAROUND_NEW
)
SUMMARY = (
    "Ledger.between (ledger/models.py) left out its last day although its docstring says both "
    "days are included: I changed `< end` to `<= end`. spent_in (ledger/budget.py) asked for a "
    "day more to make up for it, so I removed that workaround. python -m pytest -qq passes."
)

FOUND_BY_GREP = [
    PlannedTurn(thinking="First, which test fails and where.", tool_calls=[RUN_TESTS]),
    PlannedTurn(
        thinking="monthly_summary misses the last day. It calls ledger.between; I search for "
        "every use of between.",
        tool_calls=[call("grep", pattern="between\\(", output="lines")],
    ),
    PlannedTurn(
        thinking="Some of these are months_between and summary_between, other functions. The "
        "method is in ledger/models.py at line 98; I read it.",
        tool_calls=[call("read_file", path="ledger/models.py", offset=96, limit=6)],
    ),
    PlannedTurn(
        thinking="`< end` leaves out the last day, though the docstring says both are included.",
        tool_calls=[FIX_BETWEEN],
    ),
    PlannedTurn(
        thinking="budget.py line 51 passes last + 1 day: a workaround that now counts a day "
        "too many. I read it.",
        tool_calls=[call("read_file", path="ledger/budget.py", offset=48, limit=6)],
    ),
    PlannedTurn(thinking="The workaround goes.", tool_calls=[FIX_WORKAROUND]),
    PlannedTurn(thinking="Now the tests.", tool_calls=[RUN_TESTS]),
    PlannedTurn(thinking="All pass.", content=SUMMARY),
]

FOUND_BY_SYMBOLS = [
    PlannedTurn(thinking="First, which test fails and where.", tool_calls=[RUN_TESTS]),
    PlannedTurn(
        thinking="monthly_summary misses the last day. It calls ledger.between at "
        "ledger/reports.py line 25; I ask the language server for every use of that method.",
        tool_calls=[call("references", symbol="between", path="ledger/reports.py", line=25)],
    ),
    PlannedTurn(
        thinking="Three places: the definition (models.py 98), reports.py 25, and budget.py 51, "
        "which passes last + 1 day. I read the definition.",
        tool_calls=[call("read_file", path="ledger/models.py", offset=96, limit=6)],
    ),
    PlannedTurn(
        thinking="`< end` leaves out the last day, though the docstring says both are included.",
        tool_calls=[FIX_BETWEEN],
    ),
    PlannedTurn(
        thinking="budget.py's workaround now counts a day too many. I read it.",
        tool_calls=[call("read_file", path="ledger/budget.py", offset=48, limit=6)],
    ),
    PlannedTurn(thinking="The workaround goes.", tool_calls=[FIX_WORKAROUND]),
    PlannedTurn(thinking="Now the tests.", tool_calls=[RUN_TESTS]),
    PlannedTurn(thinking="All pass.", content=SUMMARY),
]

FOUND_BY_RETRIEVAL = [
    PlannedTurn(thinking="First, which test fails and where.", tool_calls=[RUN_TESTS]),
    PlannedTurn(
        thinking="The chunks given with the request hold monthly_summary (ledger/reports.py), "
        "which asks ledger.between(first, last) for the month's transactions. None of them "
        "is between itself; I search for its definition.",
        tool_calls=[call("grep", pattern="def between", output="lines")],
    ),
    PlannedTurn(
        thinking="ledger/models.py line 98. I read it.",
        tool_calls=[call("read_file", path="ledger/models.py", offset=96, limit=6)],
    ),
    PlannedTurn(thinking="`< end` leaves out the last day.", tool_calls=[FIX_BETWEEN]),
    PlannedTurn(thinking="Now the tests.", tool_calls=[RUN_TESTS]),
    PlannedTurn(
        thinking="test_rules_then_budget fails now: check_budget finds 12.00 more than "
        "expected. No chunk given is from ledger/budget.py; I search it for between.",
        tool_calls=[call("grep", pattern="between\\(", path="ledger/budget.py", output="lines")],
    ),
    PlannedTurn(
        thinking="spent_in passes last + 1 day: a workaround for the old between. I read it.",
        tool_calls=[call("read_file", path="ledger/budget.py", offset=48, limit=6)],
    ),
    PlannedTurn(thinking="The workaround goes.", tool_calls=[FIX_WORKAROUND]),
    PlannedTurn(thinking="Now the tests.", tool_calls=[RUN_TESTS]),
    PlannedTurn(thinking="All pass.", content=SUMMARY),
]

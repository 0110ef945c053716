"""A plan the model keeps: the ``todo`` tool (as Claude Code's TodoWrite).

A long task drifts: after a dozen tool results the model's first intentions are far back in
the conversation. With ``todo`` the model writes its plan as a short list and rewrites it as
it goes; each call sends the **whole** list, which replaces the one before, and the result
shows it back, so the current plan is always in the latest messages.

The harness checks every update (``check_plan``) and refuses one that breaks a rule, with an
error the model reads; the plan it had stays as it was:

- ``items`` is a list of at most :data:`MAX_ITEMS` items (an empty list clears the plan);
- each item is an object with exactly ``task`` (text of 1 to :data:`MAX_TASK` characters,
  not only spaces, no two items alike) and ``status``, one of :data:`STATES`;
- at most one item is ``in_progress``: one thing at a time.

A plan is the model's own account. The harness does not check that an item marked done is
done: a model can mark "the tests pass" done while they fail. Only an independent run of
the tests says (lesson 04); a lesson shows both.
"""

from __future__ import annotations

from typing import Any

from .toolset import Toolset, shown, tool
from .words import json_kind

STATES = ("pending", "in_progress", "done")
MAX_ITEMS = 8
MAX_TASK = 200


def check_plan(items: object) -> list[dict[str, str]]:
    """``items`` as a plan (a new list of new dicts), or a ``ValueError`` naming the first
    rule it breaks."""
    if not isinstance(items, list):
        raise ValueError(f"items is a list of {{task, status}} objects, not {json_kind(items)}")
    if len(items) > MAX_ITEMS:
        raise ValueError(
            f"the plan has {len(items)} items; keep it to {MAX_ITEMS} or fewer (merge small steps)"
        )
    plan, seen = [], set()
    for number, item in enumerate(items, start=1):
        if not isinstance(item, dict) or set(item) != {"task", "status"}:
            raise ValueError(
                f"item {number} must be an object with exactly 'task' and 'status', not "
                f"{shown(item, 80)}"
            )
        task, status = item["task"], item["status"]
        if not isinstance(task, str) or not task.strip() or len(task) > MAX_TASK:
            raise ValueError(f"item {number}: 'task' is text of 1 to {MAX_TASK} characters")
        if status not in STATES:
            raise ValueError(
                f"item {number}: status {shown(status, 40)} is not one of {', '.join(STATES)}"
            )
        if task.strip() in seen:
            raise ValueError(f"item {number}: the task {shown(task, 60)} is in the plan twice")
        seen.add(task.strip())
        plan.append({"task": task, "status": status})
    doing = [item["task"] for item in plan if item["status"] == "in_progress"]
    if len(doing) > 1:
        raise ValueError(
            f"{len(doing)} items are in_progress ({'; '.join(doing)[:120]}); work on one "
            "thing at a time: mark the others pending or done"
        )
    return plan


def plan_counts(plan: list[dict[str, str]]) -> str:
    """``"1 done, 1 in progress, 2 pending"``: how far the plan is."""
    return ", ".join(
        f"{sum(item['status'] == state for item in plan)} {state.replace('_', ' ')}"
        for state in ("done", "in_progress", "pending")
    )


class Plan(Toolset):
    """The ``todo`` tool, and the plan it keeps (``items``)."""

    def __init__(self) -> None:
        self.items: list[dict[str, str]] = []

    @tool(
        description=(
            "Write your plan for this task as a short list, and keep it up to date. Send the "
            "whole list every time: it replaces the one before. Each item has a 'task' and a "
            f"'status': {', '.join(STATES)}. Mark an item in_progress when you start it (one "
            f"at a time) and done when it is finished; at most {MAX_ITEMS} items. Write the "
            "plan before your first step on a task with several steps."
        ),
        parameters={
            "type": "object",
            "properties": {
                "items": {
                    "type": "array",
                    "maxItems": MAX_ITEMS,
                    "items": {
                        "type": "object",
                        "properties": {
                            "task": {"type": "string", "description": "One step, in a line."},
                            "status": {"type": "string", "enum": list(STATES)},
                        },
                        "required": ["task", "status"],
                        "additionalProperties": False,
                    },
                    "description": "The whole plan, in order.",
                }
            },
            "required": ["items"],
            "additionalProperties": False,
        },
        takes="items (the whole plan)",
    )
    def todo(self, items: list) -> dict[str, Any]:
        self.items = check_plan(items)
        return {"plan": [dict(item) for item in self.items], "progress": plan_counts(self.items)}

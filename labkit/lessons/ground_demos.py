"""Lesson 10's small demonstrations, each a function the notebook calls in one line.

``one_delegation``: a parent that makes one ``delegate`` call and stops, run against a
child chat of the lesson's choosing (a child out of budget, a child whose model is down, a
call beyond the depth limit, a child under a gate). ``batch_seconds``: the calls of one
recorded turn run one at a time and at once, the children replayed at their recorded pace.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from ..harness.loop import agent_events, call_tool
from ..harness.parallel import ThreadRunner
from ..harness.run_cache import every_run_runs
from ..harness.sample import sample_copy
from ..harness.subagents import CHILD_TURNS, MAX_DEPTH
from ..models.chunks import call
from ..models.scripted import PlannedTurn, ScriptedChat
from .ground_state import ground_tools, ground_workspace


@dataclass(frozen=True)
class Delegation:
    """What the parent read (``result``) and the child's run (``child``: its events, or
    None when no child ran)."""

    result: dict
    child: list | None
    parent_stop: dict


def one_delegation(
    child_chat,
    task: str = "Which line of path_rules.py builds the path?",
    *,
    tools: list | None = None,
    child_turns: int = CHILD_TURNS,
    max_depth: int = MAX_DEPTH,
    gate=None,
) -> Delegation:
    """A parent asks ``delegate(task, tools)`` once, then answers; its child talks to
    ``child_chat``. Returns the result the parent read and the child's events."""
    arguments = {"task": task, **({"tools": tools} if tools is not None else {})}
    parent = ScriptedChat(
        [
            PlannedTurn(tool_calls=[call("delegate", **arguments)]),
            PlannedTurn(content="I read my subagent's result."),
        ]
    )
    with sample_copy() as root:
        tools = ground_tools(
            root, child_chat, gate=gate, child_turns=child_turns, max_depth=max_depth
        )
        events = list(agent_events(parent, tools, "task", gate=gate))
    result = next(e["result"] for e in events if e["type"] == "tool_result")
    child = next((e["events"] for e in events if e["type"] == "subagent"), None)
    return Delegation(result, child, events[-1])


def reading_forever(reads: int = 6) -> ScriptedChat:
    """A child's model that only ever reads, never answers (it will spend its budget)."""
    return ScriptedChat(
        [PlannedTurn(tool_calls=[call("read_file", path="path_rules.py")]) for _ in range(reads)]
    )


def model_down(messages, tool_schemas):
    """A child's model whose server refuses the connection."""
    raise ConnectionError("connection refused: no model server at 127.0.0.1:9")


def busiest_turn(events: list) -> list[dict]:
    """The calls of the run's turn with the most calls, as ``{"name", "arguments"}``."""
    by_turn: dict[int, list] = {}
    for event in events:
        if event["type"] == "tool_start":
            by_turn.setdefault(event["turn"], []).append(
                {"name": event["name"], "arguments": event["arguments"]}
            )
    return max(by_turn.values(), key=len)


def batch_seconds(calls: list[dict], chat_for, *, parallel: bool) -> tuple[float, list]:
    """Run ``calls`` (one turn's) on a fresh copy, one at a time or at once (a
    ``ThreadRunner``), each child talking to ``chat_for(task)``; return the seconds it took
    and the results, in the order asked."""
    with sample_copy() as root, every_run_runs():
        ground_workspace(root)
        tools = ground_tools(root, None, chat_for=chat_for)
        jobs = [lambda c=c: call_tool(tools, c["name"], c["arguments"]) for c in calls]
        start = time.monotonic()
        if parallel:
            outcomes = ThreadRunner(workers=len(jobs)).run(jobs)
            results = [outcome.value for outcome in outcomes]
        else:
            results = [job() for job in jobs]
        seconds = time.monotonic() - start
    return seconds, [getattr(result, "result", result) for result in results]

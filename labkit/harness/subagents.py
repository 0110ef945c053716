"""Subagents: a bounded subtask handed to the same loop, run with a fresh conversation.

``delegate(task, tools)`` runs ``agent_events`` again, as a *child*: a new conversation (its
own system prompt, then ``task``, nothing of the parent's), its own turn budget
(:data:`CHILD_TURNS` requests), its own fresh tools (a subset of the read-only ones; a
child reads and reports, the parent acts), under the parent's gate and hooks (a child
cannot run what the parent's policy denies). When the child stops, however it stops, the
parent gets **one** tool result (``subagent_result``): the child's answer, its stop
reason, and its counts. The child's transcript never joins the parent's conversation; the
parent's events keep it as one ``subagent`` event a widget can open.

Why a child's budget is 4 requests by default: a child is for one question (search, read a
few files, answer), which takes three rounds of tools and an answer; a child that needs
more is doing the parent's work, and its stop (``max_turns``, with what it said last) tells
the parent so. Why the depth limit is 1: a child that may delegate again multiplies the
requests (and the cost) of one parent call without bound, and nothing it could find that
way needs more than reading; ``max_depth=2`` lets children delegate once more.

Every stop of a child comes back as a result the parent reads, never as an exception that
ends the parent: a child out of budget, a child whose model is down (``model_error``), a
malformed reply. A task that is empty or too long, a tool a child may not have, and
``delegate`` asked beyond the depth limit are tool errors, before any child runs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .budget import head_and_tail
from .contracts import CallRunner, Chat, ChildRun, Gate, Hooks, PromptPart, SystemPrompt, Tools
from .loop import agent_events, positive_int
from .prompt import SUBAGENT_RULES
from .toolset import Joined, Only, Toolset, shown, tool

CHILD_TURNS = 4  # model requests a child may make (see above)
MAX_DEPTH = 1  # children of the top run may not delegate again
MAX_TASK = 2_000  # characters of a delegated task
MAX_ANSWER = 2_000  # characters of a child's answer the parent reads (cut head and tail)
SUBAGENT_PROMPT = (PromptPart("base", SUBAGENT_RULES),)  # a child's prompt, unless told
#: Stops after which the child's last turn is a complete reply (its text is its answer).
LAST_TURN_COMPLETE = ("assistant_finished", "empty_response", "max_turns", "tools_failed")


def subagent_result(events: list[dict]) -> dict[str, Any]:
    """The one tool result a child's run gives its parent: ``answer`` (the text of the
    child's last complete reply), ``stop_reason``, ``turns`` and ``tool_calls``, and, when
    the child did not finish with an answer, ``detail`` (why it stopped). Pure: reads the
    events, changes nothing, never raises on a run that stopped badly."""
    stop = events[-1]
    reason = stop["reason"]
    last = stop["turns"] if reason in LAST_TURN_COMPLETE else stop["turns"] - 1
    answer = "".join(
        event["text"] for event in events if event["type"] == "text_delta" and event["turn"] == last
    )
    result = {
        "answer": answer,
        "stop_reason": reason,
        "turns": stop["turns"],
        "tool_calls": stop["tool_calls"],
    }
    if reason != "assistant_finished":
        result["detail"] = stop["detail"]
    return result


class Subagents(Toolset):
    """The ``delegate`` tool of a run at ``depth`` (0: the top run).

    ``chat`` is the model children talk to (the parent's, usually; ``chat_for(task)``, if
    given, picks one per child instead). ``child_tools()`` makes a fresh toolset for each
    child; its read-only tools are the ones a child may be given. ``system``: a child's
    system prompt (text or parts). ``gate``, ``hooks`` and ``runner`` go to every child's
    loop as they are.
    """

    def __init__(
        self,
        chat: Chat,
        child_tools: Callable[[], Tools],
        *,
        max_turns: int = CHILD_TURNS,
        max_depth: int = MAX_DEPTH,
        depth: int = 0,
        gate: Gate | None = None,
        hooks: Hooks | None = None,
        runner: CallRunner | None = None,
        system: SystemPrompt = SUBAGENT_PROMPT,
        chat_for: Callable[[str], Chat] | None = None,
    ) -> None:
        self.max_turns = positive_int(max_turns, "max_turns")
        self.max_depth = positive_int(max_depth, "max_depth")
        if isinstance(depth, bool) or not isinstance(depth, int) or not 0 <= depth < max_depth:
            raise ValueError(f"depth is from 0 to max_depth - 1 ({max_depth - 1}), not {depth!r}")
        self.depth = depth
        self.chat_for = chat_for or (lambda task: chat)
        self.child_tools = child_tools
        sample = child_tools()
        readable = getattr(sample, "is_read_only", lambda name: False)
        names = [schema["function"]["name"] for schema in sample.schemas]
        self.offered = [name for name in names if readable(name)]
        if not self.offered:
            raise ValueError("child_tools() offers no read-only tool to give a child")
        self.gate, self.hooks, self.runner, self.system = gate, hooks, runner, system
        self._settings = {
            "chat": chat,
            "max_turns": max_turns,
            "max_depth": max_depth,
            "gate": gate,
            "hooks": hooks,
            "runner": runner,
            "system": system,
            "chat_for": chat_for,
        }

    @tool(
        description=(
            "Hand one self-contained task (a search, a question that needs reading several "
            "files) to a subagent: a fresh conversation with its own small budget and "
            "read-only tools. It does the reading and answers in a few sentences; you get only "
            "that answer, how it stopped and what it cost, so your own conversation stays "
            "small. It sees nothing of your conversation: put everything it needs in 'task'. "
            "Several delegate calls in one turn run at once."
        ),
        parameters={
            "type": "object",
            "properties": {
                "task": {"type": "string", "description": "What to find out, said in full."},
                "tools": {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": "The read-only tools it may use (default: all of yours, "
                    "such as read_file, glob and grep).",
                },
            },
            "required": ["task"],
            "additionalProperties": False,
        },
        read_only=True,
    )
    def delegate(self, task: str, tools: list | None = None) -> ChildRun:
        if not task.strip() or len(task) > MAX_TASK:
            raise ValueError(f"task is the subagent's whole task: 1 to {MAX_TASK} characters")
        names = self._given(tools)
        deeper = [n for n in names if n == "delegate"]
        child: Any = Only(self.child_tools(), [n for n in names if n != "delegate"])
        if deeper:
            deeper_agents = Subagents(
                **self._settings, child_tools=self.child_tools, depth=self.depth + 1
            )
            child = Joined(child, deeper_agents)
        events = list(
            agent_events(
                self.chat_for(task),
                child,
                task,
                max_turns=self.max_turns,
                gate=self.gate,
                hooks=self.hooks,
                system=self.system,
                runner=self.runner,
            )
        )
        result = subagent_result(events)
        result["answer"] = head_and_tail(result["answer"], MAX_ANSWER)
        return ChildRun(result, task, self.depth + 1, events)

    def _given(self, tools: object) -> list[str]:
        """The tools a child gets: ``tools`` checked, or every one it may have."""
        may_delegate = self.depth + 1 < self.max_depth
        if tools is None:
            return self.offered + (["delegate"] if may_delegate else [])
        if not isinstance(tools, list) or not all(isinstance(name, str) for name in tools):
            raise TypeError(f"tools is a list of tool names, not {shown(tools, 80)}")
        if not tools:
            raise ValueError("tools is empty: name at least one tool, or leave it out for all")
        for name in tools:
            if name == "delegate" and not may_delegate:
                raise ValueError(
                    f"a subagent at depth {self.depth + 1} cannot delegate: the depth limit is "
                    f"{self.max_depth} (children of children are not allowed here)"
                )
            if name != "delegate" and name not in self.offered:
                raise ValueError(
                    f"{shown(name, 40)} is not a tool a subagent may have; it may have the "
                    f"read-only tools {', '.join(self.offered)}"
                )
        return list(dict.fromkeys(tools))

"""What the lesson widgets step through, derived once so that each step is cheap.

``TurnSteps`` folds one streamed turn with the loop's own ``OllamaAssembler`` in a
single pass and keeps a prefix index (how many fragments and characters, how many
tool calls after each chunk; where ``done`` and the first problem arrived), so
showing step k costs only what is shown, however long the stream.
``FragmentSteps`` does the same for the formats whose tool calls stream in fragments
(OpenAI's, Anthropic's): each step shows every call's arguments as the JSON text
they are so far, and what ``json.loads`` makes of that text, with the loop's own
assembler deciding whether the turn may be dispatched. It folds the stream again up to
the step shown (time in proportion to the step: fine for the turns a lesson shows).
``conversation_story`` turns a run's message snapshots into a list that grows one
message at a time, each step saying what was appended and by whom (and, in a run with
a permission gate, a budget or hooks, what the gate decided, what the budget replaced
and what each hook did).

Pure: no widgets, no clock, no I/O.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from ..harness.contracts import Turn
from ..harness.conversation import measure
from ..harness.formats import FORMATS
from ..harness.formats.ollama import OllamaAssembler, unfinished_reason

TAIL = 2000  # characters of assembled text shown at once; earlier ones are counted, not shown


@dataclass(frozen=True)
class ChunkStep:
    """What the stream looks like after ``number`` of its ``total`` chunks arrived."""

    number: int
    total: int
    chunk: object  # the chunk that just arrived, parsed (None before any)
    at: float | None  # its arrival, in seconds after the request (None if unknown)
    content: str  # the assembled text so far, or its last ``tail`` characters
    content_hidden: int  # how many earlier characters of it are not in ``content``
    thinking: str
    thinking_hidden: int
    tool_calls: list
    done: bool
    done_reason: str | None
    problem: str | None
    line: str | None = None  # the chunk's NDJSON line exactly as it came, if the recording kept it

    @property
    def may_dispatch(self) -> bool:
        """The loop's own rule (``Turn.may_dispatch``), applied to the stream so far."""
        return self.problem is None and unfinished_reason(self.done, self.done_reason) is None

    @property
    def ended(self) -> bool:
        """True at the last chunk: nothing more will arrive."""
        return self.number == self.total


class TurnSteps:
    """One recorded turn, indexed so that any step renders without re-folding the stream.

    ``turn`` is one entry of ``recording["turns"]`` (``{"request": ..., "chunks":
    [{"at": seconds, "chunk": {...}}, ...]}``) or a plain list of chunk dicts.
    """

    def __init__(self, turn):
        self.entries = _chunk_entries(turn)
        assembler = OllamaAssembler()
        self._content_count, self._content_chars = [0], [0]
        self._thinking_count, self._thinking_chars = [0], [0]
        self._calls = [0]
        self.done_at = self.problem_at = None  # the step at which each first happened
        for number, (_, chunk, _) in enumerate(self.entries, start=1):
            assembler.add(chunk)
            _extend(self._content_count, self._content_chars, assembler.content)
            _extend(self._thinking_count, self._thinking_chars, assembler.thinking)
            self._calls.append(len(assembler.tool_calls))
            if assembler.done and self.done_at is None:
                self.done_at = number
            if assembler.problem and self.problem_at is None:
                self.problem_at = number
        self._assembler = assembler

    def __len__(self) -> int:
        return len(self.entries)

    def turn(self) -> Turn:
        """The whole turn, assembled (the same object the loop would build)."""
        return self._assembler.turn()

    def step(self, number: int, *, tail: int | None = TAIL) -> ChunkStep:
        """The state after ``number`` chunks (0: the request is sent, nothing arrived yet).

        Costs time in proportion to what it returns (``tail`` characters of text and
        the tool calls so far), not to ``number``.
        """
        if isinstance(number, bool) or not isinstance(number, int) or not 0 <= number <= len(self):
            raise ValueError(f"step must be an int from 0 to {len(self)}, got {number!r}")
        at, chunk, line = self.entries[number - 1] if number else (None, None, None)
        assembler = self._assembler
        content, content_hidden = _tail(
            assembler.content, self._content_count[number], self._content_chars[number], tail
        )
        thinking, thinking_hidden = _tail(
            assembler.thinking, self._thinking_count[number], self._thinking_chars[number], tail
        )
        done = self.done_at is not None and number >= self.done_at
        problem = (
            assembler.problem if self.problem_at is not None and number >= self.problem_at else None
        )
        return ChunkStep(
            number,
            len(self),
            chunk,
            at,
            content,
            content_hidden,
            thinking,
            thinking_hidden,
            assembler.tool_calls[: self._calls[number]],
            done,
            assembler.done_reason if done else None,
            problem,
            line,
        )


# --- A turn whose tool calls stream in fragments -----------------------------------------

#: What ends a reply, in each format whose calls stream in fragments.
END_SIGNALS = {"openai": "the choice's finish_reason", "anthropic": "message_stop"}


@dataclass(frozen=True)
class CallFragments:
    """One tool call at a step: its arguments as the JSON text so far, and what json.loads
    makes of that text (``parsed``, or the error it raises, ``not_json``)."""

    id: str
    name: str
    text: str
    parsed: object = None
    not_json: str | None = None


@dataclass(frozen=True)
class FragmentStep:
    """What an OpenAI or Anthropic stream looks like after ``number`` of its ``total`` chunks."""

    number: int
    total: int
    wire_format: str
    chunk: object  # the chunk that just arrived, parsed (None before any)
    at: float | None
    line: str | None  # its server-sent event exactly as it came, if the recording kept it
    content: str  # the text so far, or its last ``tail`` characters
    content_hidden: int
    calls: list  # CallFragments, in order
    finish: str | None  # what the stream said when it ended, once it did
    problem: str | None
    unfinished: str | None  # why the turn may not run (yet), from the loop's own assembler

    @property
    def may_dispatch(self) -> bool:
        return self.problem is None and self.unfinished is None

    @property
    def ended(self) -> bool:
        return self.number == self.total

    @property
    def end_signal(self) -> str:
        return END_SIGNALS[self.wire_format]


class FragmentSteps:
    """One recorded turn in ``wire_format`` (``"openai"`` or ``"anthropic"``), step by step.

    ``turn`` is one entry of ``recording["turns"]`` or a plain list of chunk dicts.
    """

    def __init__(self, turn, wire_format: str):
        if wire_format not in END_SIGNALS:
            raise ValueError(
                f"FragmentSteps steps through {sorted(END_SIGNALS)} streams, not "
                f"{wire_format!r} (an Ollama turn goes to TurnSteps)"
            )
        self.entries = _chunk_entries(turn)
        self.wire_format = wire_format

    def __len__(self) -> int:
        return len(self.entries)

    def step(self, number: int, *, tail: int | None = TAIL) -> FragmentStep:
        """The state after ``number`` chunks (0: the request is sent, nothing arrived yet)."""
        if isinstance(number, bool) or not isinstance(number, int) or not 0 <= number <= len(self):
            raise ValueError(f"step must be an int from 0 to {len(self)}, got {number!r}")
        assembler = FORMATS[self.wire_format].assembler()
        for _, chunk, _ in self.entries[:number]:
            assembler.add(chunk)
        turn = assembler.turn()
        content, hidden = _tail(
            [turn.text] if turn.text else [], 1 if turn.text else 0, len(turn.text), tail
        )
        at, chunk, line = self.entries[number - 1] if number else (None, None, None)
        return FragmentStep(
            number,
            len(self),
            self.wire_format,
            chunk,
            at,
            line,
            content,
            hidden,
            [_call_fragments(*call) for call in assembler.calls_so_far()],
            turn.done_reason,
            turn.problem,
            turn.unfinished,
        )


def _call_fragments(call_id: str, name: str, text: str) -> CallFragments:
    try:
        return CallFragments(call_id, name, text, parsed=json.loads(text))
    except (ValueError, RecursionError) as exc:
        return CallFragments(call_id, name, text, not_json=str(exc))


def _chunk_entries(turn) -> list:
    """``(arrival seconds or None, chunk, wire line or None)`` from a recorded turn or a
    list of chunks."""
    if isinstance(turn, list):
        return [(None, chunk, None) for chunk in turn]
    if isinstance(turn, dict) and isinstance(turn.get("chunks"), list):
        entries = []
        for index, entry in enumerate(turn["chunks"]):
            if not (isinstance(entry, dict) and "chunk" in entry):
                raise ValueError(
                    f"turn['chunks'][{index}] is not {{'at': seconds, 'chunk': {{...}}}}"
                    ": pass a turn of a recording unchanged, or a list of chunk dicts"
                )
            at = entry.get("at")
            line = entry.get("line")
            entries.append(
                (
                    at if isinstance(at, (int, float)) else None,
                    entry["chunk"],
                    line if isinstance(line, str) else None,
                )
            )
        return entries
    if isinstance(turn, dict) and "turns" in turn:
        raise ValueError(
            "this is a whole recording: pass one of its turns, e.g. recording['turns'][0]"
        )
    raise ValueError(
        f"expected one recorded turn (a dict with 'chunks') or a list of chunk "
        f"dicts, got {type(turn).__name__}"
    )


def _extend(counts: list, chars: list, fragments: list) -> None:
    """Record the fragment count and total length after one more chunk (O(1))."""
    grown = len(fragments) > counts[-1]
    counts.append(len(fragments))
    chars.append(chars[-1] + (len(fragments[-1]) if grown else 0))


def _tail(fragments: list, count: int, total: int, limit: int | None) -> tuple[str, int]:
    """The last ``limit`` characters of ``"".join(fragments[:count])`` and how many precede them.

    Walks back only as far as ``limit`` needs: fragments are never empty.
    """
    if limit is None or total <= limit:
        return "".join(fragments[:count]), 0
    pieces, size, index = [], 0, count
    while size < limit:
        index -= 1
        pieces.append(fragments[index])
        size += len(fragments[index])
    text = "".join(reversed(pieces))[-limit:]
    return text, total - len(text)


# --- The conversation ------------------------------------------------------------------


@dataclass(frozen=True)
class ConversationStep:
    """The message list at one step, what was just appended, and whether it is sent as is."""

    messages: list
    caption: str  # what was appended (or changed) and by whom
    note: str  # the request it is, or what must still happen before the next one
    #: the permission gate's decision on each tool message, by its index (runs with a gate)
    gate: dict = field(default_factory=dict)
    #: the hook events behind each message, by its index (runs with hooks)
    hooks: dict = field(default_factory=dict)


def conversation_steps(events) -> list[list[dict]]:
    """The message list of a run, growing one message at a time (first: the first request)."""
    return [step.messages for step in conversation_story(events)]


def conversation_story(events) -> list[ConversationStep]:
    """Each step of a run's growing message list, with a caption.

    ``events`` are a run's full loop events (from ``agent_events`` or the ``events``
    of ``run_attempt``): the ``messages`` snapshots of ``model_start`` and
    ``stopped`` fix the list; between two snapshots the new messages come one by one.
    A run with a budget may have replaced old tool results before a request: that is a
    step of its own. A run with a gate has a ``permission`` event for each call: each
    tool message's step says what the gate decided. A run with hooks has ``hook`` events:
    each message a hook stands behind says so (a denied call's refusal, the context a
    ``run_start`` hook added, the reason a ``stop`` hook sent the model back with), and a
    part a ``before_request`` hook added to one request only is a step of its own.
    """
    if isinstance(events, dict):
        raise ValueError(
            "pass a run's list of events, not a recording: "
            "recording, events = run_attempt(...); ConversationView(events)"
        )
    events = list(events)
    snapshots = [
        e
        for e in events
        if isinstance(e, dict)
        and e.get("type") in ("model_start", "stopped")
        and isinstance(e.get("messages"), list)
    ]
    if not snapshots:
        raise ValueError(
            "these events carry no message snapshots: pass the full events of a "
            "run (from agent_events, or the events returned by run_attempt), not "
            "a recording's saved 'events'"
        )
    decisions = iter(_decisions(events))
    notes = _HookNotes(events)
    gate, hooks = {}, {}
    lists, captions, requests = [], [], {}  # requests: step index -> the turn it is sent for
    first = list(snapshots[0]["messages"])
    previous = notes.kept(snapshots[0], first)
    lists.append(previous)
    captions.append(_first_caption(previous, bool(notes.start)))
    if notes.start:
        hooks[2] = notes.start  # the message after the system prompt and the task
    if len(first) > len(previous):
        hooks[len(first) - 1] = notes.parts.get(snapshots[0]["turn"], [])
        lists.append(first)
        captions.append(PART_CAPTION)
    if snapshots[0]["type"] == "model_start":
        requests[len(lists) - 1] = snapshots[0]["turn"]
    for snapshot in snapshots[1:]:
        current = list(snapshot["messages"])
        kept = notes.kept(snapshot, current)
        _check_continues(previous, kept)
        for length in range(len(previous) + 1, len(kept) + 1):
            messages = previous + kept[len(previous) : length]
            role = messages[-1].get("role")
            behind = []
            if role == "tool":
                gate[length - 1] = next(decisions, None)
                behind = next(notes.calls, [])
            elif role == "user" and len(messages) > 1 and messages[-2].get("role") == "assistant":
                behind = notes.stop_denials.pop(0) if notes.stop_denials else []
            if behind:
                hooks[length - 1] = behind
            lists.append(messages)
            captions.append(_appended_caption(messages, gate.get(length - 1), behind))
        if kept[: len(previous)] != previous:
            lists.append(kept)
            captions.append(_compacted_caption(lists[-2], kept))
        if len(current) > len(kept):
            hooks[len(current) - 1] = notes.parts.get(snapshot.get("turn"), [])
            lists.append(current)
            captions.append(PART_CAPTION)
        if snapshot["type"] == "model_start":
            requests[len(lists) - 1] = snapshot["turn"]
        previous = kept
    gate = {index: event for index, event in gate.items() if event is not None}
    stop = snapshots[-1] if snapshots[-1]["type"] == "stopped" else None
    return [
        ConversationStep(
            messages,
            caption,
            _note(index, lists, requests, stop),
            gate,
            {number: found for number, found in hooks.items() if number < len(messages)},
        )
        for index, (messages, caption) in enumerate(zip(lists, captions))
    ]


PART_CAPTION = (
    "a before_request hook added a labelled part to this request only: it is sent once, and "
    "not kept in the conversation"
)


class _HookNotes:
    """A run's hook events, sorted by the message each stands behind: the ``run_start``
    ones, the ``before_request`` ones by turn (when they added a part), the tool ones by
    call (in order), and the ``stop`` ones whose deny sent the model back (in order)."""

    def __init__(self, events: list) -> None:
        self.start: list = []
        self.parts: dict = {}
        calls, stops, pending = [], [], []
        denied_once = False
        for event in events:
            kind = event.get("type") if isinstance(event, dict) else None
            point = event.get("point") if kind == "hook" else None
            if point == "run_start" and event.get("context"):
                self.start.append(event)
            elif point == "before_request":
                self.parts.setdefault(event.get("turn"), []).append(event)
            elif point in ("before_tool", "after_tool"):
                pending.append(event)
            elif point == "stop" and event.get("decision") == "deny" and not denied_once:
                denied_once = True  # the loop honours one deny per run
                stops.append([event])
            elif kind == "tool_result":
                calls.append(pending)
                pending = []
        self.calls, self.stop_denials = iter(calls), stops
        added = {turn for turn, found in self.parts.items() if any(e.get("context") for e in found)}
        self.parts = {turn: self.parts[turn] for turn in added}

    def kept(self, snapshot: dict, messages: list) -> list:
        """A snapshot without the part a ``before_request`` hook added to that request only."""
        if snapshot["type"] == "model_start" and snapshot.get("turn") in self.parts:
            return messages[:-1]
        return messages


def _decisions(events) -> list:
    """The gate's decision for each tool result, in the order results were appended
    (None where the call had none: a run without a gate)."""
    found, pending = [], None
    for event in events:
        kind = event.get("type") if isinstance(event, dict) else None
        if kind == "tool_start":
            pending = None
        elif kind == "permission":
            pending = event
        elif kind == "tool_result":
            found.append(pending)
    return found


def _check_continues(previous: list, current: list) -> None:
    """A later snapshot keeps every earlier message in place, in the same role; only the
    budget may have replaced a tool message's content."""
    kept = current[: len(previous)]
    if len(current) < len(previous) or any(
        old != new and (old.get("role") != "tool" or new.get("role") != "tool")
        for old, new in zip(previous, kept)
    ):
        raise ValueError(
            "the message snapshots do not grow by appending: pass the events of one run"
        )


def _first_caption(messages: list, context: bool = False) -> str:
    if [m.get("role") for m in messages] == ["system", "user"]:
        return "the harness built the first request: the system prompt and the user's task"
    if context:
        return (
            "the harness built the first request: the system prompt, the user's task and "
            "the context a run_start hook added (kept for every request)"
        )
    return f"the harness built the first request: {len(messages)} messages"


def _appended_caption(messages: list, decision: dict | None = None, hooks=()) -> str:
    message = messages[-1]
    role = message.get("role")
    turn = sum(m.get("role") == "assistant" for m in messages)
    denial = next((h for h in hooks if h.get("decision") == "deny"), None)
    if role == "user" and denial is not None:
        return (
            f"the stop hook {denial['hook']} denied the stop (turn {turn}): the harness "
            "appended its reason as a user message, and the model goes back to work"
        )
    if role == "tool" and denial is not None:
        failed = f" (it failed: {denial['failure']})" if denial.get("failure") else ""
        return (
            f"the hook {denial['hook']}{failed} denied {message.get('tool_name', 'a tool')} "
            f"(turn {turn}): the harness appended the refusal, which the model reads "
            "instead of a result"
        )
    if role == "assistant":
        names = [c.get("function", {}).get("name", "?") for c in message.get("tool_calls") or []]
        if names:
            return f"the model's reply, turn {turn}: it asks for {' and '.join(names)}"
        if str(message.get("content", "")).strip():
            return f"the model's reply, turn {turn}: a final answer, no tool calls"
        return f"the model's reply, turn {turn}: no text and no tool calls"
    if role == "tool":
        name = message.get("tool_name", "a tool")
        if decision is not None and decision.get("decision") == "deny":
            return (
                f"the gate denied {name} (turn {turn}, {who_decided(decision)}): the harness "
                "appended the refusal, which the model reads instead of a result"
            )
        result = tool_result(message)
        failed = isinstance(result, dict) and "error" in result
        allowed = f", allowed {who_decided(decision)}" if decision is not None else ""
        return f"the harness appended the result of {name} (turn {turn}{allowed})" + (
            ": an error the model can read" if failed else ""
        )
    return f"a {role} message was appended"


def who_decided(decision: dict) -> str:
    """Who decided, in words: the policy (and its rule), a recorded answer, a person."""
    by = decision.get("by")
    if by == "policy":
        return (
            f"by the policy's rule '{decision['rule']}'"
            if decision.get("rule")
            else "by the policy"
        )
    return {
        "answer": "by the recorded answer to the question",
        "person": "by the person asked",
        "nobody": "as no one could answer",
    }.get(by, f"by {by}")


def _compacted_caption(before: list, after: list) -> str:
    replaced = sum(old != new for old, new in zip(before, after))
    return (
        f"the budget replaced {replaced} old tool result{'' if replaced == 1 else 's'} with "
        f"a short note: {measure(before)['total']:,} characters became "
        f"{measure(after)['total']:,}; every message keeps its place"
    )


def tool_result(message: dict):
    """A tool message's content parsed from its JSON text, or None if it is not JSON."""
    try:
        return json.loads(message.get("content"))
    except (TypeError, ValueError):
        return None


def _note(index: int, lists: list, requests: dict, stop) -> str:
    notes = []
    if index in requests:
        notes.append(
            f"the model receives exactly these {len(lists[index])} messages as its "
            f"request for turn {requests[index]}"
        )
    elif index + 1 < len(lists) and len(lists[index + 1]) == len(lists[index]):
        notes.append("not sent as it is: the budget shortens it before the next request")
    if index == len(lists) - 1 and stop is not None:
        notes.append(f"the run stopped ({stop['reason']}): no further request is made")
    return "; ".join(notes) or "not sent yet: the harness appends more before the next request"

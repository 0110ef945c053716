"""Replay a recording as a model: the same chunks, turn by turn, to the same loop.

In strict mode each request the harness sends is compared with the recorded one,
so a harness that drops or reorders a message is caught at the first difference.
A :class:`RequestCursor` decides which recorded turn answers a request; the
in-process :class:`ReplayModel` and the HTTP replay server (``replay_server.py``) share it.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass

from ..harness.contracts import tool_names
from ..harness.frozen import freeze
from .errors import REPLAY_MISMATCH
from .json_difference import where_different


class ReplayError(RuntimeError):
    """The harness asked for something the recording cannot give."""


class ReplayMismatch(ReplayError):
    """In strict mode, the harness sent a request the recording does not hold."""

    #: how the loop's ``model_error`` stop introduces it: no model was involved
    stop_detail = (
        "replay mismatch: the harness's request differs from the recording (not a model failure)"
    )


#: What to do about a request a strict replay refused (the difference is named before it).
STRICT_ADVICE = (
    "A strict replay answers only the requests it recorded. If the recording was edited, its "
    "replies no longer lead to its requests: record the run again, or restore the file; if "
    "you changed the harness, make it send what the recording has; `--loose` "
    "(strict=False) replays without comparing requests."
)


def first_difference(
    recorded: dict,
    messages: list,
    names: list,
    *,
    over_http: bool = False,
    canonical=None,
) -> str | None:
    """Describe the first way a request differs from a recorded one, or return None.

    The description names the first differing place (``message 4 (assistant),
    tool_calls[0].function.arguments.new, character 31``) and shows both sides there.
    ``over_http``: the request came over HTTP, where a tool call's ``id`` and
    ``function.index`` may be missing (the pinned ``ollama`` SDK drops them).
    ``canonical(messages)``: the messages written one way of the ways the API treats as the
    same (a string or a list of one text block...), applied to both sides before they are
    compared, so only what the API treats as different is a difference.
    """
    if recorded.get("tools") is not None and list(recorded["tools"]) != list(names):
        return f"the harness offered the tools {names}, the recording offered {recorded['tools']}"
    expected = recorded["messages"]
    if canonical is not None:
        expected, messages = canonical(expected), canonical(messages)
    for index, (want, got) in enumerate(zip(expected, messages)):
        if over_http:
            want = _as_carried(want, got)
        place = where_different(_comparable(want), _comparable(got))
        if place:
            named = want.get("role") or want.get("type")  # a Responses result item has no role
            return (
                f"message {index} ({named}) differs at {place.where}: "
                f"the recording has {place.first} but the harness sent {place.other}"
            )
    if len(messages) != len(expected):
        index = min(len(messages), len(expected))
        extra = messages[index] if len(messages) > index else expected[index]
        return (
            f"the harness sent {len(messages)} messages, the recording has {len(expected)} "
            f"(first unmatched: message {index}, {_short(extra)})"
        )
    return None


@dataclass(frozen=True)
class Claim:
    """The recorded turn that answers a request, not yet used up: ``number`` (1 = the first),
    the ``turn``, and the ``conversation`` it belongs to (counted from 1; a new one begins
    each time the recording starts over)."""

    number: int
    turn: dict
    conversation: int


class RequestCursor:
    """Which recorded turn answers each request of a conversation.

    Requests take the turns in order; in strict mode each is first compared with the
    recorded request, and one that differs raises :class:`ReplayMismatch` without
    using up its turn (a corrected retry gets it). ``restarts``: a request with as
    many messages as the first recorded one begins a new conversation, so one server
    can answer run after run (unless the next recorded turn opens a conversation too: a
    subagent's, in a lesson 10 recording). ``over_http``: requests come over HTTP, where a
    tool call's ``id`` and ``function.index`` may have been dropped by the client's SDK.
    ``canonical``: see :func:`first_difference`.

    A server answers in two steps: :meth:`claim` finds the turn, and :meth:`use` uses it
    up once the reply has begun. A reply refused or broken before its first byte uses
    nothing, so the client's retry (the official SDKs retry such failures) gets the same
    turn. In strict mode, a request equal to the last answered one gets that turn again,
    as a service answers a request sent again after its reply broke off. :meth:`next_turn`
    does both at once. Safe to share between threads.
    """

    def __init__(
        self,
        turns: list,
        *,
        strict: bool = True,
        restarts: bool = False,
        over_http: bool = False,
        canonical=None,
    ):
        self.turns = turns
        self.strict = strict
        self.restarts = restarts
        self.over_http = over_http
        self.canonical = canonical
        self.answered = 0  # turns used up in the current conversation
        self.conversation = 1
        self._lock = threading.Lock()

    def claim(self, messages: list, names: list) -> Claim:
        """The turn that answers this request, not used up yet; or ReplayMismatch."""
        with self._lock:
            opening = len(self.turns[0]["request"]["messages"])
            fresh = (
                self.restarts
                and self.answered
                and len(messages) == opening
                # a recorded turn that opens a conversation of its own (a subagent's, lesson
                # 10) is the next turn, not the recording starting over
                and not (
                    self.answered < len(self.turns)
                    and len(self.turns[self.answered]["request"]["messages"]) == opening
                )
            )
            number = 1 if fresh else self.answered + 1
            if number > len(self.turns):
                recorded = len(self.turns)
                raise ReplayMismatch(
                    f"the recording has {recorded} turn{'s' * (recorded != 1)}, but this is "
                    f"request {number} of the conversation: the recorded run stopped there, and a "
                    "replay cannot answer past its end (give the run the recording's own "
                    "budget, or record a longer run)"
                )
            turn = self.turns[number - 1]
            if self.strict:
                difference = self._difference(number, messages, names)
                if difference and number > 1 and not self._difference(number - 1, messages, names):
                    number -= 1  # the last answered request again: its reply broke, it is retried
                    turn = self.turns[number - 1]
                elif difference:
                    raise ReplayMismatch(
                        f"turn {number}: the request {REPLAY_MISMATCH}: {difference}. "
                        + STRICT_ADVICE
                    )
            if fresh:  # the recording starts over now, whether or not this reply gets through
                self.answered = 0
                self.conversation += 1
            return Claim(number, turn, self.conversation)

    def _difference(self, number: int, messages: list, names: list) -> str | None:
        return first_difference(
            self.turns[number - 1]["request"],
            messages,
            names,
            over_http=self.over_http,
            canonical=self.canonical,
        )

    def use(self, claim: Claim) -> None:
        """Use up a claimed turn: the reply to it has begun."""
        with self._lock:
            if claim.conversation == self.conversation:
                self.answered = max(self.answered, claim.number)

    def next_turn(self, messages: list, names: list) -> tuple[int, dict]:
        """``(number, turn)`` for this request, used up at once; or ReplayMismatch."""
        claim = self.claim(messages, names)
        self.use(claim)
        return claim.number, claim.turn


class ReplayModel:
    """A ``chat`` callable that answers from a recording.

    ``speed``: None yields chunks as fast as the loop takes them; 1.0 waits for each
    chunk's recorded arrival time, 10.0 ten times faster. Each chunk is handed out frozen
    (``labkit.harness.frozen``): read-only, so neither the loop nor a recorder has to copy
    it, and nothing can change the recording through it.
    """

    def __init__(self, recording: dict, strict: bool = True, *, speed: float | None = None):
        self.recording = recording
        self.wire_format = recording.get("wire_format", "ollama")  # what its chunks are
        self.cursor = RequestCursor(recording["turns"], strict=strict)
        self.speed = speed

    @property
    def requests(self) -> int:
        """Requests answered so far."""
        return self.cursor.answered

    def provenance(self, now=None) -> dict:
        """Who wrote the chunks it replays: the recording's own authors."""
        return {**self.recording["provenance"], "replayed_from": "ReplayModel, in process"}

    def skip_turns(self, turns: int) -> None:
        """Answer from recorded turn ``turns + 1`` on: a run picked up from its journal (lesson
        14) made its first ``turns`` requests before it was stopped."""
        self.cursor.answered = turns

    def __repr__(self):
        mode = "strict" if self.cursor.strict else "loose"
        pace = f", {self.speed:g}x recorded speed" if self.speed else ""
        return f"ReplayModel({len(self.cursor.turns)} recorded turns, {mode}{pace})"

    def __call__(self, messages, tool_schemas):
        """Check the request (strict mode) and return an iterator of the turn's chunks."""
        return (chunk for chunk, _ in self.chunks_with_lines(messages, tool_schemas))

    def chunks_with_lines(self, messages, tool_schemas):
        """Like calling it, but each item is ``(chunk, line)``: the line (NDJSON, or a
        server-sent event) the recording kept for the chunk, or None if it kept none."""
        _, turn = self.cursor.next_turn(messages, tool_names(tool_schemas))
        return self._stream(turn)

    def _stream(self, turn):
        start = time.monotonic()
        for entry in turn["chunks"]:
            if self.speed:
                time.sleep(max(0.0, start + entry["at"] / self.speed - time.monotonic()))
            yield freeze(entry["chunk"]), entry.get("line")
        if "error" in turn:
            raise ReplayError(turn["error"])


def _comparable(message: dict) -> dict:
    """Messages compare equal when their non-empty fields do (absent == None == '' == [])."""
    return {k: v for k, v in message.items() if v not in (None, "", [], {})}


def _as_carried(want: dict, got: dict) -> dict:
    """The recorded message without the tool-call ``id`` / ``function.index`` the sent one lacks."""
    calls, sent = want.get("tool_calls"), got.get("tool_calls")
    if not (isinstance(calls, list) and isinstance(sent, list)):
        return want
    carried = []
    for position, call in enumerate(calls):
        other = sent[position] if position < len(sent) and isinstance(sent[position], dict) else {}
        if isinstance(call, dict):
            call = {k: v for k, v in call.items() if k != "id" or "id" in other}
            function, sent_function = call.get("function"), other.get("function")
            if isinstance(function, dict) and not (
                isinstance(sent_function, dict) and "index" in sent_function
            ):
                call["function"] = {k: v for k, v in function.items() if k != "index"}
        carried.append(call)
    return {**want, "tool_calls": carried}


def _short(message, limit: int = 120) -> str:
    text = json.dumps(message, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 5] + "...}"

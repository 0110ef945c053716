"""Replay a recording as a model: the same chunks, turn by turn, to the same loop.

In strict mode each request the harness sends is compared with the recorded one,
so a harness that drops or reorders a message is caught at the first difference.
"""

from __future__ import annotations

import copy
import json
import time


class ReplayError(RuntimeError):
    """The harness asked for something the recording cannot give."""


def tool_names(schemas) -> list:
    return [schema["function"]["name"] for schema in schemas]


def first_difference(recorded: dict, messages: list, names: list) -> str | None:
    """Describe the first way a request differs from a recorded one, or return None."""
    if recorded.get("tools") is not None and list(recorded["tools"]) != list(names):
        return f"the tools offered were {names}, the recording offered {recorded['tools']}"
    expected = recorded["messages"]
    for index, (want, got) in enumerate(zip(expected, messages)):
        if _canonical(want) != _canonical(got):
            return (f"message {index} ({want.get('role')}) differs: the recording has "
                    f"{_short(want)} but the harness sent {_short(got)}")
    if len(messages) != len(expected):
        index = min(len(messages), len(expected))
        extra = messages[index] if len(messages) > index else expected[index]
        return (f"the harness sent {len(messages)} messages, the recording has {len(expected)} "
                f"(first unmatched: message {index}, {_short(extra)})")
    return None


class ReplayModel:
    """A ``chat`` callable that answers from a recording.

    ``speed``: None yields chunks as fast as the loop takes them; 1.0 waits for each
    chunk's recorded arrival time, 10.0 ten times faster.
    """

    def __init__(self, recording: dict, strict: bool = True, *, speed: float | None = None):
        self.turns = recording["turns"]
        self.provenance = {**recording["provenance"], "replayed_from": "ReplayModel, in process"}
        self.strict = strict
        self.speed = speed
        self.requests = 0

    def __repr__(self):
        mode = "strict" if self.strict else "loose"
        pace = f", {self.speed:g}x recorded speed" if self.speed else ""
        return f"ReplayModel({len(self.turns)} recorded turns, {mode}{pace})"

    def __call__(self, messages, tool_schemas):
        self.requests += 1
        if self.requests > len(self.turns):
            raise ReplayError(f"the recording has {len(self.turns)} turns, but the harness "
                              f"asked for turn {self.requests}")
        turn = self.turns[self.requests - 1]
        if self.strict:
            difference = first_difference(turn["request"], messages, tool_names(tool_schemas))
            if difference:
                raise ReplayError(f"turn {self.requests}: the request does not match the "
                                  f"recording: {difference}")
        return self._stream(turn)

    def _stream(self, turn):
        start = time.monotonic()
        for entry in turn["chunks"]:
            if self.speed:
                time.sleep(max(0.0, start + entry["at"] / self.speed - time.monotonic()))
            yield copy.deepcopy(entry["chunk"])
        if "error" in turn:
            raise ReplayError(turn["error"])


def _canonical(message: dict) -> str:
    """Messages compare equal when their non-empty fields do (absent == None == '' == [])."""
    return json.dumps({k: v for k, v in message.items() if v not in (None, "", [], {})},
                      sort_keys=True)


def _short(message, limit: int = 120) -> str:
    text = json.dumps(message, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 5] + "...}"

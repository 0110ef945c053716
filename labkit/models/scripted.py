"""Scripted model turns, and the script that writes the course's scripted recordings.

A scripted model is a list of planned turns turned into Ollama-shaped chunks, with
thinking and text streamed in small fragments and tool calls on a ``done: false``
chunk before the final one, the way a real server streams them: each call with an
``id`` (``call_`` and 8 characters) and its ``function.index`` in the turn, each
chunk written as the NDJSON line Ollama's Go server would send. Its chunks say
``"model": "scripted"``: no model wrote them.

Regenerate the recordings with ``make recordings`` (which calls :func:`main`); a
test checks that the committed files equal what it produces.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path

from ..recording.attempt import run_attempt
from ..recording.format import save_recording
from ..settings import RECORDINGS_DIR
from .chunks import call, chunk
from .wire import go_time, ollama_line

MODEL_NAME = "scripted"
FIRST_CHUNK_AT = 0.35     # seconds: reading the prompt before the first fragment
FRAGMENT_EVERY = 0.04     # seconds per fragment, about 25 tokens a second
STARTED = datetime(2026, 12, 1, 9, 0, tzinfo=timezone.utc)


def fragments(text: str) -> list:
    """Cut text into token-sized pieces: a few characters, with their leading space."""
    return re.findall(r"\s*\S{1,4}|\s+", text)


def call_id(number: int) -> str:
    """A tool call id shaped like Ollama's (``call_`` and 8 of a-z0-9), fixed per call number."""
    digest = hashlib.sha256(f"labkit scripted tool call {number}".encode()).digest()
    return "call_" + "".join(ID_ALPHABET[byte % len(ID_ALPHABET)] for byte in digest[:8])


ID_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789"


@dataclass
class PlannedTurn:
    thinking: str = ""
    content: str = ""
    tool_calls: list = field(default_factory=list)
    done_reason: str = "stop"


def turn_chunks(turn: PlannedTurn, prompt_tokens: int = 600, first_call: int = 1) -> list:
    """The ``(at, chunk)`` pairs a server would stream for a planned turn.

    ``first_call`` numbers the turn's first tool call among all calls of the run, so
    that every call of a conversation gets its own id.
    """
    pieces = [("thinking", f) for f in fragments(turn.thinking)]
    pieces += [("content", f) for f in fragments(turn.content)]
    timeline = [FIRST_CHUNK_AT + i * FRAGMENT_EVERY for i in range(len(pieces) + 2)]
    chunks = [_chunk(timeline[i], {"content": text if kind == "content" else "",
                                   **({"thinking": text} if kind == "thinking" else {})})
              for i, (kind, text) in enumerate(pieces)]
    at = timeline[len(pieces)]
    if turn.tool_calls:
        sent = [{"id": call_id(first_call + index),
                 "function": {"index": index, **planned["function"]}}
                for index, planned in enumerate(turn.tool_calls)]
        chunks.append(_chunk(at, {"content": "", "tool_calls": sent}))
    end = timeline[-1]
    final = _chunk(end, {"content": ""}, done=True)
    eval_count = len(pieces) + len(turn.tool_calls) * 12
    final.update(done_reason=turn.done_reason, total_duration=_ns(end), load_duration=_ns(0.05),
                 prompt_eval_count=prompt_tokens, prompt_eval_duration=_ns(FIRST_CHUNK_AT - 0.05),
                 eval_count=eval_count, eval_duration=_ns(end - FIRST_CHUNK_AT))
    chunks.append(final)
    return [(round(chunk.pop("_at"), 6), chunk) for chunk in chunks]


class ScriptedChat:
    """A ``chat`` that streams planned turns in order, whatever it is asked.

    It keeps a virtual clock, advanced to each chunk's planned arrival time, so a
    recording of it holds the planned times rather than this machine's speed.
    """

    def __init__(self, turns):
        starts = [1]
        for turn in turns:
            starts.append(starts[-1] + len(turn.tool_calls))
        self.turns = [turn_chunks(turn, first_call=first) for turn, first in zip(turns, starts)]
        self.now = 0.0
        self.requests = 0

    def clock(self) -> float:
        return self.now

    def __call__(self, messages, tool_schemas):
        return (chunk for chunk, _ in self.wire(messages, tool_schemas))

    def wire(self, messages, tool_schemas):
        """Each chunk with the NDJSON line a server sends for it: ``(chunk, line)``."""
        planned = self.turns[self.requests]
        self.requests += 1
        return self._stream(planned)

    def _stream(self, planned):
        start = self.now
        for at, chunk in planned:
            self.now = start + at
            yield chunk, ollama_line(chunk)


def _chunk(at: float, message: dict, done: bool = False) -> dict:
    return {"_at": at, **chunk(**message, done=done, model=MODEL_NAME,
                               created_at=go_time(STARTED + timedelta(seconds=at)))}


def _ns(seconds: float) -> int:
    return int(round(seconds * 1e9))


# --- The course's scenarios -------------------------------------------------------------

OLD_LINE = "        path = PurePosixPath(name)"
NEW_LINE = "        path = PurePosixPath(name.replace('\\\\', '/'))"

READ_SOURCE = PlannedTurn(
    thinking="The task is about names written with backslashes. I will read path_rules.py first.",
    tool_calls=[call("read_file", path="path_rules.py")])

REPAIR = [
    READ_SOURCE,
    PlannedTurn(
        thinking="python_sources builds a PurePosixPath straight from each name. "
                 "Next I read the tests to see what is expected.",
        tool_calls=[call("read_file", path="tests/test_path_rules.py")]),
    PlannedTurn(
        thinking="PurePosixPath does not treat a backslash as a separator, so "
                 "src\\api\\routes.py is one single part and is not under src. Replacing "
                 "backslashes with forward slashes before building the path fixes it.",
        tool_calls=[call("replace_text", old=OLD_LINE, new=NEW_LINE)]),
    PlannedTurn(
        thinking="The edit is in. Now I run the tests to check it.",
        tool_calls=[call("run_tests")]),
    PlannedTurn(
        thinking="run_tests returned exit code 0 with 4 passed.",
        content="I changed python_sources in path_rules.py so that each name has its "
                "backslashes replaced with forward slashes before it becomes a PurePosixPath. "
                "The last run_tests returned exit code 0: 4 passed."),
]

FALSE_CLAIM = [
    READ_SOURCE,
    PlannedTurn(
        thinking="This looks like it already handles paths.",
        content="Fixed: python_sources now handles backslash names, and all tests pass."),
]

STALE_EDIT = [
    PlannedTurn(
        thinking="I will read the module and its tests together.",
        tool_calls=[call("read_file", path="path_rules.py"),
                    call("read_file", path="tests/test_path_rules.py")]),
    PlannedTurn(
        thinking="The path is built from the raw name; I replace that line.",
        tool_calls=[call("replace_text", old="        path = PurePosixPath(changed)",
                         new="        path = PurePosixPath(changed.replace('\\\\', '/'))")]),
    PlannedTurn(
        thinking="The old text was not found: my copy of the line is stale. "
                 "I read the file again.",
        tool_calls=[call("read_file", path="path_rules.py")]),
    PlannedTurn(
        thinking="The loop variable is name, not changed.",
        tool_calls=[call("replace_text", old=OLD_LINE, new=NEW_LINE)]),
    PlannedTurn(thinking="Now I run the tests.", tool_calls=[call("run_tests")]),
    PlannedTurn(
        thinking="Exit code 0.",
        content="My first edit quoted a line that is not in the file, so I read it again and "
                "replaced the real line: names now have backslashes turned into forward "
                "slashes. run_tests returned exit code 0: 4 passed."),
]

#: name -> (planned turns, max_turns, what the recording shows)
SCENARIOS = {
    "repair": (REPAIR, 8, "the five-turn repair: read both files, edit, run the tests, summarise"),
    "bounded": (REPAIR, 1, "the same task with max_turns=1: one request, then the budget stops it"),
    "false_claim": (FALSE_CLAIM, 8, "a final message claiming success without any edit"),
    "stale_edit": (STALE_EDIT, 8, "a replace_text whose old text is stale, then recovery"),
}


def scripted_recording(name: str) -> dict:
    """Run the loop against a scenario on a fresh copy and return the recording."""
    turns, max_turns, description = SCENARIOS[name]
    chat = ScriptedChat(turns)
    provenance = {"source": "scripted", "scenario": name, "description": description,
                  "script": "labkit.models.scripted (make recordings)",
                  "note": "written by a script, not by a model; it follows the shape of a "
                          "real Ollama stream"}
    recording, _ = run_attempt(chat, provenance=provenance, max_turns=max_turns, clock=chat.clock)
    return recording


def main() -> None:
    for name in SCENARIOS:
        path = save_recording(scripted_recording(name), RECORDINGS_DIR / f"{name}.json")
        print(f"wrote {path}")


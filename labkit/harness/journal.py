"""A run's journal (lesson 14): everything it does, one JSON line per entry, written as it
happens, so a run killed mid-way can be picked up where it stood.

Each line is one object ``{"n": N, "kind": KIND, ...}`` numbered from 0, written whole by one
``write`` to a file opened for appending (a killed process leaves whole lines behind, the
kernel keeps them, with no ``fsync``: a crash of the machine itself is not covered). The
kinds, in the order a run writes them:

- ``begin``: what the run is (the task's name and sentence, the wire format, the budget,
  the provenance of its replies, the independent check before, the test file's sha256);
- ``request``: one model request (``turn``, the ``messages`` sent, the tools' names);
- ``chunk``: one chunk of that reply as it arrived (``turn``, ``at`` seconds, ``chunk``,
  and ``line``, its text as sent, when the model keeps it); ``error``: the reply failed;
- ``event``: one event of the loop, as a recording keeps it (no clock time, no messages);
- ``resumed``: the run was picked up again (see :func:`resume_point`);
- ``end``: the check after the run, and the test file's sha256 after.

:func:`read_journal` refuses a journal that is not whole (a last line cut off, a line that
is not JSON, numbers out of order, entries that do not follow from the ones before), with a
message naming the line: a refused journal is never half-used. :func:`resume_point` says,
from a whole journal that has no ``end``, where its run picks up: after its last model turn
whose calls began to run, with the conversation up to it rebuilt (the reply assembled again
from its journaled chunks, by the wire format's own assembler), each of its calls' results
taken from the journal, an error result for a call that was running when the run was killed
(its effect is unknown, so it is never run twice), and the calls that had not begun still to
run. A reply that was streaming when the run was killed is dropped; its request is sent again.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from .contracts import Message, ToolCall, WireFormat

FORMAT = "labkit-journal"
VERSION = 1
KINDS = ("begin", "request", "chunk", "error", "event", "resumed", "end")
MAX_BYTES = 256 * 2**20  # far above any run's journal
#: What a call that was running when the run was killed gets as its error: it is never run again.
INTERRUPTED = (
    "the run was stopped while this call was running, and was resumed later: the call was "
    "not run again, and whether it took effect is unknown; check before repeating it"
)


class JournalError(ValueError):
    """A journal that cannot be used; the message names the file, the line and the problem."""


class Journal:
    """A journal file open for appending: ``write`` adds one whole line and hands it to the
    kernel at once. Opening a journal that holds entries already goes on numbering them."""

    def __init__(self, path: str | os.PathLike[str], entries: int = 0) -> None:
        self.path = Path(path)
        self.count = entries
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0)
        self._fd = os.open(self.path, flags, 0o644)

    def write(self, kind: str, **fields) -> dict:
        if kind not in KINDS:
            raise ValueError(f"a journal entry is one of {KINDS}, not {kind!r}")
        entry = {"n": self.count, "kind": kind, **fields}
        data = (json.dumps(entry, ensure_ascii=False) + "\n").encode("utf-8")
        while data:  # one write for all but a huge line: nothing half-written by a kill
            data = data[os.write(self._fd, data) :]
        self.count += 1
        return entry

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()


def read_journal(path: str | os.PathLike[str]) -> list[dict]:
    """Every entry of the journal at ``path``, checked whole; :class:`JournalError` if not."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise JournalError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    if len(data) > MAX_BYTES:
        raise JournalError(f"{path}: larger than {MAX_BYTES // 2**20} MB; not a run's journal")
    if not data:
        raise JournalError(f"{path}: empty; a journal begins with its 'begin' line")
    if not data.endswith(b"\n"):
        raise JournalError(
            f"{path}: its last line is cut off (the file ends without a newline): it was not "
            "written whole, so the journal cannot say where the run stood"
        )
    entries, state = [], _State()
    for number, line in enumerate(data[:-1].split(b"\n")):
        where = f"{path}: line {number + 1}"
        try:
            entry = json.loads(line.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError):
            raise JournalError(f"{where} is not a line of JSON text") from None
        if not isinstance(entry, dict) or entry.get("n") != number:
            raise JournalError(f"{where} is not entry {number} (lines missing, doubled or moved)")
        problem = state.take(entry)
        if problem:
            raise JournalError(f"{where}: {problem}")
        entries.append(entry)
    return entries


class _State:
    """What the entries so far say, to judge the next one in constant time."""

    def __init__(self) -> None:
        self.begun = self.stopped = self.ended = False
        self.turn = 0  # the turn whose request came last
        self.resumed_at: int | None = None  # a 'resumed' line's turns, until the next request

    def take(self, entry: dict) -> str | None:
        """Why ``entry`` cannot come next (None: it can), and take it in."""
        kind, turn = entry.get("kind"), entry.get("turn")
        if kind not in KINDS:
            return f"its kind is {kind!r}, not one of {KINDS}"
        if not self.begun:
            if kind != "begin" or entry.get("format") != FORMAT or entry.get("version") != VERSION:
                return f"a journal begins with a 'begin' line of {FORMAT} version {VERSION}"
            if not isinstance(entry.get("start"), list) or not entry["start"]:
                return "the 'begin' line has no starting conversation"
            self.begun = True
            return None
        if kind == "begin":
            return "a second 'begin': two runs in one journal"
        if self.ended:
            return "an entry after the run's 'end'"
        if kind == "request":
            allowed = {self.turn + 1} | (
                {self.resumed_at + 1} if self.resumed_at is not None else set()
            )
            if turn not in allowed or not isinstance(entry.get("messages"), list):
                return f"a request for turn {turn!r} where turn {self.turn + 1} comes next"
            self.turn, self.resumed_at = turn, None
        elif kind in ("chunk", "error"):
            if turn != self.turn or self.turn == 0 or self.resumed_at is not None:
                return f"a {kind} of turn {turn!r}, but no reply of that turn is being read"
            if kind == "chunk" and not isinstance(entry.get("chunk"), dict):
                return "a chunk that is not a JSON object"
        elif kind == "event":
            event = entry.get("event")
            if not isinstance(event, dict) or not isinstance(event.get("type"), str):
                return "an event without a type"
            if self.stopped:
                return "an event after the run stopped"
            self.stopped = event["type"] == "stopped"
        elif kind == "resumed":
            if not (_is_count(entry.get("turns")) and _is_count(entry.get("tool_calls"))):
                return "a 'resumed' line without its turns and tool calls"
            if self.stopped or entry["turns"] > self.turn:
                return "a 'resumed' line that does not follow from the run so far"
            self.resumed_at = entry["turns"]
        elif kind == "end":
            if not self.stopped:
                return "an 'end' before the run stopped"
            self.ended = True
        return None


def _is_count(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


@dataclass
class ResumePoint:
    """Where a journaled run picks up.

    ``messages``: the conversation up to the last complete turn's reply (its request, then the
    reply, assembled again from its chunks); ``calls``: that reply's calls, in order; the first
    ``len(results)`` of them ran and gave ``results``; the next, up to ``started``, was running
    when the run stopped (at most one: calls run one at a time); the rest never began.
    ``turns``: the requests made so far; ``tool_calls``: the calls begun so far. ``discarded``:
    ``(turn, chunks)`` of a reply that was streaming when the run stopped, dropped."""

    messages: list[Message]
    calls: list[ToolCall] = field(default_factory=list)
    results: list[dict] = field(default_factory=list)
    started: int = 0
    turns: int = 0
    tool_calls: int = 0
    discarded: tuple[int, int] | None = None

    @property
    def interrupted(self) -> list[ToolCall]:
        """The call that was running when the run stopped (none, or one)."""
        return self.calls[len(self.results) : self.started]

    @property
    def pending(self) -> list[ToolCall]:
        """The calls of the last complete turn that never began."""
        return self.calls[self.started :]


def resume_point(entries: list[dict], wire: WireFormat) -> ResumePoint:
    """Where the run of a whole, unfinished journal picks up (see the module's docstring)."""
    turns: dict[int, dict] = {}  # turn -> its request's messages, its chunks, its calls' ends
    begun = 0
    for entry in entries:
        kind = entry["kind"]
        if kind == "request":  # a turn asked again after a resume replaces the dropped one
            turns[entry["turn"]] = {"messages": entry["messages"], "chunks": [], "ended": []}
            turns[entry["turn"]]["started"] = 0
        elif kind == "chunk":
            turns[entry["turn"]]["chunks"].append(entry["chunk"])
        elif kind == "event" and entry["event"]["type"] in ("tool_start", "tool_result"):
            event = entry["event"]
            turn = turns[event["turn"]]
            if event["type"] == "tool_start":
                turn["started"] += 1
                begun += 1
            else:
                turn["ended"].append(event["result"])
    last = max((number for number, turn in turns.items() if turn["started"]), default=0)
    streaming = max(turns, default=0)
    discarded = (streaming, len(turns[streaming]["chunks"])) if streaming > last else None
    if last == 0:  # no reply got as far as its calls: begin again from the first request
        first = turns[1]["messages"] if 1 in turns else entries[0]["start"]
        return ResumePoint(list(first), discarded=discarded)
    turn = turns[last]
    assembler = wire.assembler()
    for chunk in turn["chunks"]:
        assembler.add(chunk)
    reply = assembler.turn()
    ended, started = turn["ended"], turn["started"]
    fits = len(ended) <= started <= min(len(ended) + 1, len(reply.calls))
    if not reply.may_dispatch or not fits:
        raise JournalError(
            f"turn {last}'s journaled reply does not give the calls the run made: the journal "
            "does not hold together"
        )
    return ResumePoint(
        [*turn["messages"], reply.message],
        list(reply.calls),
        list(ended),
        started,
        turns=last,
        tool_calls=begun,
        discarded=discarded,
    )

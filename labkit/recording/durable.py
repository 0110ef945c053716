"""A durable attempt at one task of the task set (lesson 14): journaled as it happens, picked
up where it stood after a kill, and kept as a recording built from its journal.

An attempt lives in a folder of its own::

    FOLDER/repo/            the attempt's copy of the task's repository (its tools work here)
    FOLDER/journal.jsonl    every request, chunk and event, one line each, as it happens
    FOLDER/recording.json   the recording, written from the journal once the run has ended

``run_durable`` does whatever the folder still needs: a fresh attempt (copy the repository,
check it, write the journal's ``begin``, run the loop, check again, ``end``); the rest of an
attempt whose journal has no ``end`` (its run picked up at ``journal.resume_point``: the
conversation rebuilt from the journal, the calls that never began run now, a call that was
running when the run was killed answered with an error rather than run twice, and the loop
started again from there with ``contracts.Start``); or nothing but the recording, for a
finished one. A journal that is not whole is refused (``JournalError``) before anything runs.

The recording holds the attempt's requests and chunks, its events and both checks, as
``run_attempt``'s do; a reply dropped by a kill is left out (its request was sent again), and
``"resumed"`` says where each pick-up happened. A replayed model (``ReplayModel``) is told
how many requests were made before (``skip_turns``), so it answers the next one.
"""

from __future__ import annotations

import json
import shutil
import time
from contextlib import closing
from pathlib import Path

from ..harness.atomic import write_atomically
from ..harness.contracts import Start, ToolResult, ToolStart, tool_names
from ..harness.formats import format_of
from ..harness.journal import FORMAT as JOURNAL_FORMAT
from ..harness.journal import INTERRUPTED, Journal, JournalError, read_journal, resume_point
from ..harness.journal import VERSION as JOURNAL_VERSION
from ..harness.loop import MAX_TURNS, agent_events, call_tool
from ..harness.sample import file_sha256, run_checks
from ..harness.task_tools import TaskTools
from ..harness.taskset import REPO, TASK_SYSTEM_PROMPT, Task, copy_repo
from .attempt import with_lines
from .contents import FORMAT, VERSION, compact_event
from .files import save_recording

JOURNAL = "journal.jsonl"
RECORDING = "recording.json"


class AttemptTimeout(RuntimeError):
    """The attempt ran past its deadline; its journal is left to be picked up again."""


def run_durable(
    task: Task,
    chat,
    folder: str | Path,
    *,
    provenance: dict,
    max_turns: int = MAX_TURNS,
    sandbox=None,
    on_event=None,
    clock=time.monotonic,
    deadline: float | None = None,
) -> dict:
    """Run, resume or just finish the attempt at ``task`` kept in ``folder``; return its
    recording (also saved as ``FOLDER/recording.json``).

    ``provenance``: who writes the replies (the recording keeps the first run's; a pick-up by
    another model is named in its ``resumed`` entry). ``sandbox`` (lesson 12): where the
    tools' programs and both checks run. ``on_event(event)`` hears each event as it happens;
    ``clock`` times the chunks' arrival, as ``run_attempt``'s does. ``deadline``: a
    ``time.monotonic()`` past which the run stops between two events with
    :class:`AttemptTimeout` (a model request and a tool call have timeouts of their own), its
    journal left as it is, to be picked up again."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    path, repo, wire = folder / JOURNAL, folder / REPO, format_of(chat)
    if path.exists():
        entries = read_journal(path)
        _check_same(entries[0], task, wire.name, max_turns, path)
    else:
        entries = [_begin(task, path, repo, wire.name, provenance, max_turns, sandbox)]
    if entries[-1]["kind"] != "end":
        tell = on_event or (lambda event: None)
        with Journal(path, len(entries)) as journal:
            if not _stopped(entries):
                tools = TaskTools(repo, task, sandbox=sandbox)
                start = _pick_up(entries, chat, tools, journal, provenance, tell)
                journaled = JournalingChat(chat, journal, start.turns, clock)
                run = agent_events(journaled, tools, task.task, max_turns=max_turns, start=start)
                with closing(run):
                    for event in run:
                        journal.write("event", event=compact_event(event), t=time.time())
                        tell(event)
                        if deadline is not None and time.monotonic() > deadline:
                            raise AttemptTimeout(
                                f"the attempt ran past its time after {event['type']} of turn "
                                f"{event.get('turns', event.get('turn'))}; its journal keeps "
                                "what it did, so running it again goes on from there"
                            )
            after = run_checks(repo, sandbox=sandbox)
            tell({"type": "checks", "when": "after", "checks": after})
            journal.write(
                "end",
                checks_after=after.to_dict(),
                test_file_sha256_after=file_sha256(repo / task.tests[0]),
                t=time.time(),
            )
        entries = read_journal(path)
    recording = recording_from_journal(entries)
    save_recording(recording, folder / RECORDING)
    return recording


def _begin(task, path, repo, wire_format, provenance, max_turns, sandbox) -> dict:
    """A fresh attempt: a fresh copy, checked, and the journal's first line written whole (a
    kill before it leaves no journal, and the next run begins again)."""
    if repo.exists():
        shutil.rmtree(repo)
    copy_repo(task, repo)
    before = run_checks(repo, sandbox=sandbox)
    entry = {
        "n": 0,
        "kind": "begin",
        "format": JOURNAL_FORMAT,
        "version": JOURNAL_VERSION,
        "task_name": task.name,
        "task": task.task,
        "wire_format": wire_format,
        "max_turns": max_turns,
        "provenance": provenance,
        "start": list(Start.fresh(TASK_SYSTEM_PROMPT, task.task).messages),
        "checks_before": before.to_dict(),
        "test_file_sha256_before": file_sha256(repo / task.tests[0]),
        "t": time.time(),
    }
    write_atomically(path, (json.dumps(entry, ensure_ascii=False) + "\n").encode(), mode=0o644)
    return entry


def _check_same(begin: dict, task: Task, wire_format: str, max_turns: int, path) -> None:
    """Refuse to go on with a journal of another attempt than the one asked for."""
    mine = {"task_name": task.name, "task": task.task, "wire_format": wire_format}
    theirs = {key: begin.get(key) for key in mine}
    if theirs != mine or begin.get("max_turns") != max_turns:
        raise JournalError(
            f"{path}: the journal is of another attempt ({theirs}, max_turns "
            f"{begin.get('max_turns')}) than this one ({mine}, max_turns {max_turns}): "
            "redo the attempt, or give the same task, model format and budget"
        )


def _stopped(entries: list[dict]) -> bool:
    return any(e["kind"] == "event" and e["event"]["type"] == "stopped" for e in entries)


def _pick_up(entries, chat, tools, journal, provenance, tell) -> Start:
    """Where the loop starts: afresh, or (a journal with requests) from its resume point, with
    the last complete turn's calls finished first, each journaled as it happens."""
    if len(entries) == 1:
        return Start(entries[0]["start"])
    wire = format_of(chat)
    point = resume_point(entries, wire)
    journal.write(
        "resumed",
        turns=point.turns,
        tool_calls=point.tool_calls,
        discarded=None
        if point.discarded is None
        else dict(zip(("turn", "chunks"), point.discarded)),
        interrupted=[call.name for call in point.interrupted],
        pending=[call.name for call in point.pending],
        **({} if provenance == entries[0]["provenance"] else {"provenance": provenance}),
        t=time.time(),
    )
    results = list(point.results)
    for number, call in enumerate(point.calls[len(results) :], start=len(results)):
        if number < point.started:  # it was running when the run stopped: never run twice
            result = {"error": INTERRUPTED}
        else:
            start = ToolStart(type="tool_start", time=time.monotonic(), turn=point.turns,
                              name=call.name, arguments=call.arguments)  # fmt: skip
            _journaled(start, journal, tell)
            result = call_tool(tools, call.name, call.arguments)
        results.append(result)
        _journaled(ToolResult(type="tool_result", time=time.monotonic(), turn=point.turns,
                              name=call.name, result=result), journal, tell)  # fmt: skip
    skip = getattr(chat, "skip_turns", None)
    if callable(skip):  # a replay answers from the turn after the requests already made
        skip(point.turns)
    messages = list(point.messages)
    if point.calls:
        messages += wire.tool_results(point.calls, results)
    return Start(messages, turns=point.turns, tool_calls=point.tool_calls + len(point.pending))


def _journaled(event: dict, journal: Journal, tell) -> None:
    journal.write("event", event=compact_event(event), t=time.time())
    tell(event)


class JournalingChat:
    """Wraps a ``chat``: each request and each chunk goes to the journal as it happens."""

    def __init__(self, chat, journal: Journal, turns: int = 0, clock=time.monotonic):
        self.chat, self.journal, self.turn, self.clock = chat, journal, turns, clock
        self.wire_format = getattr(chat, "wire_format", None)  # the loop reads the chat's

    def __call__(self, messages, tool_schemas):
        self.turn += 1
        names = tool_names(tool_schemas)
        self.journal.write("request", turn=self.turn, messages=messages, tools=names, t=time.time())
        return self._stream(self.turn, messages, tool_schemas)

    def _stream(self, turn, messages, tool_schemas):
        start, stream = self.clock(), None
        try:
            stream = with_lines(self.chat, messages, tool_schemas)
            for chunk, line in stream:
                kept = {} if line is None else {"line": line}
                at = round(self.clock() - start, 6)
                self.journal.write("chunk", turn=turn, at=at, chunk=chunk, **kept)
                yield chunk
        except Exception as exc:
            self.journal.write("error", turn=turn, error=str(exc) or type(exc).__name__)
            raise
        finally:
            getattr(stream, "close", lambda: None)()


def recording_from_journal(entries: list[dict]) -> dict:
    """The recording of a finished attempt, from its whole journal (``read_journal``)."""
    begin, end = entries[0], entries[-1]
    if end["kind"] != "end":
        raise JournalError("the journal has no 'end': the attempt has not finished")
    turns, events, resumed = [], [], []
    for entry in entries[1:-1]:
        kind = entry["kind"]
        if kind == "request":
            request = {"messages": entry["messages"], "tools": entry["tools"]}
            turns.append({"request": request, "chunks": [], "number": entry["turn"]})
        elif kind == "chunk":
            kept = {"line": entry["line"]} if "line" in entry else {}
            turns[-1]["chunks"].append({"at": entry["at"], "chunk": entry["chunk"], **kept})
        elif kind == "error":
            turns[-1]["error"] = entry["error"]
        elif kind == "event":
            events.append(entry["event"])
        elif kind == "resumed":
            # what was under way past the last complete turn is dropped: it is asked again
            after = entry["turns"]
            turns = [turn for turn in turns if turn["number"] <= after]
            events = [event for event in events if event.get("turn", 0) <= after]
            resumed.append(
                {
                    "after_turn": entry["turns"],
                    "journal_line": entry["n"] + 1,
                    **{k: entry[k] for k in ("discarded", "interrupted", "pending") if k in entry},
                }
            )
    recording = {"format": FORMAT, "version": VERSION}
    if begin["wire_format"] != "ollama":
        recording["wire_format"] = begin["wire_format"]
    recording.update(
        {
            "provenance": begin["provenance"],
            "task": begin["task"],
            "task_name": begin["task_name"],
            "max_turns": begin["max_turns"],
            "test_file_sha256": {
                "before": begin["test_file_sha256_before"],
                "after": end["test_file_sha256_after"],
            },
            "checks": {"before": begin["checks_before"], "after": end["checks_after"]},
            "turns": [{k: v for k, v in turn.items() if k != "number"} for turn in turns],
            "events": events,
            **({"resumed": resumed} if resumed else {}),
        }
    )
    return recording


def active_seconds(entries: list[dict]) -> float:
    """The seconds the attempt's runs were at work: from each run's first journaled time to its
    last (a run killed mid-way counts up to its last line; the time it lay dead does not)."""
    total, first, last = 0.0, None, None
    for entry in entries:
        if "t" not in entry:
            continue
        if entry["kind"] == "resumed" and first is not None:
            total += last - first
            first = None
        first = entry["t"] if first is None else first
        last = entry["t"]
    return total + (last - first if first is not None else 0.0)

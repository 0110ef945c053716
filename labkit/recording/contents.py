"""What a recording holds: one attempt, enough to replay it and to audit it, and the checks
that say whether a value is one.

A recording holds its provenance (who or what produced it), the task and budget,
the independent test results and test-file hashes before and after, each turn's
request and raw chunks with arrival offsets (seconds after the request), and the
loop's events (the last one says how the run stopped: see ``stop_of``). A recording of a
model that speaks another API than Ollama's says so in ``wire_format`` (``"openai"``,
``"anthropic"``, ``"openai-responses"``, ``"gemini"``); without it, it is Ollama's. A run
with more than the three repository tools, a gate, a budget or hooks keeps them under
``"harness"`` (``harness_setup.py``). A run through an MCP server keeps every JSON-RPC
line each way under ``"mcp"``: ``{"traffic": [{"dir": "c2s" | "s2c" | "junk", "line":
"..."}, ...]}``, which a strict replay must repeat line for line.

``recording_problem`` is pure: it says what makes a value unusable (nested more than
``MAX_NESTING`` levels, a number that is not finite, a structure that does not hold), or
None. ``check_recording`` adds the one thing that is not in the value: that it was recorded
against this course's sample. Reading and writing files is ``files.py``'s.
"""

from __future__ import annotations

import json
import math

from ..harness.contracts import STOP_REASONS
from ..harness.formats import FORMATS
from ..harness.loop import positive_int
from ..harness.project import SAMPLES
from ..harness.sample import check_sample, file_sha256, tests_sha256
from ..harness.taskset import TASKS_DIR, TaskSetError, load_tasks
from ..harness.words import json_kind
from ..models.json_difference import excerpt, where_different
from ..models.provenance import SOURCES
from .harness_setup import setup_problem

FORMAT = "labkit-recording"
VERSION = 3  # 2: a chunk may keep its NDJSON "line"; 3: no "stop" (it is the last event),
#                and an optional "wire_format"
READABLE_VERSIONS = (1, 2, 3)  # 1 and 2 also hold "stop", a copy of the last event: unread
WIRE_FORMATS = tuple(FORMATS)  # the wire formats the harness knows, by name
#: What a live capture's provenance must name, per source.
NAMED_BY = {
    "ollama": ("model", "digest", "server_version"),
    "openai": ("model", "base_url_host"),
    "anthropic": ("model", "base_url_host"),
    "openai-responses": ("model", "base_url_host"),
    "gemini": ("model", "base_url_host"),
}
#: Levels of nesting a recording may have; the course's need 11, and a replay freezes
#: its chunks, so a deeper one could fail half-way through instead of being refused here.
MAX_NESTING = 64


class RecordingError(ValueError):
    """A file that cannot be used as a recording; the message names the file and the problem."""


def compact_event(event: dict) -> dict:
    """An event as a recording keeps it: without its clock time and message snapshot,
    which the recording holds once, per turn, as the request."""
    return {key: value for key, value in event.items() if key not in ("time", "messages")}


def stop_of(recording: dict) -> dict:
    """How the recorded run stopped: its last event (``reason``, ``turns``, ``detail``...)."""
    return recording["events"][-1]


def recording_problem(recording) -> str | None:
    """Say what makes ``recording`` unusable, or return None. Pure: reads nothing."""
    if not isinstance(recording, dict):
        return "the top level is not a JSON object"
    problem = _value_problem(recording)
    if problem:
        return problem
    if recording.get("format") != FORMAT:
        return f"'format' is {recording.get('format')!r}, expected {FORMAT!r}"
    version = recording.get("version")
    if not _is_int(version) or version not in READABLE_VERSIONS:
        return (
            f"format version {version!r}; this labkit reads versions "
            f"{READABLE_VERSIONS}: re-record it or update labkit"
        )
    for key, kind in (
        ("provenance", dict),
        ("task", str),
        ("max_turns", int),
        ("test_file_sha256", dict),
        ("checks", dict),
        ("turns", list),
        ("events", list),
    ):
        if not isinstance(recording.get(key), kind):
            return f"'{key}' is missing or not a {kind.__name__}"
    try:
        positive_int(recording["max_turns"], "'max_turns'")
    except ValueError as exc:
        return str(exc)
    wire_format = recording.get("wire_format", "ollama")
    if wire_format not in WIRE_FORMATS:
        return f"'wire_format' is {wire_format!r}; it must be one of {WIRE_FORMATS}"
    return (
        _provenance_problem(recording["provenance"], wire_format)
        or _task_set_problem(recording)
        or (setup_problem(recording["harness"]) if "harness" in recording else None)
        or _checks_problem(recording)
        or _turns_problem(recording["turns"], wire_format)
        or _events_problem(recording)
        or (_mcp_problem(recording["mcp"]) if "mcp" in recording else None)
    )


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)  # True is an int in Python


def _value_problem(value) -> str | None:
    """Nesting deeper than ``MAX_NESTING``, or a number that is not finite (``NaN``,
    ``Infinity``: Python's json reads them, JSON has no such thing). Walks without
    recursion, so no value is too deep to be judged."""
    pending = [(value, 1)]
    while pending:
        item, depth = pending.pop()
        if isinstance(item, dict | list):
            if depth > MAX_NESTING:
                return (
                    f"it is nested more than {MAX_NESTING} levels deep; the course's "
                    "recordings need 11"
                )
            pending.extend(
                (child, depth + 1) for child in (item.values() if isinstance(item, dict) else item)
            )
        elif isinstance(item, float) and not math.isfinite(item):
            return f"it holds {item!r}, not a finite number; JSON has no such value"
    return None


def _provenance_problem(provenance: dict, wire_format: str) -> str | None:
    source = provenance.get("source")
    if source not in SOURCES:
        return f"provenance 'source' is {source!r}; it must be one of {SOURCES}"
    if source != "scripted":
        if source != wire_format:
            return (
                f"a recording from a live {source!r} server cannot be in the "
                f"{wire_format!r} wire format"
            )
        missing = [key for key in NAMED_BY[source] if not provenance.get(key)]
        if missing:
            return f"an {source!r} recording must name its {', '.join(missing)}"
    declared = provenance.get("declared", {})
    if not (isinstance(declared, dict) and all(isinstance(v, str) for v in declared.values())):
        return "provenance 'declared' must map names to text (what `record --about` saves)"
    return None


def _checks_problem(recording: dict) -> str | None:
    for when in ("before", "after"):
        digest = recording["test_file_sha256"].get(when)
        if not (isinstance(digest, str) and len(digest) == 64):
            return f"test_file_sha256.{when} is not a sha256 hex digest"
        result = recording["checks"].get(when)
        if not isinstance(result, dict) or not all(
            _is_int(result.get(key)) for key in ("exit_code", "passed", "failed")
        ):
            return f"checks.{when} needs integer exit_code, passed and failed"
    return None


def _turns_problem(turns: list, wire_format: str) -> str | None:
    if not turns:
        return "it has no turns"
    for number, turn in enumerate(turns, start=1):
        request = turn.get("request") if isinstance(turn, dict) else None
        if not isinstance(request, dict) or not isinstance(request.get("messages"), list):
            return f"turn {number} has no request messages"
        if not all(  # a message has a role; a Responses item without one (a result) a type
            isinstance(m, dict) and isinstance(m.get("role") or m.get("type"), str)
            for m in request["messages"]
        ):
            return f"turn {number}: a request message has no role (nor, an item, a type)"
        tools = request.get("tools")
        if tools is not None and not (
            isinstance(tools, list) and all(isinstance(t, str) for t in tools)
        ):
            return f"turn {number}: the request's 'tools' is not a list of tool names"
        if not isinstance(turn.get("chunks"), list):
            return f"turn {number} has no chunk list"
        for index, entry in enumerate(turn["chunks"], start=1):
            if not (
                isinstance(entry, dict)
                and isinstance(entry.get("chunk"), dict)
                and isinstance(entry.get("at"), (int, float))
                and entry["at"] >= 0
            ):
                return (
                    f"turn {number}, chunk {index} is not an object with a JSON-object "
                    "'chunk' and a non-negative arrival time 'at'"
                )
            problem = _line_problem(entry, wire_format) if "line" in entry else None
            if problem:
                return f"turn {number}, chunk {index}: {problem}"
        if "error" in turn and not isinstance(turn["error"], str):
            return f"turn {number}: 'error' is not text"
    return None


#: What to do when a chunk and its kept line disagree (the recording was edited by hand).
LINE_ADVICE = (
    "A recording keeps each chunk twice, as the server sent it ('line') and read as JSON "
    "('chunk'): edit both alike, or delete the 'line' (a replay then sends the chunk as "
    "JSON), or restore the file as it was recorded."
)


def _line_problem(entry: dict, wire_format: str) -> str | None:
    """What is wrong with the line a chunk's entry kept, or None: it must be the chunk itself,
    one NDJSON line (Ollama's) or one server-sent event whose ``data`` field is the chunk's
    JSON (the other formats)."""
    line, chunk = entry["line"], entry["chunk"]
    if not isinstance(line, str):
        return f"its 'line' is {json_kind(line)}, not text. {LINE_ADVICE}"
    if wire_format == "ollama":
        if "\n" in line:
            return f"its 'line' holds more than one line of text. {LINE_ADVICE}"
        text = line
    else:
        data = [part[5:].removeprefix(" ") for part in line.split("\n") if part.startswith("data:")]
        if len(data) != 1:
            return (
                f"its 'line' holds {len(data)} 'data:' fields; a server-sent event carries its "
                f"chunk in one. {LINE_ADVICE}"
            )
        text = data[0]
    try:
        sent = json.loads(text)
    except (ValueError, RecursionError) as exc:
        return f"its 'line' is not JSON text ({exc}): {excerpt(text)}. {LINE_ADVICE}"
    place = where_different(sent, chunk)
    if place is None:
        return None
    return (
        f"its 'line' and its 'chunk' differ at {place.where}: the line has {place.first}, "
        f"the chunk has {place.other}. {LINE_ADVICE}"
    )


def _events_problem(recording: dict) -> str | None:
    events = recording["events"]
    if not all(isinstance(e, dict) and isinstance(e.get("type"), str) for e in events):
        return "an event has no 'type'"
    if not events or events[-1]["type"] != "stopped":
        return "its events do not end with a 'stopped' event"
    reason = events[-1].get("reason")
    if reason not in STOP_REASONS:
        return f"its last event stops for the reason {reason!r}, which is not a stop reason"
    requests = sum(e["type"] == "model_start" for e in events)
    if requests > len(recording["turns"]):
        return (
            f"its events make {requests} model requests but it holds "
            f"{len(recording['turns'])} turns; both come from one run, so one of them was "
            "edited: restore the file as it was recorded, or record the run again"
        )
    return None


def _task_set_problem(recording: dict) -> str | None:
    """An attempt at a task of a task set (lesson 14) names its task, and says where a run
    killed mid-way was picked up (``recording/durable.py``)."""
    name = recording.get("task_name", "")
    if not isinstance(name, str) or ("task_name" in recording and not name):
        return "'task_name' is not the name of a task"
    resumed = recording.get("resumed", [])
    if not (
        isinstance(resumed, list)
        and all(isinstance(r, dict) and _is_int(r.get("after_turn")) for r in resumed)
    ):
        return "'resumed' is not a list of objects, each with the turn it resumed after"
    return None


TRAFFIC_DIRECTIONS = ("c2s", "s2c", "junk")  # client to server, server to client, not JSON-RPC


def _mcp_problem(mcp) -> str | None:
    traffic = mcp.get("traffic") if isinstance(mcp, dict) else None
    if not isinstance(traffic, list) or set(mcp) != {"traffic"}:
        return "'mcp' is not an object holding only a 'traffic' list"
    for number, entry in enumerate(traffic, start=1):
        if not (
            isinstance(entry, dict)
            and set(entry) == {"dir", "line"}
            and entry["dir"] in TRAFFIC_DIRECTIONS
            and isinstance(entry["line"], str)
            and "\n" not in entry["line"]
        ):
            return (
                f"mcp traffic entry {number} is not {{'dir': one of {TRAFFIC_DIRECTIONS}, "
                "'line': one line of text}"
            )
    return None


def _sample_mismatch(recording: dict) -> str | None:
    sample = SAMPLES[recording.get("harness", {}).get("sample", "sample_repo")]
    check_sample(sample=sample)  # a sample changed in place is named as such, not blamed here
    recorded = recording["test_file_sha256"]["before"]
    if "task_name" in recording:  # an attempt at a task: held to the course's task of that name
        try:
            task = load_tasks(TASKS_DIR).get(recording["task_name"])
        except TaskSetError:
            task = None
        if task is None:  # a task set of one's own: its runner checks it
            return None
        current = file_sha256(task.repo / task.tests[0])
        if recorded != current:
            return (
                f"it was recorded against another version of the task "
                f"{recording['task_name']!r}: its test file had sha256 {recorded[:12]}..., "
                f"the course's has {current[:12]}..."
            )
        return None
    current = tests_sha256(sample.folder, sample)
    if recorded != current:
        return (
            f"it was recorded against a different sample: its test file had sha256 "
            f"{recorded[:12]}..., this course's has {current[:12]}...: replay it with the "
            "labkit it was recorded with, or record the run again with this one"
        )
    return None


def check_recording(recording, where: str = "recording") -> dict:
    """Validate a recording already in memory as ``load_recording`` validates a file:
    return it, or raise :class:`RecordingError` naming ``where`` and the problem."""
    problem = recording_problem(recording) or _sample_mismatch(recording)
    if problem:
        raise RecordingError(f"{where}: {problem}")
    return recording

"""A recording replayed through the loop on a fresh copy of the sample, and the verdict: did the
replay do what the recording says?

``replay_attempt`` hands the recording on down: the harness it ran with is set up again
(``harness_setup.py``), its chunks go to the loop from a ``ReplayModel`` (strict: each
request is compared with the recorded one first), the attempt runs as every attempt does
(``run_attempt``), and the new run is held against the recorded one. ``python -m labkit
replay`` is this, with a trace printed as it runs.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from ..models.errors import REPLAY_MISMATCH
from ..models.json_difference import excerpt, where_different
from ..models.replay import ReplayModel
from .attempt import run_attempt
from .harness_setup import replay_harness


@dataclass(frozen=True)
class Replay:
    """A replay's outcome: the new recording, the loop's events, and how it differs from the
    recorded run (None: it matched)."""

    recording: dict
    events: list
    difference: str | None


def replay_attempt(
    recording: dict,
    *,
    strict: bool = True,
    speed: float | None = None,
    max_turns: int | None = None,
    on_event=None,
) -> Replay:
    """Replay ``recording`` (as ``load_recording`` gives it) on a fresh copy of the sample.

    ``max_turns`` None: the recording's own budget; another budget is a different run, so
    then only a refused request counts as a difference. ``strict``, ``speed``: as
    ``ReplayModel`` takes them. ``on_event`` hears each event as ``run_attempt``'s does.
    """
    budget = max_turns or recording["max_turns"]
    harness = replay_harness(recording)
    chat = ReplayModel(recording, strict, speed=speed)
    replayed, events = run_attempt(
        chat,
        provenance=recording["provenance"],
        task=recording["task"],
        max_turns=budget,
        on_event=on_event,
        **harness,
    )
    same_budget = budget == recording["max_turns"]
    return Replay(replayed, events, difference(recording, replayed, same_budget))


#: What to do when a replay did not do what its recording says (the difference named first).
OUTCOME_ADVICE = (
    "A recording's events, MCP traffic and final tests are what its replies led to when it "
    "was recorded: if you edited it, record the run again rather than editing it (or restore "
    "the file as it was recorded); if you did not, this labkit runs the harness or the tools "
    "otherwise than the one that recorded it."
)


def difference(recording: dict, replayed: dict, compare_outcome: bool = True) -> str | None:
    """Say how a replayed run differs from its recording, or return None when it matched:
    a request the replay refused, else (when ``compare_outcome``) the first event, line of
    MCP traffic or final test result that differs, with the field and both values there
    and what to do."""
    stop = replayed["events"][-1]
    if stop["reason"] == "model_error" and REPLAY_MISMATCH in stop.get("error", ""):
        return stop["error"]
    if not compare_outcome:
        return None
    problem = (
        event_difference(recording["events"], replayed["events"])
        or (
            traffic_difference(
                recording["mcp"]["traffic"], replayed.get("mcp", {}).get("traffic", [])
            )
            if "mcp" in recording
            else None
        )
        or _tests_difference(recording["checks"]["after"], replayed["checks"]["after"])
    )
    return f"{problem}. {OUTCOME_ADVICE}" if problem else None


def event_difference(recorded: list, replayed: list) -> str | None:
    """The first event (counted from 1) a replay gave otherwise than the recording: the field
    and both values there, or the event only one side has."""
    for number, (old, new) in enumerate(zip(recorded + [None], replayed + [None]), start=1):
        if old is None or new is None:
            if old is new:
                return None
            return (
                f"the replay gave {len(replayed)} events, the recording has {len(recorded)}: "
                f"event {number} ({_event_name(old or new)}) is only in "
                f"{'the recording' if new is None else 'the replay'}"
            )
        if old.get("type") != new.get("type"):
            return (
                f"event {number} is {_event_name(old)} in the recording but {_event_name(new)} "
                f"in the replay (the replay gave {len(replayed)} events, the recording has "
                f"{len(recorded)})"
            )
        place = where_different(old, new)
        if place:
            return (
                f"event {number} ({_event_name(old)}) differs from the recorded one at "
                f"{place.where}: the recording has {place.first}, the replay gave {place.other}"
            )
    return None


def _event_name(event: dict) -> str:
    """``tool_start of turn 1``: an event's type and turn."""
    turn = event.get("turn")
    return f"{event.get('type')}" + (f" of turn {turn}" if turn is not None else "")


def _tests_difference(recorded: dict, replayed: dict) -> str | None:
    place = where_different(recorded, replayed)
    if place is None:
        return None
    return (
        f"the final tests differ at {place.where}: the recording has {place.first}, the "
        f"replay gave {place.other}"
    )


def traffic_difference(recorded: list, replayed: list) -> str | None:
    """The first line of MCP traffic a replay sent or got otherwise than the recording: the
    field that differs inside it (JSON-RPC lines are JSON) and both values."""
    for number, (old, new) in enumerate(zip(recorded + [None], replayed + [None]), start=1):
        if old == new:
            continue
        lead = f"MCP traffic line {number} differs from the recorded one"
        if old is None or new is None or old["dir"] != new["dir"]:
            return f"{lead}: recorded {_line(old)}, replayed {_line(new)}"
        place = where_different(
            _json_or_text(old["line"]), _json_or_text(new["line"])
        ) or where_different(old["line"], new["line"])  # the same JSON, written otherwise
        return (
            f"{lead} ({old['dir']}) at {place.where}: the recording has {place.first}, the "
            f"replay gave {place.other}"
        )
    return None


def _json_or_text(line: str):
    try:
        return json.loads(line)
    except (ValueError, RecursionError):
        return line


def _line(entry: dict | None) -> str:
    if entry is None:
        return "nothing"
    return f"{entry['dir']} {excerpt(entry['line'])}"

"""A recording replayed through the loop on a fresh copy of the sample, and the verdict: did the
replay do what the recording says?

``replay_attempt`` hands the recording on down: the harness it ran with is set up again
(``harness_setup.py``), its chunks go to the loop from a ``ReplayModel`` (strict: each
request is compared with the recorded one first), the attempt runs as every attempt does
(``run_attempt``), and the new run is held against the recorded one. ``python -m labkit
replay`` is this, with a trace printed as it runs.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..models.errors import REPLAY_MISMATCH
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


def difference(recording: dict, replayed: dict, compare_outcome: bool = True) -> str | None:
    """Say how a replayed run differs from its recording, or return None when it matched:
    a request the replay refused, else (when ``compare_outcome``) another event, another
    line of MCP traffic or another final test result."""
    stop = replayed["events"][-1]
    if stop["reason"] == "model_error" and REPLAY_MISMATCH in stop.get("error", ""):
        return stop["error"]
    if not compare_outcome:
        return None
    if replayed["events"] != recording["events"]:
        first = next(
            i
            for i, (a, b) in enumerate(
                zip(replayed["events"] + [None], recording["events"] + [None])
            )
            if a != b
        )
        return f"event {first} differs from the recorded one"
    if "mcp" in recording:
        problem = traffic_difference(
            recording["mcp"]["traffic"], replayed.get("mcp", {}).get("traffic", [])
        )
        if problem:
            return problem
    if replayed["checks"]["after"] != recording["checks"]["after"]:
        return (
            f"final tests {replayed['checks']['after']} differ from {recording['checks']['after']}"
        )
    return None


def traffic_difference(recorded: list, replayed: list) -> str | None:
    """The first line of MCP traffic a replay sent or got otherwise than the recording."""
    for number, (old, new) in enumerate(zip(recorded + [None], replayed + [None]), start=1):
        if old != new:
            return (
                f"MCP traffic line {number} differs from the recorded one: recorded "
                f"{_line(old)}, replayed {_line(new)}"
            )
    return None


def _line(entry: dict | None) -> str:
    if entry is None:
        return "nothing"
    return f"{entry['dir']} {entry['line'][:160]!r}"

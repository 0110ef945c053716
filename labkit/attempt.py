"""One whole attempt on a disposable copy: check, run the loop, check again, keep the record."""

from __future__ import annotations

import time

from .capture import CapturingChat
from .loop import agent_events
from .prompt import REPAIR_TASK
from .recording import FORMAT, VERSION, compact_event
from .sample import TEST_FILE, file_sha256, run_checks, sample_copy
from .tools import RepoTools


def run_attempt(chat, *, provenance: dict, task: str = REPAIR_TASK, max_turns: int = 8,
                on_event=None, clock=time.monotonic) -> tuple[dict, list]:
    """Run the loop once on a fresh copy of the sample.

    Returns ``(recording, events)``: the recording in the saved format, and the
    loop's full events (with times and message snapshots). ``on_event(event)`` is
    called as each event happens, for progress displays.
    """
    capture = CapturingChat(chat, clock=clock)
    events = []
    with sample_copy() as root:
        test_file = root / TEST_FILE
        hash_before, checks_before = file_sha256(test_file), run_checks(root)
        if on_event:
            on_event({"type": "checks", "when": "before", "checks": checks_before})
        for event in agent_events(capture, RepoTools(root), task, max_turns=max_turns):
            events.append(event)
            if on_event:
                on_event(event)
        checks_after = run_checks(root)
        if on_event:
            on_event({"type": "checks", "when": "after", "checks": checks_after})
        hash_after = file_sha256(test_file)
    recording = {
        "format": FORMAT,
        "version": VERSION,
        "provenance": provenance,
        "task": task,
        "max_turns": max_turns,
        "test_file_sha256": {"before": hash_before, "after": hash_after},
        "checks": {"before": checks_before.to_dict(), "after": checks_after.to_dict()},
        "turns": capture.turns,
        "events": [compact_event(event) for event in events],
        "stop": compact_event({k: v for k, v in events[-1].items() if k != "type"}),
    }
    return recording, events

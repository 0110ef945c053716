"""Recordings: one JSON file per attempt, built by ``run_attempt`` and read by ``load_recording``.

``attempt.py`` runs an attempt and builds its recording (the requests, the raw chunks
as they arrived, the independent checks before and after, the loop's events);
``format.py`` says what a recording holds, and saves, loads and validates one;
``setup.py`` keeps the harness a run used beyond the model (tools, gate, budget) so a
replay can set it up again.
"""

from .attempt import CapturingChat, run_attempt
from .format import (
    RecordingError,
    check_recording,
    compact_event,
    load_recording,
    save_recording,
    stop_of,
)
from .setup import recorded_answers, replay_harness

__all__ = [
    "CapturingChat",
    "RecordingError",
    "check_recording",
    "compact_event",
    "load_recording",
    "recorded_answers",
    "replay_harness",
    "run_attempt",
    "save_recording",
    "stop_of",
]

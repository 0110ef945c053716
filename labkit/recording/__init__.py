"""Recordings: one JSON file per attempt, built by ``run_attempt`` and read by ``load_recording``.

``attempt.py`` runs an attempt and builds its recording (the requests, the raw chunks
as they arrived, the independent checks before and after, the loop's events);
``format.py`` says what a recording holds, and saves, loads and validates one.
"""

from .attempt import CapturingChat, run_attempt
from .format import (RecordingError, check_recording, compact_event, load_recording,
                     save_recording, stop_of)

__all__ = ["CapturingChat", "RecordingError", "check_recording", "compact_event",
           "load_recording", "run_attempt", "save_recording", "stop_of"]

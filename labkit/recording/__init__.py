"""Recordings: one JSON file per attempt, built by ``run_attempt`` and read by ``load_recording``.

``contents.py`` says what a recording holds and checks one; ``files.py`` finds one by its
name, reads and saves it; ``harness_setup.py`` keeps the harness a run used beyond the
model (tools, gate, budget) so a replay can set it up again; ``attempt.py`` runs an
attempt and builds its recording (the requests, the raw chunks as they arrived, the
independent checks before and after, the loop's events); ``replaying.py`` replays one
through the loop and says whether it matched; ``serving.py`` serves one over its API;
``scenarios.py`` holds the course's scripted recordings and writes them
(``make recordings``); ``durable.py`` runs an attempt at a task of the task set kept in a
journal, picked up after a kill, and ``task_scenarios.py`` scripts one attempt per task.
"""

from .attempt import CapturingChat, run_attempt
from .contents import RecordingError, check_recording, compact_event, stop_of
from .durable import run_durable
from .files import course_recordings, load_recording, recording_path, save_recording
from .harness_setup import recorded_answers, replay_harness
from .replaying import Replay, replay_attempt
from .serving import serve_recording

__all__ = [
    "CapturingChat",
    "RecordingError",
    "Replay",
    "check_recording",
    "compact_event",
    "course_recordings",
    "load_recording",
    "recorded_answers",
    "recording_path",
    "replay_attempt",
    "replay_harness",
    "run_attempt",
    "run_durable",
    "save_recording",
    "serve_recording",
    "stop_of",
]

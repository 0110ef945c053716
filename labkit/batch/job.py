"""The work of one batch job: one durable attempt at one task, in the worker that runs it.

``attempt_job(spec)`` is what the engine (``labkit/engine.py``) runs in its worker processes,
on this machine's cores or on a Dask cluster. The spec is plain data, so it travels to any
worker::

    {"taskset": "/path/to/tasks", "task": "off_by_one", "folder": "/path/to/attempt",
     "model": {"replay": "/path/to/recordings"}     # the task's recorded attempt, or
              {"provider": "openai", "model": "...", "base_url": "...", "stream": false,
               "declared": {"server": "..."}},       # a live model (labkit.models)
     "max_turns": 10, "sandbox": "workspace-write",   # or null: no sandbox
     "timeout": 900}

It runs the durable attempt (``recording/durable.py``) in the spec's folder, afresh or picked
up from its journal, and returns its results row. Each attempt has its own copy, and its
tools run their programs in processes of their own (inside the sandbox when given). An
attempt that runs past its time stops between two events with :class:`AttemptFailed`
(``attempt_timeout``; a model request and a tool call each have a timeout of their own), a
refused journal or any other error raises too: the engine hands it back as the job's error,
and nothing else is lost.
"""

from __future__ import annotations

import time
from pathlib import Path

from ..harness.journal import JournalError, read_journal
from ..harness.sandbox import Sandbox
from ..harness.taskset import load_tasks
from ..recording.durable import JOURNAL, AttemptTimeout, active_seconds, run_durable
from ..recording.files import load_recording, save_recording
from .results import result_row


class AttemptFailed(RuntimeError):
    """The attempt ended without a recording: ``stop`` names how (``attempt_failed``,
    ``attempt_timeout``), the text says what happened."""

    def __init__(self, stop: str, text: str):
        super().__init__(f"{stop}: {text}")
        self.stop, self.text = stop, text

    def __reduce__(self):  # travels back from a worker process whole (its own two arguments)
        return AttemptFailed, (self.stop, self.text)


def attempt_job(spec: dict) -> dict:
    """Run the attempt ``spec`` describes; return its results row."""
    deadline = time.monotonic() + spec["timeout"]
    task = load_tasks(spec["taskset"])[spec["task"]]
    chat, provenance = chat_for(spec["model"], task.name)
    folder = Path(spec["folder"])
    try:
        recording = run_durable(
            task,
            chat,
            folder,
            provenance=provenance,
            max_turns=spec["max_turns"],
            sandbox=Sandbox(spec["sandbox"]) if spec.get("sandbox") else None,
            deadline=deadline,
        )
    except AttemptTimeout as exc:
        raise AttemptFailed("attempt_timeout", str(exc)) from None
    except JournalError as exc:
        raise AttemptFailed("attempt_failed", f"its journal was refused: {exc}") from None
    finish = getattr(chat, "finish_provenance", None)
    if callable(finish):  # what only the replies told (a live server's model and fingerprint)
        finish(recording)
        save_recording(recording, folder / "recording.json")
    return result_row(task, recording, active_seconds(read_journal(folder / JOURNAL)))


def chat_for(model: dict, task_name: str):
    """``(chat, provenance)`` for a spec's model: a replay of the task's recording, else a live
    model of ``model["provider"]`` (with what the user declared about it)."""
    if "replay" in model:
        from ..models.replay import ReplayModel

        recording = load_recording(Path(model["replay"]) / f"{task_name}.json")
        chat = ReplayModel(recording, strict=model.get("strict", True))
        return chat, chat.provenance()
    from ..models.providers import live_model

    chat = live_model(
        model["provider"],
        model.get("model"),
        host=model.get("host"),
        base_url=model.get("base_url"),
        stream=model.get("stream", True),
    )
    provenance = {**chat.provenance(), "recorded_with": "python -m labkit batch"}
    if model.get("declared"):
        provenance["declared"] = dict(model["declared"])
    return chat, provenance

"""What the notebooks share: the model a lesson's parameters choose, and one recorded run."""

from __future__ import annotations

from dataclasses import dataclass

from .attempt import run_attempt
from .prompt import REPAIR_TASK
from .recording import load_recording
from .replay import ReplayModel
from .settings import DEFAULT_MODEL, recording_path


def lesson_model(mode: str, *, recording, model: str = DEFAULT_MODEL, host: str | None = None,
                 speed: float | None = None):
    """The ``chat`` a lesson runs: a replay of ``recording``, or a live Ollama model."""
    if mode == "replay":
        return ReplayModel(load_recording(recording_path(recording)), speed=speed)
    if mode == "live":
        from .ollama_model import OllamaModel

        return OllamaModel(model, host)
    raise ValueError(f"MODE must be 'replay' or 'live', not {mode!r}")


@dataclass(frozen=True)
class LessonRun:
    """One attempt: its recording (requests, raw chunks, checks) and the loop's full events."""

    recording: dict
    events: list

    @property
    def stop(self) -> dict:
        return self.events[-1]

    @property
    def requests(self) -> list:
        """The message list of every request the harness sent, in order."""
        return [event["messages"] for event in self.events if event["type"] == "model_start"]


def run_lesson(chat, *, max_turns: int = 8, task: str = REPAIR_TASK) -> LessonRun:
    """Run the repair once on a fresh copy of the sample, with checks before and after."""
    recording, events = run_attempt(chat, provenance=_provenance(chat), task=task,
                                    max_turns=max_turns)
    return LessonRun(recording, events)


def _provenance(chat) -> dict:
    """Who writes the chunks: a replayed recording's authors, or what the server says it is."""
    if isinstance(chat, ReplayModel):
        return chat.provenance
    from .ollama_model import OllamaError
    from .recorder import capture_provenance

    try:
        return capture_provenance(chat)
    except OllamaError as exc:  # the run itself will stop with model_error and say why
        return {"source": "unknown", "model": getattr(chat, "model", None), "problem": str(exc)}

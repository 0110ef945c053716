"""Lesson 14: a loop, unchanged, behind every wire format's official SDK.

``behind_every_sdk(loop)`` runs ``loop(chat, tools, task, max_turns)`` (labkit's, or the one a
learner wrote in exercise 14a) once per provider: a replay server speaks that provider's API
over HTTP, strictly (a request that differs from the recorded one is refused with a 400 the
SDK raises), and labkit's live model for it, built on the official SDK, is the chat. The loop
cannot tell the server from the real service: a request it refuses ends the run as
``model_error``. Each run gives one :class:`SdkRun`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from ..harness.loop import MAX_TURNS
from ..harness.prompt import REPAIR_TASK
from ..harness.sample import sample_copy
from ..harness.tools import RepoTools
from ..models.providers import PROVIDERS, live_model
from ..recording.serving import serve_recording
from ..settings import PROVIDER_RECORDINGS
from .batch_view import run_line

#: Where each SDK's requests go under a server's address (their clients add the rest).
API_ROOTS = {
    "ollama": "",
    "openai": "/v1",
    "anthropic": "",
    "openai-responses": "/v1",
    "gemini": "",
}

Loop = Callable[..., Iterable[dict]]


@dataclass(frozen=True)
class SdkRun:
    """One provider's run: the model class that was the chat, how many chat requests its
    server received, and the loop's events."""

    provider: str
    model_class: str
    requests: int
    events: list[dict]

    def line(self) -> str:
        return (
            f"{self.provider:17} {self.model_class:14} {self.requests} requests: "
            f"{run_line(self.events)}"
        )


def behind_every_sdk(loop: Loop, max_turns: int = MAX_TURNS) -> list[SdkRun]:
    """``loop`` on the course's repair once per provider, behind a strict replay server of
    that provider's recording, through labkit's model for it (the official SDK)."""
    runs = []
    for provider, recording in PROVIDER_RECORDINGS.items():
        with serve_recording(recording) as server, sample_copy() as copy:
            address = server.url + API_ROOTS[provider]
            chat = live_model(provider, None, **{PROVIDERS[provider].address: address})
            events = list(loop(chat, RepoTools(copy), REPAIR_TASK, max_turns))
            requests = len(server.chat_requests)
        runs.append(SdkRun(provider, type(chat).__name__, requests, events))
    return runs

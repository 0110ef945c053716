"""What a live model raises when its server gives no usable reply, and the words they share.

Apart from the adapters, so that catching one loads no SDK: ``import labkit`` and a replay
never import ``ollama``, ``openai``, ``anthropic`` or their HTTP clients.
"""

from __future__ import annotations

#: What every "nothing is there" message ends with: the course runs without any server.
#: The command works from any folder: a course recording is found by its name.
REPLAY_COMMAND = "python -m labkit replay repair"
REPLAY_HINT = (
    f"Replay mode needs no server: `{REPLAY_COMMAND}` replays the course's recorded repair."
)
#: How a replay (``ReplayModel`` or a replay server) says a request differs from the recording.
REPLAY_MISMATCH = "does not match the recording"
#: How the loop's ``model_error`` stop introduces a replay server's refusal: no model failed.
SERVER_REFUSED_REPLAY = (
    "replay mismatch: the replay server refused the request, which differs from the "
    "recording (not a model failure)"
)


class _ModelError(RuntimeError):
    def __init__(self, message: str, stop_detail: str | None = None):
        super().__init__(message)
        self.stop_detail = (
            stop_detail  # how the loop's stop introduces it, if not as a model failure
        )

    @classmethod
    def from_server(cls, message: str, server_said: str) -> _ModelError:
        """The error for what a server said; a replay server's refusal is named as one."""
        refused = REPLAY_MISMATCH in server_said
        return cls(message, stop_detail=SERVER_REFUSED_REPLAY if refused else None)


class OllamaError(_ModelError):
    """The Ollama server gave no usable reply; the message says why and what to do."""


class ProviderError(_ModelError):
    """The model server gave no usable reply; the message says why and what to do."""


#: What a live model raises, each error saying what to do.
MODEL_ERRORS = (OllamaError, ProviderError)

"""What a live model raises when its server gives no usable reply.

Apart from the adapters, so that catching one loads no SDK: ``import labkit`` and a replay
never import ``ollama``, ``openai``, ``anthropic`` or their HTTP clients.
"""


class _ModelError(RuntimeError):
    def __init__(self, message: str, stop_detail: str | None = None):
        super().__init__(message)
        self.stop_detail = (
            stop_detail  # how the loop's stop introduces it, if not as a model failure
        )


class OllamaError(_ModelError):
    """The Ollama server gave no usable reply; the message says why and what to do."""


class ProviderError(_ModelError):
    """The model server gave no usable reply; the message says why and what to do."""

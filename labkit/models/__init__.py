"""Where a reply's chunks come from: a live model, a recording, or a script.

Each is a ``chat`` callable (``labkit.harness.contracts.Chat``), so the loop cannot
tell them apart:

- ``ollama_model.py``: ``OllamaModel``, a live Ollama server through the official SDK,
  with ``wire.py`` keeping each NDJSON line as it came (``go_json.py``: how Ollama writes
  one); the live models are imported on first use, their errors (``errors.py``) are not;
- ``openai_model.py``, ``anthropic_model.py``: ``OpenAIModel`` (any OpenAI-compatible
  server) and ``AnthropicModel`` through their official SDKs, on what ``provider.py``
  gives both (address, key, errors, provenance) and ``sse.py`` (server-sent events);
- ``replay.py``: ``ReplayModel``, a recording replayed in process, and the
  ``RequestCursor`` that decides which recorded turn answers a request;
- ``server.py``: a recording served over the HTTP API it was recorded in (Ollama's there,
  OpenAI's and Anthropic's in ``sse_server.py``, what all share in ``loopback.py``), so
  the live path (the SDK, HTTP, streaming) runs offline;
- ``scripted.py``: planned turns streamed as a server would, and the script that
  writes the course's scripted recordings; ``chunks.py`` builds chunks by hand.
"""

from .chunks import call, chunk
from .errors import OllamaError, ProviderError
from .replay import ReplayError, ReplayMismatch, ReplayModel, RequestCursor
from .scripted import PlannedTurn, ScriptedChat
from .server import ReplayServer, serve_recording

__all__ = [
    "AnthropicModel",
    "OllamaError",
    "OllamaModel",
    "OpenAIModel",
    "PlannedTurn",
    "ProviderError",
    "ReplayError",
    "ReplayMismatch",
    "ReplayModel",
    "ReplayServer",
    "RequestCursor",
    "ScriptedChat",
    "call",
    "chunk",
    "serve_recording",
]

#: The live models, imported on first use: each loads its SDK and HTTP client (a few tenths
#: of a second), which a replay, a kernel in replay mode or a regraded answer never needs.
_LIVE = {
    "OllamaModel": "ollama_model",
    "OpenAIModel": "openai_model",
    "AnthropicModel": "anthropic_model",
}


def __getattr__(name):
    if name in _LIVE:
        from importlib import import_module

        return getattr(import_module(f".{_LIVE[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

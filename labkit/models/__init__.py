"""Where a reply's chunks come from: a live model, a recording, or a script.

Each is a ``chat`` callable (``labkit.harness.contracts.Chat``), so the loop cannot
tell them apart:

- ``ollama_model.py``: ``OllamaModel``, a live Ollama server through the official SDK,
  with ``wire.py`` keeping each NDJSON line as it came;
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

from .anthropic_model import AnthropicModel
from .chunks import call, chunk
from .ollama_model import OllamaError, OllamaModel
from .openai_model import OpenAIModel
from .provider import ProviderError
from .replay import ReplayError, ReplayMismatch, ReplayModel, RequestCursor
from .scripted import PlannedTurn, ScriptedChat
from .server import ReplayServer, serve_recording

__all__ = ["AnthropicModel", "OllamaError", "OllamaModel", "OpenAIModel", "PlannedTurn",
           "ProviderError", "ReplayError", "ReplayMismatch",
           "ReplayModel", "ReplayServer", "RequestCursor", "ScriptedChat", "call", "chunk",
           "serve_recording"]

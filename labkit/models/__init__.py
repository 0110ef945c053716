"""Where a reply's chunks come from: a live model, a recording, or a script.

Each is a ``chat`` callable (``labkit.harness.contracts.Chat``), so the loop cannot
tell them apart. Models sit below recordings: ``labkit.recording`` uses them to run and
replay attempts, and nothing here reads or writes a recording file.

- live models: ``ollama_model.py`` (``OllamaModel``), ``openai_model.py``
  (``OpenAIModel``: any OpenAI-compatible server), ``anthropic_model.py``
  (``AnthropicModel``), ``responses_model.py`` (``ResponsesModel``: OpenAI's Responses API)
  and ``gemini_model.py`` (``GeminiModel``), each through its official SDK, on what
  ``sdk_model.py`` gives all and ``sse_model.py`` all but Ollama's; ``providers.py``: the
  providers' table and ``live_model``, the one place a live model is made;
  ``line_tap.py`` keeps each line as it came, ``go_json.py`` writes Ollama's, ``sse.py``
  server-sent events;
  ``provenance.py``: who wrote the chunks; ``errors.py``: their errors (no SDK needed to
  catch one). The live models are imported on first use;
- ``replay.py``: ``ReplayModel``, a recording replayed in process, and the
  ``RequestCursor`` that decides which recorded turn answers a request;
- replay servers, so the live path (the SDK, HTTP, streaming) runs offline:
  ``replay_server.py`` (the server's life, and which API each wire format is served in),
  ``replay_handler.py`` (one request: the guards every API shares), ``replay_faults.py``
  (faults on purpose), ``request_body.py`` (a body read safely), ``request_shape.py``
  (what a request must look like, as a table),
  and each API's handler: ``ollama_server.py``, ``openai_server.py``,
  ``anthropic_server.py``, ``responses_server.py``, ``gemini_server.py`` (``sse_handler.py``:
  what all but Ollama's share); ``usage.py``: the token counts a replay server estimates
  when its recording holds none;
- ``scripted.py``: planned turns streamed as a server would (``ScriptedChat``);
  ``chunks.py``, ``responses_chunks.py`` and ``gemini_chunks.py`` build chunks by hand;
  ``script_pieces.py``: what every scripted stream shares.
"""

from .chunks import call, chunk
from .errors import OllamaError, ProviderError
from .providers import PROVIDERS
from .replay import ReplayError, ReplayMismatch, ReplayModel, RequestCursor
from .replay_server import ReplayServer
from .scripted import PlannedTurn, ScriptedChat

__all__ = [
    "AnthropicModel",
    "GeminiModel",
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
    "ResponsesModel",
    "ScriptedChat",
    "call",
    "chunk",
]

#: The live models' classes, by name: each is imported on first use (it loads its SDK and HTTP
#: client, a few tenths of a second), which a replay, a kernel in replay mode or a regraded
#: answer never needs.
_LIVE = {provider.model_class.rsplit(".", 1)[1]: provider for provider in PROVIDERS.values()}


def __getattr__(name):
    if name in _LIVE:
        return _LIVE[name].model_type()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

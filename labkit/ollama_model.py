"""The live model: a ``chat`` callable that streams from an Ollama server through the official SDK.

``OllamaModel`` is what a learner with Ollama plugs into ``agent_events``. The
same object, pointed at ``labkit.server.serve_recording``, runs offline against a
recording: the real SDK, real HTTP, real NDJSON streaming.

Every way the server can fail (not running, model not pulled, no thinking, an
error mid-stream, a broken connection, silence) becomes an :class:`OllamaError`
whose message says what happened and what to do; the loop reports it as a
``model_error`` stop.
"""

from __future__ import annotations

import json
import os

import httpx
import ollama
import pydantic

from .settings import DEFAULT_MODEL

DEFAULT_HOST = "http://127.0.0.1:11434"
TIMEOUT = 120.0  # seconds the SDK waits to connect, or for the next piece of a reply
#: Sampling options: deterministic as far as Ollama allows, and room for the whole task.
OPTIONS = {"temperature": 0, "seed": 7, "num_ctx": 8192, "num_predict": 2048}
REPLAY_HINT = "Replay mode needs no server: python -m labkit replay recordings/repair.json"


class OllamaError(RuntimeError):
    """The Ollama server gave no usable reply; the message says why and what to do."""


class OllamaModel:
    """Stream chat replies from Ollama as plain dicts shaped like its wire chunks.

    ``host`` defaults to ``$OLLAMA_HOST``, else ``http://127.0.0.1:11434``. Each
    request asks for a streamed reply with thinking, unloads the model afterwards
    (``keep_alive=0``) and uses :data:`OPTIONS`. ``timeout`` bounds the wait to
    connect and for each next piece of the reply.
    """

    def __init__(self, model: str = DEFAULT_MODEL, host: str | None = None, *,
                 timeout: float = TIMEOUT):
        self.model = model
        self.host = host or os.environ.get("OLLAMA_HOST") or DEFAULT_HOST
        self.timeout = timeout
        try:
            self.client = ollama.Client(host=self.host, timeout=timeout)
        except ValueError as exc:
            raise ValueError(f"cannot use {self.host!r} as the Ollama address ({exc}); "
                             f"give one like {DEFAULT_HOST}") from None

    def __call__(self, messages: list, tool_schemas: list):
        """Send one request; return an iterator of chunks (dicts). Closing it ends the request."""
        return self._stream(messages, tool_schemas)

    def _stream(self, messages, tool_schemas):
        received = 0
        stream = None
        try:
            stream = self.client.chat(self.model, messages, tools=tool_schemas, stream=True,
                                      think=True, keep_alive=0, options=OPTIONS)
            for part in stream:
                received += 1
                yield part.model_dump(exclude_none=True)
        except SERVER_ERRORS as exc:
            raise OllamaError(self.explain(exc, received)) from exc
        finally:
            if stream is not None:
                stream.close()  # ends the HTTP response, also when the loop abandons it

    def server_facts(self) -> dict:
        """Ask the server who it is, for a recording's provenance.

        Returns ``{"server_version", "digest", "replay"}``. ``replay`` is what a
        labkit replay server says about the recording it serves, else None; for a
        real server ``digest`` is the model's, from ``/api/tags``.
        """
        try:  # the SDK has no call for /api/version; its own request helper maps errors alike
            version = self.client._request_raw("GET", "/api/version").json()
            listed = self.client.list().models
        except SERVER_ERRORS as exc:
            raise OllamaError(self.explain(exc)) from exc
        replay = version.get("labkit_replay") if isinstance(version, dict) else None
        facts = {"server_version": str(version.get("version", "")), "digest": None,
                 "replay": replay}
        if replay is None:
            names = (self.model, f"{self.model}:latest")
            facts["digest"] = next((m.digest for m in listed if m.model in names), None)
            if not facts["digest"]:
                raise OllamaError(self._missing_model())
        return facts

    def explain(self, exc: Exception, received: int = 0) -> str:
        """A message a learner can act on, for an error the SDK or its HTTP client raised."""
        where = f"the Ollama server at {self.host}"
        if isinstance(exc, (ConnectionError, httpx.ConnectError)):
            return (f"Ollama is not running at {self.host} (nothing accepted the connection). "
                    f"Start it with `ollama serve`, or set OLLAMA_HOST to the address where it "
                    f"runs. {REPLAY_HINT}")
        if isinstance(exc, httpx.TimeoutException) and received:
            return (f"{where} went quiet for {self.timeout:g} s after {received} chunks of the "
                    f"reply; it may be stuck or overloaded. Try again, or check `ollama ps`.")
        if isinstance(exc, httpx.TimeoutException):
            return (f"{where} did not answer within {self.timeout:g} s; it may still be "
                    f"loading the model. Try again, or check `ollama ps`.")
        if isinstance(exc, httpx.TransportError):
            return (f"the connection to {where} broke after {received} chunks, before the "
                    f"reply was complete ({exc}). Is the server still running?")
        if isinstance(exc, ollama.ResponseError):
            return self._response_problem(exc, received)
        if isinstance(exc, (json.JSONDecodeError, pydantic.ValidationError)):
            return (f"{where} sent something that is not Ollama chat data after {received} "
                    f"chunks: {str(exc).splitlines()[0]}")
        return f"could not talk to {where}: {exc}"

    def _response_problem(self, exc: ollama.ResponseError, received: int) -> str:
        error, status = str(exc.error), exc.status_code
        if received or status == -1:  # an {"error": ...} line inside a streamed reply
            return f"the Ollama server at {self.host} reported an error during the reply: {error}"
        if "does not support thinking" in error:
            return (f"the model {self.model!r} does not support thinking, and this course asks "
                    f"for it (think=True): use a model that thinks, e.g. `ollama pull "
                    f"{DEFAULT_MODEL}` and --model {DEFAULT_MODEL}. (Ollama said: {error})")
        if "does not support tools" in error:
            return (f"the model {self.model!r} cannot call tools, which the loop needs: use a "
                    f"model that can, e.g. {DEFAULT_MODEL}. (Ollama said: {error})")
        if status == 404 or (error.startswith("model") and "not found" in error):
            return f"{self._missing_model()} (Ollama said: {error})"
        return f"the server at {self.host} answered HTTP {status}: {error}"

    def _missing_model(self) -> str:
        return (f"the model {self.model!r} is not on the Ollama server at {self.host}: "
                f"download it with `ollama pull {self.model}`")

    def close(self) -> None:
        """Close the HTTP connections (the object cannot be used afterwards)."""
        self.client.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()

    def __repr__(self):
        return f"OllamaModel(model={self.model!r}, host={self.host!r})"


#: What talking to a server can raise: the SDK's errors, its HTTP client's, a bad line or chunk.
SERVER_ERRORS = (ollama.ResponseError, ConnectionError, httpx.HTTPError, json.JSONDecodeError,
                 pydantic.ValidationError)

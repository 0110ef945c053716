"""The live model: a ``chat`` callable that streams from an Ollama server through the official SDK.

``OllamaModel`` is what a learner with Ollama plugs into ``agent_events``. The
same object, pointed at a replay server (``labkit.serve_recording``), runs offline against
a recording: the real SDK, real HTTP, real NDJSON streaming.

Every way the server can fail (not running, model not pulled, no thinking, an
error mid-stream, a broken connection, silence) becomes an :class:`OllamaError`
whose message says what happened and what to do; the loop reports it as a
``model_error`` stop.
"""

from __future__ import annotations

import json
import os
from urllib.parse import urlsplit

import httpx
import ollama
import pydantic

from ..settings import DEFAULT_HOST, DEFAULT_MODEL, REQUEST_TIMEOUT
from ..settings import OLLAMA_OPTIONS as OPTIONS
from .errors import REPLAY_HINT, OllamaError
from .line_tap import LineTap
from .provenance import RECORDER, replayed_provenance, timestamp
from .providers import PROVIDERS
from .sdk_model import SDKModel

HOST_VARIABLE = PROVIDERS["ollama"].address_variable


class OllamaModel(SDKModel):
    """Stream chat replies from Ollama as plain dicts: each NDJSON line's own JSON object.

    ``host`` defaults to ``$OLLAMA_HOST``, else ``http://127.0.0.1:11434``. Each
    request asks for a streamed reply with thinking, unloads the model afterwards
    (``keep_alive=0``) and uses :data:`OPTIONS`. ``timeout`` bounds the wait to
    connect and for each next piece of the reply.

    The SDK parses and checks every line; what the loop gets is the line's own JSON,
    with every field the server sent (a tool call's ``id`` and ``function.index``,
    which the SDK's models leave out), copied as it arrived by a :class:`LineTap`.
    """

    provider = "ollama"

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        host: str | None = None,
        *,
        timeout: float = REQUEST_TIMEOUT,
    ):
        self.model = model
        self.host = host or os.environ.get(HOST_VARIABLE) or DEFAULT_HOST
        self.timeout = timeout
        self.tap = LineTap()
        try:
            self.client = ollama.Client(host=self.host, timeout=timeout, transport=self.tap)
        except ValueError as exc:
            raise ValueError(
                f"cannot use {self.host!r} as the Ollama address ({exc}); "
                f"give one like {DEFAULT_HOST}"
            ) from None

    @property
    def errors(self) -> tuple:
        return SERVER_ERRORS

    def _request(self, messages, tool_schemas):
        return self.client.chat(
            self.model,
            messages,
            tools=tool_schemas,
            stream=True,
            think=True,
            keep_alive=0,
            options=OPTIONS,
        )

    def _pairs(self, stream):
        for part, line in self.tap.pairs(stream):
            yield _sent_chunk(line, part), line

    @property
    def address(self) -> str:
        return self.host

    def failure(self, exc, received: int = 0) -> OllamaError:
        said = str(exc.error) if isinstance(exc, ollama.ResponseError) else ""
        return OllamaError.from_server(self.explain(exc, received), said)

    def preflight(self) -> None:
        """Ask the server, before a run, whether this model can do the course's task.

        Raises :class:`OllamaError` with what to do when the server is not there, the
        model is not pulled, or it cannot call tools or think; returns None otherwise.
        """
        try:
            shown = self.client.show(self.model)
        except SERVER_ERRORS as exc:
            raise OllamaError(self.explain(exc)) from exc
        capabilities = getattr(shown, "capabilities", None)
        if capabilities is None:
            return  # an older Ollama that does not say: the first request will tell
        if "tools" not in capabilities:
            raise OllamaError(self._cannot("cannot call tools, which the loop needs"))
        if "thinking" not in capabilities:
            raise OllamaError(
                self._cannot("does not support thinking, and this course asks for it (think=True)")
            )

    def server_facts(self) -> dict:
        """Ask the server who it is, for a recording's provenance.

        Returns ``{"server_version", "digest", "replay"}``. ``replay`` is what a
        labkit replay server says about the recording it serves, else None; for a
        real server ``digest`` is the model's, from ``/api/tags``.
        """
        try:  # the SDK has no call for /api/version: plain HTTP, errors mapped alike
            answer = httpx.get(f"{_base_url(self.host)}/api/version", timeout=self.timeout)
            answer.raise_for_status()
            version = answer.json()
            listed = self.client.list().models
        except httpx.HTTPStatusError as exc:
            raise OllamaError(
                f"the server at {self.host} answered HTTP "
                f"{exc.response.status_code} to /api/version; is it Ollama?"
            ) from exc
        except (*SERVER_ERRORS, ValueError) as exc:
            raise OllamaError(self.explain(exc)) from exc
        replay = version.get("labkit_replay") if isinstance(version, dict) else None
        facts = {
            "server_version": str(version.get("version", "")),
            "digest": None,
            "replay": replay,
        }
        if replay is None:
            names = (self.model, f"{self.model}:latest")
            facts["digest"] = next((m.digest for m in listed if m.model in names), None)
            if not facts["digest"]:
                raise OllamaError(self._missing_model())
        return facts

    def provenance(self, now=None) -> dict:
        """Who will have written the chunks captured from this server, as it tells us.

        Ollama: ``"source": "ollama"`` with the model tag, digest and server version it
        reports. A labkit replay server: the served recording's own provenance (its
        ``source`` says who wrote the chunks) plus ``replayed_from``, so no file ever
        claims a live model wrote what a script did.
        """
        facts = self.server_facts()
        date = timestamp(now)
        served = facts["replay"]
        if served is not None:
            return replayed_provenance(
                served,
                server={"server_version": facts["server_version"]},
                address=self.host,
                model=self.model,
                date=date,
                refuse=OllamaError,
            )
        return {
            "source": "ollama",
            "model": self.model,
            "digest": facts["digest"],
            "server_version": facts["server_version"],
            "think": True,
            "keep_alive": 0,
            "options": dict(OPTIONS),
            "date": date,
            "recorded_with": RECORDER,
        }

    def about(self, provenance: dict) -> str:
        """The live model in one line, from its provenance."""
        return (
            f"Model {self.model} (digest {provenance['digest'][:12]}) on Ollama "
            f"{provenance['server_version']} at {self.host}"
        )

    def explain(self, exc: Exception, received: int = 0) -> str:
        """A message a learner can act on, for an error the SDK or its HTTP client raised."""
        where = f"the Ollama server at {self.host}"
        if isinstance(exc, (ConnectionError, httpx.ConnectError)):
            return (
                f"Ollama is not running at {self.host} (nothing accepted the connection). "
                f"Start it with `ollama serve`, or set {HOST_VARIABLE} to the address where it "
                f"runs. {REPLAY_HINT}"
            )
        if isinstance(exc, httpx.TimeoutException) and received:
            return (
                f"{where} went quiet for {self.timeout:g} s after {received} chunks of the "
                f"reply; it may be stuck or overloaded. Try again, or check `ollama ps`."
            )
        if isinstance(exc, httpx.TimeoutException):
            return (
                f"{where} did not answer within {self.timeout:g} s; it may still be "
                f"loading the model. Try again, or check `ollama ps`."
            )
        if isinstance(exc, httpx.TransportError):
            return (
                f"the connection to {where} broke after {received} chunks, before the "
                f"reply was complete ({exc}). Is the server still running?"
            )
        if isinstance(exc, ollama.ResponseError):
            return self._response_problem(exc, received)
        if isinstance(exc, (json.JSONDecodeError, pydantic.ValidationError)):
            return (
                f"{where} sent something that is not Ollama chat data after {received} "
                f"chunks: {str(exc).splitlines()[0]}"
            )
        return f"could not talk to {where}: {exc}"

    def _response_problem(self, exc: ollama.ResponseError, received: int) -> str:
        error, status = str(exc.error), exc.status_code
        if received or status == -1:  # an {"error": ...} line inside a streamed reply
            return f"the Ollama server at {self.host} reported an error during the reply: {error}"
        if "does not support thinking" in error:
            return (
                self._cannot("does not support thinking, and this course asks for it (think=True)")
                + " "
                f"(Ollama said: {error})"
            )
        if "does not support tools" in error:
            return (
                f"{self._cannot('cannot call tools, which the loop needs')} (Ollama said: {error})"
            )
        if status == 404 or (error.startswith("model") and "not found" in error):
            return f"{self._missing_model()} (Ollama said: {error})"
        return f"the server at {self.host} answered HTTP {status}: {error}"

    def _cannot(self, what: str) -> str:
        return (
            f"the model {self.model!r} {what}: use a model that can, e.g. `ollama pull "
            f"{DEFAULT_MODEL}`, then MODEL = {DEFAULT_MODEL!r} (or --model {DEFAULT_MODEL})"
        )

    def _missing_model(self) -> str:
        return (
            f"the model {self.model!r} is not on the Ollama server at {self.host}: "
            f"download it with `ollama pull {self.model}`"
        )

    def __repr__(self):
        return f"OllamaModel(model={self.model!r}, host={self.host!r})"


def _base_url(host: str) -> str:
    """An Ollama address as a URL (``127.0.0.1:11434``, ``localhost``, ``http://host:port/``)."""
    parts = urlsplit(host if "://" in host else f"http://{host}")
    port = parts.port or (443 if parts.scheme == "https" else 80 if "://" in host else 11434)
    name = f"[{parts.hostname}]" if ":" in (parts.hostname or "") else parts.hostname
    return f"{parts.scheme}://{name}:{port}{parts.path.rstrip('/')}"


def _sent_chunk(line: str | None, part) -> dict:
    """The chunk as the server sent it; the SDK's own reading if the line was not kept."""
    if line is not None:
        try:
            chunk = json.loads(line)
        except ValueError:
            chunk = None
        if isinstance(chunk, dict):
            return chunk
    return part.model_dump(exclude_none=True)


#: What talking to a server can raise: the SDK's errors, its HTTP client's, a bad line or chunk.
SERVER_ERRORS = (
    ollama.ResponseError,
    ConnectionError,
    httpx.HTTPError,
    json.JSONDecodeError,
    pydantic.ValidationError,
)

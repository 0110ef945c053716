"""A recording served over HTTP on loopback, in the API it was recorded in: the server's life.

With a replay server the live path of a model (its official SDK, real HTTP, real
streaming) runs offline. :class:`ReplayServer` runs on background threads (no event loop,
so a notebook kernel can use it), every reply ending its connection, every thread joined
and the port released on ``close()``. It decides which recorded turn answers a request
(``RequestCursor``, strict or loose), paces replies at the recorded speed when asked, and
applies the :class:`~.replay_faults.Faults` that break one reply on purpose.

Each request is handled by the handler of the recording's API (:data:`API_HANDLERS`):
the guards every API shares are ``replay_handler.py``'s, what is each API's own is in
``ollama_server.py``, ``openai_server.py`` and ``anthropic_server.py``. A new API's server
is one more handler module (its routes, its request-shape table, and the hooks
``ReplayHandler`` names: what it reads alike, how a turn streams, its request id header)
and one more line here; a turn used up only when its reply begins, faults that fire once,
the deadline, pings and the backlog come with the base class.

The server never pretends to be a model: each handler says, where its clients ask who
they talk to, that it is the labkit replay server and which recording it serves, so a
capture made through it keeps the recording's own provenance.
"""

from __future__ import annotations

import sys
import threading
from dataclasses import dataclass
from datetime import datetime
from http.server import ThreadingHTTPServer
from pathlib import Path

from ..settings import DEFAULT_MODEL
from ..settings import SERVER_REQUEST_TIMEOUT as REQUEST_TIMEOUT
from .anthropic_server import AnthropicHandler
from .gemini_server import GeminiHandler
from .ollama_server import OllamaHandler
from .openai_server import OpenAIHandler
from .replay import Claim, RequestCursor
from .replay_faults import NO_FAULTS, Faults
from .replay_handler import hang_up
from .responses_server import ResponsesHandler

#: The handler that speaks each wire format's API.
API_HANDLERS = {
    "ollama": OllamaHandler,
    "openai": OpenAIHandler,
    "anthropic": AnthropicHandler,
    "openai-responses": ResponsesHandler,
    "gemini": GeminiHandler,
}
#: What the served models can do, unless told otherwise (Ollama's ``/api/show`` says it;
#: without ``"tools"``, every API refuses a request that offers tools).
CAPABILITIES = ("completion", "tools", "thinking")
#: Connections the kernel holds, waiting to be accepted: a workshop's replay server may be
#: asked by a whole class at once (socketserver's default of 5 made 100 connections opened
#: back to back wait for SYN retries, 15 s in all).
BACKLOG = 1024


@dataclass(frozen=True)
class Served:
    """A recording to serve (checked already), with the name and digest by which the server
    names it: made by ``labkit.recording.serving``, which finds and checks recordings."""

    recording: dict
    name: str
    sha256: str
    modified: datetime

    @property
    def wire_format(self) -> str:
        return self.recording.get("wire_format", "ollama")


class ReplayServer:
    """A running replay server for one recording; ``url`` is its address.

    Chat requests get the recording's turns in order. A request with as many
    messages as the first recorded one begins a new conversation: the recording
    starts over, so one server can answer run after run. A refused request uses
    up no turn, nor does a reply that failed before its first byte (the client's retry
    gets the same turn). ``chat_requests`` keeps each chat request's JSON body as it arrived:
    what the client really sent (never its headers, so never a key). ``errors``
    keeps any unexpected handler error.

    ``handler``: the API's handler (None: the one :data:`API_HANDLERS` names for the
    recording's wire format). It answers to the model names
    ``models`` (default: ``labkit-replay:<recording>``, the course's model tag, the
    protocol's default model and the model the recording names); any other name gets the
    API's 404.
    ``api_key``: the key a client must send (None: any key, or none).
    ``pings``: in a streamed reply, send the API's keep-alive event (Anthropic's ``ping``)
    before every ``pings``-th chunk after the first (0: none), as a real server may; only
    for an API that has one.
    """

    def __init__(
        self,
        served: Served,
        handler=None,
        *,
        port=0,
        strict=True,
        speed=None,
        log=None,
        models=None,
        capabilities=CAPABILITIES,
        request_timeout=REQUEST_TIMEOUT,
        faults: Faults = NO_FAULTS,
        api_key: str | None = None,
        pings: int = 0,
    ):
        self.recording = served.recording
        self.turns = self.recording["turns"]
        self.handler = handler = handler or API_HANDLERS[served.wire_format]
        if isinstance(pings, bool) or not isinstance(pings, int) or pings < 0:
            raise ValueError(f"pings counts chunks between pings: an int >= 0, not {pings!r}")
        if pings and not handler.ping:
            raise ValueError(f"the {served.wire_format} API has no keep-alive event to send")
        self.cursor = RequestCursor(
            self.turns,
            strict=strict,
            restarts=True,
            over_http=True,
            canonical=handler.canonical_messages,
        )
        self.speed = speed
        self.faults = faults
        self.pings = pings
        self._fired = (0, 0)  # (conversation, how often the faults fired in it)
        self.capabilities = tuple(capabilities)
        self.request_timeout = request_timeout
        self.api_key = api_key
        self.log = log or (lambda line: None)
        #: what a streamed reply to each turn sends: its chunks, and their bytes
        self.streamed = [handler.streamed_chunks(turn) for turn in self.turns]
        self.lines = [[handler.chunk_bytes(entry) for entry in turn] for turn in self.streamed]
        self.chat_requests = []
        self.errors = []
        self.identity = {
            "server": "labkit replay server",
            "recording": served.name,
            "recording_sha256": served.sha256,
            "turns": len(self.turns),
            "wire_format": served.wire_format,
            "provenance": self.recording["provenance"],
            "note": "no model runs here: every reply is read from the recording",
        }
        recorded = self.recording["provenance"].get("model")
        self.models = list(
            dict.fromkeys(
                models
                if models is not None
                else [
                    f"labkit-replay:{Path(served.name).stem}",
                    DEFAULT_MODEL,
                    handler.default_model,
                    *([recorded] if recorded else []),
                ]
            )
        )
        self.modified = served.modified
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._connections = set()
        self._httpd = _HTTPServer(("127.0.0.1", port), handler)
        self._httpd.replay = self
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}"
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            args=(0.05,),
            name=f"labkit replay server {self.url}",
            daemon=True,
        )
        self._thread.start()

    def serves(self, name) -> bool:
        key = self.handler.model_key
        return isinstance(name, str) and key(name) in {key(m) for m in self.models}

    @property
    def strict(self) -> bool:
        return self.cursor.strict

    def faults_for(self, claim: Claim) -> Faults:
        """The faults that break the reply to a claimed turn: the server's, on their turn, the
        first ``times`` requests for it in each conversation; else none."""
        faults = self.faults
        if faults is NO_FAULTS or claim.number != faults.turn:
            return NO_FAULTS
        with self._lock:
            conversation, fired = self._fired
            if conversation != claim.conversation:
                fired = 0
            if fired >= faults.times:
                return NO_FAULTS
            self._fired = (claim.conversation, fired + 1)
        return faults

    @property
    def open_connections(self) -> int:
        """How many client connections are open now (a closed stream leaves none)."""
        with self._lock:
            return len(self._connections)

    def wait(self, seconds: float | None) -> bool:
        """Sleep up to ``seconds`` (None: until closing); True if the server is closing."""
        return self._closing.wait(seconds)

    def track(self, connection, open_: bool) -> None:
        with self._lock:
            if open_:
                self._connections.add(connection)
                if self._closing.is_set():
                    hang_up(connection)
            else:
                self._connections.discard(connection)

    def close(self) -> None:
        """Stop serving: end open replies, join every thread, release the port."""
        if self._closing.is_set():
            return
        self._closing.set()
        self._httpd.shutdown()
        with self._lock:
            for connection in self._connections:
                hang_up(connection)
        self._httpd.server_close()  # joins the request threads
        self._thread.join()

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()

    def __repr__(self):
        return (
            f"<ReplayServer {self.identity['recording']} ({self.identity['wire_format']}) "
            f"at {self.url}>"
        )


class _HTTPServer(ThreadingHTTPServer):
    request_queue_size = BACKLOG

    def handle_error(self, request, client_address):
        """An error that escaped a handler: keep it (never print a traceback and go on)."""
        error = sys.exc_info()[1]
        self.replay.errors.append(repr(error))
        self.replay.log(f"handler error: {error!r}")

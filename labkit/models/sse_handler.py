"""What the replay servers of OpenAI's and Anthropic's APIs share: replies as server-sent events.

Each speaks its API well enough for the official SDKs (``openai``, ``anthropic``, in Python and
JavaScript, and the clients built on them) to run against it unmodified: a chat route that
streams server-sent events (each recorded event as it was kept) or answers with one whole
object, a model list, the API's error bodies and request ids, and, with ``api_key`` set,
the API's 401 for a request without that key. The model list says who answers: its
entries name the labkit replay server, and it carries ``labkit_replay`` (the recording
served and its provenance), so a capture through it never claims a model wrote what a
script did. What differs is in ``openai_server.py`` and ``anthropic_server.py``; threads,
faults, pacing and hostile requests are every API's (``replay_handler.py``).
"""

from __future__ import annotations

import hmac

from .replay_handler import PREFIX, ReplayHandler

TEXT = "text/plain; charset=utf-8"


class SSEHandler(ReplayHandler):
    """What both APIs' servers share: a text/event-stream reply, a key, a model list.

    ``post_routes`` names, for each POST route, the method that answers it (``chat``: a chat
    request answered from the recording). ``header_problem()`` may refuse a request for
    what its headers lack (Anthropic's ``anthropic-version``) before its body is read.
    """

    stream_type = "text/event-stream; charset=utf-8"
    post_routes: dict = {}
    event = staticmethod(lambda chunk: "")  # a chunk as the API writes its event

    @classmethod
    def chunk_bytes(cls, entry: dict) -> bytes:
        return (entry.get("line") or cls.event(entry["chunk"])).encode() + b"\n\n"

    def stream_error(self, text: str) -> bytes:
        return self.event(self.error_body(500, text)).encode() + b"\n\n"

    def _get(self, head: bool):
        replay = self.replay
        if self.route == "/":
            return self.send_body(
                200, b"labkit replay server is running (not a model)", TEXT, head=head
            )
        if not self._admitted():
            return
        if self.route == "/v1/models":
            return self.send_json(
                200,
                {
                    **self.model_list([self.model_entry(m) for m in replay.models]),
                    "labkit_replay": replay.identity,
                },
                head,
            )
        name = self.route.removeprefix("/v1/models/")
        if name != self.route and replay.serves(name):
            return self.send_json(200, self.model_entry(name), head)
        if name != self.route:
            return self.send_json_error(404, self.missing_model(name))
        self.send_json_error(404, f"{PREFIX}no {self.command} {self.route}")

    def do_POST(self):
        answer = self.post_routes.get(self.route)
        if answer is None:
            return self.send_json_error(404, f"{PREFIX}no POST {self.route}")
        if self._admitted():
            getattr(self, answer)()

    def chat(self) -> None:
        """A chat request: checked, then answered from the next recorded turn."""
        body = self.read_chat()
        replay = self.replay
        model = body["model"]
        if not replay.serves(model):
            return self.send_json_error(404, self.missing_model(model))
        if body.get("tools") and "tools" not in replay.capabilities:
            return self.send_json_error(400, f"{model} does not support tools")
        messages, names = self.conversation(body)
        self.answer_turn(messages, names, body, streamed=body.get("stream") is True)

    def _admitted(self) -> bool:
        """Whether the request may go on: its key (when the server has one; else the API's
        401), then its headers (else the API's refusal, the body left unread)."""
        wanted = self.replay.api_key
        if wanted is not None and not hmac.compare_digest(
            self.sent_key().encode(), wanted.encode()
        ):
            self.send_json_error(401, self.bad_key)
            return False
        problem = self.header_problem()
        if problem:
            self.send_json_error(400, problem)  # in the API's own words
            self._discard_the_rest()
            return False
        return True

    def header_problem(self) -> str | None:
        """What the request's headers lack for this API, or None."""
        return None

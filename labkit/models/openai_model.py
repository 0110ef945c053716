"""A live model that speaks OpenAI's Chat Completions API, through the official ``openai`` SDK.

``OpenAIModel`` is what a learner with an OpenAI-compatible server plugs into
``agent_events``: LM Studio, llama.cpp's server, vLLM, Ollama's ``/v1``, or OpenAI
itself. The same object, pointed at ``serve_recording`` of an OpenAI recording, runs
offline: the real SDK, real HTTP, real server-sent events.

Each request streams (``stream=True``) with temperature 0, seed 7, room for 2,048
output tokens (``max_tokens``, the field every such server reads) and ``tool_choice:
"auto"``: OpenAI's default when tools are sent, but not every server's (llama-cpp-python's
function-calling chat format lets the model call no tool unless it is asked this way). The
loop's messages go as they are: the system prompt first, ``content: ""`` beside tool calls.
Some servers cannot stream a reply that calls tools (llama-cpp-python's function-calling chat format
refuses it): ``stream=False`` asks for the whole completion instead, and the loop
assembles it as one chunk, under the same rules. Everything shared with
``AnthropicModel`` (address, key, the stream as it came, errors, provenance) is in ``sse_model.py``.
"""

from __future__ import annotations

from ..settings import DEFAULT_MODELS, MAX_OUTPUT_TOKENS, OLLAMA_OPTIONS, REQUEST_TIMEOUT
from .sse_model import SSEModel

#: What every request asks for besides the conversation: as deterministic as the server allows.
SETTINGS = {"temperature": 0, "seed": OLLAMA_OPTIONS["seed"], "max_tokens": MAX_OUTPUT_TOKENS}


class OpenAIModel(SSEModel):
    """Stream chat completions as plain dicts: each event's JSON, as the server sent it.

    ``base_url`` defaults to ``$OPENAI_BASE_URL``, else ``https://api.openai.com/v1``;
    ``api_key`` to ``$OPENAI_API_KEY`` (a server of your own may need none). ``stream``:
    False asks for whole completions, for servers that cannot stream tool calls.
    """

    provider = "openai"
    sdk_name = "openai"
    example_url = "http://127.0.0.1:1234/v1"
    url_hint = "an OpenAI-compatible address usually ends in /v1"

    def __init__(
        self,
        model: str = DEFAULT_MODELS["openai"],
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        stream: bool = True,
        timeout: float = REQUEST_TIMEOUT,
    ):
        self.stream = stream
        super().__init__(model, base_url=base_url, api_key=api_key, timeout=timeout)

    def _client(self, key: str, http_client):
        # max_retries=0, unlike the SDK's default of 2: the loop, not the SDK, decides what a
        # failed request means (lesson 05's model_error stop names it); a dead or stuck server
        # is reported at once, not after three timeouts of REQUEST_TIMEOUT each (six minutes
        # of silence for a learner); and the three live models behave alike (the ollama SDK
        # never retries). A learner's own client keeps the default: the replay servers answer
        # its retries as the services do.
        return self.sdk.OpenAI(
            api_key=key,
            base_url=self.base_url,
            http_client=http_client,
            timeout=self.timeout,
            max_retries=0,
        )

    def settings(self) -> dict:
        return {**SETTINGS, "tool_choice": "auto", "stream": self.stream}

    def _request(self, messages: list, tool_schemas: list):
        asked = dict(model=self.model, messages=messages, tools=tool_schemas, **SETTINGS)
        if tool_schemas:  # said outright: OpenAI assumes "auto", llama-cpp-python's
            asked["tool_choice"] = "auto"  # function-calling format offers no tools without it
        if self.stream:
            return self.client.chat.completions.create(stream=True, **asked)
        return _Whole(self.client.chat.completions.with_raw_response.create(**asked))


class _Whole:
    """A whole completion, iterated as one chunk: the response body's own JSON."""

    def __init__(self, raw):
        self.raw = raw

    def __iter__(self):
        yield _Body(self.raw.http_response.json())

    def close(self) -> None:
        self.raw.http_response.close()


class _Body:
    """What ``chunk_of`` reads when no event was kept: here, the whole body."""

    def __init__(self, body: dict):
        self.body = body

    def to_dict(self, mode: str = "json") -> dict:
        return self.body

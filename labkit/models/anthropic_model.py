"""A live model that speaks Anthropic's Messages API, through the official ``anthropic`` SDK.

The loop keeps its system prompt as the first message for every provider; the Messages
API takes it apart, as the ``system`` parameter, and its tools as ``name``,
``description`` and ``input_schema``. ``AnthropicModel.request`` makes that move, and
nothing else: the conversation's other messages go as the loop keeps them (the assistant's
content blocks, the ``user`` messages of ``tool_result`` blocks). A replay server puts the
system prompt back in front before comparing, so strict replay compares what the loop sent.

Each request streams with room for 2,048 output tokens (``max_tokens``, which this API
requires); it sets no temperature, which the pinned SDK's ``messages.create`` no longer
offers. ``base_url`` (else ``$ANTHROPIC_BASE_URL``) lets a replay server stand in.
Everything shared with ``OpenAIModel`` (address, key, the stream as it came, errors,
provenance) is in ``sse_model.py``.
"""

from __future__ import annotations

from ..harness.formats import ANTHROPIC
from ..settings import DEFAULT_MODELS, MAX_OUTPUT_TOKENS, REQUEST_TIMEOUT
from .sse_model import SSEModel

#: What every request asks for besides the conversation.
SETTINGS = {"max_tokens": MAX_OUTPUT_TOKENS}


class AnthropicModel(SSEModel):
    """Stream Messages events as plain dicts: each event's JSON, as the server sent it.

    ``api_key`` defaults to ``$ANTHROPIC_API_KEY``; ``base_url`` to ``$ANTHROPIC_BASE_URL``,
    else ``https://api.anthropic.com``.
    """

    provider = "anthropic"
    sdk_name = "anthropic"
    models_path = "/v1/models"
    example_url = "https://api.anthropic.com"
    url_hint = "Anthropic's address has no /v1: the SDK adds it"

    def __init__(
        self,
        model: str = DEFAULT_MODELS["anthropic"],
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = REQUEST_TIMEOUT,
    ):
        super().__init__(model, base_url=base_url, api_key=api_key, timeout=timeout)

    def _client(self, key: str, http_client):
        # the key is given, so the SDK consults no variable or profile for credentials
        # max_retries=0, unlike the SDK's default of 2: the loop, not the SDK, decides what a
        # failed request means (lesson 05's model_error stop names it); a dead or stuck server
        # is reported at once, not after three timeouts of REQUEST_TIMEOUT each (six minutes
        # of silence for a learner); and the three live models behave alike (the ollama SDK
        # never retries). A learner's own client keeps the default: the replay servers answer
        # its retries as the services do.
        return self.sdk.Anthropic(
            api_key=key,
            base_url=self.base_url,
            http_client=http_client,
            timeout=self.timeout,
            max_retries=0,
        )

    def settings(self) -> dict:
        return {**SETTINGS, "stream": True}

    @staticmethod
    def request(messages: list, tool_schemas: list) -> dict:
        """The Messages API's arguments for the loop's conversation and tools: the system
        prompt moved to ``system``, each tool described by ``input_schema``."""
        system = [m for m in messages[:1] if m.get("role") == "system"]
        rest = messages[len(system) :]
        if any(m.get("role") == "system" for m in rest):
            raise ValueError("only the first message may be the system prompt")
        asked = {
            "messages": rest,
            "tools": [
                ANTHROPIC.tool_schema(
                    tool["function"]["name"],
                    tool["function"].get("description", ""),
                    tool["function"].get("parameters") or {"type": "object"},
                )
                for tool in tool_schemas
            ],
        }
        if system:
            asked["system"] = system[0]["content"]
        return asked

    def _request(self, messages: list, tool_schemas: list):
        return self.client.messages.create(
            model=self.model, stream=True, **SETTINGS, **self.request(messages, tool_schemas)
        )

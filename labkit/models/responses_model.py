"""A live model that speaks OpenAI's Responses API, through the official ``openai`` SDK's
``responses`` resource.

``ResponsesModel`` talks to any server that serves ``POST /v1/responses``: OpenAI, and
Ollama's ``/v1`` (0.13.3 and later), among others. Every request carries the **whole
conversation** as ``input``, so it works with a server that keeps nothing between
requests (Ollama's is stateless: it has no ``previous_response_id``).

The loop keeps its own shape of the conversation; ``ResponsesModel.request`` turns it into
the API's: the system prompt and the task are ``system`` and ``user`` messages (items with
a ``role``), each assistant turn's ``output`` items go in one after another (its text as an
``assistant`` message, each call as a ``function_call`` item, a ``reasoning`` item whole),
and each result is already a ``function_call_output`` item. Tools are described flat
(``type``, ``name``, ``description``, ``parameters``, ``strict: false``: strict schemas would
have to list every property as required). A replay server regroups the items the same way
before comparing, so strict replay compares what the loop kept.

Each request streams (``stream=True``) with temperature 0 and room for 2,048 output tokens
(``max_output_tokens``: a reply cut there ends with ``response.incomplete``, which the loop
refuses). The client, address and key are ``OpenAIModel``'s; the stream as it came, errors
and provenance are ``sse_model.py``'s.
"""

from __future__ import annotations

from ..harness.formats import FORMATS
from ..settings import DEFAULT_MODELS, MAX_OUTPUT_TOKENS, REQUEST_TIMEOUT
from .openai_model import OpenAIModel

RESPONSES = FORMATS["openai-responses"]  # declares each tool as this API does

#: What every request asks for besides the conversation.
SETTINGS = {"temperature": 0, "max_output_tokens": MAX_OUTPUT_TOKENS}


class ResponsesModel(OpenAIModel):
    """Stream Responses API events as plain dicts: each event's JSON, as the server sent it.

    ``base_url`` defaults to ``$OPENAI_BASE_URL``, else ``https://api.openai.com/v1``;
    ``api_key`` to ``$OPENAI_API_KEY`` (a server of your own may need none). The client is
    ``OpenAIModel``'s; what differs is the resource it calls and the request it sends.
    """

    provider = "openai-responses"
    example_url = "http://127.0.0.1:11434/v1"

    def __init__(
        self,
        model: str = DEFAULT_MODELS["openai-responses"],
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = REQUEST_TIMEOUT,
    ):
        super().__init__(model, base_url=base_url, api_key=api_key, timeout=timeout)

    def settings(self) -> dict:
        return {**SETTINGS, "stream": True}

    @staticmethod
    def request(messages: list, tool_schemas: list) -> dict:
        """The Responses API's arguments for the loop's conversation and tools: every message
        an input item, each assistant turn's ``output`` spread in place."""
        items = []
        for message in messages:
            if message.get("role") == "assistant" and "output" in message:
                items.extend(message["output"])
            else:
                items.append(message)
        tools = [
            RESPONSES.tool_schema(
                tool["function"]["name"],
                tool["function"].get("description", ""),
                tool["function"].get("parameters") or {"type": "object"},
            )
            for tool in tool_schemas
        ]
        return {"input": items, "tools": tools}

    def _request(self, messages: list, tool_schemas: list):
        return self.client.responses.create(
            model=self.model, stream=True, **SETTINGS, **self.request(messages, tool_schemas)
        )

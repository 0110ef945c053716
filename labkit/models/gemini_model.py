"""A live model that speaks Gemini's API, through the official ``google-genai`` SDK.

``GeminiModel`` streams each reply with ``client.models.generate_content_stream`` (the
REST call ``POST /{version}/models/{model}:streamGenerateContent?alt=sse``). It talks to
Google's API with a key (``GEMINI_API_KEY``), or to any endpoint the SDK can be pointed at:
``base_url`` (else ``$GOOGLE_GEMINI_BASE_URL``) and ``api_version`` (``"v1beta"``, where
Google documents function calling with thought signatures; the pinned SDK alone would say
``v1``). The SDK retries nothing unless asked, and is not asked here.

The loop keeps its own shape of the conversation; ``GeminiModel.request`` turns it into the
API's: the system prompt becomes ``systemInstruction``, the task a ``user`` content with
one text part; the ``model`` contents (thought signatures and all) and the ``user``
contents of ``functionResponse`` parts go as the loop kept them. Tools are
``functionDeclarations`` whose ``parametersJsonSchema`` is the tool's JSON Schema as it is.
The SDK reads a thought signature as bytes and writes it back as standard padded base64, so
the signature a server sent goes back unchanged. A replay server turns the request back
into the loop's shape before comparing.

Everything shared with the other providers (address, key, the stream as it came, errors a
learner can act on, provenance) is ``sse_model.py``'s; what differs here is how the SDK is
made and how its errors and model list read.
"""

from __future__ import annotations

import importlib

from ..harness.formats import FORMATS
from ..settings import DEFAULT_MODELS, MAX_OUTPUT_TOKENS, REQUEST_TIMEOUT
from .errors import REPLAY_HINT, REPLAY_MISMATCH, ProviderError
from .provenance import RECORDER, replayed_provenance, timestamp
from .sse_model import SSEModel

GEMINI = FORMATS["gemini"]  # declares each tool as this API does

API_VERSION = "v1beta"
#: What every request asks for besides the conversation.
SETTINGS = {"temperature": 0, "maxOutputTokens": MAX_OUTPUT_TOKENS}


class GeminiModel(SSEModel):
    """Stream Gemini's responses as plain dicts: each event's JSON, as the server sent it.

    ``api_key`` defaults to ``$GEMINI_API_KEY``; ``base_url`` to ``$GOOGLE_GEMINI_BASE_URL``,
    else ``https://generativelanguage.googleapis.com``.
    """

    provider = "gemini"
    sdk_name = "google.genai"
    example_url = "https://generativelanguage.googleapis.com"
    url_hint = "give the address without the version: the SDK adds /v1beta"

    def __init__(
        self,
        model: str = DEFAULT_MODELS["gemini"],
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        api_version: str = API_VERSION,
        timeout: float = REQUEST_TIMEOUT,
    ):
        self.api_version = api_version
        super().__init__(model, base_url=base_url, api_key=api_key, timeout=timeout)

    @property
    def types(self):
        return importlib.import_module("google.genai.types")

    def _client(self, key: str, http_client):
        self.http = http_client  # the model list is read over it too, with the same key
        self._key = key
        options = self.types.HttpOptions(
            base_url=self.base_url,
            api_version=self.api_version,
            httpx_client=http_client,
            timeout=int(self.timeout * 1000),  # milliseconds
        )
        return self.sdk.Client(api_key=key, vertexai=False, http_options=options)

    @property
    def errors(self) -> tuple:
        import httpx2

        return (self.sdk.errors.APIError, httpx2.TransportError)

    def settings(self) -> dict:
        return {**SETTINGS, "stream": True, "api_version": self.api_version}

    @staticmethod
    def request(messages: list, tool_schemas: list) -> dict:
        """The request body for the loop's conversation and tools: the system prompt moved to
        ``systemInstruction``, a message of plain text made a content of one text part."""
        system = [m for m in messages[:1] if m.get("role") == "system"]
        contents = []
        for message in messages[len(system) :]:
            if message.get("role") == "system":
                raise ValueError("only the first message may be the system prompt")
            if "parts" in message:
                contents.append(message)
            else:
                contents.append({"role": message["role"], "parts": [{"text": message["content"]}]})
        body = {"contents": contents}
        if system:
            body["systemInstruction"] = {"parts": [{"text": system[0]["content"]}]}
        declarations = [
            GEMINI.tool_schema(
                tool["function"]["name"],
                tool["function"].get("description", ""),
                tool["function"].get("parameters") or {"type": "object"},
            )
            for tool in tool_schemas
        ]
        if declarations:
            body["tools"] = [{"functionDeclarations": declarations}]
        return body

    def _request(self, messages: list, tool_schemas: list):
        types, body = self.types, self.request(messages, tool_schemas)
        config = types.GenerateContentConfig(
            system_instruction=body.get("systemInstruction"),
            tools=[types.Tool.model_validate(tool) for tool in body.get("tools", [])],
            temperature=SETTINGS["temperature"],
            max_output_tokens=SETTINGS["maxOutputTokens"],
            automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
        )
        contents = [types.Content.model_validate(content) for content in body["contents"]]
        # a generator: closing it (as the loop does when it is done) ends the response
        return self.client.models.generate_content_stream(
            model=self.model, contents=contents, config=config
        )

    # --- asking the server before a run ---------------------------------------------------

    def listed(self) -> dict:
        """The server's model list, as its JSON (``GET {base_url}/{version}/models``)."""
        try:
            response = self.http.get(
                f"{self.base_url}/{self.api_version}/models",
                params={"pageSize": 1000},
                headers={"x-goog-api-key": self._key},
            )
            self.sdk.errors.APIError.raise_for_response(response)
            return response.json()
        except self.errors as exc:
            raise self.failure(exc) from exc
        except ValueError as exc:  # not JSON
            raise ProviderError(
                f"the {self.title} server at {self.base_url} answered its model list with "
                f"something that is not JSON ({exc})"
            ) from exc

    def names(self, listed: dict) -> list:
        """The models a list names (``models/NAME`` is ``NAME``)."""
        models = listed.get("models") if isinstance(listed, dict) else None
        return [
            entry.get("name", "").removeprefix("models/")
            for entry in models or []
            if isinstance(entry, dict)
        ]

    def preflight(self) -> None:
        """Ask the server whether it is there, takes the key and has the model; raise a
        :class:`ProviderError` saying what to do if not."""
        names = self.names(self.listed())
        if names and self.model.removeprefix("models/") not in names:
            shown = ", ".join(repr(name) for name in names[:8]) + (" ..." if len(names) > 8 else "")
            raise ProviderError(
                f"the {self.title} server at {self.base_url} has no model {self.model!r}; it "
                f"lists {shown}: set MODEL (or --model) to one of them"
            )

    def provenance(self, now=None) -> dict:
        """Who will have written the chunks: as in ``SSEModel.provenance``, from this API's
        model list (a labkit replay server's says which recording it serves)."""
        listed, date = self.listed(), timestamp(now)
        served = listed.get("labkit_replay") if isinstance(listed, dict) else None
        if served is not None:
            return replayed_provenance(
                served,
                server={"server": "labkit replay server (gemini API)"},
                address=self.base_url,
                model=self.model,
                date=date,
                refuse=ProviderError,
            )
        wanted = self.model.removeprefix("models/")
        entry = next(
            (e for e in listed.get("models") or [] if e.get("name") == f"models/{wanted}"), None
        )
        return {
            "source": self.provider,
            "model": self.model,
            "base_url_host": self.host,
            "server_reported": {"model": entry, "models_listed": self.names(listed)},
            "request": self.settings(),
            "date": date,
            "recorded_with": RECORDER,
        }

    # --- errors ---------------------------------------------------------------------------

    def explain(self, exc: Exception, received: int = 0) -> str:
        """A message a learner can act on, for an error the SDK (or its HTTP client) raised."""
        import httpx2

        where = f"the {self.title} server at {self.base_url}"
        if isinstance(exc, httpx2.TimeoutException):
            return (
                f"{where} went quiet for {self.timeout:g} s"
                + (f" after {received} chunks of the reply" if received else "")
                + "; it may be stuck or overloaded. Try again."
            )
        if isinstance(exc, httpx2.TransportError):
            if received:
                return (
                    f"the connection to {where} broke after {received} chunks, before the "
                    "reply was complete. Is the server still running?"
                )
            return (
                f"nothing is listening at {self.base_url} (the connection failed). Start "
                f"the server, or set BASE_URL (or --base-url, or {self.url_variable}) to "
                f"where it runs. {REPLAY_HINT}"
            )
        text, status = getattr(exc, "message", None) or str(exc), getattr(exc, "code", None)
        if received:
            return f"{where} reported an error during the reply: {text}"
        if REPLAY_MISMATCH in text:
            return text
        if status in (400, 401, 403) and ("API key" in text or "API_KEY" in text):
            if not self.keyed:
                return f"{where} wants an API key (HTTP {status}), and none is set: set " + (
                    f"{self.key_variable}"
                )
            return f"{where} refused the API key (HTTP {status}): check {self.key_variable}"
        if status == 404:
            return (
                f"{where} answered 404 for the model {self.model!r}: the model is not there "
                f"(list the server's models, and set MODEL or --model to one), or the address "
                f"is wrong ({self.url_hint}) (the server said: {text})"
            )
        if status == 400 and ("tool" in text.lower() or "function calling" in text.lower()):
            return (
                f"the model {self.model!r} at {self.base_url} cannot call tools, which the "
                f"loop needs: use a model that can (the server said: {text})"
            )
        return f"{where} answered HTTP {status}: {text}"

    def failure(self, exc, received: int = 0) -> ProviderError:
        said = getattr(exc, "message", None) or str(exc)
        return ProviderError.from_server(self.explain(exc, received), said)

"""What ``OpenAIModel`` and ``AnthropicModel`` share: a live model behind an official SDK that
streams server-sent events.

- **The address and the key.** ``base_url`` comes from the argument, else the provider's
  variable (``OPENAI_BASE_URL``, ``ANTHROPIC_BASE_URL``), else the provider's own API.
  The key comes from the argument, else ``OPENAI_API_KEY`` / ``ANTHROPIC_API_KEY``, read
  when the model is made (a live model only: replay never reads it). A local server
  often wants no key: for an address that is not the provider's own, a placeholder is
  sent when none is set. The key is never part of an error, a ``repr``, a provenance or
  a recording; a request carries it in a header, which no capture keeps.
- **The stream as it came.** The SDK parses the stream for the loop; a
  :class:`~.line_tap.LineTap` under
  its ``httpx2`` client copies each line as it arrives, and the chunk handed to the loop
  is the event's own JSON (every field the server sent), kept with the event's text.
- **Errors a learner can act on.** Both SDKs raise the same family of exceptions
  (connection refused, timeout, an HTTP status with the API's error body, an error
  event mid-stream); each becomes a :class:`ProviderError` saying what happened and what
  to do: nothing listening, no key or a wrong one (401), a model the server does not
  have (404, or a base URL without ``/v1``), a model that cannot call tools.
- **Provenance.** A live server is named by provider, base URL host, model and the
  model list it reports; a labkit replay server (its model list says it is one) by the
  recording it serves, as ``OllamaModel`` does.
"""

from __future__ import annotations

import importlib
import os
from urllib.parse import urlsplit

import httpx2

from ..settings import REQUEST_TIMEOUT
from .errors import REPLAY_HINT, REPLAY_MISMATCH, ProviderError
from .line_tap import LineTap
from .provenance import RECORDER, replayed_provenance, timestamp
from .providers import PROVIDERS
from .sdk_model import SDKModel
from .sse import EventReader, chunk_of, ping_of

NO_KEY = "no-key-needed"  # sent to a server of your own when no key is set (it ignores it)


class SSEModel(SDKModel):
    """A ``chat`` callable over a provider's official SDK; see the module's description.

    A subclass names its ``provider`` (its row of ``PROVIDERS`` gives its title, address and
    key variables), the SDK's module (``sdk_name``), and how to make the client
    (``_client``) and a streamed request (``_request``).
    """

    provider = ""  # "openai" or "anthropic": also its wire format's name
    sdk_name = ""  # the SDK's module: its exceptions are the same family for both
    models_path = "/models"  # the model list, below the base URL
    example_url = ""  # an address, for a message about one that is not
    url_hint = ""  # what a 404 may mean about the address

    @property
    def title(self) -> str:  # how messages name the provider
        return PROVIDERS[self.provider].title

    @property
    def key_variable(self) -> str:  # OPENAI_API_KEY...
        return PROVIDERS[self.provider].key_variable

    @property
    def url_variable(self) -> str:  # OPENAI_BASE_URL...
        return PROVIDERS[self.provider].address_variable

    @property
    def default_url(self) -> str:  # the provider's own API
        return PROVIDERS[self.provider].default_address

    @property
    def sdk(self):
        """The SDK, imported on first use: importing both takes seconds, and most programs
        that import labkit (a replay, a grader, a kernel) never talk to these providers."""
        return importlib.import_module(self.sdk_name)

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = REQUEST_TIMEOUT,
    ):
        if not isinstance(model, str) or not model.strip():
            raise ValueError(f"name the model to use (a non-empty string), not {model!r}")
        self.model = model
        self.base_url = (base_url or os.environ.get(self.url_variable) or self.default_url).rstrip(
            "/"
        )
        parts = urlsplit(self.base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(
                f"cannot use {self.base_url!r} as the {self.title} address; give "
                f"one like {self.example_url}"
            )
        self.host = parts.netloc.rsplit("@", 1)[-1]  # never a user:password part
        self.timeout = timeout
        key = api_key or os.environ.get(self.key_variable)
        self.keyed = bool(key)
        if not key and self.official:
            raise ProviderError(
                f"the {self.title} API at {self.base_url} needs a key: set "
                f"{self.key_variable}. {REPLAY_HINT}"
            )
        self.tap = LineTap(httpx2.HTTPTransport())
        self.client = self._client(
            key or NO_KEY, httpx2.Client(transport=self.tap, timeout=timeout)
        )

    @property
    def official(self) -> bool:
        """Whether the address is the provider's own API (there a key is a must)."""
        return urlsplit(self.base_url).hostname == urlsplit(self.default_url).hostname

    @property
    def address(self) -> str:
        return self.base_url

    @property
    def errors(self) -> tuple:
        return (self.sdk.APIError,)

    def _pairs(self, stream):
        """Each chunk the SDK yields with its event's text; before it, each ``ping`` the SDK
        dropped (``{"type": "ping"}`` with its text), so a capture keeps what came, and a
        replay hands the loop the same chunks (its assembler ignores pings)."""
        readers = []

        def reader(copy):
            readers.append(EventReader(copy))
            return readers[0].next_event

        for part, event in self.tap.pairs(stream, reader):
            for ping in readers[0].take_pings() if readers else ():
                yield ping_of(ping), ping
            yield chunk_of(event, part), event

    def failure(self, exc, received: int = 0) -> ProviderError:
        return ProviderError.from_server(
            self.explain(exc, received), str(getattr(exc, "message", ""))
        )

    # --- asking the server before a run ---------------------------------------------------

    def listed(self) -> dict:
        """The server's model list, as its JSON (``GET {base_url}{models_path}``)."""
        try:
            return self.client.get(self.models_path, cast_to=object)
        except self.sdk.APIError as exc:
            raise self.failure(exc) from exc

    def preflight(self) -> None:
        """Ask the server, before a run, whether it is there, takes the key and has the model.

        Raises :class:`ProviderError` saying what to do; returns None otherwise. (Whether
        the model can call tools, the first request tells: these APIs do not say it.)
        """
        names = [entry.get("id") for entry in _entries(self.listed())]
        if names and self.model not in names:
            shown = ", ".join(repr(name) for name in names[:8]) + (" ..." if len(names) > 8 else "")
            raise ProviderError(
                f"the {self.title} server at {self.base_url} has no model "
                f"{self.model!r}; it lists {shown}: set MODEL (or --model) to "
                f"one of them"
            )

    def provenance(self, now=None) -> dict:
        """Who will have written the chunks captured from this server, as it tells us.

        A live server: ``"source"`` is the provider, with the model, the base URL's host and
        the model's entry in the list the server reports. A labkit replay server: the
        served recording's own provenance (its ``source`` says who wrote the chunks) plus
        ``replayed_from``, so no file ever claims a live model wrote what a script did.
        """
        listed = self.listed()
        date = timestamp(now)
        served = listed.get("labkit_replay") if isinstance(listed, dict) else None
        if served is not None:
            return replayed_provenance(
                served,
                server={"server": f"labkit replay server ({self.provider} API)"},
                address=self.base_url,
                model=self.model,
                date=date,
                refuse=ProviderError,
            )
        entries = _entries(listed)
        entry = next((e for e in entries if e.get("id") == self.model), None)
        return {
            "source": self.provider,
            "model": self.model,
            "base_url_host": self.host,
            "server_reported": {
                "model": entry,
                "models_listed": [e.get("id") for e in entries],
            },
            "request": self.settings(),
            "date": date,
            "recorded_with": RECORDER,
        }

    def about(self, provenance: dict) -> str:
        """The live model in one line."""
        return f"Model {self.model} on the {self.provider} server at {self.host}"

    def finish_provenance(self, recording: dict) -> None:
        """Add what the server said about itself in its replies (a live server's only)."""
        provenance = recording["provenance"]
        if "replayed_from" not in provenance:
            provenance["server_reported"]["in_replies"] = reported_in_replies(recording)

    # --- errors ---------------------------------------------------------------------------

    def explain(self, exc: Exception, received: int = 0) -> str:
        """A message a learner can act on, for an error the SDK raised."""
        sdk, where = self.sdk, f"the {self.title} server at {self.base_url}"
        if isinstance(exc, sdk.APITimeoutError):
            if received:
                return (
                    f"{where} went quiet for {self.timeout:g} s after {received} chunks of "
                    "the reply; it may be stuck or overloaded. Try again."
                )
            return (
                f"{where} did not answer within {self.timeout:g} s; it may still be "
                "loading the model. Try again."
            )
        if isinstance(exc, sdk.APIConnectionError):
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
        text = _server_message(exc)
        status = getattr(exc, "status_code", None)
        if received or status in (None, 200):  # an error event inside a streamed reply
            return f"{where} reported an error during the reply: {text}"
        if REPLAY_MISMATCH in text:
            return text
        if status == 401:
            if not self.keyed:
                return (
                    f"{where} wants an API key (HTTP 401), and none is set: set {self.key_variable}"
                )
            return f"{where} refused the API key (HTTP 401): check {self.key_variable}"
        if status == 404:
            return (
                f"{where} answered 404 for the model {self.model!r}: the model is not "
                f"there (list the server's models, and set MODEL or --model to one), or "
                f"the address is wrong ({self.url_hint}) (the server said: {text})"
            )
        if status in (400, 422) and "tool" in text.lower():
            return (
                f"the model {self.model!r} at {self.base_url} cannot call tools, which the "
                f"loop needs: use a model (or server settings) that can (the server said: "
                f"{text})"
            )
        return f"{where} answered HTTP {status}: {text}"

    # --- the rest -------------------------------------------------------------------------

    def __repr__(self):  # never the key
        return f"{type(self).__name__}(model={self.model!r}, base_url={self.base_url!r})"


def _entries(listed) -> list:
    """The model entries of a model list (``{"data": [...]}`` in both APIs)."""
    data = listed.get("data") if isinstance(listed, dict) else None
    return [entry for entry in data if isinstance(entry, dict)] if isinstance(data, list) else []


def _server_message(exc) -> str:
    """The error's own words: the ``message`` of the API's error body, else the SDK's text."""
    body = getattr(exc, "body", None)
    error = body.get("error", body) if isinstance(body, dict) else None
    message = error.get("message") if isinstance(error, dict) else None
    return message if isinstance(message, str) and message else getattr(exc, "message", str(exc))


def reported_in_replies(recording: dict) -> dict:
    """What the server said about itself in a recording's replies: each distinct ``model``
    (OpenAI's chunks, Anthropic's ``message_start``, the Responses API's ``response``,
    Gemini's ``modelVersion``) and ``system_fingerprint`` (OpenAI's)."""
    found = {"model": [], "system_fingerprint": []}
    for turn in recording["turns"]:
        for entry in turn["chunks"]:
            chunk = entry["chunk"]
            said = {
                "model": chunk.get("model")
                or (chunk.get("message") or {}).get("model")  # Anthropic's message_start
                or (chunk.get("response") or {}).get("model")  # the Responses API's events
                or chunk.get("modelVersion"),  # Gemini's
                "system_fingerprint": chunk.get("system_fingerprint"),
            }
            for key, value in said.items():
                if isinstance(value, str) and value and value not in found[key]:
                    found[key].append(value)
    return found

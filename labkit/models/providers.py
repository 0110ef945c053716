"""The live providers the course knows, in one table, and the one place a live model is made.

Each provider is a row of :data:`PROVIDERS`: the class that talks to its API, the
argument its address goes in and the variables read when none is given, its key's
variable, whether it can be asked for whole replies. Its default model, address and
recorded repair are the course's settings (``labkit.settings``). The CLI's ``record``
and a lesson's live mode both ask :func:`live_model` for a model, so neither has to know
one provider from another. A provider's name is also the name of its wire format.

The classes are imported only when a model of theirs is made: each loads its SDK and
HTTP client, which a replay never needs.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import import_module

from ..settings import DEFAULT_BASE_URLS, DEFAULT_HOST, DEFAULT_MODELS, PROVIDER_RECORDINGS


@dataclass(frozen=True)
class Provider:
    """One live API: where its model class is, how it is addressed, what it reads."""

    name: (
        str  # "ollama", "openai", "anthropic", "openai-responses", "gemini": also its wire format's
    )
    title: str  # how messages name it
    model_class: str  # "<module of labkit.models>.<class>"
    address: str  # the argument its address goes in: "host" or "base_url"
    address_variable: str  # read when no address is given
    key_variable: str | None = None  # the API key's variable (a key is never an argument)
    whole_replies: bool = False  # whether it can be asked for whole replies (stream=False)

    @property
    def default_model(self) -> str:
        return DEFAULT_MODELS[self.name]

    @property
    def default_address(self) -> str:
        return DEFAULT_HOST if self.address == "host" else DEFAULT_BASE_URLS[self.name]

    @property
    def recording(self) -> str:
        """The course's recorded repair in this provider's wire format."""
        return PROVIDER_RECORDINGS[self.name]

    def model_type(self) -> type:
        """The class of its live models (importing it loads the provider's SDK)."""
        module, name = self.model_class.rsplit(".", 1)
        return getattr(import_module(f".{module}", __package__), name)


PROVIDERS = {
    provider.name: provider
    for provider in (
        Provider("ollama", "Ollama", "ollama_model.OllamaModel", "host", "OLLAMA_HOST"),
        Provider(
            "openai",
            "OpenAI-compatible",
            "openai_model.OpenAIModel",
            "base_url",
            "OPENAI_BASE_URL",
            key_variable="OPENAI_API_KEY",
            whole_replies=True,
        ),
        Provider(
            "anthropic",
            "Anthropic",
            "anthropic_model.AnthropicModel",
            "base_url",
            "ANTHROPIC_BASE_URL",
            key_variable="ANTHROPIC_API_KEY",
        ),
        Provider(
            "openai-responses",
            "OpenAI Responses",
            "responses_model.ResponsesModel",
            "base_url",
            "OPENAI_BASE_URL",
            key_variable="OPENAI_API_KEY",
        ),
        Provider(
            "gemini",
            "Gemini",
            "gemini_model.GeminiModel",
            "base_url",
            "GOOGLE_GEMINI_BASE_URL",
            key_variable="GEMINI_API_KEY",
        ),
    )
}
#: The variables that may hold an API key: their values never go into a recording.
KEY_VARIABLES = tuple(dict.fromkeys(p.key_variable for p in PROVIDERS.values() if p.key_variable))


def provider_named(name: str) -> Provider:
    """The provider called ``name``, or a ValueError that lists them."""
    if name not in PROVIDERS:
        raise ValueError(f"the provider is one of {', '.join(map(repr, PROVIDERS))}, not {name!r}")
    return PROVIDERS[name]


def live_model(
    provider: str,
    model: str | None = None,
    *,
    host: str | None = None,
    base_url: str | None = None,
    stream: bool = True,
):
    """A live model of ``provider`` (``"ollama"``, ``"openai"``, ``"anthropic"``,
    ``"openai-responses"``, ``"gemini"``).

    ``model`` None: the provider's default. The address is ``host`` for Ollama and
    ``base_url`` for the others (None: its variable, else its default); the other one is
    not read. ``stream=False`` asks for whole replies, which only OpenAI-compatible servers
    give. Nothing is sent yet: ``preflight()`` asks the server whether it can serve the run.
    Raises ValueError for what cannot be made, or the model's error (a missing key).
    """
    chosen = provider_named(provider)
    options = {chosen.address: {"host": host, "base_url": base_url}[chosen.address]}
    if not stream:
        if not chosen.whole_replies:
            whole = " or ".join(p.name for p in PROVIDERS.values() if p.whole_replies)
            raise ValueError(f"{chosen.title} streams every reply: stream=False is for {whole}")
        options["stream"] = False
    return chosen.model_type()(model or chosen.default_model, **options)

"""One table of providers, and the one place a live model is made from a provider's name
(``record`` and a lesson's live mode both go through it)."""

import pytest

from labkit.harness.formats import FORMATS
from labkit.models import AnthropicModel, OllamaModel, OpenAIModel
from labkit.models.gemini_model import GeminiModel
from labkit.models.providers import KEY_VARIABLES, PROVIDERS, live_model
from labkit.models.responses_model import ResponsesModel
from labkit.settings import DEFAULT_MODELS, PROVIDER_RECORDINGS

ADDRESSES = {
    "ollama": {"host": "http://127.0.0.1:9"},
    "openai": {"base_url": "http://127.0.0.1:9/v1"},
    "anthropic": {"base_url": "http://127.0.0.1:9"},
    "openai-responses": {"base_url": "http://127.0.0.1:9/v1"},
    "gemini": {"base_url": "http://127.0.0.1:9"},
}
CLASSES = {
    "ollama": OllamaModel,
    "openai": OpenAIModel,
    "anthropic": AnthropicModel,
    "openai-responses": ResponsesModel,
    "gemini": GeminiModel,
}


@pytest.mark.parametrize("name", sorted(PROVIDERS))
def test_each_provider_makes_its_model_with_the_courses_default_and_its_address(name):
    with live_model(name, **ADDRESSES[name]) as model:
        assert type(model) is CLASSES[name]
        assert model.model == DEFAULT_MODELS[name]
        assert model.address.rstrip("/") == next(iter(ADDRESSES[name].values()))
    assert PROVIDERS[name].recording == PROVIDER_RECORDINGS[name]


@pytest.mark.parametrize("name", sorted(PROVIDERS))
def test_a_provider_reads_only_the_address_it_takes(name):
    other = {"host": "http://127.0.0.1:8", "base_url": "http://127.0.0.1:8/v1"}
    taken = PROVIDERS[name].address
    given = {**other, **ADDRESSES[name]}
    with live_model(name, "some-model", **given) as model:
        assert model.model == "some-model"
        assert model.address.rstrip("/") == given[taken]


def test_every_provider_names_a_wire_format_the_harness_knows():
    assert set(PROVIDERS) <= set(FORMATS)
    assert KEY_VARIABLES == ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY")


def test_whole_replies_only_where_the_api_gives_them():
    with live_model("openai", stream=False, base_url="http://127.0.0.1:9/v1") as model:
        assert model.stream is False
    for name in ("ollama", "anthropic", "openai-responses", "gemini"):
        with pytest.raises(ValueError, match="stream=False is for openai"):
            live_model(name, stream=False, **ADDRESSES[name])


def test_an_unknown_provider_is_refused_with_the_list():
    with pytest.raises(
        ValueError, match="'anthropic', 'openai-responses', 'gemini', not 'mistral'"
    ):
        live_model("mistral")


def test_a_providers_variables_are_the_ones_its_model_reads(monkeypatch):
    monkeypatch.setenv("OLLAMA_HOST", "http://127.0.0.1:7")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:6")
    monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", "http://127.0.0.1:5")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:4/v1")
    with live_model("ollama") as ollama, live_model("anthropic") as anthropic:
        assert (ollama.host, anthropic.base_url) == ("http://127.0.0.1:7", "http://127.0.0.1:6")
    with live_model("gemini") as gemini, live_model("openai-responses") as responses:
        assert (gemini.base_url, responses.base_url) == (
            "http://127.0.0.1:5",
            "http://127.0.0.1:4/v1",
        )
    assert (PROVIDERS["ollama"].address_variable, PROVIDERS["anthropic"].address_variable) == (
        "OLLAMA_HOST",
        "ANTHROPIC_BASE_URL",
    )


@pytest.mark.parametrize("name", sorted(PROVIDERS))
def test_each_live_model_keeps_the_live_model_contract(name):
    """What the CLI and the lessons drive is declared once (contracts.LiveModel): every live
    model offers each of its members, so a caller written against the contract works."""
    from labkit.harness.contracts import LiveModel

    members = {n for n in vars(LiveModel) if not n.startswith("_")} | set(LiveModel.__annotations__)
    assert members >= {"preflight", "chunks_with_lines", "provenance", "wire_format", "address"}
    with live_model(name, **ADDRESSES[name]) as model:
        assert isinstance(model, LiveModel)
        assert [member for member in sorted(members) if not hasattr(model, member)] == []
        assert model.wire_format in FORMATS

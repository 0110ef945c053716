"""The OpenAI and Anthropic replay servers through each official SDK: what they say they are,
their routes, whole replies for clients that do not stream, and each API's error shapes."""

import httpx
import pytest
from conftest import PROJECT_DIR

from labkit import load_recording, serve_recording
from labkit.harness.tools import SCHEMAS
from labkit.models.anthropic_model import AnthropicModel
from labkit.settings import DEFAULT_MODEL, DEFAULT_MODELS

OPENAI = PROJECT_DIR / "recordings" / "repair_openai.json"
ANTHROPIC = PROJECT_DIR / "recordings" / "repair_anthropic.json"
VERSION = {"anthropic-version": "2023-06-01"}  # every request to Anthropic's API names one


# The SDKs are imported where they are used: together they take 1.5 s of CPU to import, and
# every pytest-xdist worker collects this file, while only one runs it.


def openai_client(server, key="no-key"):
    import openai

    return openai.OpenAI(base_url=f"{server.url}/v1", api_key=key, max_retries=0)


def anthropic_client(server, key="no-key"):
    import anthropic

    return anthropic.Anthropic(base_url=server.url, api_key=key, max_retries=0)


def test_the_openai_server_lists_recordings_not_models_and_says_what_it_serves():
    recorded = load_recording(OPENAI)
    with serve_recording(OPENAI) as server:
        listed = openai_client(server).models.list()
        one = openai_client(server).models.retrieve(DEFAULT_MODELS["openai"])
        raw = httpx.get(f"{server.url}/v1/models").json()
        root = httpx.get(server.url)
    assert [m.id for m in listed.data] == [
        "labkit-replay:repair_openai",
        DEFAULT_MODEL,
        DEFAULT_MODELS["openai"],
    ]
    assert (
        all("not a model" in m.owned_by for m in listed.data) and one.id == DEFAULT_MODELS["openai"]
    )
    assert raw["labkit_replay"]["recording"] == "repair_openai.json"
    assert raw["labkit_replay"]["provenance"] == recorded["provenance"]
    assert raw["labkit_replay"]["wire_format"] == "openai"
    assert root.status_code == 200 and "not a model" in root.text


def test_the_anthropic_server_lists_recordings_not_models_and_says_what_it_serves():
    import anthropic

    with serve_recording(ANTHROPIC) as server:
        listed = anthropic_client(server).models.list()
        raw = httpx.get(f"{server.url}/v1/models", headers=VERSION).json()
        with pytest.raises(anthropic.NotFoundError) as missing:
            anthropic_client(server).models.retrieve("claude-opus-9")
    assert [m.id for m in listed.data] == [
        "labkit-replay:repair_anthropic",
        DEFAULT_MODEL,
        DEFAULT_MODELS["anthropic"],
    ]
    assert all("a recording, not a model" in m.display_name for m in listed.data)
    assert raw["labkit_replay"]["wire_format"] == "anthropic"
    assert missing.value.body["error"] == {
        "type": "not_found_error",
        "message": "model: claude-opus-9",
    }


def test_a_client_that_does_not_stream_gets_the_whole_turn_in_one_object():
    openai_turn = load_recording(OPENAI)["turns"][0]
    anthropic_turn = load_recording(ANTHROPIC)["turns"][0]
    with serve_recording(OPENAI) as server:
        completion = openai_client(server).chat.completions.create(
            model=DEFAULT_MODELS["openai"],
            messages=openai_turn["request"]["messages"],
            tools=SCHEMAS,
        )
    with serve_recording(ANTHROPIC) as server:
        message = anthropic_client(server).messages.create(
            model=DEFAULT_MODELS["anthropic"],
            max_tokens=100,
            **AnthropicModel.request(anthropic_turn["request"]["messages"], SCHEMAS),
        )
    choice = completion.choices[0]
    assert choice.finish_reason == "tool_calls" and choice.message.content is None
    assert choice.message.tool_calls[0].function.arguments == '{"path": "path_rules.py"}'
    assert message.stop_reason == "tool_use" and message.content[0].type == "tool_use"
    assert message.content[0].input == {"path": "path_rules.py"} and message.model == "scripted"


@pytest.mark.parametrize(
    "client, route", [(openai_client, "/v1/chat/completions"), (anthropic_client, "/v1/messages")]
)
def test_unknown_routes_and_methods_are_answered_in_the_apis_error_shape(client, route):
    recording = OPENAI if "chat" in route else ANTHROPIC
    with serve_recording(recording) as server:
        unknown = httpx.post(f"{server.url}/v1/completions", json={})
        put = httpx.put(f"{server.url}{route}", json={})
        head = httpx.head(server.url)
    assert (
        unknown.status_code == 404
        and "no POST /v1/completions" in unknown.json()["error"]["message"]
    )
    assert put.status_code == 405 and "message" in put.json()["error"]
    assert head.status_code == 200 and head.content == b""


def test_a_key_is_asked_for_only_when_the_server_is_given_one_and_never_kept():
    import openai

    with serve_recording(OPENAI, api_key="sk-the-key") as server:
        with pytest.raises(openai.AuthenticationError) as refused:
            openai_client(server, key="sk-other").models.list()
        listed = openai_client(server, key="sk-the-key").models.list()
        requests = repr(server.chat_requests) + repr(server.identity)
    assert refused.value.body["code"] == "invalid_api_key" and listed.data
    assert "sk-the-key" not in requests and "sk-other" not in requests


def test_an_injected_529_is_anthropics_overloaded_error_with_its_request_id():
    import anthropic

    messages = load_recording(ANTHROPIC)["turns"][0]["request"]["messages"]
    with serve_recording(ANTHROPIC, status=529, error="Overloaded") as server:
        with pytest.raises(anthropic.APIStatusError) as failed:
            anthropic_client(server).messages.create(
                model=DEFAULT_MODELS["anthropic"],
                max_tokens=10,
                **AnthropicModel.request(messages, SCHEMAS),
            )
    request_id = failed.value.response.headers["request-id"]
    assert failed.value.status_code == 529 and isinstance(failed.value, anthropic.OverloadedError)
    assert failed.value.body == {
        "type": "error",
        "error": {"type": "overloaded_error", "message": "Overloaded"},
        "request_id": request_id,
    }
    assert failed.value.request_id == request_id and request_id.startswith("req_")

"""ResponsesModel and GeminiModel through their official SDKs, against the replay servers: the
recorded events again, the wire kept, the request each API reads, strict comparison, thought
signatures that must go back unchanged, and a clear message for each way a server fails."""

import base64
import copy

import pytest
from conftest import PROJECT_DIR

from labkit import (
    MAX_TURNS,
    ProviderError,
    RepoTools,
    agent_events,
    load_recording,
    sample_copy,
    serve_recording,
)
from labkit.cli import SERVED_AS, main
from labkit.harness.formats import FORMATS
from labkit.models.gemini_model import GeminiModel
from labkit.models.responses_model import ResponsesModel

RECORDINGS = {"openai-responses": "repair_responses.json", "gemini": "repair_gemini.json"}
PROVIDERS = sorted(RECORDINGS)


def recording(provider):
    return load_recording(PROJECT_DIR / "recordings" / RECORDINGS[provider])


def model_for(provider, url, **options):
    url = getattr(url, "url", url)
    if provider == "openai-responses":
        return ResponsesModel(base_url=f"{url}/v1", **options)
    return GeminiModel(base_url=url, **options)


def run_loop(chat, task="task", max_turns=MAX_TURNS):
    with sample_copy() as root:
        return list(agent_events(chat, RepoTools(root), task, max_turns=max_turns))


def test_the_responses_request_is_the_whole_conversation_as_flat_items():
    recorded = recording("openai-responses")
    with serve_recording(recorded) as server, model_for("openai-responses", server) as model:
        run_loop(model, recorded["task"], max_turns=2)
    second = server.chat_requests[1]
    assert (second["stream"], second["temperature"], second["max_output_tokens"]) == (True, 0, 2048)
    assert "previous_response_id" not in second and "instructions" not in second
    assert [item.get("role") or item["type"] for item in second["input"]] == [
        "system",
        "user",
        "function_call",
        "function_call_output",
    ]
    assert second["input"][2]["call_id"] == second["input"][3]["call_id"]
    assert {tool["name"] for tool in second["tools"]} == {"read_file", "replace_text", "run_tests"}
    assert all(tool["type"] == "function" and tool["strict"] is False for tool in second["tools"])


def test_the_gemini_request_moves_the_system_prompt_and_sends_the_signature_back_unchanged():
    recorded = recording("gemini")
    with serve_recording(recorded) as server, model_for("gemini", server) as model:
        run_loop(model, recorded["task"], max_turns=2)
    second = server.chat_requests[1]
    assert second["systemInstruction"]["parts"][0]["text"].startswith("You are repairing")
    assert [content["role"] for content in second["contents"]] == ["user", "model", "user"]
    sent = second["contents"][1]["parts"][0]
    received = recorded["turns"][0]["chunks"][0]["chunk"]["candidates"][0]["content"]["parts"][0]
    # the same bytes: the SDK decodes the signature and encodes it again, URL-safe
    assert base64.urlsafe_b64decode(sent["thoughtSignature"]) == base64.b64decode(
        received["thoughtSignature"]
    )
    response = second["contents"][2]["parts"][0]["functionResponse"]
    assert response["name"] == "read_file" and set(response["response"]) == {"output"}
    assert second["generationConfig"] == {"temperature": 0, "maxOutputTokens": 2048}
    with pytest.raises(ValueError, match="only the first message may be the system prompt"):
        GeminiModel.request(
            [{"role": "user", "content": "x"}, {"role": "system", "content": "y"}], []
        )


@pytest.mark.parametrize("strict", [True, False])
@pytest.mark.parametrize(
    "change, words",
    [
        (lambda part: part.pop("thoughtSignature"), "missing a thought_signature"),
        (lambda part: part.update(thoughtSignature="AAAA" + part["thoughtSignature"][4:]),
         "Corrupted thought signature"),
    ],
    ids=["dropped", "altered"],
)  # fmt: skip
def test_a_signature_dropped_or_altered_is_refused_as_the_real_api_refuses_it(
    strict, change, words
):
    recorded = recording("gemini")

    class Forgetful(GeminiModel):
        """A harness that changes the signature before sending the turn back."""

        @staticmethod
        def request(messages, tool_schemas):
            body = GeminiModel.request(copy.deepcopy(messages), tool_schemas)
            for content in body["contents"][1:2]:
                change(content["parts"][0])
            return body

    with serve_recording(recorded, strict=strict) as server:
        stop = run_loop(Forgetful(base_url=server.url), recorded["task"])[-1]
    assert (stop["reason"], stop["turns"], stop["tool_calls"]) == ("model_error", 2, 1)
    assert "answered HTTP 400" in stop["error"] and words in stop["error"]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_request_that_differs_from_the_recording_is_named_and_stops_as_a_mismatch(provider):
    edited = copy.deepcopy(recording(provider))
    edited["turns"][1]["request"]["messages"][1]["content"] = "another task"
    with serve_recording(edited) as server, model_for(provider, server) as model:
        stop = run_loop(model, edited["task"])[-1]
    assert (stop["reason"], stop["turns"]) == ("model_error", 2)
    assert stop["detail"].startswith("replay mismatch: the replay server refused the request")
    assert "message 1 (user) differs at content, character 0" in stop["error"]


def test_a_responses_result_is_named_by_its_type_when_it_differs():
    edited = copy.deepcopy(recording("openai-responses"))
    edited["turns"][1]["request"]["messages"][3]["call_id"] = "call_other"
    with serve_recording(edited) as server, model_for("openai-responses", server) as model:
        stop = run_loop(model, edited["task"])[-1]
    assert "message 3 (function_call_output) differs at call_id" in stop["error"]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_dropping_the_final_event_stops_before_any_tool_runs(provider):
    with serve_recording(recording(provider), drop_done=True) as server:
        stop = run_loop(model_for(provider, server), recording(provider)["task"])[-1]
    assert (stop["reason"], stop["tool_calls"]) == ("incomplete_model_turn", 0)


def failure(provider, *, model_options=None, **server_options):
    with serve_recording(recording(provider), **server_options) as server:
        model = model_for(provider, server, **(model_options or {}))
        stop = run_loop(model, recording(provider)["task"])[-1]
    assert stop["reason"] == "model_error"
    return stop["error"]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_nothing_listening_says_so_and_what_to_do(provider, closed_port_url):
    stop = run_loop(model_for(provider, closed_port_url))[-1]
    assert f"nothing is listening at {closed_port_url}" in stop["error"]
    assert "set BASE_URL (or --base-url" in stop["error"]


@pytest.mark.parametrize(
    "provider, variable, status",
    [("openai-responses", "OPENAI_API_KEY", "HTTP 401"), ("gemini", "GEMINI_API_KEY", "HTTP 4")],
)
def test_a_key_missing_or_refused_is_named_with_its_variable(
    provider, variable, status, monkeypatch
):
    monkeypatch.delenv(variable, raising=False)
    missing = failure(provider, api_key="the-right-key")
    assert f"wants an API key ({status}" in missing and variable in missing
    monkeypatch.setenv(variable, "a-wrong-key")
    refused = failure(provider, api_key="the-right-key")
    assert f"refused the API key ({status}" in refused and "a-wrong-key" not in refused
    monkeypatch.setenv(variable, "the-right-key")
    with serve_recording(recording(provider), api_key="the-right-key") as server:
        stop = run_loop(model_for(provider, server), recording(provider)["task"])[-1]
    assert stop["reason"] == "assistant_finished"


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_model_the_server_lacks_or_one_that_cannot_call_tools_is_named(provider):
    missing = failure(provider, model_options={"model": "no-such-model"})
    assert "answered 404 for the model 'no-such-model'" in missing
    no_tools = failure(provider, capabilities=("completion",))
    assert "cannot call tools, which the loop needs" in no_tools


def test_an_error_in_the_middle_of_a_reply_is_reported():
    """google-genai raises on an error event; openai's Responses stream hands it over, and the
    assembler reads it as the server failing."""
    broken = failure("gemini", error_after=1, error="the model runner crashed")
    assert "reported an error during the reply: the model runner crashed" in broken
    with serve_recording(
        recording("openai-responses"), error_after=3, error="it crashed"
    ) as server:
        stop = run_loop(
            model_for("openai-responses", server), recording("openai-responses")["task"]
        )
    assert stop[-1]["reason"] == "malformed_model_turn"
    assert "an error from the server: it crashed" in stop[-1]["detail"]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_check_before_a_run_lists_what_the_server_has(provider):
    with serve_recording(recording(provider)) as server:
        model_for(provider, server).preflight()
        with pytest.raises(ProviderError, match="has no model 'other'; it lists 'labkit-replay:"):
            model_for(provider, server, model="other").preflight()


@pytest.mark.parametrize("provider", PROVIDERS)
def test_record_through_the_replay_server_keeps_each_event_as_it_came(provider, tmp_path, capsys):
    """``python -m labkit record`` over the SDK path: the recorded events again, each
    server-sent event's text kept, the same requests, and the served recording's provenance."""
    suffix = "/v1" if provider == "openai-responses" else ""
    with serve_recording(RECORDINGS[provider]) as server:
        code = main(
            ["record", "--provider", provider, "--base-url", server.url + suffix,
             "--output", str(tmp_path / "a.json")]
        )  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0 and "Stopped: assistant_finished after 5 model turns and 4 tool calls" in out
    recorded, captured = recording(provider), load_recording(tmp_path / "a.json")
    assert captured["events"] == recorded["events"] and captured["wire_format"] == provider
    assert [[e["line"] for e in t["chunks"]] for t in captured["turns"]] == [
        [e["line"] for e in t["chunks"]] for t in recorded["turns"]
    ]
    assert [t["request"] for t in captured["turns"]] == [t["request"] for t in recorded["turns"]]
    assert captured["provenance"]["source"] == "scripted"
    assert captured["provenance"]["replayed_from"]["recording"] == RECORDINGS[provider]


def test_serve_says_how_to_record_from_a_recording_in_every_format():
    assert set(SERVED_AS) == set(FORMATS)
    gemini = SERVED_AS["gemini"][1].format(url="http://x")
    assert "--provider gemini --base-url http://x" in gemini
    responses = SERVED_AS["openai-responses"][1].format(url="http://x")
    assert "--provider openai-responses --base-url http://x/v1" in responses


def test_the_models_own_apis_want_a_key_and_never_show_it(monkeypatch):
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "GEMINI_API_KEY", "GOOGLE_GEMINI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(ProviderError, match="the OpenAI Responses API at .* needs a key"):
        ResponsesModel()
    with pytest.raises(ProviderError, match="the Gemini API at .* needs a key: set GEMINI_API_KEY"):
        GeminiModel()
    monkeypatch.setenv("GEMINI_API_KEY", "gm-secret")
    model = GeminiModel()
    assert model.base_url == "https://generativelanguage.googleapis.com" and model.keyed
    assert "gm-secret" not in repr(model) and "gm-secret" not in str(model.settings())

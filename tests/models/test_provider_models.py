"""OpenAIModel and AnthropicModel through their official SDKs, against the project's replay
servers: the same events as the recording, the wire kept, strict comparison, and a clear
message for each way a server fails."""

import copy
import json

import pytest
from conftest import PROJECT_DIR, wait_until

from labkit import (
    MAX_TURNS,
    AnthropicModel,
    OpenAIModel,
    ProviderError,
    RepoTools,
    agent_events,
    compact_event,
    load_recording,
    run_attempt,
    sample_copy,
    serve_recording,
)
from labkit.models.chunks import openai_chunk
from labkit.settings import DEFAULT_MODELS

RECORDINGS = {"openai": "repair_openai.json", "anthropic": "repair_anthropic.json"}
PROVIDERS = sorted(RECORDINGS)


def recording(provider):
    return load_recording(PROJECT_DIR / "recordings" / RECORDINGS[provider])


def model_for(provider, server_or_url, **options):
    """The provider's model pointed at a replay server (or any address)."""
    url = getattr(server_or_url, "url", server_or_url)
    if provider == "openai":
        return OpenAIModel(
            options.pop("model", DEFAULT_MODELS["openai"]), base_url=f"{url}/v1", **options
        )
    return AnthropicModel(
        options.pop("model", DEFAULT_MODELS["anthropic"]), base_url=url, **options
    )


def one_turn(provider, chunks):
    """The provider's recording holding one turn of ``chunks`` (for a server that is not strict)."""
    served = copy.deepcopy(recording(provider))
    served["turns"] = [{"request": {"messages": []}, "chunks": chunks}]
    served["events"] = served["events"][-1:]
    return served


def run_loop(chat, task="task", max_turns=MAX_TURNS):
    with sample_copy() as root:
        return list(agent_events(chat, RepoTools(root), task, max_turns=max_turns))


@pytest.mark.parametrize("provider", PROVIDERS)
def test_the_sdk_path_reproduces_the_recorded_events_in_strict_mode(provider):
    recorded = recording(provider)
    with serve_recording(recorded) as server, model_for(provider, server) as model:
        events = run_loop(model, recorded["task"])
    assert [compact_event(e) for e in events] == recorded["events"]
    assert len(server.chat_requests) == 5


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_capture_keeps_each_server_sent_event_exactly_and_the_served_provenance(provider):
    recorded = recording(provider)
    with (
        serve_recording(PROJECT_DIR / "recordings" / RECORDINGS[provider]) as server,
        model_for(provider, server) as model,
    ):
        captured, _ = run_attempt(model, provenance=model.provenance(), task=recorded["task"])
    assert captured["wire_format"] == provider
    assert [[e["line"] for e in t["chunks"]] for t in captured["turns"]] == [
        [e["line"] for e in t["chunks"]] for t in recorded["turns"]
    ]
    assert [t["request"] for t in captured["turns"]] == [t["request"] for t in recorded["turns"]]
    provenance = captured["provenance"]
    assert (
        provenance["source"] == "scripted"
        and provenance["replayed_from"]["recording"] == RECORDINGS[provider]
    )


def test_the_anthropic_request_moves_the_system_prompt_and_describes_tools_by_input_schema():
    recorded = recording("anthropic")
    with serve_recording(recorded) as server, model_for("anthropic", server) as model:
        run_loop(model, recorded["task"], max_turns=2)
    first = server.chat_requests[0]
    assert first["system"] == recorded["turns"][0]["request"]["messages"][0]["content"]
    assert [m["role"] for m in first["messages"]] == ["user"]
    assert {tool["name"] for tool in first["tools"]} == {"read_file", "replace_text", "run_tests"}
    assert all(tool["input_schema"]["type"] == "object" for tool in first["tools"])
    assert first["max_tokens"] == 2048 and first["stream"] is True
    with pytest.raises(ValueError, match="only the first message may be the system prompt"):
        AnthropicModel.request(
            [{"role": "user", "content": "x"}, {"role": "system", "content": "y"}], []
        )


def test_the_openai_request_streams_with_the_course_settings_and_content_not_null():
    recorded = recording("openai")
    with serve_recording(recorded) as server, model_for("openai", server) as model:
        run_loop(model, recorded["task"], max_turns=2)
    second = server.chat_requests[1]
    assert (second["stream"], second["temperature"], second["seed"], second["max_tokens"]) == (
        True,
        0,
        7,
        2048,
    )
    # asked outright: some servers (llama-cpp-python's function calling) offer no tools without it
    assert second["tool_choice"] == "auto" and len(second["tools"]) == 3
    assert second["messages"][0]["role"] == "system"
    assistant = second["messages"][2]
    assert assistant["content"] == "" and assistant["tool_calls"][0]["id"].startswith("call_")


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_request_that_differs_from_the_recording_is_named_and_stops_as_a_mismatch(provider):
    edited = copy.deepcopy(recording(provider))
    edited["turns"][1]["request"]["messages"][1]["content"] = "another task"
    with serve_recording(edited) as server, model_for(provider, server) as model:
        stop = run_loop(model, edited["task"])[-1]
    assert (stop["reason"], stop["turns"]) == ("model_error", 2)
    assert stop["detail"].startswith("replay mismatch: the replay server refused the request")
    assert "turn 2: the request does not match the recording" in stop["error"]
    assert "message 1 (user) differs at content, character 0" in stop["error"]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_the_loop_closes_a_stream_it_abandons(provider):
    """A malformed chunk stops the reading; the slowly paced rest is never waited for."""
    chunks = recording(provider)["turns"][0]["chunks"]
    late = [{"at": 0.05 * i, "chunk": chunks[0]["chunk"]} for i in range(1, 500)]
    broken = (
        {"type": "content_block_stop", "index": 42}
        if provider == "anthropic"
        else openai_chunk({"content": 5})
    )
    recorded = one_turn(provider, chunks[:1] + [{"at": 0.0, "chunk": broken}] + late)
    with (
        serve_recording(recorded, strict=False, speed=1.0) as server,
        model_for(provider, server) as model,
    ):
        stop = run_loop(model)[-1]
        assert stop["reason"] == "malformed_model_turn"
        assert wait_until(lambda: server.open_connections == 0, timeout=10)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_dropping_the_final_chunk_stops_before_any_tool_runs(provider):
    with (
        serve_recording(recording(provider), drop_done=True) as server,
        model_for(provider, server) as model,
    ):
        stop = run_loop(model, recording(provider)["task"])[-1]
    assert (stop["reason"], stop["tool_calls"]) == ("incomplete_model_turn", 0)


# --- what a learner is told ------------------------------------------------------------


def failure(provider, model=None, **server_options):
    """The error text of a run against a replay server set up to fail."""
    with (
        serve_recording(recording(provider), **server_options) as server,
        model_for(provider, server, **({"model": model} if model else {})) as model,
    ):
        stop = run_loop(model, recording(provider)["task"])[-1]
    assert stop["reason"] == "model_error"
    return stop["error"]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_nothing_listening_says_so_and_what_to_do(provider, closed_port_url):
    stop = run_loop(model_for(provider, closed_port_url))[-1]
    assert stop["reason"] == "model_error"
    assert f"nothing is listening at {closed_port_url}" in stop["error"]
    assert (
        "set BASE_URL (or --base-url" in stop["error"]
        and "Replay mode needs no server" in stop["error"]
    )


@pytest.mark.parametrize(
    "provider, variable", [("openai", "OPENAI_API_KEY"), ("anthropic", "ANTHROPIC_API_KEY")]
)
def test_a_401_says_whether_a_key_was_missing_or_refused(provider, variable, monkeypatch):
    monkeypatch.delenv(variable, raising=False)
    missing = failure(provider, api_key="the-right-key")
    assert "wants an API key (HTTP 401), and none is set" in missing and variable in missing
    assert "api_key" not in missing  # nothing a learner runs takes one: only the variable
    monkeypatch.setenv(variable, "a-wrong-key")
    refused = failure(provider, api_key="the-right-key")
    assert "refused the API key (HTTP 401)" in refused and "a-wrong-key" not in refused
    assert "api_key" not in refused
    monkeypatch.setenv(variable, "the-right-key")
    with (
        serve_recording(recording(provider), api_key="the-right-key") as server,
        model_for(provider, server) as model,
    ):
        assert run_loop(model, recording(provider)["task"])[-1]["reason"] == "assistant_finished"


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_model_the_server_lacks_is_named_by_the_404(provider):
    error = failure(provider, model="no-such-model")
    assert "answered 404 for the model 'no-such-model'" in error and "set MODEL or --model" in error


def test_an_openai_address_without_v1_is_suspected_by_the_404():
    with serve_recording(recording("openai")) as server:
        stop = run_loop(OpenAIModel(base_url=server.url))[-1]  # no /v1
    assert "answered 404" in stop["error"] and "usually ends in /v1" in stop["error"]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_model_that_cannot_call_tools_is_named(provider):
    error = failure(provider, capabilities=("completion",))
    assert "cannot call tools, which the loop needs" in error and "does not support tools" in error


@pytest.mark.parametrize("provider", PROVIDERS)
def test_an_error_in_the_middle_of_a_reply_is_reported_as_such(provider):
    error = failure(provider, error_after=3, error="the model runner crashed")
    assert "reported an error during the reply: the model runner crashed" in error


@pytest.mark.parametrize("provider", PROVIDERS)
def test_check_before_a_run_lists_what_the_server_has(provider):
    with serve_recording(PROJECT_DIR / "recordings" / RECORDINGS[provider]) as server:
        model_for(provider, server).preflight()  # the default model is served
        with pytest.raises(
            ProviderError, match="has no model 'other'; it lists 'labkit-replay:repair_"
        ):
            model_for(provider, server, model="other").preflight()


@pytest.mark.parametrize(
    "make, variable, words",
    [
        (
            lambda: OpenAIModel(),
            "OPENAI_API_KEY",
            "the OpenAI-compatible API at https://api.openai.com/v1 needs a key: set "
            "OPENAI_API_KEY. Replay mode",
        ),
        (
            lambda: AnthropicModel(),
            "ANTHROPIC_API_KEY",
            "the Anthropic API at https://api.anthropic.com needs a key: set "
            "ANTHROPIC_API_KEY. Replay mode",
        ),
    ],
)
def test_the_providers_own_api_without_a_key_is_refused_at_once(make, variable, words, monkeypatch):
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(ProviderError) as refused:
        make()
    assert words in str(refused.value) and "api_key" not in str(refused.value)


def test_the_address_and_the_key_come_from_the_argument_else_the_environment(monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:1234/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-the-environment")
    model = OpenAIModel("local-model")
    assert (model.base_url, model.host, model.keyed) == (
        "http://127.0.0.1:1234/v1",
        "127.0.0.1:1234",
        True,
    )
    assert (
        OpenAIModel("m", base_url="http://localhost:8080/v1/").base_url
        == "http://localhost:8080/v1"
    )
    assert "sk-from-the-environment" not in repr(model)
    monkeypatch.delenv("OPENAI_API_KEY")
    assert not OpenAIModel("m").keyed  # a server of one's own: a placeholder goes instead
    with pytest.raises(ValueError, match="cannot use 'localhost:1234' as the OpenAI-compatible"):
        OpenAIModel("m", base_url="localhost:1234")


# --- servers that cannot stream tool calls ----------------------------------------------


def test_without_streaming_each_turn_is_one_whole_completion_assembled_by_the_same_rules():
    recorded = recording("openai")
    with serve_recording(recorded) as server, model_for("openai", server, stream=False) as model:
        captured, events = run_attempt(model, provenance=model.provenance(), task=recorded["task"])
    assert all(request.get("stream") in (None, False) for request in server.chat_requests)
    calls = [(e["name"], e["arguments"]) for e in events if e["type"] == "tool_start"]
    assert calls == [
        (e["name"], e["arguments"]) for e in recorded["events"] if e["type"] == "tool_start"
    ]
    assert events[-1]["reason"] == "assistant_finished"
    assert captured["checks"]["after"] == recorded["checks"]["after"]
    assert all(
        len(t["chunks"]) == 1 and t["chunks"][0]["chunk"]["object"] == "chat.completion"
        for t in captured["turns"]
    )


def whole(finish_reason, function_call=None):
    message = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {
                    "name": "read_file",
                    "arguments": '{"path": "tests/test_path_rules.py"}',
                },
            }
        ],
    }
    if function_call:
        message["function_call"] = function_call
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 0,
        "model": "m",
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
    }


@pytest.mark.parametrize(
    "reply, reason, tool_calls",
    [
        (whole("tool_calls", {"name": "replace_text:", "arguments": "{}"}), "max_turns", 1),
        (whole("length"), "incomplete_model_turn", 0),
    ],
)
def test_a_whole_reply_uses_tool_calls_only_and_a_length_cut_is_refused(reply, reason, tool_calls):
    served = one_turn("openai", [{"at": 0.0, "chunk": reply}])
    with (
        serve_recording(served, strict=False) as server,
        model_for("openai", server, stream=False) as model,
    ):
        events = run_loop(model, max_turns=1)
    assert (events[-1]["reason"], events[-1]["tool_calls"]) == (reason, tool_calls)
    assert [e["name"] for e in events if e["type"] == "tool_start"] == ["read_file"] * tool_calls


def test_a_whole_reply_is_one_chunk_holding_the_body_as_sent():
    reply = whole("tool_calls")
    served = one_turn("openai", [{"at": 0.0, "chunk": reply}])
    with (
        serve_recording(served, strict=False) as server,
        model_for("openai", server, stream=False) as model,
    ):
        chunks = list(model([{"role": "user", "content": "hi"}], []))
    assert chunks == [json.loads(json.dumps(reply))]

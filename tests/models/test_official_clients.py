"""The official ``openai`` and ``anthropic`` Python SDKs, as a learner calls them (default
retries, every call style), run the whole repair through the replay servers in strict mode,
and see what the real services show them: request ids, usage, count_tokens, thinking blocks,
pings, the version header, and faults that an SDK's retry gets past as it would past a
real service's."""

import time

import httpx
import httpx2
import pytest
from conftest import PROJECT_DIR
from learner_loops import anthropic_repair, anthropic_tools, openai_repair

from labkit import RepoTools, load_recording, run_checks, sample_copy, serve_recording
from labkit.harness.tools import SCHEMAS
from labkit.settings import DEFAULT_MODEL as MODEL
from labkit.settings import DEFAULT_MODELS

RECORDINGS = PROJECT_DIR / "recordings"
OPENAI = RECORDINGS / "repair_openai.json"
ANTHROPIC = RECORDINGS / "repair_anthropic.json"
THINKING = RECORDINGS / "repair_anthropic_thinking.json"
GEMMA = RECORDINGS / "gemma3_270m_llamacpp.json"  # captured whole (stream: false)
STYLES = ["whole", "create_stream", "stream_helper"]
VERSION = {"anthropic-version": "2023-06-01"}


def openai_client(server):
    import openai

    return openai.OpenAI(base_url=f"{server.url}/v1", api_key="sk-learner")  # default retries


def anthropic_client(server):
    import anthropic

    return anthropic.Anthropic(base_url=server.url, api_key="sk-ant-learner")


def first_request(path):
    return load_recording(path)["turns"][0]["request"]["messages"]


def repair(provider, path, style, requests=8, **server_options):
    """The learner's repair against a strict replay server of ``path`` (at most ``requests``
    requests): the run, the server, and the independent check of the copy afterwards (None
    when the run was cut short)."""
    with serve_recording(path, **server_options) as server, sample_copy() as root:
        if provider == "openai":
            run = openai_repair(
                openai_client(server),
                DEFAULT_MODELS["openai"],
                first_request(path),
                RepoTools(root),
                style,
                requests,
                **({} if style == "whole" else {"stream_options": {"include_usage": True}}),
            )
        else:
            run = anthropic_repair(
                anthropic_client(server),
                DEFAULT_MODELS["anthropic"],
                first_request(path),
                RepoTools(root),
                style,
                requests,
            )
        checks = run_checks(root) if requests >= 5 else None
    return run, server, checks


@pytest.mark.parametrize("style", STYLES)
@pytest.mark.parametrize(
    "provider, path", [("openai", OPENAI), ("anthropic", ANTHROPIC), ("anthropic", THINKING)]
)
def test_the_sdk_runs_the_whole_repair_in_strict_mode_in_every_call_style(provider, path, style):
    run, server, checks = repair(provider, path, style)
    assert run.calls == ["read_file", "read_file", "replace_text", "run_tests"]
    assert len(server.chat_requests) == 5 and server.errors == []
    assert (checks.exit_code, checks.passed) == (0, 4)
    assert "4 passed" in run.final_text
    if (provider, style) == ("openai", "stream_helper"):
        assert run.request_ids == [None] * 5  # openai's chat stream helper exposes no id
    else:
        assert len(set(run.request_ids)) == 5 and all(i.startswith("req_") for i in run.request_ids)


def test_thinking_blocks_go_back_unchanged_and_a_changed_signature_is_named():
    import anthropic

    recorded = load_recording(THINKING)
    second = recorded["turns"][1]["request"]["messages"]
    thinking = second[2]["content"][0]
    assert thinking["type"] == "thinking" and len(thinking["signature"]) > 100
    changed = [*second[:2], {**second[2], "content": [dict(thinking, signature="AAAA")]}]
    changed[2]["content"] += second[2]["content"][1:]
    with serve_recording(THINKING) as server:
        client = anthropic.Anthropic(base_url=server.url, api_key="k", max_retries=0)
        asked = dict(
            model=MODEL, max_tokens=10, tools=anthropic_tools(SCHEMAS), system=second[0]["content"]
        )
        first = client.messages.create(messages=[second[1]], **asked)
        with pytest.raises(anthropic.BadRequestError) as refused:
            client.messages.create(messages=changed[1:] + second[3:], **asked)
    assert [b.type for b in first.content] == ["thinking", "tool_use"]  # a whole reply keeps it
    assert first.content[0].signature == thinking["signature"]
    assert "message 2 (assistant) differs at content[0].signature, character 0" in str(
        refused.value
    )


# --- a captured-whole recording, streamed -------------------------------------------------


@pytest.mark.parametrize("style", ["create_stream", "stream_helper"])
def test_a_recording_captured_whole_streams_as_proper_chunks(style):
    recorded = load_recording(GEMMA)
    run, server, _ = repair("openai", GEMMA, style)
    assert len(server.chat_requests) == 8 and server.errors == []
    whole = recorded["turns"][0]["chunks"][0]["chunk"]
    assert run.usage[0].prompt_tokens == whole["usage"]["prompt_tokens"] == 641
    with serve_recording(GEMMA) as server:
        raw = httpx.post(
            f"{server.url}/v1/chat/completions",
            json={"model": MODEL, "messages": first_request(GEMMA), "tools": SCHEMAS}
            | {"stream": True},
        ).text
    events = [line for line in raw.split("\n\n") if line]
    assert events[-1] == "data: [DONE]" and len(events) == 4  # role, the call, the finish
    assert '"object":"chat.completion.chunk"' in events[1] and '"index":0' in events[1]


# --- usage, request ids, count_tokens -----------------------------------------------------


def test_openai_usage_comes_as_the_api_sends_it():
    import openai

    messages = first_request(OPENAI)
    with serve_recording(OPENAI) as server:
        asked = dict(model=MODEL, messages=messages, tools=SCHEMAS)
        raw = httpx.post(
            f"{server.url}/v1/chat/completions",
            json={**asked, "stream": True, "stream_options": {"include_usage": True}},
        ).text
        plain = httpx.post(f"{server.url}/v1/chat/completions", json={**asked, "stream": True}).text
        client = openai.OpenAI(base_url=f"{server.url}/v1", api_key="k")
        whole = client.chat.completions.create(**asked)
    events = [e.removeprefix("data: ") for e in raw.split("\n\n") if e][:-1]
    *chunks, last = events
    assert all(chunk.endswith(',"usage":null}') for chunk in chunks)
    assert '"choices":[]' in last and '"usage":{"prompt_tokens":' in last
    assert "usage" not in plain  # not asked for: not sent
    assert whole.usage.prompt_tokens == int(last.split('"prompt_tokens":')[1].split(",")[0])
    assert whole.choices[0].message.refusal is None
    assert whole._request_id.startswith("req_")


def test_anthropic_output_tokens_are_the_same_whole_and_streamed():
    with serve_recording(ANTHROPIC) as server:
        client = anthropic_client(server)
        asked = dict(
            model=MODEL,
            max_tokens=10,
            system=first_request(ANTHROPIC)[0]["content"],
            messages=first_request(ANTHROPIC)[1:],
            tools=anthropic_tools(SCHEMAS),
        )
        whole = client.messages.create(**asked)
        with client.messages.stream(**asked) as stream:
            streamed = stream.get_final_message()
    assert whole.usage.output_tokens == streamed.usage.output_tokens > 1
    assert whole.usage.input_tokens == streamed.usage.input_tokens == 600


def test_count_tokens_answers_what_the_reply_to_that_request_reported():
    with serve_recording(ANTHROPIC) as server:
        client = anthropic_client(server)
        recorded = client.messages.count_tokens(
            model=MODEL,
            system=first_request(ANTHROPIC)[0]["content"],
            messages=first_request(ANTHROPIC)[1:],
            tools=anthropic_tools(SCHEMAS),
        )
        other = client.messages.count_tokens(
            model=MODEL, messages=[{"role": "user", "content": "x" * 400}]
        )
    assert recorded.input_tokens == 600  # message_start's input_tokens in the recording
    assert 100 <= other.input_tokens <= 110  # no such request recorded: an estimate


# --- the version header and the key -------------------------------------------------------


def test_anthropic_wants_a_version_and_takes_either_key_header():
    body = {"model": MODEL, "max_tokens": 5, "messages": first_request(ANTHROPIC)[1:]}
    with serve_recording(ANTHROPIC, api_key="sk-right", strict=False) as server:
        url = f"{server.url}/v1/messages"
        missing = httpx.post(url, json=body, headers={"x-api-key": "sk-right"})
        by_header = httpx.post(url, json=body, headers={"x-api-key": "sk-right", **VERSION})
        bearer = httpx.post(
            url,
            json=body,
            headers={"authorization": "Bearer sk-right", "anthropic-version": "2026-10-21"},
        )
    assert missing.status_code == 400
    assert missing.json()["error"] == {
        "type": "invalid_request_error",
        "message": "anthropic-version: header is required",
    }
    assert missing.json()["request_id"] == missing.headers["request-id"]
    assert (by_header.status_code, bearer.status_code) == (200, 200)


# --- pings --------------------------------------------------------------------------------


def test_the_pings_option_sends_pings_the_sdk_skips_and_a_capture_keeps():
    from labkit import AnthropicModel, run_attempt

    with serve_recording(ANTHROPIC, pings=3) as server:
        raw = httpx.post(
            f"{server.url}/v1/messages",
            json={
                "model": MODEL,
                "max_tokens": 5,
                "messages": first_request(ANTHROPIC)[1:],
                "stream": True,
            },
            headers=VERSION,
        ).text
    assert raw.count('event: ping\ndata: {"type": "ping"}') == raw.count("event: ") // 4
    run, server, _ = repair("anthropic", ANTHROPIC, "stream_helper", requests=2, pings=2)
    assert len(server.chat_requests) == 2 and run.calls == ["read_file", "read_file"]
    with (
        serve_recording(THINKING) as server,
        AnthropicModel(base_url=server.url) as model,
    ):
        captured, _ = run_attempt(
            model, provenance=model.provenance(), task=load_recording(THINKING)["task"]
        )
    recorded = load_recording(THINKING)
    assert [[e["line"] for e in t["chunks"]] for t in captured["turns"]] == [
        [e["line"] for e in t["chunks"]] for t in recorded["turns"]
    ]
    assert captured["turns"][0]["chunks"][1]["chunk"] == {"type": "ping"}
    with pytest.raises(ValueError, match="no keep-alive event"):
        serve_recording(OPENAI, pings=1)


# --- faults, under the SDKs' default retries --------------------------------------------

TRANSIENT = [  # faults an SDK retries: the run goes on as past a real service's hiccup
    {"status": 500, "error": "the runner restarted"},
    {"status": 503, "error": "try again"},
    {"status": 429, "error": "slow down"},
    {"error_after": 0, "error": "failed before any output"},
]


@pytest.mark.parametrize("faults", TRANSIENT, ids=lambda f: str(f.get("status", "error_after")))
@pytest.mark.parametrize("provider", ["openai", "anthropic"])
@pytest.mark.parametrize("style", ["whole", "stream_helper"])
def test_a_failure_before_the_first_byte_is_retried_by_the_sdk_and_the_turn_is_kept(
    provider, style, faults
):
    path = OPENAI if provider == "openai" else ANTHROPIC
    start = time.monotonic()
    run, server, _ = repair(provider, path, style, requests=2, turn=2, **faults)
    took = time.monotonic() - start
    assert len(server.chat_requests) == 3  # turn 2 twice: refused, then retried
    assert server.chat_requests[1] == server.chat_requests[2]
    assert run.calls == ["read_file", "read_file"]  # turn 2's call came, from the recording
    if faults.get("status") == 429:
        assert took >= 1.0  # retry-after: 1


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_hang_up_before_a_whole_reply_is_retried_too(provider):
    path = OPENAI if provider == "openai" else ANTHROPIC
    run, server, _ = repair(provider, path, "whole", requests=2, turn=2, close_after=0)
    assert len(server.chat_requests) == 3 and run.calls == ["read_file", "read_file"]


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_service_down_for_longer_than_the_retries_fails_then_answers_the_next_call(provider):
    import anthropic
    import openai

    path = OPENAI if provider == "openai" else ANTHROPIC
    messages = first_request(path)
    with serve_recording(path, status=503, times=3) as server:
        if provider == "openai":
            client, error = openai_client(server), openai.InternalServerError

            def call():
                return client.chat.completions.create(model=MODEL, messages=messages, tools=SCHEMAS)

        else:
            client, error = anthropic_client(server), anthropic.InternalServerError

            def call():
                return client.messages.create(
                    model=MODEL,
                    max_tokens=5,
                    system=messages[0]["content"],
                    messages=messages[1:],
                    tools=anthropic_tools(SCHEMAS),
                )

        with pytest.raises(error):
            call()  # three attempts, all refused: the SDK gives up
        answered = call()  # the learner's next call: the service is back
    assert len(server.chat_requests) == 4 and answered._request_id.startswith("req_")


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_stream_broken_after_it_began_is_not_retried_and_a_resent_request_gets_its_turn(
    provider,
):
    """No SDK retries a stream that began; the loop sees it broken. Sent again by hand, the
    same request gets its turn whole, as from a service whose reply broke off once."""
    import openai

    path = OPENAI if provider == "openai" else ANTHROPIC
    first, second = (load_recording(path)["turns"][n]["request"]["messages"] for n in (0, 1))
    with serve_recording(path, turn=2, close_after=3) as server:
        if provider == "openai":
            client, error = openai_client(server), openai.APIConnectionError

            def call(messages):
                chunks = client.chat.completions.create(
                    model=MODEL, messages=messages, tools=SCHEMAS, stream=True
                )
                return [chunk.choices[0].finish_reason for chunk in chunks][-1]
        else:
            client, error = anthropic_client(server), httpx2.RemoteProtocolError

            def call(messages):
                with client.messages.stream(
                    model=MODEL,
                    max_tokens=5,
                    system=messages[0]["content"],
                    messages=messages[1:],
                    tools=anthropic_tools(SCHEMAS),
                ) as stream:
                    return stream.get_final_message().stop_reason

        assert call(first) in ("tool_calls", "tool_use")
        try:
            broken = call(second)
        except error:
            broken = "raised"
        again = call(second)
    assert len(server.chat_requests) == 3  # the SDK did not retry the broken stream
    assert broken in ("raised", None)  # anthropic's helper ends a cut stream without a reason
    assert again in ("tool_calls", "tool_use")

"""LangChain's chat models (``ChatOpenAI``, ``ChatAnthropic``), which nobody here wrote, run the
whole repair through the replay servers in strict mode, whole and streamed: they send back
what the APIs read as the same conversation in their own spelling (a list of blocks for a
string, ``"is_error": false``, ``"stream": false``, null fields), which strict mode accepts."""

import json

import pytest
from conftest import PROJECT_DIR

from labkit import RepoTools, load_recording, run_checks, sample_copy, serve_recording
from labkit.settings import DEFAULT_MODELS

RECORDINGS = PROJECT_DIR / "recordings"
CASES = {
    "openai": RECORDINGS / "repair_openai.json",
    "anthropic": RECORDINGS / "repair_anthropic.json",
    "anthropic-thinking": RECORDINGS / "repair_anthropic_thinking.json",
}


def chat_model(provider: str, url: str):
    if provider == "openai":
        from langchain_openai import ChatOpenAI

        return ChatOpenAI(model=DEFAULT_MODELS["openai"], base_url=f"{url}/v1", api_key="sk-lc")
    from langchain_anthropic import ChatAnthropic

    return ChatAnthropic(
        model=DEFAULT_MODELS["anthropic"], base_url=url, api_key="sk-lc", max_tokens=2048
    )


def langchain_repair(model, first: list, tools, streamed: bool):
    """The loop as LangChain's tool-calling guide writes it: invoke (or stream and add up the
    chunks), append the AI message, answer each tool call with a ToolMessage."""
    from langchain_core.messages import HumanMessage, SystemMessage, ToolMessage

    bound = model.bind_tools(tools.schemas)
    messages = [SystemMessage(first[0]["content"]), HumanMessage(first[1]["content"])]
    calls = []
    for _ in range(8):
        if streamed:
            reply = None
            for part in bound.stream(messages):
                reply = part if reply is None else reply + part
        else:
            reply = bound.invoke(messages)
        messages.append(reply)
        if not reply.tool_calls:
            return reply, calls
        for call in reply.tool_calls:
            result = tools.invoke(call["name"], call["args"])
            calls.append(call["name"])
            messages.append(ToolMessage(content=json.dumps(result), tool_call_id=call["id"]))
    return reply, calls


@pytest.mark.parametrize("streamed", [False, True], ids=["invoke", "stream"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_a_langchain_chat_model_runs_the_whole_repair_in_strict_mode(case, streamed):
    path = CASES[case]
    first = load_recording(path)["turns"][0]["request"]["messages"]
    with serve_recording(path) as server, sample_copy() as root:
        reply, calls = langchain_repair(
            chat_model(case.split("-")[0], server.url), first, RepoTools(root), streamed
        )
        checks = run_checks(root)
    assert calls == ["read_file", "read_file", "replace_text", "run_tests"]
    assert len(server.chat_requests) == 5 and server.errors == []
    assert (checks.exit_code, checks.passed) == (0, 4)
    assert "4 passed" in reply.text
    sent = server.chat_requests[1]
    if case.startswith("anthropic"):  # LangChain's own spelling, which the API reads alike
        assert sent["messages"][-1]["content"][0]["is_error"] is False
        assert isinstance(sent["messages"][1]["content"], list)
    else:
        assert sent["stream"] is streamed and sent["messages"][2]["content"] is None
    usage = reply.usage_metadata
    if case == "anthropic" and streamed:  # its stream reads input tokens from message_delta,
        assert usage["input_tokens"] == 0  # which this recording's events do not carry
    elif case.startswith("anthropic"):
        assert usage["input_tokens"] == 600
    elif not streamed:
        assert usage["input_tokens"] > 1000  # estimated by the server: the recording has none
    else:
        assert usage is None  # ChatOpenAI asks a custom base_url for no usage when streaming

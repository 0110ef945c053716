import json

import pytest
from conftest import FakeTools, ListChat, call, chunk, final_text_turn, tool_turn

from labkit import STOP_REASONS, SYSTEM_PROMPT, agent_events


def run(chat, tools=None, task="fix it", **kwargs):
    return list(agent_events(chat, tools or FakeTools(), task, **kwargs))


def stop_of(events):
    assert [e["type"] for e in events].count("stopped") == 1 and events[-1]["type"] == "stopped"
    assert events[-1]["reason"] in STOP_REASONS
    return events[-1]


def test_first_request_is_system_prompt_then_task():
    chat = ListChat(final_text_turn("done"))
    run(chat, task="repair the thing")
    assert chat.requests[0] == [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": "repair the thing"},
    ]


def test_final_text_stops_with_assistant_finished_and_streams_text_deltas():
    events = run(ListChat(final_text_turn("All good.")))
    assert stop_of(events)["reason"] == "assistant_finished"
    assert "".join(e["text"] for e in events if e["type"] == "text_delta") == "All good."
    assert events[-1]["messages"][-1] == {"role": "assistant", "content": "All good."}


def test_tool_results_are_in_the_next_request_in_order_one_message_per_call():
    tools = FakeTools()
    chat = ListChat(tool_turn(call("first", n="1"), call("second", n="2")), final_text_turn("ok"))
    events = run(chat, tools)
    assert tools.calls == [("first", {"n": "1"}), ("second", {"n": "2"})]
    second_request = chat.requests[1]
    assert [m["role"] for m in second_request] == ["system", "user", "assistant", "tool", "tool"]
    assert second_request[2]["tool_calls"] == [call("first", n="1"), call("second", n="2")]
    assert second_request[3] == {
        "role": "tool",
        "tool_name": "first",
        "content": json.dumps({"echo": "first", "n": "1"}),
    }
    assert second_request[4]["tool_name"] == "second"
    kinds = [e["type"] for e in events]
    assert kinds.count("tool_start") == 2 and kinds.count("model_start") == 2
    assert stop_of(events)["tool_calls"] == 2


def test_model_start_carries_the_request_actually_sent():
    chat = ListChat(tool_turn(call("echo")), final_text_turn("ok"))
    events = run(chat)
    starts = [e for e in events if e["type"] == "model_start"]
    assert [s["messages"] for s in starts] == chat.requests
    assert starts[0]["tools"] == ["echo"]


def test_events_carry_monotonic_times():
    times = [e["time"] for e in run(ListChat(tool_turn(call("echo")), final_text_turn("ok")))]
    assert times == sorted(times)


def test_a_tool_error_becomes_a_result_the_model_sees_and_the_loop_goes_on():
    chat = ListChat(tool_turn(call("boom")), final_text_turn("recovered"))
    events = run(chat)
    assert json.loads(chat.requests[1][-1]["content"]) == {"error": "boom went wrong"}
    assert stop_of(events)["reason"] == "assistant_finished"


def test_non_object_arguments_make_the_turn_malformed_and_run_nothing():
    """Ollama always sends an object: anything else is malformed data, not a tool error."""
    tools = FakeTools()
    odd = {"function": {"name": "echo", "arguments": '{"path": "x"}'}}
    stop = stop_of(run(ListChat(tool_turn(odd), final_text_turn("ok")), tools))
    assert stop["reason"] == "malformed_model_turn" and "not a JSON object" in stop["detail"]
    assert tools.calls == []


def test_empty_reply_stops_with_empty_response():
    assert (
        stop_of(run(ListChat([chunk(thinking="hmm"), chunk(done=True)])))["reason"]
        == "empty_response"
    )


@pytest.mark.parametrize(
    "chunks, detail",
    [
        ([chunk("half a"), chunk(tool_calls=[call("echo")])], "without a 'done'"),
        ([chunk(tool_calls=[call("echo")]), chunk(done=True, done_reason="length")], "length"),
    ],
)
def test_unfinished_turns_run_no_tool(chunks, detail):
    tools = FakeTools()
    stop = stop_of(run(ListChat(chunks), tools))
    assert stop["reason"] == "incomplete_model_turn" and detail in stop["detail"]
    assert tools.calls == [] and stop["tool_calls"] == 0


def test_malformed_turn_runs_no_tool():
    tools = FakeTools()
    chunks = [chunk(tool_calls=[call("echo")]), chunk(tool_calls="oops"), chunk(done=True)]
    stop = stop_of(run(ListChat(chunks), tools))
    assert stop["reason"] == "malformed_model_turn" and "tool_calls" in stop["detail"]
    assert tools.calls == []


def test_a_chat_that_raises_stops_with_model_error_and_its_text():
    def broken(messages, schemas):
        raise ConnectionError("server went away")

    stop = stop_of(run(broken))
    assert stop["reason"] == "model_error" and stop["error"] == "server went away"


def test_a_stream_that_raises_midway_runs_no_tool_and_is_closed():
    closed = []

    def stream():
        try:
            yield chunk(tool_calls=[call("echo")])
            raise RuntimeError("connection reset")
        finally:
            closed.append(True)

    tools = FakeTools()
    stop = stop_of(run(lambda m, s: stream(), tools))
    assert stop["reason"] == "model_error" and tools.calls == [] and closed == [True]


def test_max_turns_one_makes_one_request_runs_its_tools_then_stops():
    tools = FakeTools()
    chat = ListChat(tool_turn(call("echo", n="1")), final_text_turn("never asked"))
    events = run(chat, tools, max_turns=1)
    stop = stop_of(events)
    assert len(chat.requests) == 1 and tools.calls == [("echo", {"n": "1"})]
    assert stop["reason"] == "max_turns" and stop["turns"] == 1
    assert stop["messages"][-1]["role"] == "tool"  # the result is appended all the same


@pytest.mark.parametrize("bad", [True, False, 0, -1, "3", 2.0, None])
def test_invalid_max_turns_is_refused_at_once(bad):
    with pytest.raises(ValueError, match="max_turns"):
        agent_events(ListChat(), FakeTools(), "task", max_turns=bad)


# --- The loop's three plug-in points: the wire format, a gate and a budget -----------------


class DenyEcho:
    """A gate that lets every call through but ``echo`` with n == "2"."""

    def __init__(self):
        self.reviewed = []

    def review(self, name, arguments):
        self.reviewed.append((name, arguments))
        if arguments.get("n") != "2":
            return None

        class Denied:
            allowed = False

            def event_fields(self):
                return {
                    "command": "echo 2",
                    "verdict": "deny",
                    "decision": "deny",
                    "by": "policy",
                    "rule": "deny echo 2",
                    "reason": "two is refused",
                    "parts": [["echo", "2"]],
                }

            def tool_result(self):
                return {"error": "denied: two is refused"}

        return Denied()


def test_a_gate_sees_each_call_before_it_runs_and_a_denial_is_a_result_the_model_reads():
    chat = ListChat(tool_turn(call("echo", n="1"), call("echo", n="2")), final_text_turn("ok"))
    tools, gate = FakeTools(), DenyEcho()
    events = list(agent_events(chat, tools, "task", gate=gate))
    assert gate.reviewed == [("echo", {"n": "1"}), ("echo", {"n": "2"})]
    assert tools.calls == [("echo", {"n": "1"})]  # the denied call never reached the tools
    kinds = [e["type"] for e in events if e["type"] in ("tool_start", "permission", "tool_result")]
    assert kinds == ["tool_start", "tool_result", "tool_start", "permission", "tool_result"]
    permission = next(e for e in events if e["type"] == "permission")
    assert permission["decision"] == "deny" and permission["name"] == "echo"
    assert json.loads(chat.requests[1][-1]["content"]) == {"error": "denied: two is refused"}
    assert events[-1]["tool_calls"] == 1  # calls that ran


def test_a_budget_shapes_the_conversation_before_every_request_and_the_loop_keeps_it():
    seen = []

    def budget(messages):
        seen.append(len(messages))
        return [m if m["role"] != "tool" else {**m, "content": "[cut]"} for m in messages]

    chat = ListChat(tool_turn(call("echo", n="1")), final_text_turn("ok"))
    events = list(agent_events(chat, FakeTools(), "task", budget=budget))
    assert seen == [2, 4]
    assert chat.requests[1][-1]["content"] == "[cut]"
    assert events[-1]["messages"][3]["content"] == "[cut]"


def test_a_chat_names_its_wire_format_and_an_unknown_one_is_refused():
    from labkit.harness.formats import OLLAMA, format_of

    class Speaks:
        def __init__(self, name):
            self.wire_format = name

    assert format_of(lambda m, s: iter(())) is OLLAMA and format_of(Speaks("ollama")) is OLLAMA
    with pytest.raises(ValueError, match="unknown wire format 'smoke'"):
        format_of(Speaks("smoke"))

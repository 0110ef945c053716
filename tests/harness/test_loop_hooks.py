"""The loop's five hook points: what each may change, what it may not, what each decision
looks like as an event, and what a stop hook costs in turns."""

import pytest
from conftest import FakeTools, ListChat, call, final_text_turn, tool_turn

from labkit.harness import agent_events
from labkit.harness.contracts import ToolsFailed
from labkit.harness.gate import Gate, Policy
from labkit.harness.hooks import HookSet, PythonHook


def hooks_of(**replies):
    """A set of one Python hook per point named, each giving its reply (a dict, or a
    function of the event)."""
    return HookSet(
        [
            PythonHook(
                f"{point}-hook",
                [point],
                function=reply if callable(reply) else (lambda event, reply=reply: reply),
            )
            for point, reply in replies.items()
        ],
        ".",
    )


def run(chat, hooks, tools=None, **options):
    tools = tools or FakeTools()
    return list(agent_events(chat, tools, "task", hooks=hooks, **options)), tools


def test_without_hooks_no_hook_event_is_made():
    events, _ = run(ListChat(tool_turn(call("echo")), final_text_turn("done.")), None)
    assert not [e for e in events if e["type"] == "hook"]


def test_run_start_context_is_kept_for_every_request():
    chat = ListChat(tool_turn(call("echo")), final_text_turn("done."))
    events, _ = run(chat, hooks_of(run_start={"context": "style: short names"}))
    context = {"role": "user", "content": "[hook run_start-hook] style: short names"}
    assert [request[2] for request in chat.requests] == [context, context]
    assert events[0]["type"] == "hook" and events[0]["turn"] == 0


def test_before_request_part_goes_with_that_request_only():
    turns = iter(["first", "second"])
    chat = ListChat(tool_turn(call("echo")), final_text_turn("done."))
    events, _ = run(chat, hooks_of(before_request=lambda event: {"context": next(turns)}))
    assert [request[-1]["content"] for request in chat.requests][
        1
    ] == "[hook before_request-hook] second"
    assert chat.requests[0][-1] == {"role": "user", "content": "[hook before_request-hook] first"}
    assert "[hook before_request-hook] first" not in str(chat.requests[1])
    assert "before_request-hook" not in str(events[-1]["messages"])  # never kept
    starts = [e for e in events if e["type"] == "model_start"]
    assert [s["messages"][-1]["content"][-5:] for s in starts] == ["first", "econd"]


def test_a_denied_call_never_reaches_the_tool_and_the_model_reads_why():
    chat = ListChat(tool_turn(call("echo", path="tests/t.py")), final_text_turn("done."))
    denial = {"decision": "deny", "reason": "tests are protected"}
    events, tools = run(chat, hooks_of(before_tool=denial))
    assert tools.calls == []
    result = next(e["result"] for e in events if e["type"] == "tool_result")
    assert result == {
        "error": "the hook 'before_tool-hook' denied it: tests are protected. The call did not run."
    }
    assert events[-1]["tool_calls"] == 0
    hook = next(e for e in events if e["type"] == "hook")
    assert hook == {**hook, "name": "echo", "point": "before_tool", "decision": "deny", "turn": 1}


def test_new_arguments_run_and_the_gate_judges_them_not_the_models():
    chat = ListChat(tool_turn(call("echo", path="a.py")), final_text_turn("done."))
    judged = []

    class Watching(Gate):
        def review(self, name, arguments):
            judged.append(dict(arguments))
            return super().review(name, arguments)

    gate = Watching(Policy(tools={"echo": "allow"}, default="deny"))
    events, tools = run(chat, hooks_of(before_tool={"arguments": {"path": "b.py"}}), gate=gate)
    assert judged == [{"path": "b.py"}] and tools.calls == [("echo", {"path": "b.py"})]
    start = next(e for e in events if e["type"] == "tool_start")
    assert start["arguments"] == {"path": "a.py"}  # what the model asked, as it asked


def test_after_tool_replaces_the_result_and_adds_context_but_only_for_calls_that_ran():
    chat = ListChat(tool_turn(call("echo", a=1)), final_text_turn("done."))
    events, _ = run(chat, hooks_of(after_tool={"result": {"secret": "[redacted]"}, "context": "n"}))
    result = next(e["result"] for e in events if e["type"] == "tool_result")
    assert result == {"secret": "[redacted]", "hook_context": "[hook after_tool-hook] n"}
    asked = []
    chat = ListChat(tool_turn(call("echo")), final_text_turn("done."))
    run(
        chat,
        hooks_of(
            before_tool={"decision": "deny", "reason": "no"},
            after_tool=lambda event: asked.append(event),
        ),
    )
    assert asked == []  # a call that did not run has no after


def test_an_after_hook_cannot_change_which_call_ran():
    chat = ListChat(tool_turn(call("echo", a=1)), final_text_turn("done."))
    events, tools = run(chat, hooks_of(after_tool={"arguments": {"a": 2}}))
    hook = next(e for e in events if e["type"] == "hook")
    assert (hook["failure"], hook["decision"]) == ("bad_reply", "allow")
    assert tools.calls == [("echo", {"a": 1})]


def test_a_failing_before_hook_denies_the_call():
    def broken(event):
        raise RuntimeError("the hook has a bug")

    chat = ListChat(tool_turn(call("echo")), final_text_turn("done."))
    events, tools = run(chat, hooks_of(before_tool=broken))
    assert tools.calls == []
    result = next(e["result"] for e in events if e["type"] == "tool_result")
    assert "failed (crash: RuntimeError: the hook has a bug)" in result["error"]


@pytest.mark.parametrize(
    "budget, reason, requests", [(1, "max_turns", 1), (5, "assistant_finished", 2)]
)
def test_a_stop_is_denied_once_per_run_from_the_same_budget(budget, reason, requests):
    chat = ListChat(final_text_turn("done."), final_text_turn("really done."))
    never = {"decision": "deny", "reason": "the tests fail"}
    events, _ = run(chat, hooks_of(stop=never), max_turns=budget)
    stop = events[-1]
    assert (stop["reason"], stop["turns"]) == (reason, requests)
    denials = [e for e in events if e["type"] == "hook"]
    assert all(e["decision"] == "deny" for e in denials) and len(denials) == requests
    if requests == 2:
        assert chat.requests[1][-1] == {
            "role": "user",
            "content": "[hook stop-hook] the tests fail",
        }


def test_a_stop_hook_hears_whether_it_already_denied():
    heard = []
    chat = ListChat(final_text_turn("done."), final_text_turn("done again."))
    run(chat, hooks_of(stop=lambda event: heard.append(event["denied"]) or {"decision": "deny"}))
    assert heard == [False, True]


def test_tools_that_can_run_nothing_more_end_the_run_as_tools_failed():
    class Gone(FakeTools):
        def invoke(self, name, arguments):
            raise ToolsFailed("the server exited (exit code 3)")

    chat = ListChat(tool_turn(call("echo"), call("echo")), final_text_turn("done."))
    events, _ = run(chat, None, tools=Gone())
    stop = events[-1]
    assert (stop["reason"], stop["detail"]) == (
        "tools_failed",
        "echo: the server exited (exit code 3)",
    )
    assert len(chat.requests) == 1 and stop["tool_calls"] == 0

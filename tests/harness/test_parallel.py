"""Read-only calls of one turn run at once when the loop is given a runner (lesson 10):
results still join the conversation in the order asked, a failed or late call loses
nothing of the others', and a call with side effects runs alone, in its place. Without a
runner the loop is what it always was."""

import threading

import pytest
from conftest import ListChat, call, final_text_turn, tool_turn
from lesson10_tools import Notes

from labkit.harness import agent_events
from labkit.harness.contracts import Outcome, ToolCall
from labkit.harness.parallel import MAX_WORKERS, ThreadRunner, batches, late_result


def calls(*names):
    return [ToolCall(f"c{n}", name, {"text": str(n)}) for n, name in enumerate(names)]


def test_consecutive_read_only_calls_form_a_batch_and_a_write_stands_alone():
    found = batches(calls("look", "look", "write", "look", "write", "write"), Notes(), True)
    assert [[c.name for c in batch] for batch in found] == [
        ["look", "look"],
        ["write"],
        ["look"],
        ["write"],
        ["write"],
    ]


def test_without_parallel_every_call_is_a_batch_of_its_own():
    found = list(batches(calls("look", "look"), Notes(), False))
    assert [len(batch) for batch in found] == [1, 1]


def test_tools_that_do_not_say_what_is_read_only_run_every_call_alone():
    class Plain:
        schemas = []

    assert [len(b) for b in batches(calls("look", "look"), Plain(), True)] == [1, 1]


def test_outcomes_come_in_the_order_of_the_jobs_not_the_order_they_ended():
    first_may_end = threading.Event()
    ended = []

    def first():
        first_may_end.wait(timeout=5)
        ended.append("first")
        return 1

    def second():
        ended.append("second")
        first_may_end.set()
        return 2

    outcomes = ThreadRunner(workers=2).run([first, second])
    assert ended == ["second", "first"]
    assert outcomes == [Outcome(value=1), Outcome(value=2)]


def test_a_job_that_raises_loses_nothing_of_the_others():
    def broken():
        raise KeyError("bug")

    outcomes = ThreadRunner().run([lambda: "a", broken, lambda: "c"])
    assert [o.value for o in outcomes] == ["a", None, "c"]
    assert isinstance(outcomes[1].error, KeyError)


def test_a_late_job_is_timed_out_and_the_others_keep_their_results():
    release = threading.Event()
    outcomes = ThreadRunner(workers=2, timeout=0.2).run([lambda: release.wait(5), lambda: "quick"])
    release.set()
    assert outcomes[0].timed_out and outcomes[0].started
    assert outcomes[1] == Outcome(value="quick")


def test_the_late_result_says_what_happened_to_the_call():
    assert late_result("grep", 2, True)["error"].startswith("grep did not finish within 2 s")
    assert "did not start" in late_result("grep", 0.5, False)["error"]


@pytest.mark.parametrize(
    "workers, timeout", [(0, None), (MAX_WORKERS + 1, None), (True, None), (2, 0), (2, "1")]
)
def test_a_runner_that_will_not_do_is_refused(workers, timeout):
    with pytest.raises(ValueError):
        ThreadRunner(workers, timeout)


def run(tools, *turns, runner=None):
    chat = ListChat(*turns)
    events = list(agent_events(chat, tools, "task", runner=runner))
    return chat, events


def test_two_reads_of_one_turn_run_at_once_and_their_results_join_in_the_order_asked():
    tools = Notes(gate=threading.Barrier(2))  # passes only when both looks wait at once
    chat, events = run(
        tools,
        tool_turn(call("look", text="a"), call("look", text="b")),
        final_text_turn("done."),
        runner=ThreadRunner(workers=2),
    )
    assert [(e["type"], e.get("name")) for e in events[1:5]] == [
        ("tool_start", "look"),
        ("tool_start", "look"),
        ("tool_result", "look"),
        ("tool_result", "look"),
    ]
    results = [e["result"] for e in events if e["type"] == "tool_result"]
    assert results == [{"note": "A"}, {"note": "B"}]
    sent = [m["content"] for m in chat.requests[1] if m["role"] == "tool"]
    assert sent == ['{"note": "A"}', '{"note": "B"}']


def test_results_keep_the_order_asked_when_the_second_read_ends_first():
    first_may_end = threading.Event()
    tools = Notes(slow={"a": first_may_end})
    _, events = run(
        tools,
        tool_turn(call("look", text="a"), call("look", text="b")),
        final_text_turn("done."),
        runner=_Releasing(ThreadRunner(workers=2), first_may_end),
    )
    assert tools.log == [("look", "b"), ("look", "a")]
    assert [e["result"] for e in events if e["type"] == "tool_result"] == [
        {"note": "A"},
        {"note": "B"},
    ]


class _Releasing:
    """A runner that lets the first job end only after the second did."""

    def __init__(self, runner, event):
        self.runner, self.event = runner, event

    def run(self, jobs):
        def second():
            try:
                return jobs[1]()
            finally:
                self.event.set()

        return self.runner.run([jobs[0], second, *jobs[2:]])


def test_a_failed_read_is_an_error_result_and_the_others_keep_theirs():
    _, events = run(
        Notes(),
        tool_turn(call("look", text="a"), call("look", text="fail"), call("look", text="c")),
        final_text_turn("done."),
        runner=ThreadRunner(),
    )
    results = [e["result"] for e in events if e["type"] == "tool_result"]
    assert results == [{"note": "A"}, {"error": "no such note"}, {"note": "C"}]


def test_a_read_that_is_late_is_reported_late_and_the_run_goes_on():
    never = threading.Event()
    _, events = run(
        Notes(slow={"slow": never}),
        tool_turn(call("look", text="slow"), call("look", text="b")),
        final_text_turn("done."),
        runner=ThreadRunner(timeout=0.2),
    )
    never.set()
    results = [e["result"] for e in events if e["type"] == "tool_result"]
    assert results[0]["error"].startswith("look did not finish within 0.2 s")
    assert results[1] == {"note": "B"}
    assert events[-1]["reason"] == "assistant_finished"
    assert events[-1]["tool_calls"] == 2


def test_a_write_runs_after_the_reads_asked_before_it_and_before_those_after():
    tools = Notes()
    run(
        tools,
        tool_turn(call("look", text="a"), call("write", text="w"), call("look", text="b")),
        final_text_turn("done."),
        runner=ThreadRunner(),
    )
    assert tools.log == [("look", "a"), ("write", "w"), ("look", "b")]


def test_without_a_runner_the_reads_run_one_at_a_time_as_always():
    tools = Notes()
    _, events = run(
        tools,
        tool_turn(call("look", text="a"), call("look", text="b")),
        final_text_turn("done."),
    )
    assert [e["type"] for e in events] == [
        "model_start",
        "tool_start",
        "tool_result",
        "tool_start",
        "tool_result",
        "model_start",
        "text_delta",
        "text_delta",
        "stopped",
    ]

"""Property tests of the loop: generated model streams, honest and hostile.

Each generated case is a conversation (strategies.py): up to four scripted model replies
and a budget of one to four model requests. A reply is a sequence of steps, each a well-formed
chunk, a malformed chunk or an exception raised mid-stream, so ``done`` comes anywhere or nowhere,
with any ``done_reason``, and tool calls come in any shape; or the model call itself fails.
The loop runs each case against recording fake tools, and every run is checked twice:

* by ``assert_run_invariants`` (run_invariants.py), which holds for any stream at all;
* against ``expected_run``, the documented rules applied to the steps as generated: it
  knows which replies may dispatch, which calls must run and how the run must stop.

The cases are the same on every run (``derandomize``); their number is printed in the
safety summary at the end of the test run.
"""

from __future__ import annotations

import copy
from collections import Counter

from hypothesis import HealthCheck, given, settings
from run_invariants import RecordingChat, RecordingTools, assert_run_invariants, run_to_the_end
from strategies import Raise, Reply, conversations

from labkit import STOP_REASONS

EXAMPLES = 500


# The scripted model, and the documented rules applied to what it will send.


class ScriptedChat:
    """Answers the n-th request with the n-th reply; raises when it has none left."""

    def __init__(self, replies):
        self.replies = list(replies)
        self.answered = 0

    def __call__(self, messages, tool_schemas):
        if self.answered == len(self.replies):
            raise LookupError("the script has no reply for this request")
        reply = self.replies[self.answered]
        self.answered += 1
        if reply.refusal:
            raise reply.refusal
        stream = _stream(reply.steps)
        return FailsOnClose(stream) if reply.close_fails else stream


def _stream(steps):
    for step in steps:
        if isinstance(step, Raise):
            raise step.error
        yield copy.deepcopy(step.value)


class FailsOnClose:
    """A stream that raises when the loop closes it, as a dropped connection may."""

    def __init__(self, stream):
        self.stream = stream

    def __iter__(self):
        return self.stream

    def close(self):
        self.stream.close()
        raise ConnectionError("connection reset while closing the stream")


def judge(reply: Reply):
    """How the documented rules judge one reply: ``("dispatch", calls)`` or
    ``(stop reason, [])``."""
    if reply.refusal:
        return "model_error", []
    done, reason, text, calls = False, None, [], []
    for step in reply.steps:
        if isinstance(step, Raise):
            return "model_error", []
        if done or not step.well_formed:  # anything after the final chunk is malformed too
            return "malformed_model_turn", []
        message = step.value["message"]
        text.append(message.get("content") or "")
        calls += message.get("tool_calls") or []
        if step.value.get("done"):
            done, reason = True, step.value.get("done_reason")
    if not done or reason == "length":
        return "incomplete_model_turn", []
    if calls:
        return "dispatch", calls
    return ("assistant_finished" if "".join(text).strip() else "empty_response"), []


def expected_run(replies, max_turns):
    """``(stop reason, model requests, calls dispatched)`` by the documented rules."""
    dispatched = []
    for turn in range(1, max_turns + 1):
        if turn > len(replies):
            return "model_error", turn, dispatched  # the script raises: no reply left
        outcome, calls = judge(replies[turn - 1])
        if outcome != "dispatch":
            return outcome, turn, dispatched
        for call in calls:  # a tool whose server is gone ends the run with its call
            dispatched.append(call)
            if call["function"]["name"] == "gone":
                return "tools_failed", turn, dispatched
    return "max_turns", max_turns, dispatched


def test_generated_streams_keep_every_invariant(safety_tally):
    stops = Counter()

    @settings(
        max_examples=EXAMPLES,
        derandomize=True,
        database=None,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow],
    )
    @given(conversations)
    def check(conversation):
        replies, max_turns = conversation
        chat, tools = RecordingChat(ScriptedChat(replies)), RecordingTools()
        events = run_to_the_end(chat, tools, max_turns=max_turns)
        assert_run_invariants(events, chat, tools, max_turns)

        reason, turns, calls = expected_run(replies, max_turns)
        stop = events[-1]
        assert (stop["reason"], stop["turns"]) == (reason, turns)
        assert [(name, arguments) for name, arguments, _ in tools.log] == [
            (c["function"]["name"], c["function"].get("arguments", {})) for c in calls
        ]
        stops[reason] += 1
        safety_tally["generated streams (model replies)"] += len(chat.requests)
        safety_tally["tool calls dispatched from generated streams"] += len(tools.log)

    check()
    safety_tally["generated stream cases (conversations)"] += sum(stops.values())
    for reason, count in stops.items():
        safety_tally[f"generated conversations that stopped with {reason}"] += count
    assert set(stops) == set(STOP_REASONS), "the strategies no longer reach every way a run ends"

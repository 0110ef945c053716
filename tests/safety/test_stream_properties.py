"""Property tests of the loop: generated model streams, honest and hostile.

Each generated case is a conversation: up to four scripted model replies and a budget of
one to four model requests. A reply is a sequence of steps, each a well-formed chunk, a
malformed chunk or an exception raised mid-stream, so ``done`` comes anywhere or nowhere,
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
from dataclasses import dataclass

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ollama import ResponseError
from run_invariants import RecordingChat, RecordingTools, assert_run_invariants, run_to_the_end

from labkit import STOP_REASONS

EXAMPLES = 500


@dataclass(frozen=True)
class Chunk:
    value: object
    well_formed: bool


@dataclass(frozen=True)
class Raise:
    error: Exception


@dataclass(frozen=True)
class Reply:
    """One scripted answer to a model request."""

    steps: tuple = ()                  # Chunk and Raise steps, streamed in this order
    refusal: Exception | None = None   # raised by the model call itself: no stream at all
    close_fails: bool = False          # the stream raises when the loop closes it


# Strategies, named after what they generate.

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=5)
texts = st.text(max_size=12)  # any characters, empty and whitespace-only included
not_texts = st.integers() | st.booleans() | st.lists(st.integers(), max_size=2) | st.dictionaries(
    st.text(max_size=3), st.integers(), max_size=2)
done_reasons = st.sampled_from(["stop", "length", "load", "unload", ""]) | st.text(max_size=8)
tool_names = st.sampled_from(["echo", "refuse", "read_file", "__init__", "invoke"]) | st.text(
    min_size=1, max_size=10)

tool_calls = st.fixed_dictionaries(
    {"function": st.fixed_dictionaries(
        {"name": tool_names},
        optional={"arguments": st.dictionaries(st.text(max_size=6), json_values, max_size=3)
                  | json_values})},
    optional={"id": st.text(max_size=6), "type": st.just("function")})

messages = st.fixed_dictionaries(
    {"role": st.just("assistant")},
    optional={"content": st.none() | texts, "thinking": st.none() | texts,
              "tool_calls": st.none() | st.lists(tool_calls, max_size=2)})


def well_formed_chunks(*, done: bool):
    fields = {"model": st.just("fuzz"), "created_at": st.just("2026-12-01T09:00:00Z"),
              "message": messages}
    if done:
        return st.fixed_dictionaries({**fields, "done": st.just(True)},
                                     optional={"done_reason": done_reasons,
                                               "eval_count": st.integers(0, 2048)})
    return st.fixed_dictionaries(fields, optional={"done": st.just(False),
                                                   "done_reason": st.none() | done_reasons})


def _with(chunk_strategy, **changes):
    """A well-formed non-final chunk with top-level fields changed or added."""
    return st.builds(lambda chunk, new: {**chunk, **new}, chunk_strategy, st.fixed_dictionaries(changes))


def _with_message(**changes):
    """A well-formed non-final chunk whose message has fields changed."""
    return st.builds(lambda chunk, new: {**chunk, "message": {**chunk["message"], **new}},
                     well_formed_chunks(done=False), st.fixed_dictionaries(changes))


calls_without_a_name = st.sampled_from([
    {"function": {}}, {"function": {"name": ""}}, {"function": {"name": 5}},
    {"function": "echo"}, {"name": "echo"}, "echo", None])

malformed_chunks = st.one_of(
    st.none() | st.integers() | st.text(max_size=8) | st.lists(st.integers(), max_size=2),
    st.fixed_dictionaries({"model": st.just("fuzz"), "done": st.booleans()}),  # no message
    _with(well_formed_chunks(done=False), message=st.none() | st.text(max_size=5) | st.lists(texts)),
    st.builds(lambda text: {"error": text}, texts),                # the server's error line
    _with(well_formed_chunks(done=True), error=texts),             # an error beside a final chunk
    _with_message(content=not_texts),
    _with_message(thinking=not_texts),
    _with_message(tool_calls=st.integers() | st.booleans() | st.text(max_size=5)
                  | st.dictionaries(st.text(max_size=3), json_values, max_size=2)),
    _with_message(tool_calls=st.lists(calls_without_a_name, min_size=1, max_size=2)),
    _with(well_formed_chunks(done=False), done=st.sampled_from(["true", 1, 0, None, [], "false"])),
    _with(well_formed_chunks(done=True), done_reason=not_texts),
)

stream_errors = st.one_of(
    st.builds(lambda kind, text: kind(text), st.sampled_from(
        [ConnectionError, TimeoutError, RuntimeError, ValueError, OSError, KeyError]), texts),
    st.builds(lambda text: ResponseError(f"model runner stopped {text}", 500), texts))

steps = st.one_of(
    well_formed_chunks(done=False).map(lambda c: Chunk(c, True)),
    well_formed_chunks(done=True).map(lambda c: Chunk(c, True)),
    malformed_chunks.map(lambda c: Chunk(c, False)),
    stream_errors.map(Raise))

complete_replies = st.builds(
    lambda body, final, close_fails: Reply(tuple(Chunk(c, True) for c in body + [final]),
                                           close_fails=close_fails),
    st.lists(well_formed_chunks(done=False), max_size=4), well_formed_chunks(done=True),
    st.booleans())
tool_call_replies = st.builds(  # shaped like a real server's: calls on a chunk before the final one
    lambda body, calls, final: Reply(tuple(Chunk(c, True) for c in [
        *body, {**body[-1], "message": {"role": "assistant", "content": "", "tool_calls": calls}},
        {**final, "done_reason": "stop"}])),
    st.lists(well_formed_chunks(done=False), min_size=1, max_size=3),
    st.lists(tool_calls, min_size=1, max_size=3), well_formed_chunks(done=True))
hostile_replies = st.builds(lambda s, close_fails: Reply(tuple(s), close_fails=close_fails),
                            st.lists(steps, max_size=6), st.booleans())
refused_calls = stream_errors.map(lambda error: Reply(refusal=error))

# Mostly complete replies, many with tool calls so that runs go on for several turns, and
# hostile ones in between.
replies = st.sampled_from([tool_call_replies] * 2 + [complete_replies] * 2 + [hostile_replies] * 2
                          + [refused_calls]).flatmap(lambda kind: kind)
conversations = st.tuples(st.lists(replies, min_size=1, max_size=4), st.integers(min_value=1, max_value=4))


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
    def __init__(self, stream):
        self.stream = stream

    def __iter__(self):
        return self.stream

    def close(self):
        self.stream.close()
        raise ConnectionError("connection reset while closing the stream")


def judge(reply: Reply):
    """How the documented rules judge one reply: ``("dispatch", calls)`` or ``(stop reason, [])``."""
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
        dispatched += calls
    return "max_turns", max_turns, dispatched


def test_generated_streams_keep_every_invariant(safety_tally):
    stops = Counter()

    @settings(max_examples=EXAMPLES, derandomize=True, database=None, deadline=None,
              suppress_health_check=[HealthCheck.too_slow])
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
            (c["function"]["name"], c["function"].get("arguments", {})) for c in calls]
        stops[reason] += 1
        safety_tally["generated streams (model replies)"] += len(chat.requests)
        safety_tally["tool calls dispatched from generated streams"] += len(tools.log)

    check()
    safety_tally["generated stream cases (conversations)"] += sum(stops.values())
    for reason, count in stops.items():
        safety_tally[f"generated conversations that stopped with {reason}"] += count
    assert set(stops) == set(STOP_REASONS), "the strategies no longer reach every way a run ends"

"""Hypothesis strategies for model replies, named after what they generate.

A reply is a ``Reply``: a tuple of steps, each a ``Chunk`` (an Ollama chat chunk, marked
well formed or not, by construction) or a ``Raise`` (an exception thrown mid-stream), or a
refusal (the model call itself raises). ``replies`` mixes complete replies, replies with
tool calls, hostile ones and refusals; ``conversations`` pairs a few of them with a budget.
A test that streams them some other way (say, through a server) can draw from here too.
"""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import strategies as st
from ollama import ResponseError


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

    steps: tuple = ()  # Chunk and Raise steps, streamed in this order
    refusal: Exception | None = None  # raised by the model call itself: no stream at all
    close_fails: bool = False  # the stream raises when the loop closes it


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=6),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=5,
)
texts = st.text(max_size=12)  # any characters, empty and whitespace-only included
not_texts = (
    st.integers()
    | st.booleans()
    | st.lists(st.integers(), max_size=2)
    | st.dictionaries(st.text(max_size=3), st.integers(), max_size=2)
)
done_reasons = st.sampled_from(["stop", "length", "load", "unload", ""]) | st.text(max_size=8)
tool_names = st.sampled_from(
    ["echo", "refuse", "gone", "read_file", "__init__", "invoke"]
) | st.text(min_size=1, max_size=10)

tool_calls = st.fixed_dictionaries(
    {
        "function": st.fixed_dictionaries(
            {
                "name": tool_names,
                "arguments": st.dictionaries(st.text(max_size=6), json_values, max_size=3),
            }
        )
    },
    optional={"id": st.text(max_size=6), "type": st.just("function")},
)

messages = st.fixed_dictionaries(
    {"role": st.just("assistant")},
    optional={
        "content": st.none() | texts,
        "thinking": st.none() | texts,
        "tool_calls": st.none() | st.lists(tool_calls, max_size=2),
    },
)


def well_formed_chunks(*, done: bool):
    fields = {
        "model": st.just("fuzz"),
        "created_at": st.just("2026-12-01T09:00:00Z"),
        "message": messages,
    }
    if done:
        return st.fixed_dictionaries(
            {**fields, "done": st.just(True)},
            optional={"done_reason": done_reasons, "eval_count": st.integers(0, 2048)},
        )
    return st.fixed_dictionaries(
        fields, optional={"done": st.just(False), "done_reason": st.none() | done_reasons}
    )


def _with(chunk_strategy, **changes):
    """A well-formed non-final chunk with top-level fields changed or added."""
    return st.builds(
        lambda chunk, new: {**chunk, **new}, chunk_strategy, st.fixed_dictionaries(changes)
    )


def _with_message(**changes):
    """A well-formed non-final chunk whose message has fields changed."""
    return st.builds(
        lambda chunk, new: {**chunk, "message": {**chunk["message"], **new}},
        well_formed_chunks(done=False),
        st.fixed_dictionaries(changes),
    )


calls_without_a_name = st.sampled_from(
    [
        {"function": {}},
        {"function": {"name": ""}},
        {"function": {"name": 5}},
        {"function": "echo"},
        {"name": "echo"},
        "echo",
        None,
    ]
)
#: Ollama always sends an object; a string (even one holding JSON), a list or null is malformed.
calls_without_object_arguments = st.builds(
    lambda name, arguments: {"function": {"name": name, "arguments": arguments}},
    tool_names,
    json_values.filter(lambda value: not isinstance(value, dict)) | st.just('{"path": "x"}'),
)

malformed_chunks = st.one_of(
    st.none() | st.integers() | st.text(max_size=8) | st.lists(st.integers(), max_size=2),
    st.fixed_dictionaries({"model": st.just("fuzz"), "done": st.booleans()}),  # no message
    _with(
        well_formed_chunks(done=False), message=st.none() | st.text(max_size=5) | st.lists(texts)
    ),
    st.builds(lambda text: {"error": text}, texts),  # the server's error line
    _with(well_formed_chunks(done=True), error=texts),  # an error beside a final chunk
    _with_message(content=not_texts),
    _with_message(thinking=not_texts),
    _with_message(
        tool_calls=st.integers()
        | st.booleans()
        | st.text(max_size=5)
        | st.dictionaries(st.text(max_size=3), json_values, max_size=2)
    ),
    _with_message(tool_calls=st.lists(calls_without_a_name, min_size=1, max_size=2)),
    _with_message(tool_calls=st.lists(calls_without_object_arguments, min_size=1, max_size=2)),
    _with(well_formed_chunks(done=False), done=st.sampled_from(["true", 1, 0, None, [], "false"])),
    _with(well_formed_chunks(done=True), done_reason=not_texts),
)

stream_errors = st.one_of(
    st.builds(
        lambda kind, text: kind(text),
        st.sampled_from(
            [ConnectionError, TimeoutError, RuntimeError, ValueError, OSError, KeyError]
        ),
        texts,
    ),
    st.builds(lambda text: ResponseError(f"model runner stopped {text}", 500), texts),
)

steps = st.one_of(
    well_formed_chunks(done=False).map(lambda c: Chunk(c, True)),
    well_formed_chunks(done=True).map(lambda c: Chunk(c, True)),
    malformed_chunks.map(lambda c: Chunk(c, False)),
    stream_errors.map(Raise),
)

complete_replies = st.builds(
    lambda body, final, close_fails: Reply(
        tuple(Chunk(c, True) for c in body + [final]), close_fails=close_fails
    ),
    st.lists(well_formed_chunks(done=False), max_size=4),
    well_formed_chunks(done=True),
    st.booleans(),
)
tool_call_replies = st.builds(  # shaped like a real server's: calls on a chunk before the final one
    lambda body, calls, final: Reply(
        tuple(
            Chunk(c, True)
            for c in [
                *body,
                {**body[-1], "message": {"role": "assistant", "content": "", "tool_calls": calls}},
                {**final, "done_reason": "stop"},
            ]
        )
    ),
    st.lists(well_formed_chunks(done=False), min_size=1, max_size=3),
    st.lists(tool_calls, min_size=1, max_size=3),
    well_formed_chunks(done=True),
)
hostile_replies = st.builds(
    lambda s, close_fails: Reply(tuple(s), close_fails=close_fails),
    st.lists(steps, max_size=6),
    st.booleans(),
)
refused_calls = stream_errors.map(lambda error: Reply(refusal=error))

# Mostly complete replies, many with tool calls so that runs go on for several turns, and
# hostile ones in between.
replies = st.sampled_from(
    [tool_call_replies] * 2 + [complete_replies] * 2 + [hostile_replies] * 2 + [refused_calls]
).flatmap(lambda kind: kind)
conversations = st.tuples(
    st.lists(replies, min_size=1, max_size=4), st.integers(min_value=1, max_value=4)
)

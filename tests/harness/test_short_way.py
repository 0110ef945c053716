"""Each assembler's short way for plain text chunks judges exactly as its every rule does.

The assemblers take a short way for the chunk they see most (a fragment of text and
nothing else), so that the loop costs a few times merely reading the stream
(``bench/assembly.py``). These tests feed the same generated streams to each assembler as
the loop does (``add``) and to one that checks every chunk by every rule
(``_checked_add``), and require the same turn: a chunk the short way lets through must be
one the rules let through, and fold the same. The streams are built around the short
way's shape, each chunk varied in one place (a type, a field, a value) so that the
boundary is where most of them land.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from labkit.harness.formats.anthropic import AnthropicAssembler
from labkit.harness.formats.assembly import ChunkAssembler
from labkit.harness.formats.ollama import OllamaAssembler
from labkit.harness.formats.openai import OpenAIAssembler


class CheckedOllama(OllamaAssembler):
    def add(self, chunk):
        self.chunks += 1
        return self._checked_add(chunk) if self.problem is None else ""


class CheckedOpenAI(OpenAIAssembler):
    add = ChunkAssembler.add


class CheckedAnthropic(AnthropicAssembler):
    add = ChunkAssembler.add


class Text(str):
    """A str subclass: JSON never makes one, but a chat might; the rules accept it."""


odd = st.sampled_from([None, 7, 1.5, True, [], {}, "", "abcd", Text("ab"), ["x"], {"a": 1}])
fragment = st.sampled_from(["abcd", "", " ", "é€", Text("xy")]) | odd


def varied(base: dict, values: st.SearchStrategy, inner: dict | None = None) -> st.SearchStrategy:
    """``base`` with one key set to a drawn value, or removed, or (for a key of ``inner``)
    its value varied the same way, one level down."""
    keys = st.sampled_from(sorted(base))
    changed = st.tuples(keys, values).map(lambda kv: {**base, kv[0]: kv[1]})
    removed = keys.map(lambda key: {k: v for k, v in base.items() if k != key})
    added = st.tuples(st.sampled_from(["error", "tool_calls", "thinking", "extra"]), values).map(
        lambda kv: {**base, kv[0]: kv[1]}
    )
    options = [changed, removed, added]
    for key, strategy in (inner or {}).items():
        options.append(strategy.map(lambda value, key=key: {**base, key: value}))
    return st.one_of(*options)


def streams(plain: dict, variant: st.SearchStrategy, end: list) -> st.SearchStrategy:
    """Plain text chunks around one varied chunk (or two), then maybe the reply's end: the
    varied chunk arrives while nothing has gone wrong yet, where the short way is taken."""
    plains = st.integers(0, 3).map(lambda n: [plain] * n)
    ends = st.sampled_from([[], end])
    return st.tuples(plains, st.lists(variant, min_size=1, max_size=2), plains, ends).map(
        lambda parts: parts[0] + parts[1] + parts[2] + parts[3]
    )


def same_turn(fast, checked, chunks) -> None:
    for chunk in chunks:
        assert fast.add(chunk) == checked.add(chunk), chunk
    assert fast.turn() == checked.turn()
    assert fast.problem == checked.problem


OLLAMA_TEXT = {"message": {"role": "assistant", "content": "ab"}, "done": False}
ollama_chunks = st.one_of(
    varied(
        OLLAMA_TEXT,
        odd,
        {"message": varied({"role": "assistant", "content": "ab"}, fragment)},
    ),
    odd,
)


@settings(max_examples=400, deadline=None)
@given(streams(OLLAMA_TEXT, ollama_chunks, [{**OLLAMA_TEXT, "done": True, "done_reason": "stop"}]))
def test_ollama_short_way_judges_as_every_rule_does(chunks):
    same_turn(OllamaAssembler(), CheckedOllama(), chunks)


OPENAI_CHOICE = {"index": 0, "delta": {"content": "ab"}, "finish_reason": None}
OPENAI_TEXT = {"id": "c", "choices": [OPENAI_CHOICE]}
openai_choices = varied(
    OPENAI_CHOICE,
    st.sampled_from([1, "0", False, "stop", "length"]) | odd,
    {"delta": varied({"content": "ab"}, fragment)},
)
openai_chunks = st.one_of(
    varied(
        OPENAI_TEXT,
        odd,
        {"choices": st.lists(openai_choices, min_size=1, max_size=2) | st.just([])},
    ),
    odd,
)


@settings(max_examples=400, deadline=None)
@given(
    streams(OPENAI_TEXT, openai_chunks, [{"choices": [{**OPENAI_CHOICE, "finish_reason": "stop"}]}])
)
def test_openai_short_way_judges_as_every_rule_does(chunks):
    same_turn(OpenAIAssembler(), CheckedOpenAI(), chunks)


START = {"type": "message_start", "message": {"id": "m"}}
TEXT_BLOCK = {"type": "content_block_start", "index": 0, "content_block": {"type": "text"}}
CALL_BLOCK = {
    "type": "content_block_start",
    "index": 1,
    "content_block": {"type": "tool_use", "id": "t1", "name": "run_tests", "input": {}},
}
ANTHROPIC_TEXT = {
    "type": "content_block_delta",
    "index": 0,
    "delta": {"type": "text_delta", "text": "ab"},
}
ANTHROPIC_END = [
    {"type": "content_block_stop", "index": 0},
    {"type": "content_block_stop", "index": 1},
    {"type": "message_delta", "delta": {"stop_reason": "end_turn"}},
    {"type": "message_stop"},
]
anthropic_events = st.one_of(
    varied(
        ANTHROPIC_TEXT,
        st.sampled_from([1, 2, "0", [0], True, "ping", "content_block_stop", 5]) | odd,
        {"delta": varied({"type": "text_delta", "text": "ab"}, fragment)},
    ),
    st.sampled_from([START, TEXT_BLOCK, CALL_BLOCK, *ANTHROPIC_END]),
    odd,
)


@settings(max_examples=400, deadline=None)
@given(streams(ANTHROPIC_TEXT, anthropic_events, ANTHROPIC_END))
def test_anthropic_short_way_judges_as_every_rule_does(events):
    same_turn(AnthropicAssembler(), CheckedAnthropic(), [START, TEXT_BLOCK, CALL_BLOCK, *events])

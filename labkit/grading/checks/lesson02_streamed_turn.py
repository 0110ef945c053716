"""Lesson 02's checks: a streamed turn's text assembled in linear time, and whether a
turn finished so that its tool calls may run."""

from __future__ import annotations

import ast
import random

from ...harness.sample import SOURCE_FILE
from ...models.chunks import call as _call
from ...models.chunks import chunk
from ..feedback import Answer, Case, Miss, changed_input, check_linear_time, run_cases
from ..isolated import unchanged
from .common import (
    DRAWN,
    TEXT_ALPHABET,
    hidden_cases,
    learner_answer,
    new_seed,
    random_text,
    recorded_chunks,
    typed,
    verdict_problem,
)

__all__ = ["check_assemble_content", "check_may_dispatch"]

#: Stream sizes (fragments) of the linear-time checks, 48x apart; per size the least time of
#: `repeats` distinct streams counts.
TIMING = {"sizes": [1_000, 48_000], "repeats": 2}


def check_assemble_content(assemble_content, *, hidden: bool = False) -> None:
    """``assemble_content(chunks)`` returns the assistant text of a stream, in linear time."""
    answer = learner_answer(assemble_content, "assemble_content")
    streams = [
        (
            "three text fragments",
            [_chunk("The "), _chunk("tests "), _chunk("pass."), _chunk(done=True)],
            "",
        ),
        (
            "thinking before the text",
            [
                _chunk(thinking="The user wants "),
                _chunk(thinking="a summary."),
                _chunk("Here is "),
                _chunk("the summary."),
                _chunk(done=True),
            ],
            "thinking is the model's scratch work: it is not part of the assistant's content",
        ),
        (
            "text on the final chunk",
            [_chunk("Almost"), _chunk(" done.", done=True)],
            "the final (done) chunk can carry text too",
        ),
        (
            "chunks whose message has no content",
            [
                _chunk(thinking="Reading first.", content=None),
                _chunk("Reading"),
                _chunk(tool_calls=[_call("read_file", path=SOURCE_FILE)], content=None),
                _chunk(content_none=True),
                _chunk(" the file."),
                _chunk(done=True),
            ],
            "a chunk's message may lack 'content' or hold None: skip it (message.get('content'))",
        ),
        (
            "a tool call and no text",
            [
                _chunk(thinking="I need the file."),
                _chunk(tool_calls=[_call("read_file", path=SOURCE_FILE)]),
                _chunk(done=True),
            ],
            "a turn that only calls a tool has empty content: ''",
        ),
        ("an empty stream", [], "no chunks, no text: ''"),
        (
            "the same fragment twice in a row",
            [_chunk("Ha"), _chunk("ha"), _chunk("ha"), _chunk("!"), _chunk(done=True)],
            "every fragment counts, even one equal to the one before it",
        ),
        (
            "text that starts and ends with white space",
            [_chunk("\n  def f():\n"), _chunk("      return 1"), _chunk("\n\n"), _chunk(done=True)],
            "keep the text exactly as it came, spaces and newlines included: no strip()",
        ),
        ("the recorded final summary (repair.json, turn 5)", recorded_chunks("repair", 5), ""),
    ]
    streams += hidden_cases("check_assemble_content") if hidden else []
    seed = new_seed()
    draw = random.Random(seed)
    for number in range(1, DRAWN + 1):
        streams.append((f"drawn case {number} (seed {seed})", _random_stream(draw, done=True), ""))
    cases = [
        Case(
            label,
            [chunks],
            _joined_content(chunks),
            shown=f"assemble_content(chunks), chunks: {describe_stream(chunks)}",
            hint=hint,
        )
        for label, chunks, hint in streams
    ]
    run_cases(
        answer,
        cases,
        _assembled_problem,
        what="assemble_content",
        error_hints={
            "KeyError": "not every chunk's message has 'content': use "
            "chunk['message'].get('content') and skip what is empty",
            "TypeError": "some chunks have content None: skip them before joining",
        },
    )
    _check_linear(answer)
    if adds_to_a_local(answer.source):
        print(LOCAL_PLUS_NOTE)


#: Said to an answer that passed while adding to a local variable with ``+=``.
LOCAL_PLUS_NOTE = (
    "Note: your `+=` on a local variable passed because CPython grows a string in place "
    "when that variable holds its only reference, which makes it linear here. That is "
    "CPython's shortcut, not Python's: other Pythons (PyPy), or a string kept in a dict or "
    "an attribute, copy the whole text at every +=. `''.join(parts)` is linear everywhere."
)


def adds_to_a_local(source: str) -> bool:
    """Whether the answer adds something other than a number to a local name with ``+=``."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return False
    return any(
        isinstance(node, ast.AugAssign)
        and isinstance(node.op, ast.Add)
        and isinstance(node.target, ast.Name)
        and not (isinstance(node.value, ast.Constant) and isinstance(node.value.value, int))
        for node in ast.walk(tree)
    )


def _joined_content(chunks) -> str:
    """The reference: every chunk's text, in order; thinking and missing text left out."""
    return "".join(chunk["message"].get("content") or "" for chunk in chunks)


LINEAR_REFERENCE = """
def assemble_content(chunks):
    return "".join(chunk["message"].get("content") or "" for chunk in chunks)
"""


def _check_linear(answer: Answer) -> None:
    """Fail when the answer's time grows much faster than a linear reference's as the stream
    grows. The streams are drawn afresh: text, thinking, tool calls and missing content mixed,
    each one different, so neither a cache nor a shortcut for one kind of fragment helps."""
    draw = random.Random(new_seed())
    inputs = {
        size: [[long_stream(draw, size)] for _ in range(TIMING["repeats"])]
        for size in TIMING["sizes"]
    }
    check_linear_time(
        answer,
        (LINEAR_REFERENCE, "assemble_content"),
        inputs,
        lambda arguments: _joined_content(arguments[0]),
        what="streams",
        unit="fragments",
        hint="collect the fragments in a list and join them once: `+=` on a string kept in a "
        "dict or an attribute (or a string rebuilt with +) copies the whole text at every "
        "fragment; CPython grows a string in place only when a local variable holds its only "
        "reference",
    )


def long_stream(draw: random.Random, fragments: int) -> list:
    """A stream of the linear-time check: ``fragments`` token-sized pieces, mostly text and
    thinking (so an answer quadratic in either is far over the limit), then a final chunk."""
    return _random_stream(draw, done=True, length=fragments, text=(6, 12), weights=(10, 6, 1, 1, 1))


def _assembled_problem(got, case, outcome):
    expected, chunks = case.expected, case.arguments[0]
    if not isinstance(got, str):
        return Miss(
            f"assemble_content should return text (a str), but returned {typed(got)}",
            hint="join the fragments once at the end: ''.join(parts)"
            if isinstance(got, list)
            else "return the joined text",
        )
    if not unchanged(outcome.arguments[0], chunks):
        return changed_input(
            "the chunks",
            outcome.arguments[0],
            chunks,
            ": only read them",
            hint="iterate over the chunks (for chunk in chunks) instead of taking them out",
            they=True,
        )
    if got == expected:
        return None
    thoughts = [c["message"].get("thinking") for c in chunks if c["message"].get("thinking")]
    if any(t in got and t not in expected for t in thoughts):
        return Miss(
            "the thinking text leaked into the content",
            hint="thinking is the model's scratch work, in message['thinking']: use only "
            "message['content']",
        )
    last = chunks[-1]["message"].get("content") if chunks else None
    if last and got == expected[: len(expected) - len(last)]:
        return Miss(
            "the text on the final (done) chunk is missing",
            hint="the final (done) chunk can carry text too: take every chunk's content",
        )
    return "the text differs from the assistant's content"


def check_may_dispatch(may_dispatch, *, hidden: bool = False) -> None:
    """``may_dispatch(chunks)`` is True only when the turn finished normally."""
    answer = learner_answer(may_dispatch, "may_dispatch")
    first = recorded_chunks("repair", 1)
    streams = [
        (
            "a complete tool-call turn (repair.json, turn 1)",
            first,
            "the done chunk arrived with done_reason 'stop': the tool call may run",
        ),
        (
            "the same turn with its done chunk missing",
            [c for c in first if not c["done"]],
            "the tool call arrived on a done:false chunk, but the stream ended without a done "
            "chunk: the turn is incomplete, so nothing may run",
        ),
        (
            "a turn cut by the output-length limit",
            [
                _chunk(thinking="I will read"),
                _chunk(tool_calls=[_call("read_file", path=SOURCE_FILE)]),
                _chunk(done=True, done_reason="length"),
            ],
            "done_reason 'length' means the server cut the reply: refuse it",
        ),
        (
            "a complete turn with text and no tool calls",
            [_chunk("All 4 tests pass."), _chunk(done=True)],
            "may_dispatch asks whether the turn finished normally, not whether it called a tool",
        ),
        (
            "a stream whose only chunk is the final one",
            [_chunk("Done.", done=True)],
            "the done chunk can be the first and only chunk",
        ),
        ("an empty stream", [], "no done chunk arrived, so the turn is not complete"),
        (
            "a done chunk that names no done_reason",
            [
                _chunk(tool_calls=[_call("run_tests")]),
                {key: value for key, value in _chunk(done=True).items() if key != "done_reason"},
            ],
            "only 'length' refuses a finished turn; a done chunk without a reason still "
            "finishes it",
        ),
        (
            "a complete turn whose text talks about length",
            [_chunk("The length limit was not reached."), _chunk(done=True)],
            "look at the done chunk's done_reason, not at the words of the text",
        ),
    ]
    streams += hidden_cases("check_may_dispatch") if hidden else []
    seed = new_seed()
    draw = random.Random(seed)
    for number in range(1, DRAWN // 2 + 1):  # pairs of equal length and opposite verdicts
        complete = _random_stream(draw, done=True)
        cut = (
            [*complete[:-1], _chunk(done=True, done_reason="length")]
            if draw.random() < 0.5
            else [*complete[:-1], _chunk("...")]
        )
        streams.append((f"drawn case {2 * number - 1} (seed {seed})", complete, ""))
        streams.append((f"drawn case {2 * number} (seed {seed})", cut, ""))
    cases = [
        Case(
            label,
            [chunks],
            _dispatchable(chunks),
            shown=f"may_dispatch(chunks), chunks: {describe_stream(chunks)}",
            hint=hint,
        )
        for label, chunks, hint in streams
    ]
    run_cases(
        answer,
        cases,
        verdict_problem,
        what="may_dispatch",
        error_hints={
            "KeyError": "look keys up with .get(): 'done_reason' is only on the done chunk",
            "IndexError": "a stream can be empty: chunks[-1] does not exist then",
        },
    )


def _dispatchable(chunks) -> bool:
    """The reference: a done chunk arrived, and it does not say the reply was cut."""
    final = [chunk for chunk in chunks if chunk.get("done") is True]
    return bool(final) and final[-1].get("done_reason") != "length"


# --- Hand-written chunks, and streams drawn afresh ------------------------------------------


def _chunk(content="", *, content_none=False, **fields) -> dict:
    """One chunk of an exercise's stream; ``content_none`` sends ``content: None``."""
    made = chunk(content, model="exercise", **fields)
    if content_none:
        made["message"]["content"] = None
    return made


STREAM_KINDS = ("text", "thinking", "call", "no content", "content None")


def _random_stream(
    draw: random.Random,
    *,
    done: bool,
    length: int | None = None,
    text: tuple = (0, 40),
    weights: tuple = (2, 1, 1, 1, 1),
) -> list:
    """A well-formed stream: thinking, text, tool calls and missing content, in any order;
    ``length`` chunks before the final one (a few if not given), ``text`` the range of a
    fragment's length, ``weights`` how often each of ``STREAM_KINDS`` comes."""
    # Three draws for the whole stream, not three per fragment: the linear-time check's
    # streams are tens of thousands of fragments long.
    length = draw.randrange(0, 7) if length is None else length
    kinds = draw.choices(STREAM_KINDS, weights, k=length)
    sizes = draw.choices(range(*text), k=length)
    letters = "".join(draw.choices(TEXT_ALPHABET, k=sum(sizes)))
    chunks, end = [], 0
    for kind, size in zip(kinds, sizes):
        fragment, end = letters[end : end + size], end + size
        if kind == "text":
            chunks.append(_chunk(fragment))
        elif kind == "thinking":
            chunks.append(_chunk(thinking=fragment or "hm"))
        elif kind == "call":
            chunks.append(_chunk(tool_calls=[_call("read_file", path=SOURCE_FILE)], content=None))
        else:
            chunks.append(
                _chunk(
                    content=None if kind == "no content" else "",
                    content_none=kind == "content None",
                )
            )
    if done:
        chunks.append(_chunk(random_text(draw, *text) if draw.random() < 0.3 else "", done=True))
    return chunks


def describe_stream(chunks) -> str:
    """A stream in words, chunk by chunk; runs of like fragments are counted, not quoted."""
    parts = [_describe_chunk(chunk) for chunk in chunks]
    if len(parts) > 8:
        runs = []
        for part in parts:
            kind = part.split(" ", 1)[0] if part.startswith(("thinking ", "text ")) else part
            if runs and runs[-1][0] == kind:
                runs[-1][1] += 1
            else:
                runs.append([kind, 1, part])
        parts = [
            part if count == 1 else f"{count:,} {kind} fragments" for kind, count, part in runs
        ]
    return "[" + ", ".join(parts) + "]" if parts else "[] (no chunks at all)"


def _describe_chunk(chunk) -> str:
    message = chunk["message"]
    words = []
    if message.get("thinking"):
        words.append(f"thinking {message['thinking']!r}")
    if "content" not in message:
        words.append("no content key")
    elif message["content"] is None:
        words.append("content None")
    elif message["content"]:
        words.append(f"text {message['content']!r}")
    for call in message.get("tool_calls") or []:
        arguments = ", ".join(f"{k}={v!r}" for k, v in call["function"]["arguments"].items())
        words.append(f"tool call {call['function']['name']}({arguments})")
    if chunk.get("done"):
        words.append(f"done ({chunk.get('done_reason')})")
    return " + ".join(words) or "empty"

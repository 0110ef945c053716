"""The streams exercise 6a is tried on: replies of OpenAI's two APIs written by hand, drawn at
random, made long for the linear-time check, and told in words.

Chat Completions: ``chat.completion.chunk`` dicts (``models.chunks`` builds them). The
Responses API: events carrying only the fields the exercise names (a real stream has more:
``sequence_number``, the ``*.done`` events, and a ``response.completed`` that repeats the
finished items), so that an answer must build each call from the events as they stream.
"""

from __future__ import annotations

import json
import random
import string

from ...models.chunks import openai_arguments, openai_call_start, openai_chunk
from .common import TOOL_NAMES, random_result, random_text

# --- Chat Completions ---------------------------------------------------------------------


def chunk(delta=None, finish=None) -> dict:
    return openai_chunk(delta, finish, model="exercise", chunk_id="chatcmpl-exercise")


def calls(*entries) -> dict:
    return chunk({"tool_calls": list(entries)})


def interleaved() -> list:
    return [
        chunk({"role": "assistant", "content": ""}),
        calls(openai_call_start(0, "call_a1", "read_file")),
        calls(openai_call_start(1, "call_b2", "read_file")),
        calls(openai_arguments(0, '{"path": "pa')),
        calls(openai_arguments(1, '{"path": "tests/te')),
        calls(openai_arguments(0, 'th_rules.py"}')),
        calls(openai_arguments(1, 'st_path_rules.py"}')),
        chunk({}, "tool_calls"),
    ]


def same_chunk() -> list:
    return [
        calls(
            openai_call_start(0, "call_c3", "replace_text"), openai_arguments(0, '{"old": "a", ')
        ),
        calls(openai_arguments(0, '"new": '), openai_arguments(0, '"b"}')),
        chunk({}, "tool_calls"),
    ]


def text_only() -> list:
    return [
        chunk({"role": "assistant", "content": ""}),
        chunk({"content": "All 4 tests "}),
        chunk({"content": "pass."}),
        chunk({}, "stop"),
    ]


def ended(chunks: list, reason: str | None, whole: bool = True) -> list:
    """A copy of ``chunks`` whose end is ``reason`` instead, after all its arguments or
    (``whole`` False) two fragments before their end."""
    kept = chunks[:-1] if whole else chunks[:-3]
    return [*kept, chunk({}, reason)]


def with_usage(chunks: list) -> list:
    return [
        *chunks,
        {
            "id": "chatcmpl-exercise",
            "object": "chat.completion.chunk",
            "choices": [],
            "usage": {"prompt_tokens": 600, "completion_tokens": 9},
        },
    ]


def eager_start() -> list:
    start = openai_call_start(0, "call_d4", "read_file")
    start["function"]["arguments"] = '{"pa'
    return [
        calls(start),
        calls(openai_arguments(0, 'th": "path_rules.py"}')),
        chunk({}, "tool_calls"),
    ]


def out_of_order() -> list:
    return [
        calls(openai_call_start(1, "call_f6", "run_tests")),
        calls(openai_call_start(0, "call_e5", "read_file")),
        calls(openai_arguments(1, "{}"), openai_arguments(0, '{"path": "x"}')),
        chunk({}, "tool_calls"),
    ]


# --- The Responses API --------------------------------------------------------------------

RESPONSE_ID = "resp_exercise"


def created() -> dict:
    return {"type": "response.created", "response": {"id": RESPONSE_ID, "status": "in_progress"}}


def completed() -> dict:
    return {"type": "response.completed", "response": {"id": RESPONSE_ID, "status": "completed"}}


def incomplete(reason: str) -> dict:
    response = {"id": RESPONSE_ID, "status": "incomplete", "incomplete_details": {"reason": reason}}
    return {"type": "response.incomplete", "response": response}


def failed() -> dict:
    error = {"code": "server_error", "message": "The server had an error."}
    response = {"id": RESPONSE_ID, "status": "failed", "error": error}
    return {"type": "response.failed", "response": response}


ERROR = {"type": "error", "code": "server_error", "message": "The server had an error."}


def call_added(index: int, item_id: str, call_id: str, name: str) -> dict:
    item = {"id": item_id, "type": "function_call", "call_id": call_id, "name": name,
            "arguments": ""}  # fmt: skip
    return {"type": "response.output_item.added", "output_index": index, "item": item}


def arguments_delta(index: int, item_id: str, piece: str) -> dict:
    return {"type": "response.function_call_arguments.delta", "item_id": item_id,
            "output_index": index, "delta": piece}  # fmt: skip


def message(index: int, item_id: str, pieces: list) -> list:
    """A message item with its text in ``pieces``."""
    item = {"id": item_id, "type": "message", "role": "assistant", "content": []}
    return [
        {"type": "response.output_item.added", "output_index": index, "item": item},
        *(
            {"type": "response.output_text.delta", "item_id": item_id, "output_index": index,
             "content_index": 0, "delta": piece}
            for piece in pieces
        ),
    ]  # fmt: skip


def responses_call(index, item_id, call_id, name, pieces) -> list:
    return [
        call_added(index, item_id, call_id, name),
        *(arguments_delta(index, item_id, piece) for piece in pieces),
    ]


def responses_text_then_call() -> list:
    return [
        created(),
        *message(0, "msg_t1", ["I will ", "read the ", "tests."]),
        *responses_call(1, "fc_t2", "call_T2x", "read_file",
                        ['{"path": "te', "sts/test_path", '_rules.py"}']),
        completed(),
    ]  # fmt: skip


def responses_interleaved(three: bool = False) -> list:
    """Two calls whose deltas interleave; or (``three``) three, around a text item."""
    a = responses_call(0, "fc_i1", "call_I1a", "read_file", ['{"path": "pa', 'th_rules.py"}'])
    b = responses_call(1, "fc_i2", "call_I2b", "replace_text", ['{"old": "x"', ', "new": "y"}'])
    if not three:
        return [created(), a[0], b[0], a[1], b[1], b[2], a[2], completed()]
    c = responses_call(3, "fc_i3", "call_I3c", "run_tests", ["{", "}"])
    text = message(2, "msg_i", ["Checking ", "both."])
    return [created(), a[0], b[0], c[0], *text[:2], c[1], a[1], b[1], *text[2:], a[2], c[2],
            b[2], completed()]  # fmt: skip


def responses_text_only() -> list:
    return [created(), *message(0, "msg_f1", ["All 4 tests ", "pass."]), completed()]


def responses_ended(events: list, ending: dict | None) -> list:
    """``events`` whose last event (``response.completed``) is ``ending`` instead (None: the
    stream just stops there)."""
    return [*events[:-1], *([ending] if ending else [])]


# --- Drawn and long streams, both APIs ----------------------------------------------------


def random_stream(draw: random.Random, clean: bool) -> tuple[str, list]:
    """``(api, stream)``: calls with random arguments cut at random places, interleaved at
    random, ending cleanly (``clean``), or else cut, refused or never ending."""
    api = draw.choice(["chat", "responses"])
    queues = []
    for index in range(draw.randrange(1, 4)):
        text = json.dumps(random_result(draw))
        cuts = sorted(draw.sample(range(1, len(text)), min(len(text) - 1, draw.randrange(0, 6))))
        pieces = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)])]
        call_id = "call_" + "".join(draw.choice("abcdefghijk0123456789") for _ in range(8))
        name = draw.choice(TOOL_NAMES)
        if api == "chat":
            queue = [openai_call_start(index, call_id, name)]
            queue += [openai_arguments(index, piece) for piece in pieces]
        else:
            queue = responses_call(index + 1, f"fc_r{index}", call_id, name, pieces)
        queues.append(queue)
    interleaved_entries = []
    while any(queues):
        waiting = [queue for queue in queues if queue]
        interleaved_entries.append(draw.choice(waiting).pop(0))
    if api == "responses":
        stream = [created()]
        if draw.random() < 0.3:
            stream += message(0, "msg_r", [random_text(draw) or "Let me look."])
        stream += interleaved_entries
        if clean:
            return api, [*stream, completed()]
        ending = draw.choice([incomplete("max_output_tokens"), incomplete("content_filter"),
                              failed(), ERROR, None])  # fmt: skip
        return api, [*stream, *([ending] if ending else [])]
    stream = [chunk({"role": "assistant", "content": ""})]
    if draw.random() < 0.3:
        stream.append(chunk({"content": random_text(draw) or "Let me look."}))
    while interleaved_entries:  # a chunk holds one entry, or two
        take = draw.choice([1, 1, 2])
        stream.append(calls(*interleaved_entries[:take]))
        del interleaved_entries[:take]
    reason = draw.choice(
        ["tool_calls", "tool_calls", "stop"] if clean else ["length", "content_filter", None]
    )
    if reason == "length" and draw.random() < 0.5 and len(stream) > 2:
        stream = stream[:-1]  # the cut came inside the arguments
    return api, [*stream, *([chunk({}, reason)] if reason else [])]


def long_stream(draw: random.Random, fragments: int, api: str) -> list:
    """One call whose arguments (a long random JSON string) come in ``fragments`` pieces of
    about 16 characters, cut at random places (escapes too), then a clean end."""
    text = json.dumps(
        {"t": "".join(draw.choices(string.ascii_letters + ' "\\/', k=fragments * 16))}
    )
    cuts = sorted(draw.sample(range(1, len(text)), fragments - 1))
    pieces = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)])]
    if api == "responses":
        return [created(), *responses_call(0, "fc_long", "call_long", "replace_text", pieces),
                completed()]  # fmt: skip
    return [
        calls(openai_call_start(0, "call_long", "replace_text")),
        *(calls(openai_arguments(0, piece)) for piece in pieces),
        chunk({}, "tool_calls"),
    ]


# --- In words -----------------------------------------------------------------------------


def describe(api: str, chunks: list) -> str:
    """A stream in words: text pieces, each call's start and argument fragments, the end."""
    words = describe_responses(chunks) if api == "responses" else describe_chat(chunks)
    return "[" + ", ".join(words) + "]" if words else "[] (no chunks at all)"


def describe_chat(chunks) -> list:
    words = []
    for item in chunks:
        if not item["choices"]:
            words.append("a usage chunk (no choices)")
        for choice in item["choices"]:
            delta = choice["delta"]
            if delta.get("content"):
                words.append(f"text {delta['content']!r}")
            for entry in delta.get("tool_calls") or []:
                part = entry["function"].get("arguments")
                if "id" in entry:
                    words.append(
                        f"call {entry['index']} starts: {entry['function']['name']} "
                        f"(id {entry['id']!r})" + (f" + {part!r}" if part else "")
                    )
                else:
                    words.append(f"call {entry['index']} gets {part!r}")
            if choice.get("finish_reason"):
                words.append(f"finish_reason {choice['finish_reason']!r}")
    return words


def describe_responses(events) -> list:
    words = []
    for event in events:
        kind = event["type"]
        if kind == "response.output_item.added":
            item = event["item"]
            if item["type"] == "function_call":
                words.append(f"item {item['id']!r} added: {item['name']} "
                             f"(call_id {item['call_id']!r})")  # fmt: skip
            else:
                words.append(f"item {item['id']!r} added: a {item['type']}")
        elif kind == "response.function_call_arguments.delta":
            words.append(f"{event['item_id']!r} gets {event['delta']!r}")
        elif kind == "response.output_text.delta":
            words.append(f"text {event['delta']!r}")
        elif kind == "response.incomplete":
            words.append(f"response.incomplete ({event['response']['incomplete_details']})")
        else:
            words.append(kind)
    return words

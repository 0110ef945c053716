"""Lesson 06's checks: OpenAI tool-call fragments assembled, and tool results shaped for each
provider.

The expected values come from the small references below, written from the APIs' wire
facts for these exercises; they import nothing of ``labkit.harness`` (not its ``formats``,
``openai_format``, ``anthropic_format``, ``turns``, ``loop`` or ``tools``), so a bug there
cannot become the right answer.
"""

from __future__ import annotations

import inspect
import json
import random
import string

from ...harness.sample import SAMPLE_DIR, SOURCE_FILE
from ...models.chunks import openai_arguments, openai_call_start, openai_chunk
from ..feedback import Case, check_linear_time, run_cases, show
from ..isolated import same
from .common import (
    DRAWN,
    TOOL_NAMES,
    content_problem,
    learner_answer,
    new_seed,
    random_result,
    random_text,
    recorded_chunks,
    tool_message_problem,
    typed,
)

__all__ = ["check_assemble_calls", "check_result_messages"]

CLEAN_FINISHES = ("tool_calls", "stop")
CALL_KEYS = ("id", "name", "arguments")
#: Stream sizes of 6a's linear-time check: half of 2a's, as each of these fragments costs
#: about twice as much to send and parse, and 16 characters of arguments each already set a
#: quadratic answer far apart (bench/linear_check.py).
CALLS_TIMING = {"sizes": [1_000, 24_000], "repeats": 2}


# --- Exercise 6a: OpenAI's tool-call fragments, assembled ---------------------------------


def _openai_calls(chunks):
    """The reference: None unless a choice finished with 'tool_calls' or 'stop'; else the
    calls in index order, each index's fragments joined, then parsed."""
    fragments, starts, finish = {}, {}, None
    for chunk in chunks:
        for choice in chunk["choices"]:
            for entry in choice["delta"].get("tool_calls") or []:
                index = entry["index"]
                if index not in fragments:
                    fragments[index] = []
                    starts[index] = (entry["id"], entry["function"]["name"])
                fragments[index].append(entry["function"].get("arguments") or "")
            finish = choice.get("finish_reason") or finish
    if finish not in ("tool_calls", "stop"):
        return None
    return [
        {
            "id": starts[index][0],
            "name": starts[index][1],
            "arguments": json.loads("".join(fragments[index])),
        }
        for index in sorted(fragments)
    ]


CALLS_REFERENCE = "import json\n\n" + inspect.getsource(_openai_calls)


def check_assemble_calls(assemble_openai_calls, *, hidden: bool = False) -> None:
    """``assemble_openai_calls(chunks)``: the calls of a cleanly finished OpenAI stream, or None."""
    answer = learner_answer(assemble_openai_calls, "assemble_openai_calls")
    read = recorded_chunks("repair_openai", 1)
    streams = [
        (
            "one read_file call (repair_openai.json, turn 1)",
            read,
            "the id and name come in the call's first entry; its arguments in the entries after",
        ),
        (
            "the replace_text call (turn 3): arguments cut inside strings and escapes",
            recorded_chunks("repair_openai", 3),
            "join the fragments first: a piece such as '\\\\' or ' Pure' means nothing alone",
        ),
        (
            "two calls whose fragments interleave",
            _interleaved(),
            "each fragment names its call's index: join the fragments of each index on its own",
        ),
        (
            "two fragments of one call in the same chunk",
            _same_chunk(),
            "one delta can hold several entries, even for the same index",
        ),
        (
            "a final answer: text, no tool calls, finish_reason 'stop'",
            _text_only(),
            "a clean finish with no calls gives an empty list",
        ),
        (
            "cut by the output-length limit after its JSON looked whole",
            _cut(read, whole=True),
            "finish_reason 'length' means the server cut the reply: return None, whatever it holds",
        ),
        (
            "cut by the output-length limit in the middle of the arguments",
            _cut(read, whole=False),
            "a cut reply's JSON may be incomplete: never parse it, return None",
        ),
        (
            "the stream ended before any finish_reason",
            read[:-1],
            "without a finish_reason the reply is incomplete: return None",
        ),
        (
            "a usage chunk after the finish (its choices list is empty)",
            _with_usage(read),
            "some servers send usage last, with no choices: it changes nothing",
        ),
        ("an empty stream", [], "nothing finished: return None"),
    ]
    if hidden:
        streams += [
            ("the first entry carries arguments too", _eager_start(), ""),
            (
                "a call whose start arrives before a lower index's",
                _out_of_order(),
                "the calls come back in index order",
            ),
        ]
    seed = new_seed()
    draw = random.Random(seed)
    for number in range(1, DRAWN + 1):  # every other one ends cleanly
        streams.append(
            (f"drawn case {number} (seed {seed})", _random_stream(draw, clean=number % 2 == 1), "")
        )
    cases = [
        Case(
            label,
            [chunks],
            _openai_calls(chunks),
            shown=f"assemble_openai_calls(chunks), chunks: {describe_openai(chunks)}",
            hint=hint,
        )
        for label, chunks, hint in streams
    ]
    run_cases(
        answer,
        cases,
        _calls_problem,
        what="assemble_openai_calls",
        error_hints={
            "JSONDecodeError": "json.loads was given text that is not one whole JSON object: parse "
            "only after a clean finish_reason arrived, and keep a list per index "
            "(fragments of different calls never join)",
            "KeyError": "only the first entry of a call has 'id' and 'function.name'; "
            "later entries "
            "carry only function.arguments (use .get), and a choice's finish_reason "
            "is None until the end",
            "IndexError": "choices can be an empty list (a usage chunk): loop over them",
        },
    )
    inputs = {
        size: [[long_stream(draw, size)] for _ in range(CALLS_TIMING["repeats"])]
        for size in CALLS_TIMING["sizes"]
    }
    check_linear_time(
        answer,
        (CALLS_REFERENCE, "_openai_calls"),
        inputs,
        lambda arguments: _openai_calls(arguments[0]),
        what="streams",
        unit="fragments",
        hint="keep a list of fragments per index and join each list once, at the "
        "finish: adding each fragment to a string copies the arguments so far "
        "every time",
    )


def _calls_problem(got, case, outcome) -> str | None:
    expected, chunks = case.expected, case.arguments[0]
    if not same(outcome.arguments[0], chunks):
        return (
            "your function changed the chunks it was given: keep the fragments in lists of "
            "your own, never add to the chunks' dicts"
        )
    finish = _finish(chunks)
    if expected is None:
        if got is None:
            return None
        if finish == "length":
            return (
                "finish_reason 'length' means the output-length limit cut the reply: return "
                "None, so none of its calls runs, even when their JSON looks whole"
            )
        return (
            "no finish_reason arrived, so the reply is incomplete: return None, so none of "
            "its calls runs"
        )
    if got is None:
        return f"the reply finished cleanly (finish_reason {finish!r}): return its calls, a list"
    if not isinstance(got, list):
        return f"return a list of calls, not {typed(got)}"
    if len(got) != len(expected):
        return (
            f"{len(got)} call(s) came back for the stream's {len(expected)}: each index is "
            "one call (join the fragments of an index, never across indexes)"
        )
    for number, (mine, theirs) in enumerate(zip(got, expected)):
        if not isinstance(mine, dict):
            return (
                f"call {number} is {typed(mine)}: each call is a dict with 'id', 'name' "
                "and 'arguments'"
            )
        if sorted(mine, key=str) != sorted(CALL_KEYS):
            return (
                f"call {number} has the keys {sorted(mine, key=str)}; a call has exactly "
                "'id', 'name' and 'arguments'"
            )
        if isinstance(mine["arguments"], str):
            return (
                f"call {number}'s arguments are still JSON text: parse them with json.loads "
                "once the reply has finished"
            )
        if not (same(mine["id"], theirs["id"]) and same(mine["name"], theirs["name"])):
            if [c.get("id") for c in got if isinstance(c, dict)] == [
                c["id"] for c in reversed(expected)
            ]:
                return "the calls come back in index order"
            return (
                f"call {number} should be {theirs['name']!r} with id {theirs['id']!r}: both "
                "come in the first entry of each index"
            )
        if not same(mine["arguments"], theirs["arguments"]):
            return (
                f"call {number}'s arguments are {show(mine['arguments'], 120)}, not "
                f"{show(theirs['arguments'], 120)}: join the fragments of its index only, "
                "in the order they came"
            )
    return None if same(got, expected) else "the calls differ from the stream's"


def _finish(chunks) -> str | None:
    return next(
        (
            choice.get("finish_reason")
            for chunk in reversed(chunks)
            for choice in chunk["choices"]
            if choice.get("finish_reason")
        ),
        None,
    )


def _chunk(delta=None, finish=None) -> dict:
    return openai_chunk(delta, finish, model="exercise", chunk_id="chatcmpl-exercise")


def _calls(*entries) -> dict:
    return _chunk({"tool_calls": list(entries)})


def _interleaved() -> list:
    return [
        _chunk({"role": "assistant", "content": ""}),
        _calls(openai_call_start(0, "call_a1", "read_file")),
        _calls(openai_call_start(1, "call_b2", "read_file")),
        _calls(openai_arguments(0, '{"path": "pa')),
        _calls(openai_arguments(1, '{"path": "tests/te')),
        _calls(openai_arguments(0, 'th_rules.py"}')),
        _calls(openai_arguments(1, 'st_path_rules.py"}')),
        _chunk({}, "tool_calls"),
    ]


def _same_chunk() -> list:
    return [
        _calls(
            openai_call_start(0, "call_c3", "replace_text"), openai_arguments(0, '{"old": "a", ')
        ),
        _calls(openai_arguments(0, '"new": '), openai_arguments(0, '"b"}')),
        _chunk({}, "tool_calls"),
    ]


def _text_only() -> list:
    return [
        _chunk({"role": "assistant", "content": ""}),
        _chunk({"content": "All 4 tests "}),
        _chunk({"content": "pass."}),
        _chunk({}, "stop"),
    ]


def _cut(chunks: list, whole: bool) -> list:
    """A copy of ``chunks`` cut by the length limit: after all its arguments, or two before."""
    kept = chunks[:-1] if whole else chunks[:-3]
    return [*kept, _chunk({}, "length")]


def _with_usage(chunks: list) -> list:
    return [
        *chunks,
        {
            "id": "chatcmpl-exercise",
            "object": "chat.completion.chunk",
            "choices": [],
            "usage": {"prompt_tokens": 600, "completion_tokens": 9},
        },
    ]


def _eager_start() -> list:
    start = openai_call_start(0, "call_d4", "read_file")
    start["function"]["arguments"] = '{"pa'
    return [
        _calls(start),
        _calls(openai_arguments(0, 'th": "path_rules.py"}')),
        _chunk({}, "tool_calls"),
    ]


def _out_of_order() -> list:
    return [
        _calls(openai_call_start(1, "call_f6", "run_tests")),
        _calls(openai_call_start(0, "call_e5", "read_file")),
        _calls(openai_arguments(1, "{}"), openai_arguments(0, '{"path": "x"}')),
        _chunk({}, "tool_calls"),
    ]


def _random_stream(draw: random.Random, clean: bool) -> list:
    """Calls with random arguments cut at random places, interleaved at random, ending cleanly
    (``clean``), or else cut by length (their JSON whole or not) or never ending."""
    queues = []
    for index in range(draw.randrange(1, 4)):
        text = json.dumps(random_result(draw))
        cuts = sorted(draw.sample(range(1, len(text)), min(len(text) - 1, draw.randrange(0, 6))))
        pieces = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)])]
        call_id = "call_" + "".join(draw.choice("abcdefghijk0123456789") for _ in range(8))
        queues.append(
            [openai_call_start(index, call_id, draw.choice(TOOL_NAMES))]
            + [openai_arguments(index, piece) for piece in pieces]
        )
    chunks = [_chunk({"role": "assistant", "content": ""})]
    if draw.random() < 0.3:
        chunks.append(_chunk({"content": random_text(draw) or "Let me look."}))
    while any(queues):  # a chunk holds one entry, or two (of one call or of two)
        entries = []
        for _ in range(draw.choice([1, 1, 2])):
            waiting = [queue for queue in queues if queue]
            if waiting:
                entries.append(draw.choice(waiting).pop(0))
        chunks.append(_calls(*entries))
    ending = draw.choice(
        ["tool_calls", "tool_calls", "stop"] if clean else ["length", "length", None]
    )
    if ending == "length" and draw.random() < 0.5 and len(chunks) > 2:
        chunks = chunks[:-1]  # the cut came inside the arguments
    if ending:
        chunks.append(_chunk({}, ending))
    return chunks


def long_stream(draw: random.Random, fragments: int) -> list:
    """One call whose arguments (a long random JSON string) come in ``fragments`` pieces of
    about 16 characters, cut at random places (escapes too), then a clean finish."""
    text = json.dumps(
        {"t": "".join(draw.choices(string.ascii_letters + ' "\\/', k=fragments * 16))}
    )
    cuts = sorted(draw.sample(range(1, len(text)), fragments - 1))
    return [
        _calls(openai_call_start(0, "call_long", "replace_text")),
        *(_calls(openai_arguments(0, text[a:b])) for a, b in zip([0, *cuts], [*cuts, len(text)])),
        _chunk({}, "tool_calls"),
    ]


def describe_openai(chunks) -> str:
    """An OpenAI stream in words: text pieces, each call's start and argument fragments, the end."""
    words = []
    for chunk in chunks:
        if not chunk["choices"]:
            words.append("a usage chunk (no choices)")
        for choice in chunk["choices"]:
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
    return "[" + ", ".join(words) + "]" if words else "[] (no chunks at all)"


# --- Exercise 6b: a turn's results, shaped for each provider --------------------------------


def _result_messages(provider: str, calls: list, results: list) -> list:
    """The reference: Ollama and OpenAI take one tool message per result (naming the tool, or
    the call's id); Anthropic one user message of tool_result blocks, none without calls."""
    if provider == "anthropic":
        blocks = [
            {"type": "tool_result", "tool_use_id": call["id"], "content": json.dumps(result)}
            for call, result in zip(calls, results)
        ]
        return [{"role": "user", "content": blocks}] if blocks else []
    key, field = ("tool_name", "name") if provider == "ollama" else ("tool_call_id", "id")
    return [
        {"role": "tool", key: call[field], "content": json.dumps(result)}
        for call, result in zip(calls, results)
    ]


PROVIDERS = ("ollama", "openai", "anthropic")
ID_PREFIXES = {"ollama": "call_", "openai": "call_", "anthropic": "toolu_01"}


def check_result_messages(result_messages, *, hidden: bool = False) -> None:
    """``result_messages(provider, calls, results)``: the messages that carry a turn's results."""
    answer = learner_answer(result_messages, "result_messages")
    source = (SAMPLE_DIR / SOURCE_FILE).read_text(encoding="utf-8")
    read = {"path": SOURCE_FILE, "content": source}
    tested = {"exit_code": 0, "timed_out": False, "output": "4 passed in 0.03s"}
    refused = {"error": "'old' does not occur in path_rules.py; read the file again"}
    sets = []
    for provider in PROVIDERS:
        sets += [
            (
                f"{provider}: one read_file result",
                provider,
                [_call(provider, 1, "read_file")],
                [read],
            ),
            (
                f"{provider}: two results, the second an error",
                provider,
                [_call(provider, 2, "run_tests"), _call(provider, 3, "replace_text")],
                [tested, refused],
            ),
        ]
    sets += [
        ("anthropic: no tool calls", "anthropic", [], []),
        ("openai: no tool calls", "openai", [], []),
    ]
    if hidden:
        sets += [
            (
                "anthropic: the same tool twice",
                "anthropic",
                [_call("anthropic", 4, "read_file"), _call("anthropic", 5, "read_file")],
                [read, {"path": "NOTES.md", "content": "Grüße ✓"}],
            )
        ]
    seed = new_seed()
    draw = random.Random(seed)
    for number in range(1, DRAWN + 1):  # each provider once with three or four calls
        provider = PROVIDERS[(number - 1) % len(PROVIDERS)]
        count = draw.randrange(3, 5) if number <= len(PROVIDERS) else draw.randrange(0, 3)
        calls = [
            _call(provider, draw.randrange(10**6), draw.choice(TOOL_NAMES), draw)
            for _ in range(count)
        ]
        sets.append(
            (
                f"drawn case {number} (seed {seed})",
                provider,
                calls,
                [random_result(draw) for _ in calls],
            )
        )
    cases = [
        Case(
            label,
            [provider, calls, results],
            _result_messages(provider, calls, results),
            shown=f"result_messages({provider!r}, {show(calls, 200)}, results)",
        )
        for label, provider, calls, results in sets
    ]
    run_cases(
        answer,
        cases,
        _messages_problem,
        what="result_messages",
        error_hints={"KeyError": "each call is {'id': ..., 'name': ..., 'arguments': {...}}"},
    )


def _call(provider: str, number: int, name: str, draw: random.Random | None = None) -> dict:
    draw = draw or random.Random(number)  # the fixed cases' ids are fixed too
    letters = "".join(draw.choice("ABCDEFGHabcdefgh0123456789") for _ in range(10))
    return {
        "id": ID_PREFIXES[provider] + letters,
        "name": name,
        "arguments": {"path": SOURCE_FILE} if name == "read_file" else {},
    }


def _messages_problem(got, case, outcome) -> str | None:
    provider, calls, results = case.arguments
    if not same(outcome.arguments[1], calls):
        return "your function changed the calls it was given: only read them"
    if not same(outcome.arguments[2], results):
        return "your function changed the results it was given: only read them"
    if not isinstance(got, list):
        return (
            f"return a list of messages (the loop extends the conversation with it), not "
            f"{typed(got)}"
        )
    if provider == "anthropic":
        return _anthropic_problem(got, calls, results)
    if len(got) != len(calls):
        return (
            f"{len(got)} message(s) for {len(calls)} result(s): {provider} takes one tool "
            "message per result"
        )
    for number, (message, call, result) in enumerate(zip(got, calls, results)):
        expected = {"role": "tool", "tool_name": call["name"], "content": json.dumps(result)}
        if provider == "ollama":
            problem = tool_message_problem(message, expected)
        else:
            problem = _openai_message_problem(message, call, result)
        if problem:
            return f"message {number}: {problem}"
    return None


def _openai_message_problem(message, call: dict, result) -> str | None:
    if not isinstance(message, dict):
        return f"a tool message is a dict, not {typed(message)}"
    if "tool_name" in message or "name" in message:
        return (
            "OpenAI's tool message names the call by its id, under 'tool_call_id', not the "
            "tool's name"
        )
    if sorted(message, key=str) != ["content", "role", "tool_call_id"]:
        return (
            f"the message has the keys {sorted(message, key=str)}; OpenAI's has exactly "
            "role, tool_call_id and content"
        )
    if not same(message["role"], "tool"):
        return f"role is {typed(message['role'])}; it must be exactly 'tool'"
    if not same(message["tool_call_id"], call["id"]):
        return (
            f"tool_call_id is {typed(message['tool_call_id'])}: it is the id of the call "
            f"the result answers, {call['id']!r}"
        )
    return content_problem(message["content"], result)


def _anthropic_problem(got: list, calls: list, results: list) -> str | None:
    if not calls:
        return (
            None
            if got == []
            else (
                "no calls, no results: return [] (the API refuses a user message with no content)"
            )
        )
    if len(got) != 1:
        return (
            f"{len(got)} messages for {len(calls)} result(s): Anthropic takes a turn's results "
            "together, one 'user' message whose content holds a tool_result block per call"
        )
    message = got[0]
    if not isinstance(message, dict):
        return f"the message is {typed(message)}, not a dict"
    if not same(message.get("role"), "user"):
        return (
            f"role is {typed(message.get('role'))}: Anthropic has no 'tool' role, the "
            "results go in a 'user' message"
        )
    if sorted(message, key=str) != ["content", "role"]:
        return (
            f"the message has the keys {sorted(message, key=str)}; it has exactly role and content"
        )
    blocks = message["content"]
    if not isinstance(blocks, list) or len(blocks) != len(calls):
        return (
            f"content is {typed(blocks)}: it is a list with one tool_result block per "
            f"call ({len(calls)} here)"
        )
    for number, (block, call, result) in enumerate(zip(blocks, calls, results)):
        where = f"block {number}"
        if not isinstance(block, dict):
            return f"{where} is {typed(block)}, not a dict"
        if "tool_call_id" in block:
            return (
                f"{where}: a tool_result block names its call with 'tool_use_id' "
                "(tool_call_id is OpenAI's word)"
            )
        if sorted(block, key=str) != ["content", "tool_use_id", "type"]:
            return (
                f"{where} has the keys {sorted(block, key=str)}; a tool_result block has "
                "exactly type, tool_use_id and content"
            )
        if not same(block["type"], "tool_result"):
            return f"{where}: type is {typed(block['type'])}; it must be exactly 'tool_result'"
        if not same(block["tool_use_id"], call["id"]):
            return (
                f"{where}: tool_use_id is {typed(block['tool_use_id'])}: it is the id of the "
                f"call the result answers, {call['id']!r}"
            )
        problem = content_problem(block["content"], result)
        if problem:
            return f"{where}: {problem}"
    return None

"""Lesson 06's checks: tool-call fragments of OpenAI's two APIs assembled (6a, here), and tool
results shaped for each of the five formats (6b, ``lesson06_results.py``).

The expected values come from the small references written here from the APIs' wire facts
for these exercises; they import nothing of ``labkit.harness`` (not its ``formats``, the
loop or the tools), so a bug there cannot become the right answer. The streams the cases
use are ``lesson06_streams.py``'s.
"""

from __future__ import annotations

import inspect
import json
import random

from ..feedback import Case, check_linear_time, run_cases, show
from ..isolated import same
from .common import DRAWN, hidden_cases, learner_answer, new_seed, recorded_chunks, typed
from .lesson06_results import check_results
from .lesson06_streams import (
    describe,
    ended,
    failed,
    incomplete,
    interleaved,
    long_stream,
    random_stream,
    responses_ended,
    responses_interleaved,
    responses_text_only,
    responses_text_then_call,
    same_chunk,
    text_only,
    with_usage,
)

__all__ = ["check_assemble_calls", "check_result_messages"]

CALL_KEYS = ("id", "name", "arguments")
CHAT_CLEAN = ("tool_calls", "stop")
RESPONSES_ENDS = ("response.completed", "response.incomplete", "response.failed", "error")
#: Stream sizes of 6a's linear-time check: half of 2a's, as each of these fragments costs
#: about twice as much to send and parse, and 16 characters of arguments each already set a
#: quadratic answer far apart (bench/linear_check.py).
CALLS_TIMING = {"sizes": [1_000, 24_000], "repeats": 2}


# --- Exercise 6a: OpenAI's tool-call fragments, assembled ---------------------------------


def _openai_calls(api, chunks):
    """The reference: None unless the reply finished cleanly (Chat Completions: a choice's
    finish_reason 'tool_calls' or 'stop'; Responses: response.completed); else the calls in
    the order they started, each call's fragments joined, then parsed."""
    starts, fragments, end = {}, {}, None
    for chunk in chunks:
        if api == "responses":
            kind = chunk["type"]
            if kind == "response.output_item.added" and chunk["item"]["type"] == "function_call":
                item = chunk["item"]
                starts[item["id"]] = (item["call_id"], item["name"])
                fragments[item["id"]] = []
            elif kind == "response.function_call_arguments.delta":
                fragments[chunk["item_id"]].append(chunk["delta"])
            elif kind in ("response.completed", "response.incomplete", "response.failed", "error"):
                end = kind
            continue
        for choice in chunk["choices"]:
            for entry in choice["delta"].get("tool_calls") or []:
                index = entry["index"]
                if index not in fragments:
                    fragments[index] = []
                    starts[index] = (entry["id"], entry["function"]["name"])
                fragments[index].append(entry["function"].get("arguments") or "")
            end = choice.get("finish_reason") or end
    if end not in ("tool_calls", "stop", "response.completed"):
        return None
    order = list(fragments) if api == "responses" else sorted(fragments)
    return [
        {"id": starts[key][0], "name": starts[key][1],
         "arguments": json.loads("".join(fragments[key]))}
        for key in order
    ]  # fmt: skip


CALLS_REFERENCE = "import json\n\n" + inspect.getsource(_openai_calls)


def _cases(hidden: bool) -> list:
    """``(label, api, chunks, hint)`` for every fixed case."""
    read = recorded_chunks("repair_openai", 1)
    read_responses = recorded_chunks("repair_responses", 1)
    mixed = responses_text_then_call()
    chat = [
        ("one read_file call (repair_openai.json, turn 1)", read,
         "the id and name come in the call's first entry; its arguments in the entries after"),
        ("the replace_text call (turn 3): arguments cut inside strings and escapes",
         recorded_chunks("repair_openai", 3),
         "join the fragments first: a piece such as '\\\\' or ' Pure' means nothing alone"),
        ("two calls whose fragments interleave", interleaved(),
         "each fragment names its call's index: join the fragments of each index on its own"),
        ("two fragments of one call in the same chunk", same_chunk(),
         "one delta can hold several entries, even for the same index"),
        ("a final answer: text, no tool calls, finish_reason 'stop'", text_only(),
         "a clean finish with no calls gives an empty list"),
        ("cut by the output-length limit after its JSON looked whole",
         ended(read, "length"),
         "finish_reason 'length' means the server cut the reply: return None, whatever it holds"),
        ("cut by the output-length limit in the middle of the arguments",
         ended(read, "length", whole=False),
         "a cut reply's JSON may be incomplete: never parse it, return None"),
        ("stopped by a content filter", ended(read, "content_filter"),
         "only 'tool_calls' and 'stop' end a reply whose calls may run"),
        ("the stream ended before any finish_reason", read[:-1],
         "without a finish_reason the reply is incomplete: return None"),
        ("a usage chunk after the finish (its choices list is empty)", with_usage(read),
         "some servers send usage last, with no choices: it changes nothing"),
        ("an empty stream", [], "nothing finished: return None"),
    ]  # fmt: skip
    responses = [
        ("Responses: one read_file call (repair_responses.json, turn 1)", read_responses,
         "a call starts with output_item.added (its call_id and name); its arguments come in "
         "function_call_arguments.delta events"),
        ("Responses: text first, then a call", mixed,
         "only function_call_arguments.delta events carry arguments: text deltas are not theirs"),
        ("Responses: two calls whose argument deltas interleave", responses_interleaved(),
         "each delta names its item (item_id): join the deltas of each item on its own"),
        ("Responses: a final answer, text only", responses_text_only(),
         "response.completed with no calls gives an empty list"),
        ("Responses: cut at max_output_tokens (response.incomplete)",
         responses_ended(mixed, incomplete("max_output_tokens")),
         "response.incomplete means the reply was cut: return None"),
        ("Responses: the stream ended before response.completed",
         responses_ended(mixed, None),
         "only response.completed ends a reply whose calls may run"),
        ("Responses: stopped by a content filter (response.incomplete)",
         responses_ended(mixed, incomplete("content_filter")),
         "response.incomplete, whatever its reason, means the reply did not finish"),
        ("Responses: response.failed", responses_ended(mixed, failed()),
         "a failed response runs nothing: return None"),
    ]  # fmt: skip
    cases = [(label, "chat", chunks, hint) for label, chunks, hint in chat]
    cases += [(label, "responses", chunks, hint) for label, chunks, hint in responses]
    cases += hidden_cases("check_assemble_calls", read=read, mixed=mixed) if hidden else []
    return cases


def check_assemble_calls(assemble_openai_calls, *, hidden: bool = False) -> None:
    """``assemble_openai_calls(api, chunks)``: the calls of a cleanly finished reply of OpenAI's
    Chat Completions (``api`` "chat") or Responses API ("responses"), or None."""
    answer = learner_answer(assemble_openai_calls, "assemble_openai_calls")
    cases = _cases(hidden)
    seed = new_seed()
    draw = random.Random(seed)
    for number in range(1, DRAWN + 1):  # every other one ends cleanly
        api, chunks = random_stream(draw, clean=number % 2 == 1)
        cases.append((f"drawn case {number} (seed {seed})", api, chunks, ""))
    run_cases(
        answer,
        [
            Case(
                label,
                [api, chunks],
                _openai_calls(api, chunks),
                shown=f"assemble_openai_calls({api!r}, chunks), chunks: {describe(api, chunks)}",
                hint=hint,
            )
            for label, api, chunks, hint in cases
        ],
        _calls_problem,
        what="assemble_openai_calls",
        error_hints={
            "JSONDecodeError": "json.loads was given text that is not one whole JSON object: parse "
            "only after a clean finish_reason (Responses: response.completed), and keep a list "
            "per index (Responses: per item_id; only function_call_arguments.delta events carry "
            "arguments): fragments of different calls never join",
            "KeyError": "only the first entry of a call has 'id' and 'function.name'; later "
            "entries carry only function.arguments (use .get), and a choice's finish_reason is "
            "None until the end; in the Responses API only output_item.added names a call, and "
            "events of other types have other fields",
            "IndexError": "choices can be an empty list (a usage chunk): loop over them",
        },
    )
    inputs = {
        size: [
            [api, long_stream(draw, size, api)]
            for api in ("chat", "responses")[: CALLS_TIMING["repeats"]]
        ]
        for size in CALLS_TIMING["sizes"]
    }
    check_linear_time(
        answer,
        (CALLS_REFERENCE, "_openai_calls"),
        inputs,
        lambda arguments: _openai_calls(*arguments),
        what="streams",
        unit="fragments",
        hint="keep a list of fragments per call and join each list once, at the end: adding "
        "each fragment to a string copies the arguments so far every time",
    )


def _ending(api: str, chunks: list) -> str | None:
    """How the reply ended, as its own words say (None: it never did)."""
    if api == "responses":
        return next((c["type"] for c in reversed(chunks) if c["type"] in RESPONSES_ENDS), None)
    return next(
        (
            choice.get("finish_reason")
            for chunk in reversed(chunks)
            for choice in chunk["choices"]
            if choice.get("finish_reason")
        ),
        None,
    )


def _refused(api: str, ending: str | None) -> str:
    """Why a reply that ended this way runs no call."""
    if ending is None:
        end = "response.completed" if api == "responses" else "a finish_reason"
        return (
            f"no {end} arrived, so the reply is incomplete: return None, so none of its calls runs"
        )
    if ending == "length":
        return (
            "finish_reason 'length' means the output-length limit cut the reply: return "
            "None, so none of its calls runs, even when their JSON looks whole"
        )
    if api == "chat":
        return (
            f"finish_reason {ending!r} is not 'tool_calls' or 'stop', the only clean ends: "
            "return None"
        )
    if ending == "response.incomplete":
        return (
            "response.incomplete means the reply did not finish (whatever its reason: the "
            "output-length limit, a content filter): return None"
        )
    return f"the reply ended with {ending!r}, not response.completed: return None"


def _calls_problem(got, case, outcome) -> str | None:
    expected, (api, chunks) = case.expected, case.arguments
    if not same(outcome.arguments[1], chunks):
        return (
            "your function changed the chunks it was given: keep the fragments in lists of "
            "your own, never add to the chunks' dicts"
        )
    ending = _ending(api, chunks)
    if expected is None:
        return None if got is None else _refused(api, ending)
    if got is None:
        return f"the reply finished cleanly ({ending!r}): return its calls, a list"
    if not isinstance(got, list):
        return f"return a list of calls, not {typed(got)}"
    if len(got) != len(expected):
        per = "item (item_id)" if api == "responses" else "index"
        return (
            f"{len(got)} call(s) came back for the stream's {len(expected)}: each {per} is one "
            f"call (join the fragments of an {per.split()[0]}, never across them)"
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
            return _naming_problem(api, got, number, theirs, expected)
        if not same(mine["arguments"], theirs["arguments"]):
            return (
                f"call {number}'s arguments are {show(mine['arguments'], 120)}, not "
                f"{show(theirs['arguments'], 120)}: join the fragments of its "
                f"{'item' if api == 'responses' else 'index'} only, in the order they came"
            )
    return None if same(got, expected) else "the calls differ from the stream's"


def _naming_problem(api, got, number, theirs, expected) -> str:
    ids = [c.get("id") for c in got if isinstance(c, dict)]
    if api == "chat" and ids == [c["id"] for c in reversed(expected)]:
        return "the calls come back in index order"
    if api == "responses" and str(got[number].get("id", "")).startswith("fc_"):
        return (
            f"call {number}'s id is the item's id; a call's id is its call_id "
            f"({theirs['id']!r}), which its result names"
        )
    where = (
        "the function_call item that output_item.added brings (call_id and name)"
        if api == "responses"
        else "the first entry of each index"
    )
    return (
        f"call {number} should be {theirs['name']!r} with id {theirs['id']!r}: both come in {where}"
    )


def check_result_messages(result_messages, *, hidden: bool = False) -> None:
    """``result_messages(provider, calls, results)``: the messages that carry a turn's results
    back, in each of the five formats (the cases and their explanations are
    ``lesson06_results.py``'s)."""
    check_results(result_messages, hidden=hidden)

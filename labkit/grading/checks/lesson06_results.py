"""Lesson 06's exercise 6b: a turn's tool results, shaped for each of the five wire formats.

The expected values come from :func:`_result_messages`, written here from the APIs' facts;
nothing of ``labkit.harness`` is imported (``lesson06_providers.py`` says why). Each
provider's shape has its own explanation of what is wrong with an answer, so that a
mistake in one format is named in that format's words.
"""

from __future__ import annotations

import json
import random

from ...harness.sample import SAMPLE_DIR, SOURCE_FILE
from ..feedback import Case, run_cases, show
from ..isolated import same
from .common import (
    DRAWN,
    TOOL_NAMES,
    content_problem,
    hidden_cases,
    learner_answer,
    new_seed,
    random_result,
    tool_message_problem,
    typed,
)


def _result_messages(provider: str, calls: list, results: list) -> list:
    """The reference: Ollama and OpenAI take one tool message per result (naming the tool, or
    the call's id); the Responses API one function_call_output item per result (its call_id);
    Anthropic one user message of tool_result blocks, Gemini one user content of
    functionResponse parts (the result as an object under 'output', the call's id when it
    had one); those two none without calls."""
    pairs = list(zip(calls, results))
    if provider == "anthropic":
        blocks = [
            {"type": "tool_result", "tool_use_id": call["id"], "content": json.dumps(result)}
            for call, result in pairs
        ]
        return [{"role": "user", "content": blocks}] if blocks else []
    if provider == "gemini":
        parts = [
            {
                "functionResponse": {
                    **({"id": call["id"]} if call["id"] else {}),
                    "name": call["name"],
                    "response": {"output": result},
                }
            }
            for call, result in pairs
        ]
        return [{"role": "user", "parts": parts}] if parts else []
    if provider == "openai-responses":
        return [
            {"type": "function_call_output", "call_id": call["id"], "output": json.dumps(result)}
            for call, result in pairs
        ]
    key, field = ("tool_name", "name") if provider == "ollama" else ("tool_call_id", "id")
    return [
        {"role": "tool", key: call[field], "content": json.dumps(result)} for call, result in pairs
    ]


PROVIDERS = ("ollama", "openai", "anthropic", "openai-responses", "gemini")
ID_PREFIXES = {
    "ollama": "call_",
    "openai": "call_",
    "anthropic": "toolu_01",
    "openai-responses": "call_",
    "gemini": "fc-",
}


def _call(provider: str, number: int, name: str, draw: random.Random | None = None) -> dict:
    draw = draw or random.Random(number)  # the fixed cases' ids are fixed too
    letters = "".join(draw.choice("ABCDEFGHabcdefgh0123456789") for _ in range(10))
    return {
        "id": ID_PREFIXES[provider] + letters,
        "name": name,
        "arguments": {"path": SOURCE_FILE} if name == "read_file" else {},
    }


def _unnamed(call: dict) -> dict:
    """A Gemini call as the API often gives it: without an id."""
    return {**call, "id": None}


def _sets(hidden: bool) -> list:
    source = (SAMPLE_DIR / SOURCE_FILE).read_text(encoding="utf-8")
    read = {"path": SOURCE_FILE, "content": source}
    tested = {"exit_code": 0, "timed_out": False, "output": "4 passed in 0.03s"}
    refused = {"error": "'old' does not occur in path_rules.py; read the file again"}
    sets = []
    for provider in PROVIDERS:
        first = _call(provider, 1, "read_file")
        sets += [
            (f"{provider}: one read_file result", provider,
             [_unnamed(first) if provider == "gemini" else first], [read]),
            (f"{provider}: two results, the second an error", provider,
             [_call(provider, 2, "run_tests"), _call(provider, 3, "replace_text")],
             [tested, refused]),
        ]  # fmt: skip
    sets += [
        ("anthropic: no tool calls", "anthropic", [], []),
        ("openai: no tool calls", "openai", [], []),
        ("gemini: no tool calls", "gemini", [], []),
    ]
    sets += hidden_cases("check_result_messages", read=read, tested=tested) if hidden else []
    return sets


def check_results(result_messages, *, hidden: bool = False) -> None:
    """``result_messages(provider, calls, results)``: the messages that carry a turn's results
    (``lesson06_providers.check_result_messages`` is this check, under its course name)."""
    answer = learner_answer(result_messages, "result_messages")
    sets = _sets(hidden)
    seed = new_seed()
    draw = random.Random(seed)
    for number in range(1, DRAWN + 1):  # the first five: each provider with three or four calls
        provider = PROVIDERS[(number - 1) % len(PROVIDERS)]
        count = draw.randrange(3, 5) if number <= len(PROVIDERS) else draw.randrange(0, 3)
        calls = [
            _call(provider, draw.randrange(10**6), draw.choice(TOOL_NAMES), draw)
            for _ in range(count)
        ]
        if provider == "gemini":
            calls = [call if draw.random() < 0.5 else _unnamed(call) for call in calls]
        results = [random_result(draw) for _ in calls]
        sets.append((f"drawn case {number} (seed {seed})", provider, calls, results))
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
    if provider == "gemini":
        return _gemini_problem(got, calls, results)
    if len(got) != len(calls):
        one = "function_call_output item" if provider == "openai-responses" else "tool message"
        return (
            f"{len(got)} message(s) for {len(calls)} result(s): {provider} takes one {one} "
            "per result"
        )
    for number, (message, call, result) in enumerate(zip(got, calls, results)):
        if provider == "ollama":
            expected = {"role": "tool", "tool_name": call["name"], "content": json.dumps(result)}
            problem = tool_message_problem(message, expected)
        elif provider == "openai":
            problem = _openai_message_problem(message, call, result)
        else:
            problem = _responses_item_problem(message, call, result)
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


def _responses_item_problem(item, call: dict, result) -> str | None:
    if not isinstance(item, dict):
        return f"a result item is a dict, not {typed(item)}"
    if "role" in item:
        return (
            "the Responses API's result is an item with no role: "
            "{'type': 'function_call_output', 'call_id': ..., 'output': ...}"
        )
    if "tool_call_id" in item:
        return "the item names its call with 'call_id' (tool_call_id is Chat Completions' word)"
    if sorted(item, key=str) != ["call_id", "output", "type"]:
        return (
            f"the item has the keys {sorted(item, key=str)}; a function_call_output item has "
            "exactly type, call_id and output"
        )
    if not same(item["type"], "function_call_output"):
        return f"type is {typed(item['type'])}; it must be exactly 'function_call_output'"
    if not same(item["call_id"], call["id"]):
        return (
            f"call_id is {typed(item['call_id'])}: it is the call_id of the call the result "
            f"answers, {call['id']!r}"
        )
    return content_problem(item["output"], result)


def _anthropic_problem(got: list, calls: list, results: list) -> str | None:
    if not calls:
        if got == []:
            return None
        return "no calls, no results: return [] (the API refuses a user message with no content)"
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


def _gemini_problem(got: list, calls: list, results: list) -> str | None:
    if not calls:
        return None if got == [] else "no calls, no results: return [] (no empty user content)"
    if len(got) != 1:
        return (
            f"{len(got)} messages for {len(calls)} result(s): Gemini takes a turn's results "
            "together, one 'user' content whose parts hold a functionResponse per call"
        )
    content = got[0]
    if not isinstance(content, dict):
        return f"the content is {typed(content)}, not a dict"
    if not same(content.get("role"), "user"):
        return (
            f"role is {typed(content.get('role'))}: Gemini's contents are 'user' or 'model' "
            "only, and the results go in a 'user' one"
        )
    if "content" in content:
        return "a Gemini content holds 'parts', not 'content'"
    if sorted(content, key=str) != ["parts", "role"]:
        return f"the content has the keys {sorted(content, key=str)}; it has exactly role and parts"
    parts = content["parts"]
    if not isinstance(parts, list) or len(parts) != len(calls):
        return (
            f"parts is {typed(parts)}: a list with one functionResponse part per call "
            f"({len(calls)} here)"
        )
    for number, (part, call, result) in enumerate(zip(parts, calls, results)):
        problem = _function_response_problem(part, call, result)
        if problem:
            return f"part {number}: {problem}"
    return None


def _function_response_problem(part, call: dict, result) -> str | None:
    if not isinstance(part, dict) or sorted(part, key=str) != ["functionResponse"]:
        return f"a part is {{'functionResponse': {{...}}}} and nothing else, not {typed(part)}"
    answer = part["functionResponse"]
    if not isinstance(answer, dict):
        return f"functionResponse is {typed(answer)}, not a dict"
    keys = ["id", "name", "response"] if call["id"] else ["name", "response"]
    if sorted(answer, key=str) != keys:
        if call["id"] and "id" not in answer:
            return f"the call had an id ({call['id']!r}): the functionResponse repeats it as 'id'"
        if not call["id"] and "id" in answer:
            return "the call had no id: leave 'id' out (None is not an id)"
        return f"functionResponse has the keys {sorted(answer, key=str)}; it has exactly {keys}"
    if call["id"] and not same(answer["id"], call["id"]):
        return f"id is {typed(answer['id'])}: it is the id of the call, {call['id']!r}"
    if not same(answer["name"], call["name"]):
        return f"name is {typed(answer['name'])}: it names the function called, {call['name']!r}"
    response = answer["response"]
    if isinstance(response, str):
        return (
            "response is JSON text: Gemini takes the result as a JSON object, "
            "{'output': result}, not json.dumps(result)"
        )
    if same(response, result):
        return (
            "response is the result itself: put it under 'output', {'output': result} (Gemini "
            "reads a response's 'output' and 'error' keys, so a result's own would be misread)"
        )
    if not same(response, {"output": result}):
        return f"response is {show(response, 120)}, not {{'output': result}}"
    return None

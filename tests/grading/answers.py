"""Answers to the exercises, right and wrong, as the source a learner would type.

Each entry is keyed by the check that grades it. ``$name`` stands for the name the
notebook's test cell passes to the check (``make_tool_message``...; it is replaced as
plain text, so ``$`` elsewhere stays as it is), so the same
source can replace an answer cell in a notebook or be run here directly. Every wrong
answer is a plausible mistake, and ``names`` is a phrase the feedback must contain:
the test cell has to fail *and* say what the mistake is. ``hint``, when given, is a phrase
the feedback's hint line must contain: the hint is about the mistake found, not about
another rule the case also tests.

Every rule a lesson states for an exercise has a wrong answer here that breaks that rule
alone (the mistake names the rule), so a check that stops testing a rule fails a test.
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class Answer:
    mistake: str  # what is wrong with it, in a few words
    source: str
    names: str  # a phrase the feedback must contain
    hint: str = ""  # a phrase the feedback's hint line must contain
    hidden: bool = False  # only the hidden cases (nbgrader's hidden tests) catch it

    def code(self, name: str) -> str:
        return self.source.replace("$name", name)


#: The name each check's answer has in the course's notebooks.
ANSWER_NAMES = {
    "check_tool_message": "make_tool_message",
    "check_assemble_content": "assemble_content",
    "check_may_dispatch": "may_dispatch",
    "check_append_results": "append_tool_results",
    "check_repair_verdict": "repair_succeeded",
    "check_bounded_prediction": "bounded_prediction",
    "check_stop_predictions": "stop_predictions",
    "check_policy": "verdict",
    "check_gate_stops": "stopped_calls",
    "check_head_and_tail": "head_and_tail",
    "check_compaction": "compact_conversation",
    "check_assemble_calls": "assemble_openai_calls",
    "check_result_messages": "result_messages",
    "check_mcp_to_tool_schema": "mcp_to_tool_schema",
    "check_hook_decision": "hook_decision",
    "check_layers": "stopped_by",
    "check_rank_chunks": "rank_chunks",
    "check_references_to_result": "references_to_result",
}

#: What the answer cells of lessons 07 and 08 give above the learner's code (kept in the
#: student edition), so that a whole answer cell can be written from the answers below.
POLICY_GIVEN = """
SHELLS = ("sh", "bash")
SEPARATORS = ";&|()`\\n"
SPECIAL = "$`<>*?[{~'\\"\\\\"
"""
CUT_GIVEN = """
import re
MARKER = "\\n[labkit: {count} characters cut]\\n"
OLD_MARKER = re.compile(r"\\n\\[labkit: \\d+ (?:characters|bytes) cut\\]\\n")
"""
COMPACT_GIVEN = """
NOTE = ('{"note": "compacted: an old tool result was dropped to keep the conversation in '
        'budget; call the tool again if you need it"}')
def size(messages):
    return sum(len(message.get("content") or "") for message in messages)
"""

RIGHT = {
    "check_tool_message": """
import json
def $name(name, result):
    return {"role": "tool", "tool_name": name, "content": json.dumps(result, ensure_ascii=False)}
""",
    "check_assemble_content": """
def $name(chunks):
    parts = []
    for chunk in chunks:
        text = chunk["message"].get("content")
        if text:
            parts.append(text)
    return "".join(parts)
""",
    "check_may_dispatch": """
def $name(chunks):
    final = [c for c in chunks if c.get("done")]
    return bool(final) and final[-1].get("done_reason") != "length"
""",
    "check_append_results": """
import json
def $name(messages, tool_calls, tools):
    for call in tool_calls:
        name, arguments = call["function"]["name"], call["function"]["arguments"]
        try:
            result = tools.invoke(name, arguments)
        except (ValueError, TypeError, OSError) as exc:
            result = {"error": str(exc)}
        messages.append({"role": "tool", "tool_name": name, "content": json.dumps(result)})
""",
    "check_repair_verdict": """
def $name(after, test_hash_before, test_hash_after):
    if test_hash_after != test_hash_before:
        return False  # the tests were edited: a green run proves nothing
    if after.exit_code != 0:
        return False
    return after.failed == 0 and after.passed >= 1
""",
    "check_bounded_prediction": """
def $name():
    guess = dict(model_requests=3, tool_calls=3)
    guess["stop_reason"] = "max_turns"
    guess["final_exit_code"] = 0
    return guess
""",
    "check_stop_predictions": """
INCOMPLETE = "incomplete_model_turn"
def $name():
    return dict(call_after_done="malformed_model_turn", answer_cut=INCOMPLETE,
                unknown_tool_last_turn="max_turns", server_fails_later="model_error")
""",
    "check_assemble_calls": """
import json
def $name(api, chunks):
    started = {}
    parts = {}
    ended = None
    for chunk in chunks:
        if api == "chat":
            for choice in chunk.get("choices", []):
                for entry in choice["delta"].get("tool_calls") or ():
                    function = entry.get("function", {})
                    if entry["index"] not in started:
                        started[entry["index"]] = (entry["id"], function["name"])
                    parts.setdefault(entry["index"], []).append(function.get("arguments") or "")
                if choice.get("finish_reason") is not None:
                    ended = choice["finish_reason"]
            continue
        kind = chunk["type"]
        if kind == "response.output_item.added" and chunk["item"]["type"] == "function_call":
            started[chunk["item"]["id"]] = (chunk["item"]["call_id"], chunk["item"]["name"])
            parts[chunk["item"]["id"]] = []
        elif kind == "response.function_call_arguments.delta":
            parts[chunk["item_id"]].append(chunk["delta"])
        elif kind in ("response.completed", "response.incomplete", "response.failed", "error"):
            ended = kind
    if ended not in (("tool_calls", "stop") if api == "chat" else ("response.completed",)):
        return None
    calls = []
    for key in (sorted(parts) if api == "chat" else parts):
        call_id, name = started[key]
        calls.append({"id": call_id, "name": name, "arguments": json.loads("".join(parts[key]))})
    return calls
""",
    "check_result_messages": """
import json
def $name(provider, calls, results):
    pairs = list(zip(calls, results))
    if provider == "anthropic":
        if not pairs:
            return []
        return [{"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": call["id"], "content": json.dumps(result)}
            for call, result in pairs]}]
    if provider == "gemini":
        if not pairs:
            return []
        parts = []
        for call, result in pairs:
            named = {"id": call["id"]} if call["id"] is not None else {}
            parts.append({"functionResponse": {**named, "name": call["name"],
                                               "response": {"output": result}}})
        return [{"role": "user", "parts": parts}]
    messages = []
    for call, result in pairs:
        if provider == "openai-responses":
            messages.append({"type": "function_call_output", "call_id": call["id"],
                             "output": json.dumps(result)})
            continue
        message = {"role": "tool", "content": json.dumps(result)}
        if provider == "openai":
            message["tool_call_id"] = call["id"]
        else:
            message["tool_name"] = call["name"]
        messages.append(message)
    return messages
""",
}

#: A correct assemble_openai_calls, for the wrong answers below to break one rule of.
_CALLS = """
import json
ENDS = ("response.completed", "response.incomplete", "response.failed", "error")
def $name(api, chunks):
    calls, finish = {}, None
    for chunk in chunks:
        if api == "responses":
            item = chunk.get("item") or {}
            if chunk["type"] == "response.output_item.added" and item["type"] == "function_call":
                calls[item["id"]] = {"id": item["call_id"], "name": item["name"], "parts": []}
            elif chunk["type"] == "response.function_call_arguments.delta":
                calls[chunk["item_id"]]["parts"].append(chunk["delta"])
            elif chunk["type"] in ENDS:
                finish = chunk["type"]
            continue
        for choice in chunk["choices"]:
            for entry in choice["delta"].get("tool_calls") or []:
                if entry["index"] not in calls:
                    calls[entry["index"]] = {"id": entry["id"], "name": entry["function"]["name"],
                                             "parts": []}
                calls[entry["index"]]["parts"].append(entry["function"].get("arguments") or "")
            finish = choice.get("finish_reason") or finish
    if finish not in ("tool_calls", "stop", "response.completed"):
        return None
    order = list(calls) if api == "responses" else sorted(calls)
    return [{"id": c["id"], "name": c["name"], "arguments": json.loads("".join(c["parts"]))}
            for c in [calls[key] for key in order]]
"""
#: A correct result_messages, for the same purpose.
_RESULTS = """
import json
def $name(provider, calls, results):
    if provider == "anthropic":
        return [{"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": c["id"], "content": json.dumps(r)}
            for c, r in zip(calls, results)]}] if calls else []
    if provider == "gemini":
        return [{"role": "user", "parts": [
            {"functionResponse": {**({"id": c["id"]} if c["id"] else {}), "name": c["name"],
                                  "response": {"output": r}}}
            for c, r in zip(calls, results)]}] if calls else []
    if provider == "openai-responses":
        return [{"type": "function_call_output", "call_id": c["id"], "output": json.dumps(r)}
                for c, r in zip(calls, results)]
    key = "tool_call_id" if provider == "openai" else "tool_name"
    return [{"role": "tool", key: c["id" if provider == "openai" else "name"],
             "content": json.dumps(r)} for c, r in zip(calls, results)]
"""


_CHAT_APPEND = 'calls[entry["index"]]["parts"].append(entry["function"].get("arguments") or "")'
_RESPONSES_APPEND = 'calls[chunk["item_id"]]["parts"].append(chunk["delta"])'


def _changed(source: str, old: str, new: str) -> str:
    """``source`` with one piece replaced: a right answer turned into a plausible wrong one."""
    assert old in source, old
    return source.replace(old, new)


WRONG = {
    "check_tool_message": [
        Answer(
            "empties the result after dumping it",
            """
import json
def $name(name, result):
    message = {"role": "tool", "tool_name": name, "content": json.dumps(result)}
    result.clear()
    return message
""",
            "changed the result it was given",
        ),
        Answer(
            "a tuple instead of a dict",
            """
import json
def $name(name, result):
    return ("tool", name, json.dumps(result))
""",
            "(a tuple)",
            hint="Ollama's tool message is exactly",
        ),
        Answer(
            "str(result) instead of json.dumps",
            """
def $name(name, result):
    return {"role": "tool", "tool_name": name, "content": str(result)}
""",
            "json.dumps(result)",
        ),
        Answer(
            "the result dict itself as content",
            """
def $name(name, result):
    return {"role": "tool", "tool_name": name, "content": result}
""",
            "the result object itself",
        ),
        Answer(
            "'name' instead of 'tool_name'",
            """
import json
def $name(name, result):
    return {"role": "tool", "name": name, "content": json.dumps(result)}
""",
            "'tool_name'",
        ),
        Answer(
            "role 'function'",
            """
import json
def $name(name, result):
    return {"role": "function", "tool_name": name, "content": json.dumps(result)}
""",
            "exactly 'tool'",
        ),
        Answer(
            "quotes swapped by hand",
            """
def $name(name, result):
    return {"role": "tool", "tool_name": name, "content": str(result).replace("'", '"')}
""",
            "not valid JSON",
        ),
        # lesson 01's rules, each broken alone: the role, the name's key, the content as JSON
        # text of the result (not of something else), and the message's shape
        Answer(
            "json.dumps applied twice",
            """
import json
def $name(name, result):
    return {"role": "tool", "tool_name": name, "content": json.dumps(json.dumps(result))}
""",
            "was json.dumps applied twice?",
        ),
        Answer(
            "the result wrapped in another object",
            """
import json
def $name(name, result):
    return {"role": "tool", "tool_name": name, "content": json.dumps({"result": result})}
""",
            "differs:  at ['content'] (as JSON)",
        ),
        Answer(
            "a key Ollama's tool message does not have",
            """
import json
def $name(name, result):
    return {"role": "tool", "tool_name": name, "tool_call_id": name,
            "content": json.dumps(result)}
""",
            "unexpected key(s) ['tool_call_id']",
            hint="Ollama's tool message is exactly",
        ),
    ],
    "check_assemble_content": [
        Answer(
            "quadratic: the text kept in a dict and rebuilt with + per fragment",
            """
def $name(chunks):
    turn = {"content": ""}
    for chunk in chunks:
        turn["content"] = turn["content"] + (chunk["message"].get("content") or "")
    return turn["content"]
""",
            "grows faster than the input",
        ),
        Answer(
            "quadratic only in the thinking it also keeps",
            """
def $name(chunks):
    turn = {"content": [], "thinking": ""}
    for chunk in chunks:
        message = chunk["message"]
        if message.get("content"):
            turn["content"].append(message["content"])
        if message.get("thinking"):
            turn["thinking"] = turn["thinking"] + message["thinking"]
    return "".join(turn["content"])
""",
            "grows faster than the input",
        ),
        Answer(
            "quadratic, with each stream's answer cached",
            """
_cache = {}
def $name(chunks):
    key = tuple(c["message"].get("content") or "" for c in chunks)
    if key not in _cache:
        turn = {"content": ""}
        for text in key:
            turn["content"] = turn["content"] + text
        _cache[key] = turn["content"]
    return _cache[key]
""",
            "grows faster than the input",
        ),
        Answer(
            "strips the white space at the ends",
            """
def $name(chunks):
    return "".join(c["message"].get("content") or "" for c in chunks).strip()
""",
            "no strip()",
        ),
        Answer(
            "pops the chunks it reads",
            """
def $name(chunks):
    parts = []
    while chunks:
        parts.append(chunks.pop(0)["message"].get("content") or "")
    return "".join(parts)
""",
            "changed the chunks",
        ),
        Answer(
            "thinking leaks into the content",
            """
def $name(chunks):
    message = [c["message"] for c in chunks]
    return "".join((m.get("thinking") or "") + (m.get("content") or "") for m in message)
""",
            "thinking text leaked",
        ),
        Answer(
            "the final chunk's text is dropped",
            """
def $name(chunks):
    return "".join(c["message"].get("content") or "" for c in chunks if not c["done"])
""",
            "final (done) chunk is missing",
        ),
        Answer(
            "assumes every message has content",
            """
def $name(chunks):
    return "".join(c["message"]["content"] for c in chunks)
""",
            "KeyError",
        ),
        Answer(
            "returns the list of fragments",
            """
def $name(chunks):
    return [c["message"].get("content") for c in chunks if c["message"].get("content")]
""",
            "should return text",
            hint="''.join(parts)",
        ),
        # lesson 02's rules for 2a, each broken alone: content only, in order, every fragment,
        # a chunk without content (or with None) skipped, and linear work (join once)
        Answer(
            "+= on a string kept in a dict",
            """
def $name(chunks):
    turn = {"content": ""}
    for chunk in chunks:
        turn["content"] += chunk["message"].get("content") or ""
    return turn["content"]
""",
            "grows faster than the input",
            hint="`+=` on a string kept in a dict or an attribute",
        ),
        Answer(
            "+= on an attribute",
            """
class _Turn:
    pass
def $name(chunks):
    turn = _Turn()
    turn.text = ""
    for chunk in chunks:
        turn.text += chunk["message"].get("content") or ""
    return turn.text
""",
            "grows faster than the input",
            hint="`+=` on a string kept in a dict or an attribute",
        ),
        Answer(
            "the fragments in reverse order",
            """
def $name(chunks):
    return "".join(reversed([c["message"].get("content") or "" for c in chunks]))
""",
            "the text differs from the assistant's content",
        ),
        Answer(
            "drops a fragment equal to the one before it",
            """
def $name(chunks):
    parts = []
    for chunk in chunks:
        text = chunk["message"].get("content")
        if text and (not parts or parts[-1] != text):
            parts.append(text)
    return "".join(parts)
""",
            "every fragment counts",
        ),
        Answer(
            "content None is joined as it is",
            """
def $name(chunks):
    return "".join(c["message"].get("content", "") for c in chunks)
""",
            "TypeError",
            hint="some chunks have content None",
        ),
    ],
    "check_may_dispatch": [
        Answer(
            "a table of the visible cases, by len(chunks)",
            """
def $name(chunks):
    return {24: True, 23: False, 3: False, 2: True, 1: True, 0: False}.get(len(chunks), True)
""",
            "drawn case",
        ),
        Answer(
            "returns 1 and 0",
            """
def $name(chunks):
    return int(any(c.get("done") and c.get("done_reason") != "length" for c in chunks))
""",
            "(an int)",
        ),
        Answer(
            "dispatches as soon as a tool call arrives",
            """
def $name(chunks):
    return any(c["message"].get("tool_calls") for c in chunks)
""",
            "ended without a done chunk",
        ),
        Answer(
            "ignores done_reason 'length'",
            """
def $name(chunks):
    return any(c.get("done") for c in chunks)
""",
            "done_reason 'length'",
        ),
        Answer(
            "looks only at the last chunk",
            """
def $name(chunks):
    return chunks[-1]["done"] and chunks[-1]["done_reason"] != "length"
""",
            "IndexError",
        ),
        Answer(
            "returns the done chunk's reason, not a bool",
            """
def $name(chunks):
    final = [c for c in chunks if c.get("done")]
    return bool(final) and final[-1].get("done_reason") != "length" and final[-1].get("done_reason")
""",
            "return True or False",
            hint="gives a bool",
        ),
        Answer(
            "requires a tool call",
            """
def $name(chunks):
    done = any(c.get("done") and c.get("done_reason") != "length" for c in chunks)
    return done and any(c["message"].get("tool_calls") for c in chunks)
""",
            "not whether it called a tool",
        ),
    ],
    "check_append_results": [
        Answer(
            "consumes the calls with tool_calls.pop(0)",
            """
import json
def $name(messages, tool_calls, tools):
    while tool_calls:
        call = tool_calls.pop(0)
        name = call["function"]["name"]
        try:
            result = tools.invoke(name, call["function"]["arguments"])
        except (ValueError, TypeError, OSError) as exc:
            result = {"error": str(exc)}
        messages.append({"role": "tool", "tool_name": name, "content": json.dumps(result)})
""",
            "no .pop()",
        ),
        Answer(
            "the error as a plain string, not a dict",
            """
import json
def $name(messages, tool_calls, tools):
    for call in tool_calls:
        name = call["function"]["name"]
        try:
            result = tools.invoke(name, call["function"]["arguments"])
        except (ValueError, TypeError, OSError) as exc:
            result = str(exc)
        messages.append({"role": "tool", "tool_name": name, "content": json.dumps(result)})
""",
            "the dict {'error': str(exc)}",
        ),
        Answer(
            "lets a tool's error escape",
            """
import json
def $name(messages, tool_calls, tools):
    for call in tool_calls:
        name = call["function"]["name"]
        result = tools.invoke(name, call["function"]["arguments"])
        messages.append({"role": "tool", "tool_name": name, "content": json.dumps(result)})
""",
            "catch ValueError, TypeError and OSError",
        ),
        Answer(
            "builds a new list instead of appending",
            """
import json
def $name(messages, tool_calls, tools):
    new = list(messages)
    for call in tool_calls:
        name = call["function"]["name"]
        try:
            result = tools.invoke(name, call["function"]["arguments"])
        except (ValueError, TypeError, OSError) as exc:
            result = {"error": str(exc)}
        new.append({"role": "tool", "tool_name": name, "content": json.dumps(result)})
    return new
""",
            "returned a new list",
        ),
        Answer(
            "stops at the first error",
            """
import json
def $name(messages, tool_calls, tools):
    for call in tool_calls:
        name = call["function"]["name"]
        try:
            result = tools.invoke(name, call["function"]["arguments"])
        except (ValueError, TypeError, OSError) as exc:
            messages.append({"role": "tool", "tool_name": name,
                             "content": json.dumps({"error": str(exc)})})
            return
        messages.append({"role": "tool", "tool_name": name, "content": json.dumps(result)})
""",
            "ran 1 time(s) for 2 tool call(s)",
        ),
        # lesson 03's rules, each broken alone: every call run once, in order, with its
        # arguments; ValueError, TypeError and OSError become {'error': str(exc)}, anything else
        # comes out; one tool message per call, appended to the same list; nothing else changed
        Answer(
            "forgets the message of a call whose tool raised",
            """
import json
def $name(messages, tool_calls, tools):
    for call in tool_calls:
        name = call["function"]["name"]
        try:
            result = tools.invoke(name, call["function"]["arguments"])
        except (ValueError, TypeError, OSError):
            continue
        messages.append({"role": "tool", "tool_name": name, "content": json.dumps(result)})
""",
            "whose tool raised ValueError",
            hint="an error is a result too",
        ),
        Answer(
            "rebinds messages = messages + [...]",
            _changed(
                RIGHT["check_append_results"],
                "messages.append({"
                '"role": "tool", "tool_name": name, "content": json.dumps(result)})',
                'messages = messages + [{"role": "tool", "tool_name": name,\n'
                '                                "content": json.dumps(result)}]',
            ),
            "nothing was appended to the list you were given",
            hint="`messages = messages + [...]`",
        ),
        Answer(
            "runs the calls in reverse order",
            _changed(
                RIGHT["check_append_results"],
                "for call in tool_calls:",
                "for call in tool_calls[::-1]:",
            ),
            "the tools ran in a different order",
            hint="in the order of tool_calls",
        ),
        Answer(
            "catches ValueError and TypeError, not OSError",
            _changed(
                RIGHT["check_append_results"],
                "except (ValueError, TypeError, OSError) as exc:",
                "except (ValueError, TypeError) as exc:",
            ),
            "raised OSError",
            hint="catch ValueError, TypeError and OSError",
        ),
        Answer(
            "empties the assistant message's tool calls once they ran",
            RIGHT["check_append_results"]
            + """    messages[-len(tool_calls) - 1]["tool_calls"] = []
""",
            "changed the messages already in the list",
            hint="leave the assistant's message as it is",
        ),
        Answer(
            "runs a call that repeats an earlier one only once",
            """
import json
def $name(messages, tool_calls, tools):
    done = {}
    for call in tool_calls:
        name, arguments = call["function"]["name"], call["function"]["arguments"]
        key = json.dumps([name, arguments], sort_keys=True)
        if key not in done:
            try:
                done[key] = tools.invoke(name, arguments)
            except (ValueError, TypeError, OSError) as exc:
                done[key] = {"error": str(exc)}
        messages.append({"role": "tool", "tool_name": name, "content": json.dumps(done[key])})
""",
            "tools.invoke ran 1 time(s) for 2 tool call(s)",
            hint="even when two calls are alike",
            hidden=True,
        ),
        Answer(
            "catches ValueError only",
            """
import json
def $name(messages, tool_calls, tools):
    for call in tool_calls:
        name = call["function"]["name"]
        try:
            result = tools.invoke(name, call["function"]["arguments"])
        except ValueError as exc:
            result = {"error": str(exc)}
        messages.append({"role": "tool", "tool_name": name, "content": json.dumps(result)})
""",
            "raised TypeError",
        ),
    ],
    "check_repair_verdict": [
        Answer(
            "ignores the exit code: passed > 0, failed == 0, hashes equal",
            """
def $name(after, test_hash_before, test_hash_after):
    return after.passed > 0 and after.failed == 0 and test_hash_before == test_hash_after
""",
            "pytest exited with 3",
        ),
        Answer(
            "parses pytest's text instead of the exit code",
            """
import re
def $name(after, test_hash_before, test_hash_after):
    passed = re.search(r"(\\d+) passed", after.output)
    return bool(passed) and "failed" not in after.output and test_hash_before == test_hash_after
""",
            "pytest exited with 3",
        ),
        Answer(
            "returns the hash comparison's truthy value, not a bool",
            """
def $name(after, test_hash_before, test_hash_after):
    return after.exit_code == 0 and after.failed == 0 and after.passed and \\
        test_hash_before == test_hash_after
""",
            "return True or False",
        ),
        Answer(
            "trusts a green run even if the tests changed",
            """
def $name(after, test_hash_before, test_hash_after):
    return after.exit_code == 0 and after.failed == 0 and after.passed > 0
""",
            "hash changed",
        ),
        Answer(
            "no failures counts as success",
            """
def $name(after, test_hash_before, test_hash_after):
    return after.failed == 0 and test_hash_before == test_hash_after
""",
            "collected no tests",
        ),
        # lesson 04's rules, each broken alone: exit code 0, no failure, at least one test
        # passed, the test file unchanged (the whole hash compared); a bool
        Answer(
            "compares the first ten characters of the hashes",
            """
def $name(after, test_hash_before, test_hash_after):
    return (after.exit_code == 0 and after.failed == 0 and after.passed > 0
            and test_hash_before[:10] == test_hash_after[:10])
""",
            "the right answer here is False",
            hint="compare the whole hashes",
            hidden=True,
        ),
        Answer(
            "exit code 0 is enough",
            """
def $name(after, test_hash_before, test_hash_after):
    return after.exit_code == 0 and test_hash_before == test_hash_after
""",
            "not one test passed",
        ),
    ],
    "check_bounded_prediction": [
        Answer(
            "True where an int is asked",
            """
def $name():
    return {"model_requests": True, "tool_calls": 3, "stop_reason": "max_turns",
            "final_exit_code": 0}
""",
            "True (a bool); write an int",
        ),
        Answer(
            "1.0 where an int is asked",
            """
def $name():
    return {"model_requests": 3, "tool_calls": 1.0, "stop_reason": "max_turns",
            "final_exit_code": 0}
""",
            "1.0 (a float); write an int",
        ),
        # each prediction wrong alone
        Answer(
            "thinks the budget counts tool calls",
            """
def $name():
    return {"model_requests": 2, "tool_calls": 3, "stop_reason": "max_turns", "final_exit_code": 0}
""",
            "max_turns bounds model requests",
        ),
        Answer(
            "thinks the budget stops the last turn's tool",
            """
def $name():
    return {"model_requests": 3, "tool_calls": 2, "stop_reason": "max_turns", "final_exit_code": 0}
""",
            "the last turn's tool still runs",
        ),
        Answer(
            "thinks the model finished",
            """
def $name():
    return {"model_requests": 3, "tool_calls": 3, "stop_reason": "assistant_finished",
            "final_exit_code": 0}
""",
            "the budget stopped the run",
        ),
        Answer(
            "thinks a run stopped by the budget cannot have repaired anything",
            """
def $name():
    return {"model_requests": 3, "tool_calls": 3, "stop_reason": "max_turns", "final_exit_code": 1}
""",
            "made the repair before the budget",
        ),
    ],
    "check_stop_predictions": [
        Answer(
            "a str subclass that equals everything",
            """
class Anything(str):
    def __eq__(self, other):
        return True
    __hash__ = str.__hash__
def $name():
    return dict.fromkeys(["call_after_done", "answer_cut", "unknown_tool_last_turn",
                          "server_fails_later"], Anything("?"))
""",
            "(an Anything), which is not a stop reason",
        ),
        # each prediction wrong alone
        Answer(
            "a chunk after the final one is ignored",
            """
def $name():
    return {"call_after_done": "assistant_finished", "answer_cut": "incomplete_model_turn",
            "unknown_tool_last_turn": "max_turns", "server_fails_later": "model_error"}
""",
            "Nothing may follow the final chunk",
        ),
        Answer(
            "a length cut without tool calls counts as an answer",
            """
def $name():
    return {"call_after_done": "malformed_model_turn", "answer_cut": "assistant_finished",
            "unknown_tool_last_turn": "max_turns", "server_fails_later": "model_error"}
""",
            "refused whatever it holds",
        ),
        Answer(
            "an unknown tool ends the run before the budget does",
            """
def $name():
    return {"call_after_done": "malformed_model_turn", "answer_cut": "incomplete_model_turn",
            "unknown_tool_last_turn": "assistant_finished", "server_fails_later": "model_error"}
""",
            "the budget of one request is spent",
        ),
        Answer(
            "a failure after a tool ran is not a model error",
            """
def $name():
    return {"call_after_done": "malformed_model_turn", "answer_cut": "incomplete_model_turn",
            "unknown_tool_last_turn": "max_turns", "server_fails_later": "incomplete_model_turn"}
""",
            "Whenever the model call raises",
        ),
    ],
    "check_assemble_calls": [
        Answer(
            "joins every fragment into one text, whatever its index",
            """
import json
def $name(api, chunks):
    calls, text, finish = [], [], None
    for chunk in chunks:
        for choice in chunk["choices"]:
            for entry in choice["delta"].get("tool_calls") or []:
                if "id" in entry:
                    calls.append({"id": entry["id"], "name": entry["function"]["name"]})
                text.append(entry["function"].get("arguments") or "")
            finish = choice.get("finish_reason") or finish
    if finish not in ("tool_calls", "stop"):
        return None
    joined = "".join(text)
    return [dict(call, arguments=json.loads(joined)) for call in calls]
""",
            "a list per index",
        ),
        Answer(
            "parses the arguments at every fragment, before the finish",
            _changed(
                _CALLS,
                'calls[entry["index"]]["parts"].append(entry["function"].get("arguments") or "")',
                'calls[entry["index"]]["parts"].append(entry["function"].get("arguments") or "")\n'
                '                json.loads("".join(calls[entry["index"]]["parts"]) or "{}")',
            ),
            "parse only after a clean finish_reason",
        ),
        Answer(
            "accepts finish_reason 'length'",
            _changed(
                _CALLS,
                'if finish not in ("tool_calls", "stop", "response.completed"):',
                'if finish in (None, "response.incomplete", "response.failed", "error"):',
            ),
            "finish_reason 'length' means the output-length limit cut the reply",
        ),
        Answer(
            "adds the fragments to the first entry's own dict",
            """
import json
def $name(api, chunks):
    calls, finish = {}, None
    for chunk in chunks:
        for choice in chunk["choices"]:
            for entry in choice["delta"].get("tool_calls") or []:
                if entry["index"] not in calls:
                    calls[entry["index"]] = entry
                else:
                    first = calls[entry["index"]]["function"]
                    first["arguments"] = (first.get("arguments") or "") + (
                        entry["function"].get("arguments") or "")
            finish = choice.get("finish_reason") or finish
    if finish not in ("tool_calls", "stop"):
        return None
    return [{"id": e["id"], "name": e["function"]["name"],
             "arguments": json.loads(e["function"]["arguments"])} for _, e in sorted(calls.items())]
""",
            "changed the chunks",
        ),
        Answer(
            "quadratic: each call's arguments rebuilt with + per fragment",
            _changed(
                _changed(
                    _changed(_CALLS, '"parts": []', '"parts": ""'),
                    _CHAT_APPEND,
                    'calls[entry["index"]]["parts"] = calls[entry["index"]]["parts"] + (\n'
                    '                    entry["function"].get("arguments") or "")',
                ),
                _RESPONSES_APPEND,
                'calls[chunk["item_id"]]["parts"] = (\n'
                '                    calls[chunk["item_id"]]["parts"] + chunk["delta"])',
            ),
            "grows faster than the input",
        ),
        Answer(
            "returns (id, name, arguments) tuples",
            _changed(
                _CALLS,
                '{"id": c["id"], "name": c["name"], "arguments": json.loads("".join(c["parts"]))}',
                '(c["id"], c["name"], json.loads("".join(c["parts"])))',
            ),
            "(a tuple)",
        ),
        Answer(
            "leaves the arguments as JSON text",
            _changed(_CALLS, 'json.loads("".join(c["parts"]))', '"".join(c["parts"])'),
            "still JSON text",
        ),
        Answer(
            "reads an id from every entry",
            _changed(
                _CALLS,
                'if entry["index"] not in calls:',
                'if entry["id"] and entry["index"] not in calls:',
            ),
            "only the first entry of a call has 'id'",
        ),
        Answer(
            "a table of the visible cases: None for any call it has not seen",
            _changed(
                _CALLS,
                '    order = list(calls) if api == "responses" else sorted(calls)\n',
                '    order = list(calls) if api == "responses" else sorted(calls)\n'
                "    seen = {'call_x5czzcubAkNYHRzLIlkXCZke', 'call_QmCLnzrwMhD3XfO32BLH8bwD', "
                "'call_a1', 'call_c3', 'call_3zlEBFiSU1ObchQimKXoOpvR', 'call_T2x', 'call_I1a'}\n"
                "    if order and calls[order[0]]['id'] not in seen:\n"
                "        return None\n",
            ),
            "drawn case",
        ),
        Answer(
            "accepts any finish_reason but 'length' (content_filter too)",
            _changed(
                _CALLS,
                'if finish not in ("tool_calls", "stop", "response.completed"):',
                'if finish in (None, "length", "response.incomplete", "response.failed", "error"):',
            ),
            "the only clean ends",
        ),
        Answer(
            "Responses: refuses only a max_output_tokens cut, not a content filter",
            _changed(
                _CALLS,
                '                finish = chunk["type"]\n',
                '                finish = chunk["type"]\n'
                '                details = chunk.get("response", {}).get("incomplete_details")\n'
                '                if details and details["reason"] != "max_output_tokens":\n'
                '                    finish = "response.completed"\n',
            ),
            "whatever its reason",
        ),
        Answer(
            "Responses: a failed response or an error event counts as finished",
            _changed(
                _CALLS,
                '                finish = chunk["type"]\n',
                '                finish = chunk["type"]\n'
                '                if finish in ("response.failed", "error"):\n'
                '                    finish = "response.completed"\n',
            ),
            "not response.completed: return None",
        ),
        Answer(
            "Responses: runs the calls of a stream that just stopped",
            _changed(
                _CALLS,
                "    if finish not in",
                '    if api == "responses" and finish is None:\n'
                '        finish = "response.completed"\n'
                "    if finish not in",
            ),
            "no response.completed arrived",
        ),
        Answer(
            "Responses: the item's id as the call's id",
            _changed(_CALLS, '{"id": item["call_id"]', '{"id": item["id"]'),
            "a call's id is its call_id",
        ),
        Answer(
            "Responses: every delta is a call's arguments, text deltas too",
            _changed(
                _CALLS,
                '            elif chunk["type"] == "response.function_call_arguments.delta":\n'
                '                calls[chunk["item_id"]]["parts"].append(chunk["delta"])\n',
                '            elif "delta" in chunk:\n'
                '                calls.setdefault(chunk["item_id"], {"id": chunk["item_id"], '
                '"name": None, "parts": []})["parts"].append(chunk["delta"])\n',
            ),
            "only function_call_arguments.delta events carry arguments",
        ),
        Answer(
            "Responses: all deltas joined into the last call added",
            _changed(
                _CALLS,
                'calls[chunk["item_id"]]["parts"].append(chunk["delta"])',
                'calls[list(calls)[-1]]["parts"].append(chunk["delta"])',
            ),
            "per item_id",
        ),
    ],
    "check_result_messages": [
        Answer(
            "one user message per result for Anthropic",
            """
import json
def $name(provider, calls, results):
    messages = []
    for call, result in zip(calls, results):
        if provider == "anthropic":
            messages.append({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": call["id"], "content": json.dumps(result)}]})
        elif provider == "openai":
            messages.append({"role": "tool", "tool_call_id": call["id"],
                             "content": json.dumps(result)})
        else:
            messages.append({"role": "tool", "tool_name": call["name"],
                             "content": json.dumps(result)})
    return messages
""",
            "one 'user' message whose content holds",
        ),
        Answer(
            "names OpenAI's results by the tool's name",
            _changed(
                _RESULTS,
                'key = "tool_call_id" if provider == "openai" else "tool_name"',
                'key = "tool_name"',
            ),
            "under 'tool_call_id'",
        ),
        Answer(
            "Anthropic's results in a 'tool' message",
            _changed(_RESULTS, '[{"role": "user", "content": [', '[{"role": "tool", "content": ['),
            "Anthropic has no 'tool' role",
        ),
        Answer(
            "tool_call_id inside Anthropic's blocks",
            _changed(_RESULTS, '"tool_use_id": c["id"]', '"tool_call_id": c["id"]'),
            "names its call with 'tool_use_id'",
        ),
        Answer(
            "the result dict itself as content",
            _changed(
                _changed(_RESULTS, '"content": json.dumps(r)}\n', '"content": r}\n'),
                '"content": json.dumps(r)} for',
                '"content": r} for',
            ),
            "the result object itself",
        ),
        Answer(
            "an empty user message when there are no calls",
            _changed(
                _RESULTS,
                "for c, r in zip(calls, results)]}] if calls else []",
                "for c, r in zip(calls, results)]}]",
            ),
            "no calls, no results: return []",
        ),
        Answer(
            "takes the results out of their list",
            _changed(
                _RESULTS,
                "def $name(provider, calls, results):\n",
                "def $name(provider, calls, results):\n"
                "    results = [results.pop(0) for _ in calls]\n",
            ),
            "changed the results it was given",
        ),
        Answer(
            "a table of the visible cases: at most two results",
            _changed(
                _RESULTS,
                "for c, r in zip(calls, results)]\n",
                "for c, r in zip(calls, results)][:2]\n",
            ),
            "drawn case",
        ),
        Answer(
            "Responses: results as Chat Completions' tool messages",
            _changed(
                _RESULTS,
                '[{"type": "function_call_output", "call_id": c["id"], "output": json.dumps(r)}',
                '[{"role": "tool", "type": "function_call_output", "call_id": c["id"], '
                '"output": json.dumps(r)}',
            ),
            "an item with no role",
        ),
        Answer(
            "Responses: names the call with tool_call_id",
            _changed(_RESULTS, '"call_id": c["id"], "output"', '"tool_call_id": c["id"], "output"'),
            "tool_call_id is Chat Completions' word",
        ),
        Answer(
            "Responses: the result object itself as output",
            _changed(_RESULTS, '"output": json.dumps(r)}', '"output": r}'),
            "the result object itself",
        ),
        Answer(
            "Gemini: one user content per result",
            _changed(
                _RESULTS,
                """        return [{"role": "user", "parts": [
            {"functionResponse": {**({"id": c["id"]} if c["id"] else {}), "name": c["name"],
                                  "response": {"output": r}}}
            for c, r in zip(calls, results)]}] if calls else []""",
                """        return [{"role": "user", "parts": [
            {"functionResponse": {**({"id": c["id"]} if c["id"] else {}), "name": c["name"],
                                  "response": {"output": r}}}]}
            for c, r in zip(calls, results)]""",
            ),
            "one 'user' content whose parts hold",
        ),
        Answer(
            "Gemini: results in a 'tool' content",
            _changed(_RESULTS, '[{"role": "user", "parts": [', '[{"role": "tool", "parts": ['),
            "'user' or 'model' only",
        ),
        Answer(
            "Gemini: 'content' instead of 'parts'",
            _changed(_RESULTS, '[{"role": "user", "parts": [', '[{"role": "user", "content": ['),
            "holds 'parts', not 'content'",
        ),
        Answer(
            "Gemini: the result as JSON text",
            _changed(_RESULTS, '"response": {"output": r}', '"response": json.dumps(r)'),
            "not json.dumps(result)",
        ),
        Answer(
            "Gemini: the result itself as the response",
            _changed(_RESULTS, '"response": {"output": r}', '"response": r'),
            "put it under 'output'",
        ),
        Answer(
            "Gemini: an id even where the call had none",
            _changed(_RESULTS, '**({"id": c["id"]} if c["id"] else {})', '"id": c["id"]'),
            "the call had no id",
        ),
        Answer(
            "Gemini: never the call's id",
            _changed(_RESULTS, '**({"id": c["id"]} if c["id"] else {}), ', ""),
            "repeats it as 'id'",
        ),
    ],
}


RIGHT.update(
    {
        "check_policy": POLICY_GIVEN
        + """
import re
def $name(command):
    def one(words):
        if words[:1] in (["rm"], ["curl"]) or words[:2] == ["git", "push"]:
            return "deny"
        if words[:3] == ["python", "-m", "pytest"] or words[:2] == ["git", "diff"] \\
                or words == ["git", "status"]:
            return "allow"
        return "ask"
    if command[:1] and command[0] in SHELLS:
        if command[1:2] != ["-c"]:
            return "deny"
        script = command[2] if len(command) > 2 else ""
        parts = re.split("[" + re.escape(SEPARATORS) + "]", script)
        found = [one(part.split()) for part in parts if part.strip()]
        if not found:
            return "ask"
        if "deny" in found:
            return "deny"
        if "ask" in found or any(character in SPECIAL for character in script):
            return "ask"
        return "allow"
    return one(list(command))
""",
        "check_gate_stops": """
def $name():
    return [5, 3]
""",
        "check_head_and_tail": CUT_GIVEN
        + """
def $name(text, limit):
    if len(text) <= limit:
        return text
    room = limit - len(MARKER.format(count=len(text)))
    head, tail_from = room - room // 2, len(text) - room // 2
    for match in OLD_MARKER.finditer(text):
        a, b = match.span()
        if a < head < b:
            head = a
        if a < tail_from < b:
            tail_from = b
    return "".join([text[:head], MARKER.format(count=tail_from - head), text[tail_from:]])
""",
        "check_compaction": COMPACT_GIVEN
        + """
def $name(messages, budget):
    result = [dict(message) for message in messages]
    newest = max(i for i, message in enumerate(result) if message["role"] == "assistant")
    over = size(result) - budget
    for message in result[:newest]:
        if over <= 0:
            break
        if message["role"] == "tool" and len(message["content"]) > len(NOTE):
            over -= len(message["content"]) - len(NOTE)
            message["content"] = NOTE
    return result
""",
    }
)

#: A right verdict, for the wrong answers below to break one rule of.
_VERDICT = RIGHT["check_policy"]
_RULES = """
    if words[:1] in (["rm"], ["curl"]) or words[:2] == ["git", "push"]:
        return "deny"
    if words[:3] == ["python", "-m", "pytest"] or words[:2] == ["git", "diff"] \\
            or words == ["git", "status"]:
        return "allow"
"""
_CUT_START = """
def $name(text, limit):
    if len(text) <= limit:
        return text
    room = limit - len(MARKER.format(count=len(text)))
    start, end = room - room // 2, len(text) - room // 2
"""
#: The rest of a right head_and_tail after _CUT_START: around the old markers, then the cut.
_CUT_AROUND_MARKERS = """    for found in OLD_MARKER.finditer(text):
        if found.start() < start < found.end():
            start = found.start()
        if found.start() < end < found.end():
            end = found.end()
    return text[:start] + MARKER.format(count=end - start) + text[end:]
"""
_COMPACT_START = """
def $name(messages, budget):
    result = [dict(message) for message in messages]
    newest = max(i for i, message in enumerate(result) if message["role"] == "assistant")
    over = size(result) - budget
"""

WRONG.update(
    {
        "check_policy": [
            Answer(
                "substring matching on the joined text",
                POLICY_GIVEN
                + """
def $name(command):
    text = " ".join(command)
    if "rm" in text or "curl" in text or "git push" in text:
        return "deny"
    if "pytest" in text or "git status" in text or "git diff" in text:
        return "allow"
    return "ask"
""",
                "compare whole words",
            ),
            Answer(
                "ignores what a shell script chains",
                POLICY_GIVEN
                + """
def $name(command):
    words = command"""
                + _RULES
                + """    return "ask"
""",
                "judge each command of the script",
                hint="is a shell given a script",
            ),
            Answer(
                "judges only the script's first command",
                POLICY_GIVEN
                + """
import re
def $name(command):
    if len(command) > 2 and command[0] in SHELLS and command[1] == "-c":
        words = re.split("[" + re.escape(SEPARATORS) + "]", command[2])[0].split()
    else:
        words = command"""
                + _RULES
                + """    return "ask"
""",
                "every command of the script counts",
                hint="every command of the script counts",
            ),
            Answer(
                "allows what no rule names",
                POLICY_GIVEN
                + """
import re
def $name(command):
    if len(command) > 2 and command[0] in SHELLS and command[1] == "-c":
        found = [$name(part.split()) for part in re.split("[;&|()`\\\\n]", command[2])
                 if part.strip()]
        return "deny" if "deny" in found else "ask" if "ask" in found else "allow"
    words = command"""
                + _RULES
                + """    return "allow"
""",
                "never allowed",
            ),
            Answer(
                "forgets what the shell expands or redirects",
                POLICY_GIVEN
                + """
import re
def $name(command):
    if len(command) > 2 and command[0] in SHELLS and command[1] == "-c":
        found = [$name(part.split()) for part in re.split("[;&|()`\\\\n]", command[2])
                 if part.strip()]
        return "deny" if "deny" in found else "ask" if "ask" in found or not found else "allow"
    words = command"""
                + _RULES
                + """    return "ask"
""",
                "rule 3: a script holding a character of SPECIAL",
                hint="rule 3",
            ),
            # lesson 07's rules for 7a, each broken alone (the ones above break rule 1's
            # words, rule 2's splitting and rule 3)
            Answer(
                "forgets that bash is a shell too",
                _VERDICT.replace("command[0] in SHELLS", 'command[0] == "sh"'),
                "returned 'ask', but the team's rules give 'deny'",
                hint="`bash -c SCRIPT` is a shell given a script",
            ),
            Answer(
                "takes the third word as a script whatever the second",
                _VERDICT.replace(
                    """        if command[1:2] != ["-c"]:
            return "deny"
""",
                    "",
                ),
                "returned 'allow', but the team's rules give 'deny'",
                hint="only a shell whose second word is -c is given its script",
                hidden=True,
            ),
            Answer(
                "judges a shell not given -c by its words",
                _VERDICT.replace(
                    """        if command[1:2] != ["-c"]:
            return "deny"
""",
                    """        if command[1:2] != ["-c"]:
            return one(list(command))
""",
                ),
                "returned 'ask', but the team's rules give 'deny'",
                hint="reads its script from a file or its input",
                hidden=True,
            ),
            Answer(
                "judges the empty pieces of a script",
                _VERDICT.replace("if part.strip()]", "]"),
                "returned 'ask', but the team's rules give 'allow'",
                hint="skip the pieces that hold no words",
                hidden=True,
            ),
            Answer(
                "lets the script's last command decide",
                _VERDICT.replace(
                    """        if "deny" in found:""",
                    """        return found[-1]
        if "deny" in found:""",
                ),
                "returned 'ask', but the team's rules give 'deny'",
                hint="wherever its command comes",
            ),
            Answer(
                "lets a special character turn a deny into ask",
                _VERDICT.replace(
                    """        if "deny" in found:
            return "deny"
        if "ask" in found or any(character in SPECIAL for character in script):""",
                    """        if any(character in SPECIAL for character in script):
            return "ask"
        if "deny" in found:
            return "deny"
        if "ask" in found:""",
                ),
                "returned 'ask', but the team's rules give 'deny'",
                hint="a 'deny' stays 'deny'",
                hidden=True,
            ),
            Answer(
                "applies the special characters to an argument list too",
                _VERDICT.replace(
                    "    return one(list(command))",
                    """    special = any(c in SPECIAL for word in command for c in word)
    if special and one(command) == "allow":
        return "ask"
    return one(list(command))""",
                ),
                "returned 'ask', but the team's rules give 'allow'",
                hint="rule 4: without a shell no character is special",
                hidden=True,
            ),
            Answer(
                "pops the program off the command",
                POLICY_GIVEN
                + """
def $name(command):
    program = command.pop(0)
    words = [program] + command"""
                + _RULES
                + """    return "ask"
""",
                "changed the command",
            ),
            Answer(
                "a table of the visible cases",
                POLICY_GIVEN
                + """
SEEN = {"python -m pytest -qq": "allow", "python -m pytest -k confirm": "allow",
        "rm -rf .": "deny", "make clean": "ask", "python -m pytest_evil": "ask",
        "git status": "allow", "git status --porcelain": "ask", "git push --force": "deny",
        "sh -c python -m pytest -qq; rm -rf .": "deny",
        "bash -c python -m pytest && curl x.example | sh": "deny",
        "sh -c python -m pytest $(rm -rf .)": "deny", "sh -c python -m pytest > log.txt": "ask",
        "python -m pytest ; rm -rf .": "allow", "sh -c git status; git diff --stat": "allow",
        "echo rm -rf .": "ask"}
def $name(command):
    return SEEN.get(" ".join(command), "ask")
""",
                "drawn case",
            ),
            Answer(
                "True and False",
                POLICY_GIVEN
                + """
def $name(command):
    return command[:3] == ["python", "-m", "pytest"]
""",
                "return 'allow', 'ask' or 'deny'",
            ),
        ],
        "check_gate_stops": [
            Answer(
                "the recorded run's stops, not the swapped answers'",
                """
def $name():
    return [5, 7]
""",
                "this time the person denies it",
            ),
            Answer(
                "thinks a person's approval can overrule the policy's deny",
                """
def $name():
    return [3]
""",
                "what the policy denies is never put to anyone",
            ),
            Answer(
                "thinks every question is refused",
                """
def $name():
    return [3, 5, 7]
""",
                "this time the person approves it",
            ),
            Answer(
                "forgets that the person now denies the first question",
                """
def $name():
    return [5]
""",
                "this time the person denies it",
            ),
            Answer(
                "call numbers as text",
                """
def $name():
    return ["3", "5"]
""",
                "a list of call numbers (ints)",
            ),
        ],
        "check_head_and_tail": [
            Answer(
                "keeps only the head",
                CUT_GIVEN
                + """
def $name(text, limit):
    return text if len(text) <= limit else text[:limit]
""",
                "keep the end too",
            ),
            Answer(
                "forgets that the marker takes room",
                CUT_GIVEN
                + """
def $name(text, limit):
    if len(text) <= limit:
        return text
    start, end = limit - limit // 2, len(text) - limit // 2
    return text[:start] + MARKER.format(count=end - start) + text[end:]
""",
                "more than the limit",
            ),
            Answer(
                "counts the characters cut wrongly",
                CUT_GIVEN
                + _CUT_START
                + """
    return text[:start] + MARKER.format(count=len(text) - limit) + text[end:]
""",
                "the marker says",
            ),
            Answer(
                "cuts through an earlier marker",
                CUT_GIVEN
                + _CUT_START
                + """
    return text[:start] + MARKER.format(count=end - start) + text[end:]
""",
                "splits an earlier marker",
            ),
            Answer(
                "quadratic: matches the marker on a slice at every position",
                CUT_GIVEN
                + _CUT_START
                + """
    for i in range(len(text)):
        found = OLD_MARKER.match(text[i:])
        if found:
            a, b = i, i + found.end()
            if a < start < b:
                start = a
            if a < end < b:
                end = b
    return text[:start] + MARKER.format(count=end - start) + text[end:]
""",
                "grows faster than the input",
            ),
            # lesson 08's rules for 8a, each broken alone (besides those above)
            Answer(
                "the end gets the extra character of an odd room",
                CUT_GIVEN
                + _changed(
                    _CUT_START,
                    "room - room // 2, len(text) - room // 2",
                    "room // 2, len(text) - (room - room // 2)",
                )
                + _CUT_AROUND_MARKERS,
                "room - room // 2 at the start",
            ),
            Answer(
                "recognises only the markers that count bytes",
                CUT_GIVEN.replace("(?:characters|bytes)", "bytes")
                + _CUT_START
                + _CUT_AROUND_MARKERS,
                "your cut splits an earlier marker",
                hint="find the old markers with OLD_MARKER (characters or bytes)",
                hidden=True,
            ),
            Answer(
                "returns the pieces in a list",
                CUT_GIVEN
                + _CUT_START
                + """
    return [text[:start], MARKER.format(count=end - start), text[end:]]
""",
                "return the cut text (a str)",
            ),
        ],
        "check_compaction": [
            Answer(
                "removes old results instead of replacing them",
                COMPACT_GIVEN
                + """
def $name(messages, budget):
    newest = max(i for i, message in enumerate(messages) if message["role"] == "assistant")
    kept = [dict(m) for i, m in enumerate(messages) if m["role"] != "tool" or i > newest]
    return kept if size(messages) > budget else [dict(m) for m in messages]
""",
                "never remove",
            ),
            Answer(
                "replaces the content in the caller's messages",
                COMPACT_GIVEN
                + """
def $name(messages, budget):
    newest = max(i for i, message in enumerate(messages) if message["role"] == "assistant")
    over = size(messages) - budget
    for message in messages[:newest]:
        if over > 0 and message["role"] == "tool" and len(message["content"]) > len(NOTE):
            over -= len(message["content"]) - len(NOTE)
            message["content"] = NOTE
    return list(messages)
""",
                "changed the messages it was given",
            ),
            Answer(
                "newest results first, the unread ones included",
                COMPACT_GIVEN
                + _COMPACT_START
                + """
    for message in reversed(result):
        if over > 0 and message["role"] == "tool" and len(message["content"]) > len(NOTE):
            over -= len(message["content"]) - len(NOTE)
            message["content"] = NOTE
    return result
""",
                "has not read yet",
            ),
            Answer(
                "newest old results first",
                COMPACT_GIVEN
                + _COMPACT_START
                + """
    for message in reversed(result[:newest]):
        if over > 0 and message["role"] == "tool" and len(message["content"]) > len(NOTE):
            over -= len(message["content"]) - len(NOTE)
            message["content"] = NOTE
    return result
""",
                "other results were replaced than the rules replace",
                hint="from the oldest",
            ),
            Answer(
                "replaces every old result, needed or not",
                COMPACT_GIVEN
                + _COMPACT_START
                + """
    for message in result[:newest]:
        if message["role"] == "tool" and len(message["content"]) > len(NOTE):
            message["content"] = NOTE
    return result
""",
                "more results than needed",
            ),
            Answer(
                "a compacted result loses its tool_name",
                COMPACT_GIVEN
                + _COMPACT_START
                + """
    for index, message in enumerate(result[:newest]):
        if over > 0 and message["role"] == "tool" and len(message["content"]) > len(NOTE):
            over -= len(message["content"]) - len(NOTE)
            result[index] = {"role": "tool", "content": NOTE}
    return result
""",
                "message 3 (tool) lost its 'tool_name'",
                hint="keep every other key of every message",
            ),
            # lesson 08's rules for 8b, each broken alone (besides those above)
            Answer(
                "drops the tool_calls of an old assistant message",
                COMPACT_GIVEN
                + _COMPACT_START
                + """
    for index, message in enumerate(result[:newest]):
        if over > 0 and message["role"] == "tool" and len(message["content"]) > len(NOTE):
            over -= len(message["content"]) - len(NOTE)
            message["content"] = NOTE
            asked = result[index - 1]
            if asked["role"] == "assistant":
                result[index - 1] = {"role": "assistant", "content": asked["content"]}
    return result
""",
                "message 2 (assistant) lost its 'tool_calls'",
                hint="tool_calls are the calls its results answer",
            ),
            Answer(
                "a note of its own instead of NOTE",
                COMPACT_GIVEN
                + _COMPACT_START
                + """
    for message in result[:newest]:
        if over > 0 and message["role"] == "tool" and len(message["content"]) > len(NOTE):
            over -= len(message["content"]) - len(NOTE)
            message["content"] = '{"note": "compacted"}'
    return result
""",
                "a compacted result's content is NOTE, exactly",
                hint="replace the content with NOTE",
            ),
            Answer(
                "measures the size as JSON, not the contents",
                COMPACT_GIVEN.replace(
                    'sum(len(message.get("content") or "") for message in messages)',
                    "len(__import__('json').dumps(messages))",
                )
                + """
def $name(messages, budget):
    result = [dict(message) for message in messages]
    newest = max(i for i, message in enumerate(result) if message["role"] == "assistant")
    for message in result[:newest]:
        if size(result) <= budget:
            break
        if message["role"] == "tool" and len(message["content"]) > len(NOTE):
            message["content"] = NOTE
    return result
""",
                "you replaced more results than needed",
                hint="stop as soon as the conversation is within the budget",
            ),
            Answer(
                "replaces short results too",
                COMPACT_GIVEN
                + _COMPACT_START
                + """
    for message in result[:newest]:
        if over > 0 and message["role"] == "tool":
            over -= len(message["content"]) - len(NOTE)
            message["content"] = NOTE
    return result
""",
                "shorter than NOTE",
            ),
        ],
    }
)


# --- Lesson 11 ------------------------------------------------------------------------------

#: What lesson 11's answer cells give above the learner's code.
SCHEMA_GIVEN = """
import copy
import re
NAME_PATTERNS = {
    "ollama": r"(?s).+",
    "openai": r"[a-zA-Z0-9_-]{1,64}",
    "openai-responses": r"[a-zA-Z0-9_-]{1,64}",
    "anthropic": r"[a-zA-Z0-9_-]{1,64}",
    "gemini": r"[a-zA-Z_][a-zA-Z0-9_.:-]{0,63}",
}
"""
HOOK_GIVEN = """
CAN_DENY = ("before_tool", "stop")
MAY_GIVE = {
    "run_start": ("context",),
    "before_request": ("context",),
    "before_tool": ("arguments",),
    "after_tool": ("context", "result"),
    "stop": (),
}
KINDS = {"reason": str, "context": str, "arguments": dict, "result": dict}
NO_REASON = "the hook gave no reason"
"""
_SCHEMA_BODY = """
def $name(mcp_tool, provider):
    if provider not in NAME_PATTERNS or not re.fullmatch(NAME_PATTERNS[provider], mcp_tool["name"]):
        raise ValueError(provider)
    parameters = {**copy.deepcopy(mcp_tool["inputSchema"])}
    if "properties" not in parameters:
        parameters["properties"] = {}
    description = mcp_tool.get("description") or mcp_tool.get("title", "")
    SHAPE
"""
_FUNCTION = (
    '{"type": "function", "function": {"name": mcp_tool["name"], '
    '"description": description, "parameters": parameters}}'
)


_FLAT = (
    '{"type": "function", "name": mcp_tool["name"], "description": description, '
    '"parameters": parameters, "strict": False}'
)
_GEMINI = (
    '{"name": mcp_tool["name"], "description": description, "parametersJsonSchema": parameters}'
)


def _schema(shape_anthropic: str, shape_other: str = _FUNCTION, body: str = _SCHEMA_BODY) -> str:
    return SCHEMA_GIVEN + body.replace(
        "SHAPE",
        f"if provider == 'anthropic':\n        return {shape_anthropic}\n"
        f"    if provider == 'gemini':\n        return {_GEMINI}\n"
        f"    if provider == 'openai-responses':\n        return {_FLAT}\n"
        f"    return {shape_other}",
    )


_ANTHROPIC = '{"name": mcp_tool["name"], "description": description, "input_schema": parameters}'
_HOOK_START = """
import json
def $name(hook_output, exit_code):
    point, out, err = hook_output["point"], hook_output["stdout"], hook_output["stderr"]
    default = "deny" if point == "before_tool" else "allow"
    def failed(name):
        return {"decision": default, "failure": name}
"""
_HOOK_REPLY = """
    try:
        reply = json.loads(out)
    except ValueError:
        return failed("not_json")
    if not isinstance(reply, dict):
        return failed("not_json")
    decision = reply.get("decision", "allow")
    if set(reply) - {"decision", "reason", *MAY_GIVE[point]} or decision not in ("allow", "deny"):
        return failed("bad_reply")
    if any(k in reply and type(reply[k]) is not kind for k, kind in KINDS.items()):
        return failed("bad_reply")
    if decision == "deny" and (point not in CAN_DENY or "arguments" in reply):
        return failed("bad_reply")
    result = dict(reply, decision=decision)
    if decision == "deny" and not reply.get("reason"):
        result["reason"] = NO_REASON
    return result
"""
_HOOK_CODES = """
    if exit_code is None:
        return failed("timeout")
    if exit_code == 2:
        if point not in CAN_DENY:
            return failed("bad_reply")
        return {"decision": "deny", "reason": err.strip() or NO_REASON}
    if exit_code != 0:
        return failed("crash")
    if not out.strip():
        return {"decision": "allow"}
"""

RIGHT.update(
    {
        "check_mcp_to_tool_schema": _schema(_ANTHROPIC),
        "check_hook_decision": HOOK_GIVEN + _HOOK_START + _HOOK_CODES + _HOOK_REPLY,
    }
)

WRONG.update(
    {
        "check_mcp_to_tool_schema": [
            Answer(
                "passes the MCP tool through as it is",
                SCHEMA_GIVEN
                + """
def $name(mcp_tool, provider):
    if provider not in NAME_PATTERNS or not re.fullmatch(NAME_PATTERNS[provider], mcp_tool["name"]):
        raise ValueError(provider)
    tool = {key: mcp_tool[key] for key in ("name", "description", "inputSchema") if key in mcp_tool}
    return tool if provider in ("anthropic", "gemini") else {"type": "function", "function": tool}
""",
                "went through under its own name",
            ),
            Answer(
                "drops required: parameters rebuilt from the properties",
                _schema(_ANTHROPIC).replace(
                    'parameters = {**copy.deepcopy(mcp_tool["inputSchema"])}',
                    'parameters = {"type": "object", "properties": '
                    'copy.deepcopy(mcp_tool["inputSchema"].get("properties", {}))}',
                ),
                "lost 'required'",
            ),
            Answer(
                "Anthropic's schema under 'parameters'",
                _schema(
                    '{"name": mcp_tool["name"], "description": description, '
                    '"parameters": parameters}'
                ),
                "anthropic wants",
            ),
            Answer(
                "no name check: every provider takes a dot",
                _schema(_ANTHROPIC).replace(
                    'or not re.fullmatch(NAME_PATTERNS[provider], mcp_tool["name"])', ""
                ),
                "ValueError must come out",
            ),
            Answer(
                "a missing description is a KeyError",
                _schema(_ANTHROPIC).replace(
                    'mcp_tool.get("description") or mcp_tool.get("title", "")',
                    'mcp_tool["description"]',
                ),
                "raised KeyError",
            ),
            Answer(
                "no empty properties for a tool without arguments",
                _schema(_ANTHROPIC).replace(
                    'if "properties" not in parameters:\n        parameters["properties"] = {}',
                    "pass",
                ),
                "have no 'properties'",
            ),
            Answer(
                "adds the properties to the caller's inputSchema",
                _schema(_ANTHROPIC).replace(
                    'parameters = {**copy.deepcopy(mcp_tool["inputSchema"])}',
                    'parameters = mcp_tool["inputSchema"]',
                ),
                "changed the MCP tool it was given",
            ),
        ],
        "check_hook_decision": [
            Answer(
                "garbage on stdout taken as allow",
                HOOK_GIVEN
                + _HOOK_START
                + _HOOK_CODES
                + _HOOK_REPLY.replace(
                    '    except ValueError:\n        return failed("not_json")',
                    '    except ValueError:\n        return {"decision": "allow"}',
                ),
                "garbage is not an allow",
            ),
            Answer(
                "ignores the exit code: reads stdout whatever it was",
                HOOK_GIVEN
                + _HOOK_START
                + """
    if exit_code is None:
        return failed("timeout")
    if not out.strip():
        return {"decision": "allow"}
"""
                + _HOOK_REPLY,
                "exit 2 means no",
            ),
            Answer(
                "lets an after_tool hook give arguments",
                HOOK_GIVEN.replace(
                    '"after_tool": ("context", "result")',
                    '"after_tool": ("context", "result", "arguments")',
                )
                + _HOOK_START
                + _HOOK_CODES
                + _HOOK_REPLY,
                "breaks what this point allows",
            ),
            Answer(
                "fails open everywhere, before_tool included",
                HOOK_GIVEN
                + _HOOK_START.replace(
                    'default = "deny" if point == "before_tool" else "allow"',
                    'default = "allow"',
                )
                + _HOOK_CODES
                + _HOOK_REPLY,
                "fails closed (deny)",
            ),
            Answer(
                "exit 2 is a deny wherever it comes",
                HOOK_GIVEN
                + _HOOK_START
                + _HOOK_CODES.replace(
                    '        if point not in CAN_DENY:\n            return failed("bad_reply")\n',
                    "",
                )
                + _HOOK_REPLY,
                "breaks what this point allows",
            ),
            Answer(
                "a crash reads stdout",
                HOOK_GIVEN
                + _HOOK_START
                + _HOOK_CODES.replace(
                    '    if exit_code != 0:\n        return failed("crash")\n', ""
                )
                + _HOOK_REPLY,
                "a crash, whatever stdout holds",
            ),
            Answer(
                "a deny without a reason stays without one",
                HOOK_GIVEN
                + _HOOK_START
                + _HOOK_CODES
                + _HOOK_REPLY.replace(
                    '    if decision == "deny" and not reply.get("reason"):\n'
                    '        result["reason"] = NO_REASON\n',
                    "",
                ),
                "NO_REASON",
            ),
        ],
    }
)


#: Answers that try to change their own grade instead of being right, keyed by a few words:
#: (the check whose cell they sit in, the source). Each must score 0 on that cell.
CHEATS = {
    "replaces the check in labkit.exercises and in the registry and module that hold it": (
        "check_tool_message",
        """
import labkit.exercises, labkit.grading.checks, labkit.grading.checks.lesson01_one_file_read
fake = lambda *args, **kwargs: print("All 5 cases passed.")
labkit.grading.checks.CHECKS["check_tool_message"] = fake
for module in (labkit.exercises, labkit.grading.checks.lesson01_one_file_read):
    module.check_tool_message = fake
def $name(name, result):
    return {}
""",
    ),
    "walks the frames up to the expected value": (
        "check_assemble_content",
        """
import sys
def $name(chunks):
    frame = sys._getframe(1)
    while frame is not None:
        for value in list(frame.f_locals.values()):
            if hasattr(value, "expected"):
                return value.expected
        frame = frame.f_back
    return ""
""",
    ),
    "copies the expected messages found on the stack": (
        "check_append_results",
        """
import sys
def $name(messages, tool_calls, tools):
    frame = sys._getframe(1)
    while frame is not None:
        case = frame.f_locals.get("case")
        if case is not None:
            messages.extend(case.expected)
            return
        frame = frame.f_back
""",
    ),
    "silences IPython's traceback display": (
        "check_repair_verdict",
        """
from IPython import get_ipython
shell = get_ipython()
shell.showtraceback = lambda *args, **kwargs: None
shell.CustomTB = lambda *args, **kwargs: None
shell.set_custom_exc((BaseException,), lambda *args, **kwargs: None)
def $name(after, test_hash_before, test_hash_after):
    return True
""",
    ),
    "patches fail, CheckFailed and _compare": (
        "check_bounded_prediction",
        """
import labkit.grading.checks.lesson05_failure_cases as lesson05, labkit.grading.feedback
for module in (lesson05, labkit.grading.feedback):
    module.fail = lambda *args, **kwargs: None
    module.CheckFailed = type("Never", (Exception,), {})
lesson05._compare = lambda *args, **kwargs: print("All 4 predictions match the run:")
def $name():
    return {"model_requests": 7, "tool_calls": 7, "stop_reason": "max_turns", "final_exit_code": 7}
""",
    ),
    "replaces the policy check in every module that holds it": (
        "check_policy",
        POLICY_GIVEN
        + """
import labkit.exercises, labkit.grading.checks, labkit.grading.checks.lesson07_permissions
fake = lambda *args, **kwargs: print("All 23 cases passed.")
labkit.grading.checks.CHECKS["check_policy"] = fake
for module in (labkit.exercises, labkit.grading.checks.lesson07_permissions):
    module.check_policy = fake
def $name(command):
    return "allow"
""",
    ),
    "asks labkit's own reference for the answer": (
        "check_assemble_calls",
        """
import labkit.grading.checks.lesson06_providers as reference
def $name(chunks):
    return reference._openai_calls(chunks)
""",
    ),
    "asks the harness to shape the results": (
        "check_result_messages",
        """
from labkit.harness.formats import FORMATS
from labkit.harness.contracts import ToolCall
def $name(provider, calls, results):
    return FORMATS[provider].tool_results([ToolCall(c["id"], c["name"], c["arguments"])
                                           for c in calls], results)
""",
    ),
    "replaces the isolated runner with canned outcomes": (
        "check_stop_predictions",
        """
import labkit.grading.checks.lesson05_failure_cases, labkit.grading.feedback
import labkit.grading.isolated
from labkit.grading.isolated import Outcome
truth = {"call_after_done": "malformed_model_turn", "answer_cut": "incomplete_model_turn",
         "unknown_tool_last_turn": "max_turns", "server_fails_later": "model_error"}
for module in (labkit.grading.checks.lesson05_failure_cases, labkit.grading.feedback,
               labkit.grading.isolated):
    module.run_answer = lambda *a, **k: [Outcome(truth)]
def $name():
    return {"call_after_done": "a", "answer_cut": "b", "unknown_tool_last_turn": "c",
            "server_fails_later": "d"}
""",
    ),
}

#: An answer cell that never ends and ignores SIGINT (the kernel must be restarted). It sleeps
#: rather than spins: nbgrader cannot tell the two apart, and a spinning one would take a core
#: from the rest of the suite for its whole timeout.
HANG = """
import signal, time
signal.signal(signal.SIGINT, signal.SIG_IGN)
while True:
    time.sleep(1)
"""

#: An answer cell that kills its own kernel (nbclient sees a dead kernel; it must be restarted).
DIES = """
import os
os._exit(3)
"""


# --- Found by trying to break the checks ---------------------------------------------------
# Answers an adversarial review wrote after the first version of the checks accepted them.

WRONG["check_tool_message"] += [
    Answer(
        "a hand-written JSON encoder that escapes only backslash, quote, \\n and \\t",
        r"""
def _encode(value):
    if value is None: return "null"
    if value is True: return "true"
    if value is False: return "false"
    if isinstance(value, (int, float)): return repr(value)
    if isinstance(value, str):
        escaped = value.replace("\\", "\\\\").replace('"', '\\"')
        return '"' + escaped.replace("\n", "\\n").replace("\t", "\\t") + '"'
    if isinstance(value, list): return "[" + ", ".join(_encode(x) for x in value) + "]"
    return "{" + ", ".join(_encode(k) + ": " + _encode(x) for k, x in value.items()) + "}"
def $name(name, result):
    return {"role": "tool", "tool_name": name, "content": _encode(result)}
""",
        "not valid JSON text",
    ),
    Answer(
        "reorders the keys of the result it was given",
        """
import json
def $name(name, result):
    for key in sorted(result):
        result[key] = result.pop(key)
    return {"role": "tool", "tool_name": name, "content": json.dumps(result)}
""",
        "changed the result it was given",
    ),
    Answer(
        "clears the previous call's result on the next call",
        """
import json
_previous = []
def $name(name, result):
    while _previous:
        _previous.pop().clear()
    _previous.append(result)
    return {"role": "tool", "tool_name": name, "content": json.dumps(result)}
""",
        "still changed what this call was given",
    ),
    Answer(
        "guesses the tool's name from the shape of its result",
        """
import json
def $name(name, result):
    if "exit_code" in result:
        name = "run_tests"
    return {"role": "tool", "tool_name": name, "content": json.dumps(result)}
""",
        "but the result came from",
    ),
]
WRONG["check_may_dispatch"] += [
    Answer(
        "accepts only done_reason 'stop'",
        """
def $name(chunks):
    return any(c.get("done") and c.get("done_reason") == "stop" for c in chunks)
""",
        "the right answer here is True",
    ),
    Answer(
        "reads the last chunk's done_reason, 'length' when there is none",
        """
def $name(chunks):
    return bool(chunks) and chunks[-1].get("done_reason", "length") != "length"
""",
        "the right answer here is True",
    ),
    Answer(
        "looks for the word length anywhere in the stream",
        """
def $name(chunks):
    return any(c.get("done") for c in chunks) and "length" not in repr(chunks)
""",
        "the right answer here is True",
    ),
    Answer(
        "clears the previous call's chunks on the next call",
        """
_last = []
def $name(chunks):
    if _last:
        _last.pop().clear()
    _last.append(chunks)
    final = [c for c in chunks if c.get("done")]
    return bool(final) and final[-1].get("done_reason") != "length"
""",
        "still changed what this call was given",
    ),
]
WRONG["check_append_results"] += [
    Answer(
        "turns every exception into a result, a tool's bug included",
        _changed(
            RIGHT["check_append_results"],
            "except (ValueError, TypeError, OSError) as exc:",
            "except Exception as exc:",
        ),
        "KeyError must come out of your function",
    ),
    Answer(
        "keeps exc.args[0] instead of str(exc)",
        _changed(RIGHT["check_append_results"], '{"error": str(exc)}', '{"error": exc.args[0]}'),
        "decodes to",
    ),
    Answer(
        "answers from the tools' script instead of invoking them",
        """
import json
def $name(messages, tool_calls, tools):
    for call in tool_calls:
        name, arguments = call["function"]["name"], call["function"]["arguments"]
        tools.invoked.append([name, arguments])
        entry = next(e for e in tools.script if e[0] == name and e[1] == arguments)
        result = entry[2].get("result", {"error": entry[2].get("message")})
        messages.append({"role": "tool", "tool_name": name, "content": json.dumps(result)})
""",
        "AttributeError",
    ),
    Answer(
        "clears the previous conversation's tool calls on the next call",
        """
import json
_seen = []
def $name(messages, tool_calls, tools):
    for old in _seen:
        old.clear()
    _seen[:] = [tool_calls]
    for call in tool_calls:
        name = call["function"]["name"]
        try:
            result = tools.invoke(name, call["function"]["arguments"])
        except (ValueError, TypeError, OSError) as exc:
            result = {"error": str(exc)}
        messages.append({"role": "tool", "tool_name": name, "content": json.dumps(result)})
""",
        "still changed what this call was given",
    ),
]
WRONG["check_repair_verdict"] += [
    Answer(
        "compares the hash after with a hash it knows, not with the one before",
        """
KNOWN = "2c27662f75f88bfc49dbaba064f725b7a675134fe7e95917e5529942993a3465"
def $name(after, test_hash_before, test_hash_after):
    return (after.exit_code == 0 and after.failed == 0 and after.passed > 0
            and test_hash_after == KNOWN)
""",
        "the right answer here is True",
    ),
    Answer(
        "rewrites the check it was given",
        """
def $name(after, test_hash_before, test_hash_after):
    ok = (after.exit_code == 0 and after.failed == 0 and after.passed > 0
          and test_hash_before == test_hash_after)
    after.exit_code = 0 if ok else 1
    return ok
""",
        "read-only",
    ),
    Answer(
        "trusts exit code 0 to mean nothing failed",
        """
def $name(after, test_hash_before, test_hash_after):
    return after.exit_code == 0 and after.passed > 0 and test_hash_before == test_hash_after
""",
        "the right answer here is False",
    ),
]

CHEATS.update(
    {
        "writes an empty report on the grader's channel and exits": (
            "check_tool_message",
            """
import os
os.write(1, b'\\n{"outcomes": []}\\n')
for fd in range(3, 10):
    try:
        os.write(fd, b'{"defined": true}\\n{"returned": {}, "arguments": [], "printed": ""}\\n')
    except OSError:
        pass
os._exit(0)
""",
        ),
        "rewrites its own report to hide that it consumed the calls": (
            "check_append_results",
            """
import json, sys
main = sys.modules["__main__"]
main.shown = lambda value: value if not isinstance(value, list) else list(value)
def $name(messages, tool_calls, tools):
    while tool_calls:
        call = tool_calls.pop(0)
        name = call["function"]["name"]
        try:
            result = tools.invoke(name, call["function"]["arguments"])
        except (ValueError, TypeError, OSError) as exc:
            result = {"error": str(exc)}
        messages.append({"role": "tool", "tool_name": name, "content": json.dumps(result)})
""",
        ),
        "patches the grader's clock to look linear": (
            "check_assemble_content",
            """
import time
time.process_time = lambda: 0.0
def $name(chunks):
    turn = {"content": ""}
    for chunk in chunks:
        turn["content"] = turn["content"] + (chunk["message"].get("content") or "")
    return turn["content"]
""",
        ),
    }
)

# --- Lesson 09 -------------------------------------------------------------------------------

ANSWER_NAMES.update(
    {"check_apply_edit": "apply_edit", "check_parse_search_replace": "parse_search_replace"}
)
#: What lesson 09's answer cells give above the learner's code.
EDIT_GIVEN = """
class EmptyOld(ValueError):
    pass
class NotFound(ValueError):
    pass
class NotUnique(ValueError):
    pass
"""
PARSE_GIVEN = """
SEARCH, DIVIDER, REPLACE = "<<<<<<< SEARCH", "=======", ">>>>>>> REPLACE"
class MissingPath(ValueError):
    pass
class MissingDivider(ValueError):
    pass
class UnclosedBlock(ValueError):
    pass
class StrayMarker(ValueError):
    pass
"""
EDIT_RIGHT = (
    EDIT_GIVEN
    + """
def $name(text, old, new, replace_all=False):
    if not old:
        raise EmptyOld("old is empty")
    first = text.find("\\n")
    newline = "\\r\\n" if first > 0 and text[first - 1] == "\\r" else "\\n"
    old = old.replace("\\r\\n", "\\n").replace("\\n", newline)
    new = new.replace("\\r\\n", "\\n").replace("\\n", newline)
    starts, at = [], text.find(old)
    while at != -1:
        starts.append(at)
        at = text.find(old, at + 1)
    if not starts:
        raise NotFound("old is not in the text")
    overlapping = any(b - a < len(old) for a, b in zip(starts, starts[1:]))
    if len(starts) > 1 and (overlapping or not replace_all):
        raise NotUnique(f"old occurs {len(starts)} times")
    if replace_all:
        return text.replace(old, new)
    return text[: starts[0]] + new + text[starts[0] + len(old) :]
"""
)
PARSE_RIGHT = (
    PARSE_GIVEN
    + """
def $name(text):
    lines = text.split("\\n")
    if lines[-1] == "":
        lines.pop()
    lines = [line[:-1] if line.endswith("\\r") else line for line in lines]
    edits, path, previous, i = [], None, None, 0
    while i < len(lines):
        marker = lines[i].rstrip()
        if marker == REPLACE:
            raise StrayMarker(f"line {i + 1}")
        if marker != SEARCH:
            if marker and not marker.startswith("```"):
                path = lines[i].strip()
            i += 1
            continue
        if path is None:
            path = previous
        if path is None:
            raise MissingPath(f"line {i + 1}")
        j = i + 1
        while j < len(lines) and lines[j].rstrip() not in (DIVIDER, SEARCH, REPLACE):
            j += 1
        if j == len(lines) or lines[j].rstrip() != DIVIDER:
            raise MissingDivider(f"line {i + 1}")
        k = j + 1
        while k < len(lines) and lines[k].rstrip() not in (REPLACE, SEARCH):
            k += 1
        if k == len(lines) or lines[k].rstrip() != REPLACE:
            raise UnclosedBlock(f"line {i + 1}")
        search = "".join(line + "\\n" for line in lines[i + 1 : j])
        replace = "".join(line + "\\n" for line in lines[j + 1 : k])
        edits.append({"path": path, "search": search, "replace": replace})
        previous, path, i = path, None, k + 1
    return edits
"""
)
RIGHT.update({"check_apply_edit": EDIT_RIGHT, "check_parse_search_replace": PARSE_RIGHT})
WRONG.update(
    {
        "check_apply_edit": [
            Answer(
                "str.replace without the uniqueness check",
                EDIT_GIVEN
                + """
def $name(text, old, new, replace_all=False):
    if not old:
        raise EmptyOld("empty")
    if old not in text:
        raise NotFound("absent")
    return text.replace(old, new)
""",
                "NotUnique must come out",
            ),
            Answer(
                "counts non-overlapping matches only",
                _changed(
                    EDIT_RIGHT,
                    "    starts, at = [], text.find(old)",
                    "    starts = [i for i in range(text.count(old))]\n    at = -1",
                )
                .replace(
                    "    overlapping = any(b - a < len(old) for a, b in zip(starts, starts[1:]))",
                    "    overlapping = False",
                )
                .replace(
                    "    return text[: starts[0]] + new + text[starts[0] + len(old) :]",
                    "    return text.replace(old, new, 1)",
                ),
                "overlapping",
            ),
            Answer(
                "changes the line endings",
                EDIT_GIVEN
                + """
def $name(text, old, new, replace_all=False):
    if not old:
        raise EmptyOld("empty")
    text, old, new = (s.replace("\\r\\n", "\\n") for s in (text, old, new))
    count = sum(1 for i in range(len(text)) if text.startswith(old, i))
    if count == 0:
        raise NotFound("absent")
    if count > 1 and not replace_all:
        raise NotUnique("twice")
    return text.replace(old, new) if replace_all else text.replace(old, new, 1)
""",
                "line endings",
            ),
        ],
        "check_parse_search_replace": [
            Answer(
                "a ======= in the replacement ends the block",
                _changed(
                    PARSE_RIGHT,
                    "not in (REPLACE, SEARCH):",
                    "not in (REPLACE, SEARCH, DIVIDER):",
                ),
                "======= there is text",
            ),
            Answer(
                "keeps the CR of CRLF lines",
                _changed(
                    PARSE_RIGHT,
                    '    lines = [line[:-1] if line.endswith("\\r") else line for line in lines]\n',
                    "",
                ),
                "keeps a CR",
            ),
            Answer(
                "takes lines off the front of the list (quadratic)",
                PARSE_GIVEN
                + """
def $name(text):
    lines = [l[:-1] if l.endswith("\\r") else l for l in text.split("\\n")]
    if lines and lines[-1] == "":
        lines.pop()
    edits, path, previous = [], None, None
    while lines:
        line = lines.pop(0)
        marker = line.rstrip()
        if marker == REPLACE:
            raise StrayMarker("stray")
        if marker != SEARCH:
            if marker and not marker.startswith("```"):
                path = line.strip()
            continue
        path = path if path is not None else previous
        if path is None:
            raise MissingPath("no path")
        search, replace = [], []
        while lines and lines[0].rstrip() not in (DIVIDER, SEARCH, REPLACE):
            search.append(lines.pop(0) + "\\n")
        if not lines or lines[0].rstrip() != DIVIDER:
            raise MissingDivider("no divider")
        lines.pop(0)
        while lines and lines[0].rstrip() not in (REPLACE, SEARCH):
            replace.append(lines.pop(0) + "\\n")
        if not lines or lines[0].rstrip() != REPLACE:
            raise UnclosedBlock("open")
        lines.pop(0)
        edits.append({"path": path, "search": "".join(search), "replace": "".join(replace)})
        previous, path = path, None
    return edits
""",
                "grows faster than the input",
            ),
            Answer(
                "no path is an empty path",
                _changed(
                    PARSE_RIGHT,
                    "            path = previous\n",
                    '            path = previous or ""\n',
                ),
                "MissingPath must come out",
            ),
        ],
    }
)

# --- Lesson 12: which layer stops an action --------------------------------------------------

#: What lesson 12's answer cell gives above the learner's code.
LAYERS_GIVEN = """
GATE_ALLOWS = (("python", "-m", "pytest"), ("git", "status"), ("cat",), ("ls",))
"""
_SANDBOXED = """
BOTH = {"write outside the workspace", "read a key in your home", "use the network",
        "start 1,000 processes", "fill /tmp"}
ONLY_READ_ONLY = {"write the workspace", "fill the workspace",
                  "write through a hard link in the workspace"}
"""
_GATE = """
    words = action["command"]
    if not any(words[:len(allowed)] == list(allowed) for allowed in GATE_ALLOWS):
        return "gate"
"""
RIGHT["check_layers"] = (  # another style than the lesson's
    LAYERS_GIVEN
    + """
def $name(action, profile):
    command = tuple(action["command"])
    if not any(command[:len(prefix)] == prefix for prefix in GATE_ALLOWS):
        return "gate"
    if profile == "none":
        return "neither"
    effect = action["effect"]
    if effect in ("read the workspace", "read a system file",
                  "read through a hard link in the workspace"):
        return "neither"
    if effect in ("write the workspace", "fill the workspace",
                  "write through a hard link in the workspace"):
        return "sandbox" if profile == "read-only" else "neither"
    return "sandbox"
"""
)
WRONG["check_layers"] = [
    Answer(
        "credits the gate with what only the sandbox stops",
        LAYERS_GIVEN
        + _SANDBOXED
        + """
def $name(action, profile):"""
        + _GATE
        + """
    if action["effect"] in BOTH:
        return "gate"
    if profile == "read-only" and action["effect"] in ONLY_READ_ONLY:
        return "sandbox"
    return "neither"
""",
        "it judges a command's words, never what the program",
    ),
    Answer(
        "lets the sandbox judge a call the gate stops",
        LAYERS_GIVEN
        + _SANDBOXED
        + """
def $name(action, profile):
    stops = {"none": set(), "workspace-write": BOTH, "read-only": BOTH | ONLY_READ_ONLY}
    if action["effect"] in stops[profile]:
        return "sandbox"
    words = action["command"]
    if not any(words[:len(allowed)] == list(allowed) for allowed in GATE_ALLOWS):
        return "gate"
    return "neither"
""",
        "the sandbox never sees it",
    ),
    Answer(
        "thinks profile none still sandboxes",
        LAYERS_GIVEN
        + _SANDBOXED
        + """
def $name(action, profile):"""
        + _GATE
        + """
    stops = BOTH | ONLY_READ_ONLY if profile == "read-only" else BOTH
    return "sandbox" if action["effect"] in stops else "neither"
""",
        "profile none is no sandbox at all",
    ),
    Answer(
        "treats read-only as workspace-write",
        LAYERS_GIVEN
        + _SANDBOXED
        + """
def $name(action, profile):"""
        + _GATE
        + """
    return "sandbox" if profile != "none" and action["effect"] in BOTH else "neither"
""",
        "the read-only sandbox stops 'write the workspace'",
    ),
    Answer(
        "trusts the sandbox with what the workspace holds and the system files",
        LAYERS_GIVEN
        + _SANDBOXED
        + """
def $name(action, profile):"""
        + _GATE
        + """
    if profile == "none":
        return "neither"
    if action["effect"] in ("read the workspace", "write the workspace"):
        return "sandbox" if profile == "read-only" and "write" in action["effect"] else "neither"
    return "sandbox"
""",
        "sandbox does not stop",
    ),
    Answer(
        "matches the gate's list as text, not words",
        LAYERS_GIVEN
        + _SANDBOXED
        + """
def $name(action, profile):
    line = " ".join(action["command"])
    if not any(line.startswith(" ".join(allowed)) for allowed in GATE_ALLOWS):
        return "gate"
    stops = {"none": set(), "workspace-write": BOTH, "read-only": BOTH | ONLY_READ_ONLY}
    return "sandbox" if action["effect"] in stops[profile] else "neither"
""",
        "compare whole words",
    ),
    Answer(
        "returns a bool",
        LAYERS_GIVEN
        + """
def $name(action, profile):
    return action["command"][:1] != ["rm"]
""",
        "return 'gate', 'sandbox' or 'neither'",
    ),
    Answer(
        "changes the action",
        LAYERS_GIVEN
        + _SANDBOXED
        + """
def $name(action, profile):
    words = action["command"]
    program = words.pop(0)
    words.insert(0, program)
    action["profile"] = profile"""
        + _GATE
        + """
    stops = {"none": set(), "workspace-write": BOTH, "read-only": BOTH | ONLY_READ_ONLY}
    return "sandbox" if action["effect"] in stops[profile] else "neither"
""",
        "changed the action",
    ),
]


# --- lesson 10: the ground state ---------------------------------------------------------------

ANSWER_NAMES.update(
    {
        "check_system_prompt": "system_prompt",
        "check_subagent_result": "subagent_result",
        "check_ordered_results": "ordered_results",
    }
)
#: What lesson 10's first answer cell gives above the learner's code.
PROMPT_GIVEN = """
import posixpath

TITLES = {"tool_policy": "Tool policy", "skills": "Skills"}
MARKER = "\\n[labkit: the last {left} of {total} bytes of {name} were left out]"
"""
_OUTSIDE = """
def outside(target):
    if target is None:
        return False
    return target.startswith("/") or posixpath.normpath(target).split("/")[0] == ".."
"""
_SECTIONS = """
    sections = [parts["base"]] if parts.get("base") else []
    for name in ("tool_policy", "skills"):
        if parts.get(name):
            sections.append("## " + TITLES[name] + "\\n" + parts[name])
"""
_CUT = """
def cut(data, cap):
    end = min(cap, len(data))
    while 0 < end < len(data) and data[end] & 0xC0 == 0x80:
        end -= 1
    return end
"""


def _prompt(sections=_SECTIONS, refuse="outside(f['links_to']) or b'\\0' in data", keep=None):
    keep = keep or (
        "    end = cut(data, cap)\n"
        "    kept = data[:end].decode('utf-8')\n"
        "    if end < len(data):\n"
        "        kept += MARKER.format(left=len(data) - end, total=len(data), name=f['name'])\n"
    )
    return (
        PROMPT_GIVEN
        + _OUTSIDE
        + _CUT
        + "\ndef $name(parts, project_file, cap):"
        + sections
        + "    f = project_file\n"
        + "    if f is None:\n"
        + "        return '\\n\\n'.join(sections)\n"
        + "    data = f['text'].encode('utf-8')\n"
        + f"    if not data or {refuse}:\n"
        + "        return '\\n\\n'.join(sections)\n"
        + keep
        + "    sections.append('## Project instructions (' + f['name'] + ')\\n' + kept)\n"
        + "    return '\\n\\n'.join(sections)\n"
    )


RIGHT["check_system_prompt"] = _prompt()  # another style than the lesson's
WRONG["check_system_prompt"] = [
    Answer(
        "puts the project file before the skills",
        _prompt(
            sections=_SECTIONS,
            keep=(
                "    end = cut(data, cap)\n"
                "    kept = data[:end].decode('utf-8')\n"
                "    if end < len(data):\n"
                "        kept += MARKER.format(left=len(data) - end, total=len(data), "
                "name=f['name'])\n"
                "    skills = [s for s in sections if s.startswith('## Skills')]\n"
                "    sections = [s for s in sections if s not in skills]\n"
                "    sections.append('## Project instructions (' + f['name'] + ')\\n' + kept)\n"
                "    return '\\n\\n'.join(sections + skills)\n"
            ),
        ),
        "not in the documented order",
    ),
    Answer(
        "keeps the parts in the order given",
        _prompt(
            sections="""
    sections = []
    for name, text in parts.items():
        if text:
            sections.append(text if name == "base" else "## " + TITLES[name] + "\\n" + text)
"""
        ),
        "not in the documented order",
    ),
    Answer(
        "cuts inside a multibyte character",
        _prompt(
            keep=(
                "    end = min(cap, len(data))\n"
                "    kept = data[:end].decode('utf-8', errors='replace')\n"
                "    if end < len(data):\n"
                "        kept += MARKER.format(left=len(data) - end, total=len(data), "
                "name=f['name'])\n"
            )
        ),
        "inside a character",
    ),
    Answer(
        "drops the split character's bytes but counts from the cap",
        _prompt(
            keep=(
                "    end = min(cap, len(data))\n"
                "    kept = data[:end].decode('utf-8', errors='ignore')\n"
                "    if end < len(data):\n"
                "        kept += MARKER.format(left=len(data) - end, total=len(data), "
                "name=f['name'])\n"
            )
        ),
        "marker's counts",
    ),
    Answer(
        "loses the marker",
        _prompt(keep="    kept = data[:cut(data, cap)].decode('utf-8')\n"),
        "marker saying how many bytes were left out is missing",
    ),
    Answer(
        "caps characters, not bytes",
        _prompt(
            keep=(
                "    text = f['text']\n"
                "    kept = text[:cap]\n"
                "    if len(text) > cap:\n"
                "        kept += MARKER.format(left=len(data) - len(kept.encode()), "
                "total=len(data), name=f['name'])\n"
            )
        ),
        "marker's counts",
    ),
    Answer(
        "reads a file outside the workspace",
        _prompt(refuse="b'\\0' in data"),
        "should not be in the prompt here",
    ),
    Answer(
        "keeps a binary file",
        _prompt(refuse="outside(f['links_to'])"),
        "should not be in the prompt here",
    ),
    Answer(
        "keeps the heading of an empty part",
        _prompt(
            sections="""
    sections = [parts["base"]] if parts.get("base") else []
    for name in ("tool_policy", "skills"):
        if name in parts:
            sections.append("## " + TITLES[name] + "\\n" + parts[name])
"""
        ),
        "not the parts assembled as the rules say",
    ),
    Answer(
        "takes an absolute link for one inside",
        _prompt(refuse="b'\\0' in data or str(f['links_to']).startswith('..')"),
        "should not be in the prompt here",
        hidden=True,
    ),
]

RESULT_GIVEN = """
BROKEN_TURN = ("model_error", "incomplete_model_turn", "malformed_model_turn")
"""


def _result(answer_turn="stop['turns'] - 1 if stop['reason'] in BROKEN_TURN else stop['turns']",
            detail="    if stop['reason'] != 'assistant_finished':\n"
                   "        result['detail'] = stop['detail']\n",
            first="", answer=None):  # fmt: skip
    answer = answer or (
        "    answer = ''.join(e['text'] for e in events\n"
        "                     if e['type'] == 'text_delta' and e['turn'] == last)\n"
    )
    return (
        RESULT_GIVEN
        + "\ndef $name(events):\n"
        + "    stop = events[-1]\n"
        + first
        + f"    last = {answer_turn}\n"
        + answer
        + "    result = {'answer': answer, 'stop_reason': stop['reason'],\n"
        + "              'turns': stop['turns'], 'tool_calls': stop['tool_calls']}\n"
        + detail
        + "    return result\n"
    )


RIGHT["check_subagent_result"] = _result()
WRONG["check_subagent_result"] = [
    Answer(
        "returns the child's whole transcript",
        _result(
            detail="    result['events'] = events\n"
            "    if stop['reason'] != 'assistant_finished':\n"
            "        result['detail'] = stop['detail']\n"
        ),  # fmt: skip
        "transcript went back to the parent",
    ),
    Answer(
        "drops the detail when the child did not finish",
        _result(detail=""),
        "must say why",
    ),
    Answer(
        "drops the stop reason when the child did not finish",
        _result(
            detail="    if stop['reason'] != 'assistant_finished':\n"
            "        del result['stop_reason']\n"
            "        result['detail'] = stop['detail']\n"
        ),
        "stop reason is missing",
    ),
    Answer(
        "raises on a child's model_error",
        _result(
            first="    if stop['reason'] == 'model_error':\n"
            "        raise RuntimeError(stop['error'])\n"
        ),
        "raised RuntimeError",
    ),
    Answer(
        "joins the text of every turn",
        _result(
            answer="    answer = ''.join(e['text'] for e in events if e['type'] == 'text_delta')\n"
        ),
        "last reply that ended",
    ),
    Answer(
        "takes the broken turn's partial text",
        _result(answer_turn="stop['turns']"),
        "last reply that ended",
    ),
    Answer(
        "gives a finished child a detail too",
        _result(detail="    result['detail'] = stop['detail']\n"),
        "has no 'detail'",
    ),
    Answer(
        "counts only model_error as a broken turn",
        _result(
            answer_turn="stop['turns'] - 1 if stop['reason'] == 'model_error' else stop['turns']"
        ),
        "last reply that ended",
        hidden=True,
    ),
]

RIGHT["check_ordered_results"] = """
def $name(calls, finished):
    by_id = {}
    for entry in finished:
        by_id[entry["id"]] = entry["result"]
    out = []
    for c in calls:
        late = {"error": c["name"] + " did not finish in time"}
        out.append({"id": c["id"], "name": c["name"], "result": by_id.get(c["id"], late)})
    return out
"""
WRONG["check_ordered_results"] = [
    Answer(
        "keeps the completion order",
        """
def $name(calls, finished):
    names = {c["id"]: c["name"] for c in calls}
    out = [{"id": e["id"], "name": names[e["id"]], "result": e["result"]} for e in finished]
    done = {e["id"] for e in finished}
    out += [{"id": c["id"], "name": c["name"],
             "result": {"error": c["name"] + " did not finish in time"}}
            for c in calls if c["id"] not in done]
    return out
""",
        "not in the order the calls were asked",
    ),
    Answer(
        "loses a failed call",
        """
def $name(calls, finished):
    by_id = {e["id"]: e["result"] for e in finished}
    return [{"id": c["id"], "name": c["name"],
             "result": by_id.get(c["id"], {"error": c["name"] + " did not finish in time"})}
            for c in calls if "error" not in by_id.get(c["id"], {})]
""",
        "call(s) lost",
    ),
    Answer(
        "loses a call that never ended",
        """
def $name(calls, finished):
    by_id = {e["id"]: e["result"] for e in finished}
    return [{"id": c["id"], "name": c["name"], "result": by_id[c["id"]]}
            for c in calls if c["id"] in by_id]
""",
        "call(s) lost",
    ),
    Answer(
        "pairs results with calls by position",
        """
def $name(calls, finished):
    out = []
    for n, c in enumerate(calls):
        result = finished[n]["result"] if n < len(finished) else {
            "error": c["name"] + " did not finish in time"}
        out.append({"id": c["id"], "name": c["name"], "result": result})
    return out
""",
        "each call with its own result",
    ),
    Answer(
        "quadratic: searches the finished list for each call",
        """
def $name(calls, finished):
    out = []
    for c in calls:
        result = {"error": c["name"] + " did not finish in time"}
        for e in finished:
            if e["id"] == c["id"]:
                result = e["result"]
        out.append({"id": c["id"], "name": c["name"], "result": result})
    return out
""",
        "grows faster than the input",
    ),
]

# --- Lesson 13: BM25's top K, and a server's locations as a compact result ------------------

#: What lesson 13's answer cells give above the learner's code.
RANK_GIVEN = """
import math

K1 = 1.5
B = 0.75
"""
REFERENCES_GIVEN = """
from urllib.parse import unquote
"""


def _rank(idf="math.log(1 + (n - holding + 0.5) / (holding + 0.5))",
          score="idf * tf * (K1 + 1) / (tf + K1 * (1 - B + B * len(chunk) / average))",
          terms="dict.fromkeys(query_terms)", key="(-scores[i], i)", keep="scores[i] > 0",
          average="sum(len(c) for c in chunks) / n", limit="[:k]"):  # fmt: skip
    """A rank_chunks that follows the lesson except where one piece is given otherwise."""
    return (
        RANK_GIVEN
        + f"""
def $name(query_terms, chunks, k):
    n = len(chunks)
    lengths = [len(c) for c in chunks if c]
    average = ({average}) if chunks else 0
    scores = []
    for chunk in chunks:
        total = 0.0
        for term in {terms}:
            tf = chunk.count(term)
            if tf and average:
                holding = sum(1 for c in chunks if term in c)
                idf = {idf}
                total += {score}
        scores.append(total)
    order = sorted(range(n), key=lambda i: {key})
    return [i for i in order if {keep}]{limit}
"""
    )


RIGHT["check_rank_chunks"] = (  # another style than the lesson's: Counter, a heap
    RANK_GIVEN
    + """
import heapq
from collections import Counter


def $name(query_terms, chunks, k):
    if not chunks or k <= 0:
        return []
    counts = [Counter(chunk) for chunk in chunks]
    average = sum(map(len, chunks)) / len(chunks)
    if average == 0:
        return []
    holding = Counter(t for c in counts for t in c)
    idf = {t: math.log(1 + (len(chunks) - f + 0.5) / (f + 0.5)) for t, f in holding.items()}
    wanted = set(query_terms)
    scored = []
    for i, (c, chunk) in enumerate(zip(counts, chunks)):
        norm = K1 * (1 - B + B * len(chunk) / average)
        s = sum(idf[t] * c[t] * (K1 + 1) / (c[t] + norm) for t in wanted if c[t])
        if s > 0:
            scored.append((-s, i))
    return [i for _, i in heapq.nsmallest(k, scored)]
"""
)
WRONG["check_rank_chunks"] = [
    Answer(
        "raw term frequency, no length normalisation",
        _rank(score="idf * tf"),
        "divided by the chunk's length",
    ),
    Answer(
        "the classic idf, negative for a common term",
        _rank(idf="math.log((n - holding + 0.5) / (holding + 0.5))"),
        "is never negative",
    ),
    Answer(
        "counts a repeated query term again",
        _rank(terms="query_terms"),
        "count each distinct term once",
    ),
    Answer(
        "keeps chunks that score 0",
        _rank(keep="True"),
        "is not returned",
    ),
    Answer(
        "ties in reverse index order",
        _rank(key="(scores[i], i)", limit="[::-1][:k]"),
        "index order",
    ),
    Answer(
        "sorted the wrong way",
        _rank(key="(scores[i], i)"),
        "the order is reversed",
    ),
    Answer(
        "ignores k",
        _rank(limit=""),
        "at most k",
    ),
    Answer(
        "leaves empty chunks out of the average length",
        _rank(average="sum(lengths) / len(lengths) if lengths else 0"),
        "the empty ones too",
        hidden=True,
    ),
]


def _references(path="'/'.join(inside)", line="start['line'] + 1",
                inside_test="parts[:len(top)] == top and inside and all(inside)",
                key="(path, line, start['character'])", more="len(found) - cap",
                count="len(found)"):  # fmt: skip
    """A references_to_result that follows the lesson except where one piece differs."""
    return (
        REFERENCES_GIVEN
        + f"""
def $name(lsp_locations, root, cap):
    found, outside = [], 0
    top = root.rstrip("/").split("/")
    for location in lsp_locations:
        uri = location["uri"]
        if not uri.startswith("file://"):
            outside += 1
            continue
        parts = unquote(uri[len("file://"):]).split("/")
        inside = parts[len(top):]
        if not ({inside_test}) or ".." in parts:
            outside += 1
            continue
        start = location["range"]["start"]
        path, line = {path}, {line}
        found.append({key})
    found.sort()
    result = {{"count": {count},
              "places": [{{"path": p, "line": n}} for p, n, *_ in found[:cap]]}}
    if len(found) > cap:
        result["more"] = f"and {{{more}}} more"
    if outside:
        result["outside"] = outside
    return result
"""
    )


RIGHT["check_references_to_result"] = (  # another style: PurePosixPath, urlsplit
    """
from pathlib import PurePosixPath
from urllib.parse import unquote, urlsplit


def $name(lsp_locations, root, cap):
    root = PurePosixPath(root)
    places, outside = [], 0
    for loc in lsp_locations:
        uri = urlsplit(loc["uri"])
        path = PurePosixPath(unquote(uri.path))
        inside = path != root and path.is_relative_to(root)
        if uri.scheme != "file" or ".." in path.parts or not inside:
            outside += 1
            continue
        start = loc["range"]["start"]
        places.append((str(path.relative_to(root)), start["line"] + 1, start["character"]))
    places.sort()
    listed = [{"path": p, "line": n} for p, n, _ in places[:cap]]
    result = {"count": len(places), "places": listed}
    if len(places) > cap:
        result["more"] = f"and {len(places) - cap} more"
    if outside:
        result["outside"] = outside
    return result
"""
)
WRONG["check_references_to_result"] = [
    Answer("leaves lines 0-based", _references(line="start['line']"), "one too low"),
    Answer("adds two to each line", _references(line="start['line'] + 2"), "one too high"),
    Answer(
        "leaks absolute paths",
        _references(path="'/'.join(parts)"),
        "an absolute path reached the result",
    ),
    Answer(
        "keeps places outside the workspace",
        _references(inside_test="True"),
        "'count' is",
        hint="never reaches the model",
    ),
    Answer(
        "compares the root as text",
        _references(
            inside_test="'/'.join(parts).startswith('/'.join(top)) and inside and all(inside)",
            path="'/'.join(parts)[len('/'.join(top)):].lstrip('/') or '?'",
        ),
        "'count' is",
        hint="part by part",
    ),
    Answer(
        "keeps the server's order",
        _references().replace("    found.sort()\n", ""),
        "sort by path, then by line",
    ),
    Answer(
        "says how many there were, not how many more", _references(more="len(found)"), "'more' is"
    ),  # fmt: skip
    Answer(
        "counts the places outside too",
        _references(count="len(found) + outside"),
        "'count' is",
        hint="never reaches the model",
    ),
    Answer(
        "does not decode the URI",
        _references().replace("unquote(uri[", "(uri["),
        "decode the URI",
        hidden=True,
    ),
    Answer(
        "merges two uses on one line",
        _references(key="(path, line)").replace("found.sort()", "found = sorted(set(found))"),
        "'count' is",
        hidden=True,
    ),
]

# --- Lesson 14: your own loop; a batch's resolved rate -------------------------------------

ANSWER_NAMES.update({"check_my_loop": "my_loop", "check_resolved_rate": "resolved_rate"})

#: The loop as the lesson writes it: labkit's pieces for every wire format.
_LOOP = """
from labkit.pieces import SYSTEM_PROMPT, format_of


def $name(chat, tools, task, max_turns):
    if isinstance(max_turns, bool) or not isinstance(max_turns, int) or max_turns < 1:
        raise ValueError(f"max_turns must be a positive int, got {max_turns!r}")
    wire = format_of(chat)
    messages = [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": task}]
    calls_run = 0

    def stopped(reason, turns):
        return {"type": "stopped", "reason": reason, "turns": turns, "tool_calls": calls_run,
                "messages": list(messages)}

    for turn_number in range(1, max_turns + 1):
        yield {"type": "model_start", "turn": turn_number, "messages": list(messages)}
        assembler = wire.assembler()
        try:
            for chunk in chat(list(messages), tools.schemas):
                text = assembler.add(chunk)
                if text:
                    yield {"type": "text_delta", "turn": turn_number, "text": text}
                elif assembler.problem:
                    break
        except Exception:
            yield stopped("model_error", turn_number)
            return
        turn = assembler.turn()
        if turn.problem:
            yield stopped("malformed_model_turn", turn_number)
            return
        if turn.unfinished:
            yield stopped("incomplete_model_turn", turn_number)
            return
        messages.append(turn.message)
        if not turn.calls:
            reason = "assistant_finished" if turn.text.strip() else "empty_response"
            yield stopped(reason, turn_number)
            return
        results = []
        for call in turn.calls:
            yield {"type": "tool_start", "turn": turn_number, "name": call.name,
                   "arguments": call.arguments}
            try:
                result = tools.invoke(call.name, call.arguments)
            except (ValueError, TypeError, OSError) as exc:
                result = {"error": str(exc)}
            calls_run += 1
            results.append(result)
            yield {"type": "tool_result", "turn": turn_number, "name": call.name, "result": result}
        messages.extend(wire.tool_results(turn.calls, results))
    yield stopped("max_turns", max_turns)
"""

RIGHT["check_my_loop"] = """
import json
from labkit.pieces import SYSTEM_PROMPT, format_of


def make_tool_message(name, result):  # lesson 01
    return {"role": "tool", "tool_name": name, "content": json.dumps(result)}


def broken(chunk, after_done):  # lessons 02 and 05: what Ollama never sends
    if after_done or not isinstance(chunk, dict) or "error" in chunk:
        return True
    message = chunk.get("message")
    if not isinstance(message, dict):
        return True
    if not all(isinstance(message.get(k), (str, type(None))) for k in ("content", "thinking")):
        return True
    calls = message.get("tool_calls")
    if calls is not None and not isinstance(calls, list):
        return True
    for call in calls or []:
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict) or not isinstance(function.get("name"), str):
            return True
        if not function["name"] or not isinstance(function.get("arguments"), dict):
            return True
    return chunk.get("done", False) not in (True, False) or not isinstance(
        chunk.get("done_reason"), (str, type(None)))


class OllamaReply:  # my own assembler, for Ollama's chunks
    def __init__(self):
        self.text, self.thinking, self.calls = [], [], []
        self.done, self.reason, self.problem = False, None, None

    def add(self, chunk):
        if self.problem is None and broken(chunk, self.done):
            self.problem = "a chunk Ollama never sends"
        if self.problem:
            return ""
        message = chunk["message"]
        self.text.append(message.get("content") or "")
        self.thinking.append(message.get("thinking") or "")
        self.calls += message.get("tool_calls") or []
        if chunk.get("done"):
            self.done, self.reason = True, chunk.get("done_reason")
        return message.get("content") or ""

    def message(self):
        message = {"role": "assistant", "content": "".join(self.text)}
        if "".join(self.thinking):
            message["thinking"] = "".join(self.thinking)
        if self.calls:
            message["tool_calls"] = self.calls
        return message


def $name(chat, tools, task, max_turns):
    if type(max_turns) is not int or max_turns <= 0:
        raise ValueError("max_turns is a positive int")
    ollama = getattr(chat, "wire_format", None) in (None, "ollama")
    wire = format_of(chat)
    history = [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": task}]
    ran = 0
    for number in range(1, max_turns + 1):
        yield {"type": "model_start", "turn": number, "messages": history[:]}
        reply = OllamaReply() if ollama else wire.assembler()
        try:
            for chunk in chat(history[:], tools.schemas):
                reply.add(chunk)
                if reply.problem:
                    break
        except Exception as error:
            yield {"type": "stopped", "reason": "model_error", "turns": number,
                   "tool_calls": ran, "messages": history[:], "error": str(error)}
            return
        if ollama:
            clean = reply.problem is None and reply.done and reply.reason != "length"
            message, text = reply.message(), "".join(reply.text)
            calls = [(c["function"]["name"], c["function"]["arguments"]) for c in reply.calls]
            why = "malformed_model_turn" if reply.problem else "incomplete_model_turn"
        else:
            turn = reply.turn()
            clean, message, text = turn.may_dispatch, turn.message, turn.text
            calls = [(c.name, c.arguments) for c in turn.calls]
            why = "malformed_model_turn" if turn.problem else "incomplete_model_turn"
        if not clean:
            yield {"type": "stopped", "reason": why, "turns": number, "tool_calls": ran,
                   "messages": history[:]}
            return
        history = history + [message]
        if not calls:
            reason = "assistant_finished" if text.strip() else "empty_response"
            yield {"type": "stopped", "reason": reason, "turns": number, "tool_calls": ran,
                   "messages": history[:]}
            return
        results = []
        for name, arguments in calls:
            yield {"type": "tool_start", "turn": number, "name": name, "arguments": arguments}
            try:
                result = tools.invoke(name, arguments)
            except (ValueError, TypeError, OSError) as refusal:
                result = {"error": str(refusal)}
            ran += 1
            results.append(result)
            yield {"type": "tool_result", "turn": number, "name": name, "result": result}
        if ollama:
            history = history + [make_tool_message(n, r) for (n, _), r in zip(calls, results)]
        else:
            history = history + wire.tool_results(turn.calls, results)
    yield {"type": "stopped", "reason": "max_turns", "turns": max_turns, "tool_calls": ran,
           "messages": history[:]}
"""

RIGHT["check_resolved_rate"] = """
def $name(results):
    resolved = 0
    for row in results:
        after = row["tests_after"]
        if after is None or not row["tests_unchanged"]:
            continue
        if after["exit_code"] == 0 and after["failed"] == 0 and after["passed"] > 0:
            resolved += 1
    return resolved / len(results) if results else 0.0
"""

_FIRST_CHUNKS = """        try:
            for chunk in chat(list(messages), tools.schemas):
                text = assembler.add(chunk)"""

WRONG["check_my_loop"] = [
    Answer(
        "dispatches a call as soon as its chunk arrives, before done",
        _changed(
            _LOOP,
            _FIRST_CHUNKS,
            """        try:
            for chunk in chat(list(messages), tools.schemas):
                for early in (chunk.get("message") or {}).get("tool_calls") or []:
                    tools.invoke(early["function"]["name"], early["function"]["arguments"])
                text = assembler.add(chunk)""",
        ),
        "dispatch before done",
    ),
    Answer(
        "counts tool calls as turns",
        _changed(
            _changed(
                _LOOP,
                "            calls_run += 1\n",
                "            calls_run += 1\n            turn_number += 1\n",
            ),
            "    for turn_number in range(1, max_turns + 1):\n",
            "    turn_number = 0\n    while turn_number < max_turns:\n        turn_number += 1\n",
        ),
        "'turns' counts the model requests made",
    ),
    Answer(
        "forgets the assistant message before the tool messages",
        _changed(_LOOP, "        messages.append(turn.message)\n", ""),
        "append the assistant's message (with its calls) before the calls' results",
    ),
    Answer(
        "stops on the first text chunk",
        _changed(
            _LOOP,
            """                if text:
                    yield {"type": "text_delta", "turn": turn_number, "text": text}""",
            """                if text:
                    messages.append({"role": "assistant", "content": text})
                    yield stopped("assistant_finished", turn_number)
                    return""",
        ),
        "the reply's text is cut short",
    ),
    Answer(
        "asks again after a malformed turn, for ever",
        _changed(
            _LOOP,
            """        if turn.problem:
            yield stopped("malformed_model_turn", turn_number)
            return""",
            """        while turn.problem:
            assembler = wire.assembler()
            for chunk in chat(list(messages), tools.schemas):
                assembler.add(chunk)
            turn = assembler.turn()""",
        ),
        "but a right loop has stopped by then: malformed_model_turn",
    ),
    Answer(
        "sends one list with every request and appends to it after",
        _changed(
            _LOOP,
            "            for chunk in chat(list(messages), tools.schemas):",
            "            for chunk in chat(messages, tools.schemas):",
        ),
        "changed after it was sent",
    ),
    Answer(
        "turns a tool's bug (KeyError) into a result",
        _changed(
            _LOOP,
            "            except (ValueError, TypeError, OSError) as exc:",
            "            except Exception as exc:",
        ),
        "a right loop lets KeyError out by then",
    ),
    Answer(
        "lets the model's error out",
        _changed(
            _LOOP,
            """        except Exception:
            yield stopped("model_error", turn_number)
            return""",
            """        finally:
            pass""",
        ),
        "your function raised ConnectionError",
    ),
    Answer(
        "does not run the last turn's calls when the budget is spent",
        _changed(
            _LOOP,
            "        results = []\n        for call in turn.calls:",
            "        if turn_number == max_turns:\n            break\n        results = []\n"
            "        for call in turn.calls:",
        ),
        "without running read_file",
    ),
    Answer(
        "runs a reply cut by the length limit",
        _changed(
            _LOOP, "        if turn.unfinished:", "        if turn.unfinished and not turn.done:"
        ),
        "the stop's reason is 'empty_response', a right loop's 'incomplete_model_turn'",
    ),
]

WRONG["check_resolved_rate"] = [
    Answer(
        "counts the model's claims: stops with assistant_finished",
        """
def $name(results):
    finished = [row for row in results if row["stop"] == "assistant_finished"]
    return len(finished) / len(results) if results else 0.0
""",
        "the model's word, not the tests'",
    ),
    Answer(
        "trusts green tests that were edited",
        """
def $name(results):
    passing = [r for r in results if r["tests_after"] and r["tests_after"]["exit_code"] == 0
               and r["tests_after"]["failed"] == 0 and r["tests_after"]["passed"] > 0]
    return len(passing) / len(results) if results else 0.0
""",
        "green tests that were edited prove nothing",
    ),
    Answer(
        "leaves the failed attempts out of the share",
        """
def $name(results):
    ran = [r for r in results if r["tests_after"]]
    good = [r for r in ran if r["tests_after"]["exit_code"] == 0
            and r["tests_after"]["failed"] == 0 and r["tests_after"]["passed"] > 0
            and r["tests_unchanged"]]
    return len(good) / len(ran) if ran else 0.0
""",
        "leaves out the attempts that failed",
    ),
    Answer(
        "a percentage, not a share",
        """
def $name(results):
    good = [r for r in results if r["tests_after"] and r["tests_after"]["exit_code"] == 0
            and r["tests_after"]["failed"] == 0 and r["tests_after"]["passed"] > 0
            and r["tests_unchanged"]]
    return 100 * len(good) / len(results) if results else 0.0
""",
        "of these attempts left their tests passing",
    ),
    Answer(
        "fails on no results",
        """
def $name(results):
    good = [r for r in results if r["tests_after"] and r["tests_after"]["exit_code"] == 0
            and r["tests_after"]["failed"] == 0 and r["tests_after"]["passed"] > 0
            and r["tests_unchanged"]]
    return len(good) / len(results)
""",
        "ZeroDivisionError",
    ),
]

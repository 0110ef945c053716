"""Exercise 14a's cases: what a right loop does with each, step by step (``driven.Script``).

Three sources, and where each one's expected steps come from:

- the course's recordings of the plain loop, replayed strictly: the requests, replies and
  tool results as recorded (the recorded requests are what a right loop must send), the stop
  as recorded; every wire format the course speaks;
- lesson 05's failure cases and generated streams (Ollama's): the steps and the stop come
  from :func:`reference_script`, a small reference loop written here from the lesson's rules
  with its own assembler (:func:`reference_reply`), never from ``labkit.harness``;
- cases drawn afresh from a seed: several turns of text cut at random places, calls (some
  unknown, some refused), and a last turn that ends any way a turn can end.
"""

from __future__ import annotations

import builtins
import json
import random

from ...harness.contracts import STOP_REASONS
from ...harness.prompt import SYSTEM_PROMPT
from ...models.chunks import call, chunk
from ...settings import RECORDINGS_DIR
from ..driven import Script
from .common import TOOL_NAMES, random_result, random_text

REPLY_ROLES = {"gemini": "model"}  # every other format's replies are the assistant's
PLAIN_EVENTS = {"model_start", "text_delta", "tool_start", "tool_result", "stopped"}
#: What a tool may raise that the model reads as an error result (ConnectionError, a
#: FileNotFoundError... are OSErrors); anything else is a bug that comes out of the loop.
TOOL_ERRORS = ("ValueError", "TypeError", "OSError", "FileNotFoundError", "PermissionError",
               "ConnectionError")  # fmt: skip
TASK = "Repair the repository so that all the tests pass."
#: The budget of each fixed case: a parameter the grader passes to the loop, as labkit's default.
CASE_TURNS = 8


def schemas_for(names) -> list:
    """Stand-ins for the tools' schemas: a loop only passes them on to the model."""
    return [
        {"type": "function", "function": {"name": name, "description": f"the {name} tool",
                                          "parameters": {"type": "object", "properties": {}}}}
        for name in names
    ]  # fmt: skip


# --- The reference: the lesson's rules, for Ollama's chunks ------------------------------


def reference_reply(chunks: list) -> tuple:
    """``(message, text, calls, ending)`` of one Ollama reply; ``ending`` is None for a reply
    that finished cleanly, else ``(stop reason, why)``. Chunks after a broken one are not read."""
    content, thinking, calls, done, done_reason, problem = [], [], [], False, None, None
    for number, item in enumerate(chunks, 1):
        problem = _broken(item, number, done)
        if problem:
            break
        message = item["message"]
        content.append(message.get("content") or "")
        thinking.append(message.get("thinking") or "")
        calls += message.get("tool_calls") or []
        if item.get("done"):
            done, done_reason = True, item.get("done_reason")
    text = "".join(content)
    message = {"role": "assistant", "content": text}
    if "".join(thinking):
        message["thinking"] = "".join(thinking)
    if calls:
        message["tool_calls"] = calls
    if problem:
        return message, text, [], ("malformed_model_turn", problem)
    if not done:
        return message, text, [], ("incomplete_model_turn", "no final (done) chunk")
    if done_reason == "length":
        return message, text, [], ("incomplete_model_turn", "cut by the length limit")
    return message, text, calls, None


def _broken(item, number: int, after_done: bool) -> str | None:
    """Why chunk ``number`` breaks Ollama's format, or None."""
    if after_done:
        return f"chunk {number} came after the final chunk"
    if not isinstance(item, dict) or not isinstance(item.get("message"), dict) or "error" in item:
        return f"chunk {number} is not a chunk with a message"
    message = item["message"]
    if any(not isinstance(message.get(k), str | None) for k in ("content", "thinking")):
        return f"chunk {number}'s content or thinking is not text"
    calls = message.get("tool_calls")
    if calls is not None and not isinstance(calls, list):
        return f"chunk {number}'s tool_calls is not a list"
    for entry in calls or []:
        function = entry.get("function") if isinstance(entry, dict) else None
        if not (isinstance(function, dict) and isinstance(function.get("name"), str)
                and function["name"] and isinstance(function.get("arguments"), dict)):  # fmt: skip
            return f"chunk {number} has a call without a name or with arguments not an object"
    if item.get("done", False) not in (True, False) or not isinstance(
        item.get("done_reason"), str | None
    ):
        return f"chunk {number}'s done or done_reason is not what Ollama sends"
    return None


def tool_text(outcome: dict) -> str:
    """The content of the tool message for one call's outcome."""
    if "raise" in outcome:
        return json.dumps({"error": error_text(outcome)})
    return json.dumps(outcome["result"])


def error_text(outcome: dict) -> str:
    """``str(exc)`` of the exception a scripted tool raises (an OSError with its errno...)."""
    return str(getattr(builtins, outcome["raise"])(*outcome["args"]))


def reference_script(replies: list, outcomes: list, *, max_turns=CASE_TURNS, task: str = TASK,
                     names=TOOL_NAMES) -> Script:  # fmt: skip
    """What a right loop does with these replies (one per request, in order) and these tool
    outcomes (one per call, in order): its steps and its stop."""
    schemas = schemas_for(names)
    if isinstance(max_turns, bool) or not isinstance(max_turns, int) or max_turns < 1:
        return Script("ollama", task, max_turns, schemas, [], raises="ValueError")
    messages = [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": task}]
    steps, pending, calls_run = [], list(outcomes), 0

    def stop(reason: str, turns: int) -> Script:
        assert reason in STOP_REASONS
        stopped = {"reason": reason, "turns": turns, "tool_calls": calls_run,
                   "messages": list(messages)}  # fmt: skip
        return Script("ollama", task, max_turns, schemas, steps, stopped)

    for turn in range(1, max_turns + 1):
        reply = replies[turn - 1]
        steps.append(
            {"request": {"messages": list(messages), "tools": list(names)}, "reply": reply}
        )
        if "refuse" in reply:
            return stop("model_error", turn)
        failure = reply.get("failure")
        read = reply["chunks"] if failure is None else reply["chunks"][: failure["after"]]
        message, text, calls, ending = reference_reply(read)
        if failure is not None and not (ending and ending[0] == "malformed_model_turn"):
            return stop("model_error", turn)  # the error came before the reply could end
        if ending:
            return stop(ending[0], turn)
        messages.append(message)
        if not calls:
            return stop("assistant_finished" if text.strip() else "empty_response", turn)
        for entry in calls:
            function = entry["function"]
            outcome = pending.pop(0)
            steps.append({"call": [function["name"], function["arguments"]], "outcome": outcome})
            calls_run += 1
            if "raise" in outcome and outcome["raise"] not in TOOL_ERRORS:
                return Script("ollama", task, max_turns, schemas, steps, raises=outcome["raise"])
        for entry, outcome in zip(calls, outcomes[calls_run - len(calls) : calls_run]):
            name = entry["function"]["name"]
            messages.append({"role": "tool", "tool_name": name, "content": tool_text(outcome)})
    return stop("max_turns", max_turns)


# --- The course's recordings, replayed strictly --------------------------------------------


def loop_recordings() -> list[str]:
    """The course's recordings of the plain loop: no gate, budget, hooks, MCP or other
    toolset, the course's system prompt first, only the loop's own events. (Runs of other
    harnesses, and of the task set, with its own prompt, are not a plain loop's.)"""
    names = []
    for path in sorted(RECORDINGS_DIR.glob("*.json")):
        recording = json.loads(path.read_text("utf-8"))
        first = recording["turns"][0]["request"]["messages"][0]
        if (
            not {"harness", "mcp", "task_name", "resumed"} & set(recording)
            and first == {"role": "system", "content": SYSTEM_PROMPT}
            and {event["type"] for event in recording["events"]} <= PLAIN_EVENTS
        ):
            names.append(path.name)
    return names


def recorded_script(name: str) -> Script:
    """A recording as a script: each recorded request, its reply and its calls, in order."""
    recording = json.loads((RECORDINGS_DIR / name).read_text("utf-8"))
    wire = recording.get("wire_format", "ollama")
    calls: dict[int, list] = {}
    for event in recording["events"]:
        if event["type"] == "tool_start":
            calls.setdefault(event["turn"], []).append([event["name"], event["arguments"]])
        elif event["type"] == "tool_result":
            ran = next(c for c in calls[event["turn"]] if len(c) == 2)
            ran.append({"result": event["result"]})
    steps = []
    for number, turn in enumerate(recording["turns"], 1):
        reply = {"chunks": [entry["chunk"] for entry in turn["chunks"]]}
        if "error" in turn:
            reply["failure"] = {"after": len(reply["chunks"]), "raise": "RuntimeError",
                                "args": [turn["error"]]}  # fmt: skip
        steps.append({"request": turn["request"], "reply": reply})
        steps += [{"call": [n, a], "outcome": o} for n, a, o in calls.get(number, [])]
    last = recording["events"][-1]
    stopped = {key: last[key] for key in ("reason", "turns", "tool_calls")}
    start = recording["turns"][-1]["request"]["messages"]
    tail = {}
    if wire == "ollama":
        stopped["messages"] = _final_messages(start, steps[-1], recording, last["reason"])
    else:
        stopped["messages"] = None
        tail = {"start": start, "role": REPLY_ROLES.get(wire, "assistant")}
        if last["reason"] in ("incomplete_model_turn", "malformed_model_turn", "model_error"):
            tail["role"] = None  # nothing follows the last request
    names = recording["turns"][0]["request"]["tools"]
    return Script(wire, recording["task"], recording["max_turns"], schemas_for(names), steps,
                  stopped, tail=tail)  # fmt: skip


def _final_messages(start: list, last_step: dict, recording: dict, reason: str) -> list:
    """An Ollama recording's whole conversation at its stop: the last request, then its reply
    and, after a spent budget, the results of its calls (from the recorded events)."""
    if reason in ("incomplete_model_turn", "malformed_model_turn", "model_error"):
        return list(start)
    message = reference_reply([entry["chunk"] for entry in recording["turns"][-1]["chunks"]])[0]
    last_turn = len(recording["turns"])
    results = [
        {"role": "tool", "tool_name": e["name"], "content": json.dumps(e["result"])}
        for e in recording["events"]
        if e["type"] == "tool_result" and e["turn"] == last_turn
    ]
    return [*start, message, *results]


# --- Lesson 05's failure cases, and generated streams ------------------------------------


def _reply(*chunks) -> dict:
    return {"chunks": list(chunks)}


def _done(**extra) -> dict:
    return chunk(done=True, **extra)


def _result(value) -> dict:
    return {"result": value}


def _raise(kind: str, *args) -> dict:
    return {"raise": kind, "args": list(args)}


UNKNOWN = "unknown tool 'grep'; the tools are: read_file, replace_text, run_tests"
READ = call("read_file", path="path_rules.py")
SOURCE = {"path": "path_rules.py", "content": "from pathlib import PurePosixPath\n"}


def repair_first_turn() -> list:
    recording = json.loads((RECORDINGS_DIR / "repair.json").read_text("utf-8"))
    return [entry["chunk"] for entry in recording["turns"][0]["chunks"]]


def failure_scripts() -> list:
    """Lesson 05's failure cases: ``(label, script, hint)``."""
    first = repair_first_turn()
    cut = [*first[:-1], {**first[-1], "done_reason": "length"}]
    final = _reply(chunk("There is no grep tool here; "), chunk("I made no change."), _done())
    return [
        ("lesson 05: the repair's first reply without its done chunk",
         reference_script([_reply(*first[:-1])], []),
         "the read_file call arrived, but the stream ended without its final chunk"),
        ("lesson 05: the repair's first reply cut by the length limit",
         reference_script([_reply(*cut)], []), "done_reason 'length': refuse the turn"),
        ("lesson 05: an unknown tool, then a final answer",
         reference_script([_reply(chunk(thinking="I search first."),
                                   chunk(tool_calls=[call("grep", pattern="Posix")]), _done()),
                           final], [_raise("ValueError", UNKNOWN)]),
         "an unknown tool is an error result the model reads; the loop goes on"),
        ("lesson 05: the server is down",
         reference_script([{"refuse": "ConnectionError", "args": [111, "Connection refused"]}], []),
         "calling chat raised: stop with model_error, run nothing"),
        ("lesson 05: an empty reply",
         reference_script([_reply(chunk(thinking="Not sure what to do."), _done())], []),
         "no text and no calls in a complete reply"),
        ("lesson 05: a malformed chunk",
         reference_script([_reply(chunk("Reading "), chunk(42, tool_calls=[READ]), _done())], []),
         "content 42 is not text: the turn is malformed, nothing of it runs"),
        ("text, then a call, in one reply",
         reference_script([_reply(chunk("I will read "), chunk("the module."),
                                  chunk(tool_calls=[READ]), _done()),
                           _reply(chunk("It reads fine."), _done())], [_result(SOURCE)]),
         "text before a call is not the end of the turn: wait for the final chunk"),
        ("a tool with a bug (KeyError)",
         reference_script([_reply(chunk(tool_calls=[READ]), _done())],
                          [_raise("KeyError", "path")]),
         "only ValueError, TypeError and OSError are the model's mistakes; a KeyError is a bug "
         "in the tools and must come out of the loop"),
    ]  # fmt: skip


def drawn_script(draw: random.Random) -> Script:
    """A conversation of one to four replies: text cut at random places, thinking, calls
    (some of tools that do not exist, some refused), and a last reply that ends any way."""
    replies, outcomes = [], []
    turns = draw.randrange(1, 5)
    for number in range(1, turns + 1):
        pieces = [chunk(random_text(draw, 1, 12)) for _ in range(draw.randrange(0, 6))]
        if draw.random() < 0.4:
            pieces.insert(0, chunk(thinking=random_text(draw, 1, 20)))
        last = number == turns
        calls = [] if last else [_drawn_call(draw) for _ in range(draw.randrange(1, 4))]
        outcomes += [_drawn_outcome(draw) for _ in calls]
        if calls:
            pieces.insert(draw.randrange(len(pieces) + 1), chunk(tool_calls=calls))
        ending = (
            draw.choice(["stop", "stop", "stop", "length", "none", "fail", "broken"])
            if last
            else "stop"
        )
        reply = {"chunks": [*pieces, _done(done_reason="length" if ending == "length" else "stop")]}
        if ending == "none":
            reply["chunks"].pop()
        elif ending == "broken":
            reply["chunks"].insert(draw.randrange(len(reply["chunks"])), chunk(7))
        elif ending == "fail":
            reply["failure"] = {
                "after": draw.randrange(len(reply["chunks"])),
                "raise": "RuntimeError",
                "args": [random_text(draw, 1, 20)],
            }
        replies.append(reply)
    return reference_script(
        replies, outcomes, max_turns=draw.randrange(max(1, turns - 1), turns + 2)
    )


def _drawn_call(draw: random.Random) -> dict:
    name = draw.choice(TOOL_NAMES + ("grep",))
    arguments = {
        key: random_text(draw) for key in draw.sample(["path", "old", "new"], draw.randrange(3))
    }
    return {
        "id": f"call_{draw.randrange(10**8):08d}",
        "function": {"name": name, "arguments": arguments},
    }


def _drawn_outcome(draw: random.Random) -> dict:
    kind = draw.choice(["result", "result", "result", "ValueError", "TypeError", "OSError"])
    if kind == "result":
        return _result(random_result(draw))
    return _raise(kind, random_text(draw, 1, 30))

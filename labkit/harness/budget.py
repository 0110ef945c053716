"""The context budget: measure a conversation, cut long tool output, compact old results.

Every request carries the whole conversation, so what a tool returned three turns ago
is paid for again on each request. These pure functions show where the characters go
(``measure``, ``request_sizes``) and the three ways lesson 08 keeps them in budget:
``numbered_lines`` (read a slice of a file), ``head_and_tail`` (cut the middle of a long
output, saying how much) and ``compact`` (replace old tool results with a short note).
``order_problems`` says whether a conversation is still one a model can be sent.
``Budget`` is the small callable the loop's ``budget=`` hook takes: ``compact`` applied
before each request, with a log of what it did.
"""

from __future__ import annotations

import copy
import json
import re

#: What a cut leaves in the text. ``CUT`` matches any marker, so a second cut can keep
#: an earlier marker whole or drop it whole, never split it.
MARKER = "\n[labkit: {count} {unit} cut]\n"
CUT = re.compile(r"\n\[labkit: \d+ (?:characters|bytes) cut\]\n")
#: What a compacted tool result says instead of its content.
COMPACTED_NOTE = (
    "compacted: this {name} result ({size} characters) was dropped to keep the "
    "conversation in budget; call the tool again if you need it"
)
COMPACTED = re.compile(r'\{"note": "compacted: ')
#: The longest slice ``numbered_lines`` returns, so a read stays small by default.
MAX_LINES = 200
#: The properties ``read_file``'s schema gains for a selective read (see ``numbered_lines``).
READ_RANGE_PROPERTIES = {
    "offset": {
        "type": "integer",
        "minimum": 1,
        "description": "The first line to read, counting from 1. Leave it out to read "
        "from the start.",
    },
    "limit": {
        "type": "integer",
        "minimum": 1,
        "maximum": MAX_LINES,
        "description": f"How many lines to read, at most {MAX_LINES}. Read a long file "
        "a part at a time; each line comes with its number.",
    },
}


def marker(count: int, unit: str = "characters") -> str:
    """The text that stands for ``count`` characters (or bytes) cut from the middle."""
    return MARKER.format(count=count, unit=unit)


def head_and_tail(text: str, limit: int) -> str:
    """``text`` itself if it has at most ``limit`` characters; otherwise its first and last
    characters around a marker saying how many were cut, ``limit`` characters at most.

    The marker is never split: the cut grows to swallow any marker it would cut into.
    Takes time in proportion to ``limit``, however long ``text`` is.
    """
    if isinstance(limit, bool) or not isinstance(limit, int):
        raise TypeError(f"limit must be an int, not {type(limit).__name__}")
    if len(text) <= limit:
        return text
    room = limit - len(marker(len(text)))  # the widest marker this cut can need
    if room < 2:
        raise ValueError(
            f"limit {limit} is too small: the marker alone takes "
            f"{len(marker(len(text)))} characters"
        )
    start, end = room - room // 2, len(text) - room // 2  # keep text[:start] and text[end:]
    # move each end out of a marker it falls inside (a marker is under 60 characters, so
    # only the text around each end is searched: the cost is the length kept, not the input)
    for found in CUT.finditer(text, max(start - 60, 0), start + 60):
        if found.start() < start < found.end():
            start = found.start()
    for found in CUT.finditer(text, max(end - 60, 0), end + 60):
        if found.start() < end < found.end():
            end = found.end()
    return text[:start] + marker(end - start) + text[end:]


def measure(messages) -> dict:
    """Characters per message kind: the text each role carries, and the model's thinking
    and tool calls (both are sent back with its messages)."""
    sizes = {"system": 0, "user": 0, "assistant": 0, "thinking": 0, "tool_calls": 0, "tool": 0}
    for message in messages:
        role = message.get("role")
        sizes[role] = sizes.get(role, 0) + len(message.get("content") or "")
        sizes["thinking"] += len(message.get("thinking") or "")
        for call in message.get("tool_calls") or ():
            sizes["tool_calls"] += len(json.dumps(call.get("function", call)))
    sizes["total"] = sum(sizes.values())
    return sizes


def request_sizes(recording: dict) -> list:
    """One row per recorded request: its characters per kind, and the prompt tokens the
    server counted (``prompt_eval_count`` of the final chunk), or None where it did not."""
    rows = []
    for number, turn in enumerate(recording["turns"], start=1):
        final = turn["chunks"][-1]["chunk"] if turn["chunks"] else {}
        rows.append(
            {
                "request": number,
                **measure(turn["request"]["messages"]),
                "prompt_tokens": final.get("prompt_eval_count"),
            }
        )
    return rows


def compact(messages, budget: int, *, keep_last: int = 1) -> list:
    """A copy of ``messages`` whose old tool results are replaced by a short note, oldest
    first, until the conversation has at most ``budget`` characters (``measure``'s total).

    Only the content of tool messages changes: every message stays where it was, with
    its role, name and id, so each result still follows the call that asked for it. The
    results of the last ``keep_last`` assistant turns are kept whole, and so are the
    system prompt, the task and every assistant message. If that is still over budget,
    the copy is as small as those rules allow; ``measure`` it to see.
    """
    compacted = copy.deepcopy(list(messages))
    turns = [i for i, message in enumerate(compacted) if message.get("role") == "assistant"]
    if keep_last == 0:
        protected_from = len(compacted)
    elif keep_last > len(turns):
        protected_from = 0
    else:
        protected_from = turns[-keep_last]
    total = measure(compacted)["total"]
    for message in compacted[:protected_from]:
        if total <= budget:
            break
        if message.get("role") != "tool" or COMPACTED.match(message.get("content") or ""):
            continue
        old = message.get("content") or ""
        name = message.get("tool_name") or message.get("name") or "tool"
        new = json.dumps({"note": COMPACTED_NOTE.format(name=name, size=len(old))})
        if len(new) < len(old):
            message["content"] = new
            total -= len(old) - len(new)
    return compacted


class Budget:
    """The loop's ``budget=`` hook: before each request, once the conversation has more
    than ``max_chars`` characters, replace old tool results with notes (``compact``),
    keeping the results of the last ``keep_last`` turns whole.

    ``log`` holds one row per request: its size before and after, and how many results
    it replaced then. It counts the requests of one run: make one ``Budget`` per run.
    """

    def __init__(self, max_chars: int, *, keep_last: int = 1):
        for name, value, least in (("max_chars", max_chars, 1), ("keep_last", keep_last, 0)):
            if isinstance(value, bool) or not isinstance(value, int) or value < least:
                raise ValueError(f"{name} must be an int of at least {least}, not {value!r}")
        self.max_chars, self.keep_last = max_chars, keep_last
        self.log = []

    def __call__(self, messages) -> list:
        messages = list(messages)
        before = measure(messages)["total"]
        kept = (
            compact(messages, self.max_chars, keep_last=self.keep_last)
            if before > self.max_chars
            else messages
        )
        replaced = sum(old.get("content") != new.get("content") for old, new in zip(messages, kept))
        self.log.append(
            {
                "request": len(self.log) + 1,
                "before": before,
                "after": measure(kept)["total"],
                "replaced": replaced,
            }
        )
        return kept

    def __repr__(self):
        return f"Budget({self.max_chars}, keep_last={self.keep_last})"


def order_problems(messages) -> list:
    """What makes ``messages`` a conversation a model cannot be sent; empty if none.

    It must open with the system prompt and the user's task; each tool message must
    follow the assistant message that called it (or that message's other results), and
    each assistant message gets exactly one result per call it made. A result that carries
    a ``tool_call_id`` must name one of its turn's calls; one that does not (Ollama's)
    answers the calls in order, so its ``tool_name`` must be that call's name.
    """
    problems = []
    roles = [message.get("role") for message in messages]
    if roles[:2] != ["system", "user"]:
        problems.append(f"the conversation must start with system and user, not {roles[:2]}")
    calls, answered, asked_at = None, 0, None

    def unanswered():
        if calls and answered < len(calls):
            problems.append(
                f"message {asked_at}: {len(calls)} tool call(s) but only {answered} result(s)"
            )

    for index, message in enumerate(messages):
        role = message.get("role")
        if role == "assistant":
            unanswered()
            calls, answered, asked_at = list(message.get("tool_calls") or ()), 0, index
        elif role == "tool":
            if calls is None or answered >= len(calls):
                problems.append(f"message {index}: a tool result with no call left to answer")
                continue
            given, name = message.get("tool_call_id"), message.get("tool_name")
            wanted = calls[answered].get("function", {}).get("name")
            ids = sorted(call["id"] for call in calls if call.get("id") is not None)
            if given is not None and given not in ids:
                problems.append(
                    f"message {index}: tool_call_id {given!r} pairs with no call "
                    f"of its turn ({ids})"
                )
            elif given is None and name is not None and name != wanted:
                problems.append(
                    f"message {index}: a result of {name!r} where call "
                    f"{answered + 1} of its turn was {wanted!r}"
                )
            answered += 1
        else:
            unanswered()
            calls = None
    unanswered()
    return problems


def numbered_lines(path: str, text: str, *, offset: int = 1, limit: int = MAX_LINES) -> dict:
    """Lines ``offset`` to ``offset + limit - 1`` of ``text`` (counting from 1), each with
    its number, as a ``read_file`` result; says how many lines the file has in all."""
    for name, value in (("offset", offset), ("limit", limit)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"read_file: '{name}' must be an integer, not {type(value).__name__}")
        if value < 1:
            raise ValueError(f"read_file: '{name}' must be at least 1, got {value}")
    if limit > MAX_LINES:
        raise ValueError(f"read_file: 'limit' may be at most {MAX_LINES}, got {limit}")
    lines = text.splitlines()
    if offset > max(len(lines), 1):
        raise ValueError(
            f"read_file: 'offset' {offset} is past the end: {path} has {len(lines)} lines"
        )
    shown = lines[offset - 1 : offset - 1 + limit]
    width = len(str(offset + len(shown) - 1))
    content = "".join(f"{offset + i:>{width}}\t{line}\n" for i, line in enumerate(shown))
    return {
        "path": path,
        "first_line": offset,
        "last_line": offset + len(shown) - 1,
        "total_lines": len(lines),
        "content": content,
    }

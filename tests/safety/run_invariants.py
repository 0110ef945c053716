"""What every run of the loop must satisfy, whatever the model streams.

Wrap the model in ``RecordingChat`` and the tools in ``RecordingTools``, run the loop
with ``run_to_the_end``, then call ``assert_run_invariants``. It checks, from what the
model really sent and what the tools really did (not from the loop's own account):

* the loop never raised: it ended with exactly one ``stopped`` event, last, whose
  reason is one of ``labkit.STOP_REASONS``;
* it made no more model requests than ``max_turns``, and asked again only after
  running tools; a call that found the tools' own server gone (``tools_failed``) ended it;
* a tool ran only from a turn whose stream raised nothing, held only chunk objects
  with a message and no error, and ended with its one ``done`` chunk for a reason
  other than ``length``; and then exactly the calls that turn asked for, in order;
* each call's result is in the next request (or the final conversation), in order,
  right after the assistant message that asked for it.

The property tests feed it generated streams. A test of the live path can feed it the
real SDK talking to a faulty server in the same way::

    chat, tools = RecordingChat(OllamaModel(host=url)), RecordingTools()
    events = run_to_the_end(chat, tools, max_turns=3)
    assert_run_invariants(events, chat, tools, max_turns=3)
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field

from labkit import MAX_TURNS, STOP_REASONS, agent_events
from labkit.harness.contracts import ToolsFailed
from labkit.harness.loop import TOOL_ERRORS

ECHO_SCHEMAS = [
    {"type": "function", "function": {"name": name, "parameters": {"type": "object"}}}
    for name in ("echo", "refuse")
]


class RecordingTools:
    """Tools that log every call with what it returned, or ``{"error": ...}`` if refused.

    On their own they echo their arguments and refuse as real tools do: a tool named
    ``refuse`` raises ValueError, arguments that are not an object raise TypeError.
    Given ``inner`` (e.g. a ``RepoTools``), they pass each call on to it instead.
    """

    def __init__(self, inner=None):
        self.inner = inner
        self.schemas = inner.schemas if inner else ECHO_SCHEMAS
        self.log = []  # (name, arguments, result)

    def invoke(self, name, arguments):
        seen = copy.deepcopy(arguments)
        try:
            result = self.inner.invoke(name, arguments) if self.inner else _echo(name, arguments)
        except TOOL_ERRORS as exc:
            self.log.append((name, seen, {"error": str(exc)}))
            raise
        except ToolsFailed as exc:  # the tools are gone: the run ends here
            self.log.append((name, seen, {"tools_failed": str(exc)}))
            raise
        self.log.append((name, seen, copy.deepcopy(result)))
        return result


def _echo(name, arguments):
    if name == "refuse":
        raise ValueError("refused, as a tool refuses a bad request")
    if name == "gone":
        raise ToolsFailed("the tools' server exited, as an MCP server's process may")
    if not isinstance(arguments, dict):
        raise TypeError(f"arguments must be an object, not {type(arguments).__name__}")
    return {"tool": name, "arguments": arguments}


@dataclass
class Request:
    """One model request: what the loop sent, every chunk handed back, what was raised."""

    messages: list
    chunks: list = field(default_factory=list)
    failed: Exception | None = None


class RecordingChat:
    """Wraps a ``chat`` callable and keeps each ``Request`` as the model saw it."""

    def __init__(self, chat):
        self.chat = chat
        self.requests = []

    def __call__(self, messages, tool_schemas):
        request = Request(copy.deepcopy(messages))
        self.requests.append(request)
        try:
            stream = self.chat(messages, tool_schemas)
        except Exception as exc:
            request.failed = exc
            raise
        return self._relay(stream, request)

    @staticmethod
    def _relay(stream, request):
        try:
            for chunk in stream:
                request.chunks.append(copy.deepcopy(chunk))
                yield chunk
        except GeneratorExit:  # the loop abandoned the stream: pass the close on
            getattr(stream, "close", lambda: None)()
            raise
        except Exception as exc:
            request.failed = exc
            raise


def run_to_the_end(chat, tools, *, task="Repair path_rules.py.", max_turns=MAX_TURNS) -> list:
    """All the events of one run; any exception out of the loop fails the test."""
    try:
        return list(agent_events(chat, tools, task, max_turns=max_turns))
    except Exception as exc:
        raise AssertionError(f"the loop raised {exc!r} instead of stopping") from exc


def finished_cleanly(request: Request) -> bool:
    """The least a stream must be for its tool calls to run (a necessary condition)."""
    chunks = request.chunks
    return (
        request.failed is None
        and bool(chunks)
        and all(
            isinstance(c, dict) and isinstance(c.get("message"), dict) and "error" not in c
            for c in chunks
        )
        and [c.get("done") is True for c in chunks] == [False] * (len(chunks) - 1) + [True]
        and chunks[-1].get("done_reason") != "length"
    )


def requested_calls(request: Request) -> list:
    """The tool calls the stream's chunks carried, in order."""
    return [call for chunk in request.chunks for call in chunk["message"].get("tool_calls") or []]


def assert_run_invariants(events: list, chat: RecordingChat, tools: RecordingTools, max_turns: int):
    kinds = [event["type"] for event in events]
    assert kinds.count("stopped") == 1 and kinds[-1] == "stopped", "one stopped event, last"
    stop = events[-1]
    assert stop["reason"] in STOP_REASONS, f"undocumented stop reason {stop['reason']!r}"

    requests = chat.requests
    assert len(requests) <= max_turns, f"{len(requests)} model requests for max_turns={max_turns}"
    assert kinds.count("model_start") == len(requests) == stop["turns"]

    started = [(e["turn"], e["name"], e["arguments"]) for e in events if e["type"] == "tool_start"]
    assert [(name, arguments) for _, name, arguments in started] == [
        (name, arguments) for name, arguments, _ in tools.log
    ], "tools ran as announced, in order"
    gone = stop["reason"] == "tools_failed"  # the last call found the tools' server gone
    assert stop["tool_calls"] == len(tools.log) - gone

    results = iter(tools.log)
    following = [request.messages for request in requests[1:]] + [stop["messages"]]
    for number, (request, after) in enumerate(zip(requests, following), start=1):
        ran = [(name, arguments) for turn, name, arguments in started if turn == number]
        if number < len(requests):
            assert ran, f"the loop asked again after turn {number}, which ran no tool"
        if not ran:
            continue
        assert finished_cleanly(request), (
            f"turn {number} ran tools from a stream that did not finish cleanly"
        )
        calls = requested_calls(request)
        asked = [(c["function"]["name"], c["function"]["arguments"]) for c in calls]
        if gone and number == len(requests):  # its calls ran up to the one that found the
            assert ran == asked[: len(ran)]  # tools gone; the run stopped there, no result kept
            assert stop["messages"][-1]["role"] == "assistant"
            continue
        assert ran == asked
        sent = request.messages
        assert after[: len(sent)] == sent, f"the conversation before turn {number} was rewritten"
        assistant = after[len(sent)]
        assert assistant["role"] == "assistant" and assistant["tool_calls"] == calls
        assert assistant["content"] == "".join(
            c["message"].get("content") or "" for c in request.chunks
        )
        assert after[len(sent) + 1 :] == [
            {"role": "tool", "tool_name": name, "content": json.dumps(result)}
            for name, _, result in (next(results) for _ in ran)
        ], f"the results of turn {number} are not what the next request carries, in order"

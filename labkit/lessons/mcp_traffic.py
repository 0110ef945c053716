"""A run through an MCP server, step by step: the model's replies beside the JSON-RPC lines
they caused, as the recording keeps both (lesson 11's ``MCPTrafficView``).

``traffic_steps(recording)`` lays the run out in the order it happened: the lines that
opened the connection (``server/discover``, ``tools/list``), then for each turn the
model's reply (its chunks, and the calls it asked for) followed by each line the calls
sent or got (``tools/call``, its response, a ``notifications/cancelled``, a line of
garbage). A call a hook or the gate refused sends nothing: its turn shows fewer
requests than calls. Each ``tools/call`` is matched to the next call the model made of
that tool with those arguments, and every other line to its request by JSON-RPC id.
``traffic_step_html`` and ``traffic_static_html`` render a step as two columns, the
model on the left and the server on the right. Pure: no widgets, no I/O.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from ..harness.formats import FORMATS
from .render import LOOK, _body, _div, _pretty, _static, _text, _tinted

DIRECTIONS = {
    "c2s": ("harness → server", "37,99,235"),
    "s2c": ("server → harness", "22,163,74"),
    "junk": ("server → harness, not JSON-RPC", "220,38,38"),
}
LINE_LIMIT = 1_500  # characters of one JSON-RPC line shown


@dataclass(frozen=True)
class TrafficStep:
    """One step: the turn it belongs to (0: opening the connection), the model's reply so
    far in that turn, and the lines of that turn up to and including this step's."""

    turn: int
    caption: str
    reply: dict | None  # {"chunks": n, "text": ..., "calls": [...]}, None at turn 0
    lines: list  # the turn's traffic entries so far; the last is this step's, if any
    current: bool  # whether this step is a line (True) or the model's reply (False)


def traffic_steps(recording: dict) -> list[TrafficStep]:
    """The run's steps, in order (see the module's docstring)."""
    traffic = recording.get("mcp", {}).get("traffic")
    if not isinstance(traffic, list):
        raise ValueError("this recording holds no MCP traffic: record a run with tools='mcp'")
    wire = FORMATS[recording.get("wire_format", "ollama")]
    by_turn = _lines_by_turn(traffic, _calls_made(recording["events"]))
    steps = []
    for entry_number, entry in enumerate(by_turn.get(0, []), start=1):
        steps.append(TrafficStep(0, _caption(entry), None, by_turn[0][:entry_number], True))
    for number, turn in enumerate(recording["turns"], start=1):
        assembler = wire.assembler()
        for item in turn["chunks"]:
            assembler.add(item["chunk"])
        folded = assembler.turn()
        reply = {
            "chunks": len(turn["chunks"]),
            "text": folded.text,
            "calls": [{"name": call.name, "arguments": call.arguments} for call in folded.calls],
        }
        names = ", ".join(call["name"] for call in reply["calls"]) or "no tool"
        steps.append(
            TrafficStep(
                number,
                f"turn {number}: the model's reply ({reply['chunks']} chunks) asks for {names}",
                reply,
                [],
                False,
            )  # fmt: skip
        )
        lines = by_turn.get(number, [])
        for count, entry in enumerate(lines, start=1):
            steps.append(TrafficStep(number, _caption(entry), reply, lines[:count], True))
    return steps


def _calls_made(events: list) -> list[tuple[int, str, dict]]:
    """``(turn, tool name, arguments)`` of every call that reached the tools, in order:
    a call a hook or the gate denied is left out; the arguments are those it ran with (a
    ``before_tool`` hook may have replaced them)."""
    made, pending = [], None
    for event in events:
        kind = event.get("type")
        if kind == "tool_start":
            pending = [event["turn"], event["name"], event["arguments"]]
        elif pending is not None and kind in ("hook", "permission"):
            if event.get("decision") == "deny":
                pending = None
            elif "arguments" in event and event.get("point") == "before_tool":
                pending[2] = event["arguments"]
        elif kind == "tool_result" and pending is not None:
            made.append(tuple(pending))
            pending = None
    return made


def _lines_by_turn(traffic: list, calls: list[tuple[int, str, dict]]) -> dict[int, list]:
    """The traffic split by turn: a ``tools/call`` request belongs to the next call that
    reached the tools with its name and arguments (a call whose arguments did not fit the
    schema sent nothing either); a line with an id (or a cancellation's ``requestId``)
    goes with that request's turn; any other line goes with the turn in flight (0 before
    the first call)."""
    found, turn_of_id, position, current = {}, {}, 0, 0
    for entry in traffic:
        message = _parsed(entry["line"])
        ident = message.get("id") if message else None
        if message and message.get("method") == "notifications/cancelled":
            ident = (message.get("params") or {}).get("requestId")
        if entry["dir"] == "c2s" and message and message.get("method") == "tools/call":
            params = message.get("params") or {}
            asked = (params.get("name"), params.get("arguments"))
            match = next((n for n in range(position, len(calls)) if calls[n][1:] == asked), None)
            if match is not None:
                current, position = calls[match][0], match + 1
            turn_of_id[ident] = current
        turn = turn_of_id.get(ident, current) if ident is not None else current
        found.setdefault(turn, []).append(entry)
    return found


def _parsed(line: str) -> dict | None:
    try:
        message = json.loads(line)
    except (ValueError, RecursionError):
        return None
    return message if isinstance(message, dict) else None


def _caption(entry: dict) -> str:
    """One line of traffic in words: its direction and what it is."""
    where = DIRECTIONS[entry["dir"]][0]
    message = _parsed(entry["line"])
    if entry["dir"] == "junk" or message is None:
        return f"{where}: {entry['line'][:80]!r} breaks the protocol"
    if "method" in message:
        name = (message.get("params") or {}).get("name")
        what = f"{message['method']}" + (f" {name}" if name else "")
        kind = "request" if "id" in message else "notification"
        return f"{where}: {kind} {what}"
    result = message.get("result") or {}
    if "error" in message:
        return f"{where}: an error for request {message.get('id')}"
    flag = " (isError)" if result.get("isError") else ""
    return f"{where}: the result of request {message.get('id')}{flag}"


def traffic_step_html(steps: list[TrafficStep], index: int) -> str:
    """Step ``index`` (0-based): the caption, the model's reply, and the turn's lines."""
    step = steps[index]
    head = f"step {index + 1} of {len(steps)}: {step.caption}"
    model = (
        [
            _div("labkit-field", "field", f"the model's reply, turn {step.turn}"),
            _div("labkit-text", "code", step.reply["text"] or "(no text)"),
            _div("labkit-field", "field", "tool calls"),
            _div("labkit-json", "code", _pretty(step.reply["calls"])),
        ]
        if step.reply
        else [_div("labkit-note", "note", "opening the connection: no model request yet")]
    )
    server = [_div("labkit-field", "field", "JSON-RPC lines of this turn")]
    if not step.lines:
        server.append(_div("labkit-note", "note", "none yet"))
    for number, entry in enumerate(step.lines):
        label, rgb = DIRECTIONS[entry["dir"]]
        newest = step.current and number == len(step.lines) - 1
        shown = entry["line"][:LINE_LIMIT] + ("…" if len(entry["line"]) > LINE_LIMIT else "")
        server.append(
            _tinted(
                f"labkit-rpc labkit-rpc-{entry['dir']}" + (" labkit-new" if newest else ""),
                rgb,
                "margin:4px 0;padding:2px 6px",
                f"{_div('labkit-field', 'field', label)}"
                f'<div class="labkit-wire" style="{LOOK["wire"]}">{_text(shown)}</div>',
            )
        )
    columns = (
        '<div style="display:flex;gap:12px">'
        f'<div class="labkit-model-side" style="flex:1;min-width:0">{"".join(model)}</div>'
        f'<div class="labkit-server-side" style="flex:1;min-width:0">{"".join(server)}</div>'
        "</div>"
    )
    return _body([_div("labkit-head", "head", head), columns])


def traffic_static_html(steps: list[TrafficStep]) -> str:
    note = (
        f"Static view: the last of {len(steps)} steps. Run the notebook to step through "
        "the model's replies and the JSON-RPC lines beside them."
    )
    return _static("labkit-traffic", note, traffic_step_html(steps, len(steps) - 1))


def traffic_summary(steps: list[TrafficStep]) -> str:
    lines = sum(step.current for step in steps)
    turns = sum(not step.current for step in steps)
    return f"MCPTrafficView: {len(steps)} steps: {turns} model replies, {lines} JSON-RPC lines"

"""HTML for the lesson widgets: one step of a streamed turn, the budget of each request, and
the blocks, colours and folding ``conversation_html`` draws a conversation with.

Pure functions from the states of ``steps`` to HTML strings, with every piece
of text escaped. They carry no ids and no clock, so the same state always gives the
same HTML: the widgets show it live, and a notebook saved without a kernel shows the
static version. The CSS class names are a contract with the browser test.

What must survive everywhere (roles, colours, kept line breaks) is in ``style``
attributes: JupyterLab shows the saved outputs of an untrusted notebook through
its HTML sanitizer, which keeps those but drops ``<style>`` elements. ``STYLE``
only adds touches (placeholders, the highlight of the newest message).
Colours are translucent over the theme's own text colour, so they read in light
and dark themes alike.
"""

from __future__ import annotations

import json
from functools import partial
from html import escape

from .steps import (
    TAIL,
    ChunkStep,
    FragmentStep,
    FragmentSteps,
    TurnSteps,
)

WIRE_LIMIT = 2000  # characters of one wire line shown
FOLD_LINES = 8  # lines of a long message shown before "show the rest"
FOLD_CHARS = 800  # characters of a long message shown before "show the rest"

ROLE_COLOURS = {
    "system": "107,114,128",
    "user": "37,99,235",
    "assistant": "22,163,74",
    "tool": "217,119,6",
    "other": "127,127,127",
}
DISPATCH_COLOURS = {"may": "22,163,74", "wait": "217,119,6", "refused": "220,38,38"}
GATE_COLOURS = {"allow": "22,163,74", "deny": "220,38,38"}
#: What the budget table calls each kind of text, and its colour.
KIND_COLOURS = {
    "system": ROLE_COLOURS["system"],
    "user": ROLE_COLOURS["user"],
    "assistant": ROLE_COLOURS["assistant"],
    "thinking": "147,51,234",
    "tool_calls": "13,148,136",
    "tool": ROLE_COLOURS["tool"],
}

CODE = (
    "white-space:pre-wrap;overflow-wrap:anywhere;font-family:monospace;font-size:12px;margin:2px 0"
)
LOOK = {
    "body": "line-height:1.45",
    "head": "font-weight:600;margin:4px 0",
    "field": "font-size:11px;text-transform:uppercase;letter-spacing:.05em;opacity:.7;"
    "margin-top:6px",
    "note": "font-style:italic;opacity:.75",
    "code": CODE,
    "thinking": CODE + ";font-style:italic;opacity:.8",
    "wire": CODE + ";word-break:break-all;background:rgba(127,127,127,.14);padding:4px 6px;"
    "border-radius:3px",
}

STYLE = """<style>
.labkit-stepper :is(.labkit-assembled-text, .labkit-assembled-thinking):empty::before {
  content: '(empty)'; font-style: italic; opacity: .5; }
.labkit-conversation .labkit-new { box-shadow: 0 0 0 2px rgba(127,127,127,.6); }
:is(.labkit-stepper, .labkit-conversation) summary { cursor: pointer; \
font-style: italic; opacity: .75; }
</style>"""

_text = partial(escape, quote=False)  # for text between tags; attribute values are our own


def _div(css_class: str, look: str, text: str = "") -> str:
    return f'<div class="{css_class}" style="{LOOK[look]}">{_text(text)}</div>'


def _tinted(css_class: str, rgb: str, style: str, inner: str) -> str:
    """A block with a coloured left border over a faint tint of the same colour."""
    return (
        f'<div class="{css_class}" style="border-left:4px solid rgb({rgb});'
        f'background:rgba({rgb},.1);border-radius:3px;{style}">{inner}</div>'
    )


# --- A streamed turn --------------------------------------------------------------------


def dispatch_verdict(step: ChunkStep) -> tuple[str, str]:
    """``(kind, sentence)``: may the turn be dispatched at this step, and why.

    The sentence starts with "may dispatch", "not yet" or "refused"; ``kind`` is
    ``"may"``, ``"wait"`` or ``"refused"``.
    """
    calls = len(step.tool_calls)
    counted = f"{calls} tool call{'' if calls == 1 else 's'}"
    if step.may_dispatch:
        if calls:
            return "may", (
                f"may dispatch: the final chunk arrived (done_reason "
                f"'{step.done_reason}'), so its {counted} can run now"
            )
        return "may", (
            f"may dispatch: the turn is complete (done_reason '{step.done_reason}'); "
            "it has no tool calls, so it is the model's final answer"
        )
    if step.problem:
        return "refused", f"refused: {step.problem}; no tool from this turn runs"
    if step.done:
        return "refused", (
            f"refused: the reply was cut by the output-length limit (done_reason "
            f"'{step.done_reason}'); its {counted} do not run"
        )
    if step.ended:
        return "refused", (
            "refused: the stream ended without a final 'done' chunk; no tool from this turn runs"
        )
    waiting = f"; the {counted} assembled so far must wait" if calls else ""
    return "wait", f"not yet: waiting for the final chunk ('done'){waiting}"


def _arrival(step, kept: str, rebuilt: str) -> list:
    """The head of a step (which chunk, when it arrived) and the chunk on the wire: its kept
    line (``kept`` says what it is), else its JSON written again (``rebuilt``)."""
    if step.number:
        arrival = "" if step.at is None else f" · arrived {step.at:.3f} s after the request"
        head = f"chunk {step.number:,} of {step.total:,}{arrival}"
        wire = (
            step.line
            if step.line is not None
            else json.dumps(step.chunk, ensure_ascii=False, separators=(",", ":"), default=repr)
        )
    else:
        head, wire = f"before the first chunk (the stream has {step.total:,})", ""
    label = (
        f"on the wire: {kept}, exactly as it came"
        if step.line is not None
        else f"on the wire: {rebuilt} (written again from the chunk: this recording kept "
        "no wire lines)"
    )
    more = len(wire) - WIRE_LIMIT
    return [
        _div("labkit-head", "head", head),
        _div("labkit-field", "field", label),
        _div("labkit-wire", "wire", wire[:WIRE_LIMIT]),
        _div("labkit-folded", "note", f"… {more:,} more characters") if more > 0 else "",
    ]


def chunk_step_html(step: ChunkStep) -> str:
    """One step of a streamed turn: the chunk on the wire, the message so far, the verdict."""
    kind, verdict = dispatch_verdict(step)
    parts = [
        *_arrival(step, "one line of NDJSON", "one line of NDJSON"),
        _div("labkit-field", "field", "assistant message so far: thinking"),
        _folded_note(step.thinking_hidden),
        _div("labkit-assembled-thinking", "thinking", step.thinking),
        _div("labkit-field", "field", "content"),
        _folded_note(step.content_hidden),
        _div("labkit-assembled-text", "code", step.content),
    ]
    if step.tool_calls:
        parts += [
            _div("labkit-field", "field", "tool_calls"),
            _div("labkit-json labkit-tool-calls", "code", _pretty(step.tool_calls)),
        ]
    parts.append(
        _tinted(
            f"labkit-dispatch labkit-dispatch-{kind}",
            DISPATCH_COLOURS[kind],
            "margin-top:8px;padding:4px 8px;font-weight:600",
            _text(verdict),
        )
    )
    return _body(parts)


def turn_static_html(steps: TurnSteps, *, tail: int | None = TAIL) -> str:
    """The whole turn after its last chunk, for a notebook viewed without a kernel."""
    note = (
        f"Static view: the turn after all {len(steps):,} chunks. "
        "Run the notebook to step through them."
    )
    last = steps.step(len(steps), tail=tail)
    return _static("labkit-stepper", note, chunk_step_html(last))


def turn_summary(steps: TurnSteps) -> str:
    """A one-line text summary of the whole turn."""
    final = steps.step(len(steps), tail=0)
    return f"ChunkStepper: {len(steps):,} chunks; at the end, {dispatch_verdict(final)[1]}"


# --- A turn whose tool calls stream in fragments ----------------------------------------


def fragment_verdict(step: FragmentStep) -> tuple[str, str]:
    """``(kind, sentence)`` for an OpenAI or Anthropic stream, as ``dispatch_verdict`` says
    it for Ollama's: "may dispatch", "not yet" or "refused", and why."""
    calls = len(step.calls)
    counted = f"{calls} tool call{'' if calls == 1 else 's'}"
    if step.may_dispatch:
        if calls:
            return "may", (
                f"may dispatch: the reply finished ({step.finish!r}), so each call's "
                f"arguments are now whole JSON: its {counted} can run"
            )
        return "may", (
            f"may dispatch: the reply finished ({step.finish!r}) with no tool calls, "
            "so it is the model's final answer"
        )
    if step.problem:
        return "refused", f"refused: {step.problem}; no tool from this turn runs"
    if step.finish is not None or step.ended:
        return "refused", f"refused: {step.unfinished}; no tool from this turn runs"
    waiting = (
        f"; the {counted} so far must wait: their arguments are parsed only then" if calls else ""
    )
    return "wait", f"not yet: waiting for {step.end_signal}{waiting}"


def fragment_step_html(step: FragmentStep) -> str:
    """One step of an OpenAI or Anthropic stream: the event on the wire, the text so far,
    each call's arguments as JSON text so far and what json.loads says of it, the verdict."""
    kind, verdict = fragment_verdict(step)
    parts = [
        *_arrival(step, "one server-sent event", "the event's data"),
        _div("labkit-field", "field", "assistant message so far: text"),
        _folded_note(step.content_hidden),
        _div("labkit-assembled-text", "code", step.content),
    ]
    for number, call in enumerate(step.calls):
        parts += [
            _div("labkit-field", "field", f"tool call {number}: its arguments as JSON text so far"),
            _div("labkit-call-name", "note", f"{call.name} (id {call.id})"),
            _div("labkit-call-arguments", "code", call.text),
            _json_verdict(call),
        ]
    parts.append(
        _tinted(
            f"labkit-dispatch labkit-dispatch-{kind}",
            DISPATCH_COLOURS[kind],
            "margin-top:8px;padding:4px 8px;font-weight:600",
            _text(verdict),
        )
    )
    return _body(parts)


def _json_verdict(call) -> str:
    """What json.loads makes of a call's text so far: an error until the text is whole."""
    if call.not_json is None:
        kind, sentence = "may", f"json.loads gives {_compact(call.parsed)}"
    else:
        kind, sentence = "wait", f"json.loads fails here: {call.not_json}"
    return _tinted(
        f"labkit-json-verdict labkit-json-{'ok' if kind == 'may' else 'fails'}",
        DISPATCH_COLOURS[kind],
        f"{CODE};padding:2px 8px",
        _text(sentence),
    )


def fragments_static_html(steps: FragmentSteps, *, tail: int | None = TAIL) -> str:
    """The whole turn after its last chunk, for a notebook viewed without a kernel."""
    note = (
        f"Static view: the turn after all {len(steps):,} chunks. "
        "Run the notebook to step through them."
    )
    return _static("labkit-stepper", note, fragment_step_html(steps.step(len(steps), tail=tail)))


def fragments_summary(steps: FragmentSteps) -> str:
    final = steps.step(len(steps), tail=0)
    return f"ChunkStepper: {len(steps):,} chunks; at the end, {fragment_verdict(final)[1]}"


def _compact(value, limit: int = 200) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _folded_note(hidden: int) -> str:
    return _div("labkit-folded", "note", f"… {hidden:,} earlier characters") if hidden else ""


def _body(parts: list) -> str:
    inner = "\n".join(part for part in parts if part)
    return f'<div class="labkit-body" style="{LOOK["body"]}">\n{inner}\n</div>'


def _static(outer_class: str, note: str, body: str) -> str:
    return (
        f'{STYLE}\n<div class="{outer_class} labkit-static">\n'
        f"{_div('labkit-static-note', 'note', note)}\n{body}\n</div>"
    )


# --- Text blocks ---------------------------------------------------------------------


def hook_line(hook: dict) -> str:
    """What one hook did, in one line: its name and point, its decision, and why."""
    said = f"hook {hook.get('hook')} ({hook.get('point')}): {hook.get('decision')}"
    if hook.get("failure"):
        return f"{said}, by default: it failed ({hook['failure']}: {hook.get('detail')})"
    changed = [key for key in ("arguments", "result", "context") if key in hook]
    if changed:
        said += f", gave {' and '.join(changed)}"
    return said + (f": {hook['reason']}" if hook.get("reason") else "")


def _fold(text: str, css_class: str, look: str = "code") -> str:
    """Text in a block. Text twice as long as FOLD_LINES lines or FOLD_CHARS characters
    shows only those first, and the rest in a <details> that the reader can open."""
    if text.count("\n") < 2 * FOLD_LINES and len(text) <= 2 * FOLD_CHARS:
        return _div(css_class, look, text)
    end = -1
    for _ in range(FOLD_LINES):
        end = text.find("\n", end + 1, FOLD_CHARS)
        if end < 0:
            break
    cut = end + 1 if end >= 0 else FOLD_CHARS
    head, rest = text[:cut], text[cut:]
    return (
        f"{_div(css_class, look, head)}<details><summary>show the rest "
        f"({len(rest):,} more characters, {len(rest.splitlines()):,} lines)</summary>"
        f"{_div(css_class, look, rest)}</details>"
    )


def _pretty(value) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False)


# --- The budget of each request ----------------------------------------------------------


def budget_html(rows: list, limit: int | None = None) -> str:
    """A table of requests (``request_sizes`` rows, or ``Budget.log`` rows with ``before``
    and ``after``): a bar per request, split by kind of text, to one scale; ``limit``
    draws the budget as a line across the bars."""
    kinds = [kind for kind in KIND_COLOURS if any(row.get(kind) for row in rows)]
    widest = max([row["total"] for row in rows] + [limit or 0, 1])
    scale = 100 / widest
    legend = " ".join(
        f'<span style="white-space:nowrap"><span style="display:inline-block;'
        f'width:10px;height:10px;background:rgb({KIND_COLOURS[kind]})"></span> '
        f"{_text(kind)}</span>"
        for kind in kinds
    )
    lines = [
        f'<div class="labkit-budget-legend" style="margin:4px 0">{legend}</div>',
        '<table class="labkit-budget" style="border-collapse:collapse;width:100%">',
        '<tr><th style="text-align:left">request</th><th style="text-align:left;width:60%">'
        'characters by kind</th><th style="text-align:right">characters</th>'
        '<th style="text-align:right">prompt tokens</th></tr>',
    ]
    for row in rows:
        bar = "".join(
            f'<div title="{kind}: {row[kind]:,}" style="width:{row[kind] * scale:.2f}%;'
            f'background:rgb({KIND_COLOURS[kind]})"></div>'
            for kind in kinds
            if row.get(kind)
        )
        line = (
            f'<div style="position:absolute;left:{limit * scale:.2f}%;top:-2px;bottom:-2px;'
            f'border-left:2px dashed rgb(220,38,38)"></div>'
            if limit
            else ""
        )
        tokens = row.get("prompt_tokens")
        over = " labkit-over" if limit and row["total"] > limit else ""
        lines.append(
            f'<tr class="labkit-budget-row{over}"><td>{row["request"]}</td>'
            f'<td><div style="position:relative;display:flex;height:14px">{bar}{line}</div></td>'
            f'<td style="text-align:right">{row["total"]:,}</td>'
            f'<td style="text-align:right">{"-" if tokens is None else f"{tokens:,}"}</td></tr>'
        )
    lines.append("</table>")
    if limit:
        lines.append(
            _div("labkit-note", "note", f"the dashed line: the budget, {limit:,} characters")
        )
    return "\n".join(lines)


def budget_text(rows: list, limit: int | None = None) -> str:
    """The same table as text, one line per request."""
    kinds = [kind for kind in KIND_COLOURS if any(row.get(kind) for row in rows)]
    lines = ["request " + " ".join(f"{kind:>10}" for kind in kinds) + "      total  tokens"]
    for row in rows:
        tokens = row.get("prompt_tokens")
        lines.append(
            f"{row['request']:>7} "
            + " ".join(f"{row.get(kind, 0):>10,}" for kind in kinds)
            + f" {row['total']:>10,}  {'-' if tokens is None else f'{tokens:,}':>6}"
            + ("  over budget" if limit and row["total"] > limit else "")
        )
    return "\n".join(lines)


class BudgetTable:
    """What each request carried, shown as a table of bars in a notebook (text elsewhere)."""

    def __init__(self, rows: list, limit: int | None = None):
        self.rows, self.limit = list(rows), limit

    def _repr_html_(self) -> str:
        return budget_html(self.rows, self.limit)

    def __repr__(self) -> str:
        return budget_text(self.rows, self.limit)

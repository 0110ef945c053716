"""HTML for the lesson widgets: one step of a streamed turn, one step of a conversation.

Pure functions from the states of ``labkit.steps`` to HTML strings, with every piece
of text escaped. They carry no ids and no clock, so the same state always gives the
same HTML: the widgets show it live, and a notebook saved without a kernel shows the
static version. The CSS class names are a contract with the browser test.
"""

from __future__ import annotations

import json
from functools import partial
from html import escape

from .steps import TAIL, ChunkStep, ConversationStep, TurnSteps, tool_result

_text = partial(escape, quote=False)  # for text between tags; attribute values are our own

WIRE_LIMIT = 2000   # characters of one wire line shown
FOLD_LINES = 8      # lines of a long message shown before "show the rest"
FOLD_CHARS = 800    # characters of a long message shown before "show the rest"

ROLE_COLOURS = {"system": "107,114,128", "user": "37,99,235", "assistant": "22,163,74",
                "tool": "217,119,6"}

STYLE = "<style>\n" + "\n".join([
    ".labkit-stepper, .labkit-conversation { color: var(--jp-content-font-color1, inherit);"
    " font-size: var(--jp-content-font-size1, 13px); line-height: 1.45; }",
    ":is(.labkit-stepper, .labkit-conversation) :is(.labkit-wire, .labkit-json, .labkit-text,"
    " .labkit-assembled-text, .labkit-assembled-thinking) { white-space: pre-wrap;"
    " overflow-wrap: anywhere; margin: 2px 0; font-family: var(--jp-code-font-family, monospace);"
    " font-size: var(--jp-code-font-size, 12px); }",
    ".labkit-stepper .labkit-wire { background: rgba(127,127,127,.14); padding: 4px 6px;"
    " border-radius: 3px; }",
    ":is(.labkit-stepper, .labkit-conversation) .labkit-field { font-size: 11px;"
    " text-transform: uppercase; letter-spacing: .05em; opacity: .7; margin-top: 6px; }",
    ":is(.labkit-stepper, .labkit-conversation) :is(.labkit-folded, .labkit-note,"
    " .labkit-static-note) { font-style: italic; opacity: .75; }",
    ".labkit-stepper :is(.labkit-assembled-text, .labkit-assembled-thinking):empty::before"
    " { content: '(nothing yet)'; font-style: italic; opacity: .5; }",
    ":is(.labkit-stepper, .labkit-conversation) :is(.labkit-assembled-thinking, .labkit-thinking)"
    " { font-style: italic; opacity: .8; }",
    ".labkit-stepper .labkit-dispatch { margin-top: 8px; padding: 4px 8px; border-radius: 3px;"
    " font-weight: 600; border-left: 4px solid; }",
    ".labkit-stepper .labkit-dispatch-may { border-color: rgb(22,163,74);"
    " background: rgba(22,163,74,.14); }",
    ".labkit-stepper .labkit-dispatch-wait { border-color: rgb(217,119,6);"
    " background: rgba(217,119,6,.14); }",
    ".labkit-stepper .labkit-dispatch-refused { border-color: rgb(220,38,38);"
    " background: rgba(220,38,38,.14); }",
    ":is(.labkit-stepper, .labkit-conversation) .labkit-head { font-weight: 600; margin: 4px 0; }",
    ".labkit-conversation .labkit-message { margin: 6px 0; padding: 4px 8px; border-radius: 3px;"
    " border-left: 4px solid; }",
    ".labkit-conversation .labkit-role { display: inline-block; padding: 0 6px; border-radius: 3px;"
    " color: #fff; font-size: 11px; font-weight: 600; }",
    ".labkit-conversation .labkit-new { box-shadow: 0 0 0 2px rgba(127,127,127,.6); }",
    *(f".labkit-conversation .labkit-role-{role} {{ border-color: rgb({rgb});"
      f" background: rgba({rgb},.08); }}\n"
      f".labkit-conversation .labkit-role-{role} .labkit-role {{ background: rgb({rgb}); }}"
      for role, rgb in ROLE_COLOURS.items()),
    ".labkit-conversation details > summary { cursor: pointer; opacity: .75; font-style: italic; }",
]) + "\n</style>"


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
            return "may", (f"may dispatch: the final chunk arrived (done_reason "
                           f"'{step.done_reason}'), so its {counted} can run now")
        return "may", (f"may dispatch: the turn is complete (done_reason '{step.done_reason}'); "
                       "it has no tool calls, so it is the model's final answer")
    if step.problem:
        return "refused", f"refused: {step.problem}; no tool from this turn runs"
    if step.done:
        return "refused", (f"refused: the reply was cut by the output-length limit (done_reason "
                           f"'{step.done_reason}'); its {counted} do not run")
    if step.ended:
        return "refused", ("refused: the stream ended without a final 'done' chunk; "
                           "no tool from this turn runs")
    waiting = f"; the {counted} assembled so far must wait" if calls else ""
    return "wait", f"not yet: waiting for the final chunk ('done'){waiting}"


def chunk_step_html(step: ChunkStep) -> str:
    """One step of a streamed turn: the chunk on the wire, the message so far, the verdict."""
    if step.number:
        arrival = "" if step.at is None else f" · arrived {step.at:.3f} s after the request"
        head = f"chunk {step.number:,} of {step.total:,}{arrival}"
        wire = json.dumps(step.chunk, ensure_ascii=False, separators=(",", ":"), default=repr)
    else:
        head, wire = f"before the first chunk (the stream has {step.total:,})", ""
    more = len(wire) - WIRE_LIMIT
    kind, verdict = dispatch_verdict(step)
    parts = [
        f'<div class="labkit-head">{_text(head)}</div>',
        '<div class="labkit-field">on the wire: one line of NDJSON</div>',
        f'<div class="labkit-wire">{_text(wire[:WIRE_LIMIT])}</div>',
        _note(f"… {more:,} more characters of this line") if more > 0 else "",
        '<div class="labkit-field">assistant message so far: thinking</div>',
        _folded_note(step.thinking_hidden),
        f'<div class="labkit-assembled-thinking">{_text(step.thinking)}</div>',
        '<div class="labkit-field">content</div>',
        _folded_note(step.content_hidden),
        f'<div class="labkit-assembled-text">{_text(step.content)}</div>',
    ]
    if step.tool_calls:
        parts += ['<div class="labkit-field">tool_calls</div>',
                  f'<div class="labkit-json labkit-tool-calls">{_text(_pretty(step.tool_calls))}</div>']
    parts.append(f'<div class="labkit-dispatch labkit-dispatch-{kind}">{_text(verdict)}</div>')
    return "\n".join(part for part in parts if part)


def turn_static_html(steps: TurnSteps, *, tail: int | None = TAIL) -> str:
    """The whole turn after its last chunk, for a notebook viewed without a kernel."""
    note = (f"Static view: the turn after all {len(steps):,} chunks. "
            "Run the notebook to step through them.")
    last = steps.step(len(steps), tail=tail)
    return (f'{STYLE}\n<div class="labkit-stepper labkit-static">\n'
            f'<div class="labkit-static-note">{_text(note)}</div>\n{chunk_step_html(last)}\n</div>')


def turn_summary(steps: TurnSteps) -> str:
    """A one-line text summary of the whole turn."""
    final = steps.step(len(steps), tail=0)
    return f"ChunkStepper: {len(steps):,} chunks; at the end, {dispatch_verdict(final)[1]}"


def _folded_note(hidden: int) -> str:
    return _note(f"… {hidden:,} earlier characters") if hidden else ""


def _note(text: str) -> str:
    return f'<div class="labkit-folded">{_text(text)}</div>'


# --- A conversation ---------------------------------------------------------------------

def conversation_step_html(story: list, index: int) -> str:
    """Step ``index`` (0-based) of a conversation: its caption and every message so far."""
    step: ConversationStep = story[index]
    head = f"step {index + 1} of {len(story)}: {step.caption}"
    messages = [message_html(message, new=index > 0 and number == len(step.messages) - 1)
                for number, message in enumerate(step.messages)]
    return "\n".join([f'<div class="labkit-caption"><div class="labkit-head">{_text(head)}</div>',
                      f'<div class="labkit-note">{_text(step.note)}</div></div>', *messages])


def conversation_static_html(story: list) -> str:
    """The final message list, for a notebook viewed without a kernel."""
    note = (f"Static view: the final list of {len(story[-1].messages)} messages. "
            f"Run the notebook to step through its {len(story)} steps.")
    return (f'{STYLE}\n<div class="labkit-conversation labkit-static">\n'
            f'<div class="labkit-static-note">{_text(note)}</div>\n'
            f'{conversation_step_html(story, len(story) - 1)}\n</div>')


def conversation_summary(story: list) -> str:
    """A one-line text summary: how many messages of each role, and how the run ended."""
    messages = story[-1].messages
    roles = {}
    for message in messages:
        roles[message.get("role")] = roles.get(message.get("role"), 0) + 1
    counts = ", ".join(f"{role} {count}" for role, count in roles.items())
    return (f"ConversationView: {len(story)} steps to {len(messages)} messages ({counts}); "
            f"{story[-1].note}")


def message_html(message: dict, *, new: bool = False) -> str:
    """One message of the conversation: a role label, then its fields, long text folded."""
    role = str(message.get("role", ""))
    css_role = role if role in ROLE_COLOURS else "other"
    label = role if role != "tool" else f"tool · {message.get('tool_name', '?')}"
    parts = [f'<div class="labkit-role">{_text(label)}</div>']
    if message.get("thinking"):
        parts += ['<div class="labkit-field">thinking</div>',
                  _fold(str(message["thinking"]), "labkit-text labkit-thinking")]
    if role == "tool":
        result = tool_result(message)
        if result is not None:
            parts += ['<div class="labkit-field">content (JSON text, shown indented)</div>',
                      _fold(_pretty(result), "labkit-json")]
        else:
            parts.append(_fold(str(message.get("content", "")), "labkit-text"))
    elif message.get("content"):
        parts.append(_fold(str(message["content"]), "labkit-text"))
    if message.get("tool_calls"):
        parts += ['<div class="labkit-field">tool_calls</div>',
                  _fold(_pretty(message["tool_calls"]), "labkit-json")]
    new_class = " labkit-new" if new else ""
    return (f'<div class="labkit-message labkit-role-{css_role}{new_class}">'
            + "".join(parts) + "</div>")


def _fold(text: str, css: str) -> str:
    """Text in a block. Text twice as long as FOLD_LINES lines or FOLD_CHARS characters
    shows only those first, and the rest in a <details> that the reader can open."""
    if text.count("\n") < 2 * FOLD_LINES and len(text) <= 2 * FOLD_CHARS:
        return f'<div class="{css}">{_text(text)}</div>'
    end = -1
    for _ in range(FOLD_LINES):
        end = text.find("\n", end + 1, FOLD_CHARS)
        if end < 0:
            break
    cut = end + 1 if end >= 0 else FOLD_CHARS
    head, rest = text[:cut], text[cut:]
    return (f'<div class="{css}">{_text(head)}</div><details><summary>show the rest '
            f'({len(rest):,} more characters, {len(rest.splitlines()):,} lines)</summary>'
            f'<div class="{css}">{_text(rest)}</div></details>')


def _pretty(value) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False)

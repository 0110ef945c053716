"""HTML for one step of a conversation: the messages a request carries, the newest in full.

Pure, like ``render`` (whose blocks, colours and folding it uses): the same step always gives
the same HTML. Two things keep a long conversation readable in a widget of a notebook:

- **The newest message is the one shown whole.** Each earlier message is one line — its role
  and the gist of it (the tools it asks for, a result's first words) — that opens, on a
  click, to the whole message. So however long the list grows, what the step added is on
  screen, not below a wall of earlier results.
- **A tool's result is shown decoded.** A tool message's content is JSON text; shown as it is,
  a file in it reads as one line of ``\\"`` and ``\\n``. Each field of the result is shown as
  what it is (a file's text as text, with its lines), and the JSON text the model receives is
  one click away, as it is.
"""

from __future__ import annotations

import json

from ..harness.budget import COMPACTED
from .render import (
    CODE,
    GATE_COLOURS,
    ROLE_COLOURS,
    _body,
    _div,
    _fold,
    _pretty,
    _static,
    _text,
    _tinted,
    hook_line,
)
from .steps import ConversationStep, tool_result, who_decided

GIST = 90  # characters of an earlier message's one-line gist
SHORT_FIELD = 80  # a result's text field at most this long, on one line, is shown inline


def conversation_step_html(story: list, index: int) -> str:
    """Step ``index`` (0-based) of a conversation: its caption, each earlier message as one
    line that opens, and the newest in full (at the first request, every message in full)."""
    step: ConversationStep = story[index]
    head = f"step {index + 1} of {len(story)}: {step.caption}"
    caption = (
        f'<div class="labkit-caption">{_div("labkit-head", "head", head)}'
        f"{_div('labkit-note', 'note', step.note)}</div>"
    )
    newest = len(step.messages) - 1 if index else None
    return _body(
        [
            caption,
            *(
                message_html(message, **_beside(step, number))
                if newest is None
                else message_html(message, new=True, **_beside(step, number))
                if number == newest
                else earlier_message_html(message, **_beside(step, number))
                for number, message in enumerate(step.messages)
            ),
        ]
    )


def _beside(step: ConversationStep, number: int) -> dict:
    """What the run's events say about message ``number``: the gate's decision on the call
    it answers, and the hooks that ran around it (lesson 11)."""
    return {"decision": step.gate.get(number), "hooks": step.hooks.get(number, ())}


def conversation_static_html(story: list) -> str:
    """The final message list, for a notebook viewed without a kernel."""
    note = (
        f"Static view: the final list of {len(story[-1].messages)} messages. "
        f"Run the notebook to step through its {len(story)} steps."
    )
    return _static("labkit-conversation", note, conversation_step_html(story, len(story) - 1))


def conversation_summary(story: list) -> str:
    """A one-line text summary: how many messages of each role, and how the run ended."""
    messages = story[-1].messages
    roles = {}
    for message in messages:
        roles[message.get("role")] = roles.get(message.get("role"), 0) + 1
    counts = ", ".join(f"{role} {count}" for role, count in roles.items())
    return (
        f"ConversationView: {len(story)} steps to {len(messages)} messages ({counts}); "
        f"{story[-1].note}"
    )


def message_html(
    message: dict, *, new: bool = False, decision: dict | None = None, hooks=()
) -> str:
    """One message of the conversation, whole: a role label, then its fields, long text folded.
    ``decision``: the permission gate's event for the call a tool message answers;
    ``hooks``: the hook events behind the message."""
    css_role, rgb = _role(message)
    css_class = f"labkit-message labkit-role-{css_role}" + (" labkit-new" if new else "")
    inner = _label(message) + "".join(_fields(message, decision, hooks))
    return _tinted(css_class, rgb, "margin:6px 0;padding:4px 8px", inner)


def earlier_message_html(message: dict, *, decision: dict | None = None, hooks=()) -> str:
    """An earlier message as one line (its role, and its gist) that opens to the whole of it."""
    css_role, rgb = _role(message)
    return (
        f'<details class="labkit-message labkit-role-{css_role} labkit-earlier" '
        f'style="border-left:4px solid rgb({rgb});background:rgba({rgb},.06);'
        f'border-radius:3px;margin:3px 0;padding:2px 8px">'
        f'<summary style="cursor:pointer">{_label(message)} '
        f'<span class="labkit-gist" style="{CODE};opacity:.8">'
        f"{_text(gist(message, decision))}</span></summary>"
        f"{''.join(_fields(message, decision, hooks))}</details>"
    )


def gist(message: dict, decision: dict | None = None) -> str:
    """A message in a few words: the tools it asks for, a result's first words, the text's."""
    calls = [
        call.get("function", {}).get("name", "?")
        for call in message.get("tool_calls") or []
        if isinstance(call, dict)
    ]
    if calls:
        return "asks for " + ", ".join(calls)
    if decision is not None and decision.get("decision") == "deny":
        return "denied by the gate: " + _first_words(str(message.get("content", "")))
    if message.get("role") == "tool":
        if COMPACTED.match(str(message.get("content", ""))):
            return "compacted by the budget"
        result = tool_result(message)
        if isinstance(result, dict):
            return ", ".join(
                f"{key}: {_first_words(value if isinstance(value, str) else json.dumps(value))}"
                for key, value in result.items()
            )[:GIST]
    return _first_words(str(message.get("content") or message.get("thinking") or ""))


def _first_words(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= GIST else line[: GIST - 1] + "…"


def _role(message: dict) -> tuple[str, str]:
    role = str(message.get("role", ""))
    css_role = role if role in ROLE_COLOURS else "other"
    return css_role, ROLE_COLOURS[css_role]


def _label(message: dict) -> str:
    role = str(message.get("role", ""))
    _, rgb = _role(message)
    label = role if role != "tool" else f"tool · {message.get('tool_name', '?')}"
    return (
        f'<div class="labkit-role" style="display:inline-block;padding:0 6px;'
        f"border-radius:3px;color:#fff;background:rgb({rgb});font-size:11px;"
        f'font-weight:600">{_text(label)}</div>'
    )


def _fields(message: dict, decision: dict | None, hooks=()) -> list:
    """The blocks of a message after its label: the gate's decision and the hooks', then its
    fields."""
    role = str(message.get("role", ""))
    parts = []
    if decision is not None:
        outcome = decision.get("decision", "deny")
        verdict = (
            f"gate: the policy says {decision.get('verdict')}; "
            f"{'it ran' if outcome == 'allow' else 'it did not run'}, {who_decided(decision)}"
        )
        parts.append(
            _tinted(
                f"labkit-gate labkit-gate-{outcome}",
                GATE_COLOURS.get(outcome, "127,127,127"),
                "margin:4px 0;padding:2px 6px;font-size:12px",
                _text(verdict),
            )
        )
    for hook in hooks:
        outcome = hook.get("decision", "allow")
        parts.append(
            _tinted(
                f"labkit-hook labkit-hook-{outcome}",
                GATE_COLOURS.get(outcome, "127,127,127"),
                "margin:4px 0;padding:2px 6px;font-size:12px",
                _text(hook_line(hook)),
            )
        )
    if role == "tool" and COMPACTED.match(str(message.get("content", ""))):
        parts.append(_div("labkit-compacted", "note", "compacted by the budget"))
    if message.get("thinking"):
        parts += [
            _div("labkit-field", "field", "thinking"),
            _fold(str(message["thinking"]), "labkit-text labkit-thinking", "thinking"),
        ]
    if role == "tool":
        parts += _tool_content(message)
    elif message.get("content"):
        parts.append(_fold(str(message["content"]), "labkit-text"))
    if message.get("tool_calls"):
        parts += [
            _div("labkit-field", "field", "tool_calls"),
            _fold(_pretty(message["tool_calls"]), "labkit-json"),
        ]
    return parts


def _tool_content(message: dict) -> list:
    """A tool message's content: each field of the result as what it is, then the JSON text
    the model receives, one click away. Content that is not JSON is shown as it is."""
    text = str(message.get("content", ""))
    result = tool_result(message)
    if result is None:
        return [_fold(text, "labkit-text")]
    parts = []
    fields = result.items() if isinstance(result, dict) else [("result", result)]
    for key, value in fields:
        if isinstance(value, str) and len(value) <= SHORT_FIELD and "\n" not in value:
            parts.append(_field_line(key, value))
        elif isinstance(value, str):
            parts += [
                _div("labkit-field", "field", key),
                _fold(value, "labkit-text labkit-result-text"),
            ]
        else:
            parts.append(_field_line(key, json.dumps(value, ensure_ascii=False)))
    parts.append(
        f'<details class="labkit-raw"><summary>the content as the model receives it: JSON '
        f"text, {len(text):,} characters</summary>{_fold(text, 'labkit-json')}</details>"
    )
    return parts


def _field_line(key: str, value: str) -> str:
    return (
        f'<div class="labkit-result-field" style="{CODE}"><span style="opacity:.7">'
        f"{_text(key)}:</span> {_text(value)}</div>"
    )

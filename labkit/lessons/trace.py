"""One line of text for each event of a run, as the command line prints a run's trace
(``python -m labkit replay`` and ``record``) and the Approve/Deny panel writes its log."""

from __future__ import annotations

import json

from ..harness.words import counted

PREVIEW = 100  # characters of a tool result or message shown in a trace


def short(value, limit: int = PREVIEW) -> str:
    """One-line JSON (or text) of at most ``limit`` characters."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    text = text.replace("\n", "\\n")
    return text if len(text) <= limit else f"{text[: limit - 3]}..."


def event_line(event: dict, limit: int = PREVIEW) -> str | None:
    """The trace line for one loop event, or None for events the trace leaves out;
    ``limit``: the characters of arguments, results and messages shown."""
    kind = event["type"]
    if kind == "tool_start":
        return f"  turn {event['turn']}: {event['name']} {short(event['arguments'], limit)}"
    if kind == "permission":
        return f"          gate: {event['verdict']}, so {event['decision']} (by {event['by']})"
    if kind == "hook":
        failed = f", by default: it failed ({event['failure']})" if event.get("failure") else ""
        reason = f": {short(event['reason'], limit)}" if event.get("reason") else ""
        said = f"{event['decision']}{failed}{reason}"
        return f"          hook {event['hook']} ({event['point']}): {said}"
    if kind == "tool_result":
        return f"          -> {short(event['result'], limit)}"
    if kind == "stopped":
        final = next(
            (m for m in reversed(event["messages"]) if m.get("role") in ("assistant", "model")),
            None,
        )
        lines = []
        if event["reason"] in ("assistant_finished", "empty_response") and final:
            # its content (Ollama, OpenAI, Anthropic), output items (Responses) or parts (Gemini)
            said = next((final[key] for key in ("content", "output", "parts") if key in final), "")
            lines.append(f"  turn {event['turns']}: final message {short(said, limit)}")
        lines.append(
            f"Stopped: {event['reason']} after {counted(event['turns'], 'model turn')} and "
            f"{counted(event['tool_calls'], 'tool call')} ({event['detail']})"
        )
        return "\n".join(lines)
    return None

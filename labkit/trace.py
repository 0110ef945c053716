"""Plain-text lines describing a run, for the command line (replay and record share them)."""

from __future__ import annotations

import json

PREVIEW = 100  # characters of a tool result or message shown in a trace


def short(value, limit: int = PREVIEW) -> str:
    """One-line JSON (or text) of at most ``limit`` characters."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    text = text.replace("\n", "\\n")
    return text if len(text) <= limit else f"{text[:limit - 3]}..."


def checks_line(when: str, checks) -> str:
    return f"Tests {when}: {checks.summary} (exit code {checks.exit_code})"


def event_line(event: dict) -> str | None:
    """The trace line for one loop event, or None for events the trace leaves out."""
    kind = event["type"]
    if kind == "tool_start":
        return f"  turn {event['turn']}: {event['name']} {short(event['arguments'])}"
    if kind == "tool_result":
        return f"          -> {short(event['result'])}"
    if kind == "stopped":
        final = next((m for m in reversed(event["messages"]) if m["role"] == "assistant"), None)
        lines = []
        if event["reason"] in ("assistant_finished", "empty_response") and final:
            lines.append(f"  turn {event['turns']}: final message {short(final['content'])}")
        lines.append(f"Stopped: {event['reason']} after {event['turns']} model turns and "
                     f"{event['tool_calls']} tool calls ({event['detail']})")
        return "\n".join(lines)
    return None

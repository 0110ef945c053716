"""JSON as Ollama's Go server writes it: one NDJSON line, and a time.

Ollama is written in Go, and Go's ``encoding/json`` writes compact JSON with
``<``, ``>``, ``&``, U+2028 and U+2029 escaped and other non-ASCII text as UTF-8.
:func:`ollama_line` writes a chunk the same way, so the replay server sends what
Ollama would for a chunk that has no recorded line.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime

_GO_ESCAPES = {
    "<": "\\u003c",
    ">": "\\u003e",
    "&": "\\u0026",
    "\u2028": "\\u2028",
    "\u2029": "\\u2029",
}
_GO_TABLE = str.maketrans(_GO_ESCAPES)


def ollama_line(payload) -> str:
    """``payload`` as Ollama's Go server writes it on one line (no trailing newline)."""
    text = json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
    return text.translate(_GO_TABLE)  # those characters only ever occur inside JSON strings


def go_time(moment: datetime) -> str:
    """A time as Go writes ``time.Time`` in JSON: RFC 3339 in UTC, trailing fraction zeros cut."""
    text = moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f").rstrip("0")
    return text.rstrip(".") + "Z"

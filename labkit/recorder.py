"""Record an attempt through ``OllamaModel``, with provenance taken from the server itself.

A capture from Ollama says ``"source": "ollama"`` with the model tag, digest and
server version Ollama reported. A capture from a labkit replay server keeps the
served recording's own provenance (its ``source`` says who wrote the chunks) and
adds ``replayed_from``: so no file claims a live model wrote what a script did.
"""

from __future__ import annotations

import re
from datetime import datetime, timezone

from .ollama_model import OPTIONS, OllamaError, OllamaModel
from .recording import SOURCES
from .settings import MY_RECORDINGS

RECORDER = "python -m labkit record"


def capture_provenance(model: OllamaModel, now: datetime | None = None) -> dict:
    """Who will have written the chunks captured from ``model``'s server, as it tells us."""
    facts = model.server_facts()
    date = _timestamp(now)
    served = facts["replay"]
    if served is None:
        return {"source": "ollama", "model": model.model, "digest": facts["digest"],
                "server_version": facts["server_version"], "think": True, "keep_alive": 0,
                "options": dict(OPTIONS), "date": date, "recorded_with": RECORDER}
    origin = served.get("provenance") if isinstance(served, dict) else None
    if not isinstance(origin, dict) or origin.get("source") not in SOURCES:
        raise OllamaError(f"the replay server at {model.host} does not say where its "
                          f"recording came from; refusing to record from it")
    return {**origin, "replayed_from": {
        "server_version": facts["server_version"], "recording": served.get("recording"),
        "recording_sha256": served.get("recording_sha256"), "requested_model": model.model,
        "date": date, "recorded_with": RECORDER}}


def default_output(provenance: dict, now: datetime | None = None):
    """Where a new recording goes by default: ``recordings/mine/`` (not shipped with the course)."""
    stamp = _timestamp(now).replace(":", "").replace("-", "")
    if "replayed_from" in provenance:
        stem = "replayed-" + (provenance["replayed_from"].get("recording") or "recording")
    else:
        stem = provenance["model"]
    stem = re.sub(r"[^A-Za-z0-9._]+", "-", stem.removesuffix(".json"))
    return MY_RECORDINGS / f"{stem}-{stamp}.json"


def _timestamp(now: datetime | None) -> str:
    now = now or datetime.now(timezone.utc)
    return now.astimezone(timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")

"""Who wrote a recording's chunks, as the model that streamed them can tell.

A live model names itself from what its server reports (``OllamaModel.provenance``,
``SSEModel.provenance``). A labkit replay server is no model: it says which recording it
serves and whose chunks those are, and a capture through it keeps that origin, with
``replayed_from`` beside it, so no file ever claims a live model wrote what a script did.
"""

from __future__ import annotations

from datetime import UTC, datetime

from .providers import PROVIDERS

#: Who wrote the chunks: a script, or a live server of one provider (then the recording's
#: wire format is that provider's).
SOURCES = ("scripted", *PROVIDERS)
RECORDER = "python -m labkit record"  # what a capture's provenance says recorded it


def timestamp(now: datetime | None = None) -> str:
    """A moment as provenance dates it: UTC, to the second (``2026-12-01T09:00:00Z``)."""
    now = now or datetime.now(UTC)
    return now.astimezone(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def replayed_provenance(
    served, *, server: dict, address: str, model: str, date: str, refuse
) -> dict:
    """The provenance of a capture through a labkit replay server: the served recording's
    own (its ``source`` says who wrote the chunks), plus ``replayed_from``.

    ``served`` is what the server says about itself; ``server`` names it first in
    ``replayed_from``. ``refuse(text)`` makes the model's error, raised when the server does
    not say where its recording came from.
    """
    origin = served.get("provenance") if isinstance(served, dict) else None
    if not isinstance(origin, dict) or origin.get("source") not in SOURCES:
        raise refuse(
            f"the replay server at {address} does not say where its "
            "recording came from; refusing to record from it"
        )
    return {
        **origin,
        "replayed_from": {
            **server,
            "recording": served.get("recording"),
            "recording_sha256": served.get("recording_sha256"),
            "requested_model": model,
            "date": date,
            "recorded_with": RECORDER,
        },
    }

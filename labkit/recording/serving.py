"""A recording served over the API it was recorded in: found, checked, then handed to a replay
server (``labkit.models.replay_server``).

``serve_recording`` takes a recording's path (or the name of one of the course's) or a
recording in memory, checks it as ``load_recording`` does, and starts a
:class:`~labkit.models.replay_server.ReplayServer` for it in the recording's API: Ollama's,
OpenAI's or Anthropic's.
"""

from __future__ import annotations

import hashlib
import json
import os
from datetime import UTC, datetime

from ..models.replay_faults import Faults
from ..models.replay_server import CAPABILITIES, ReplayServer, Served
from ..settings import SERVER_REQUEST_TIMEOUT
from .contents import check_recording
from .files import load_recording, recording_path


def serve_recording(
    recording,
    *,
    port: int = 0,
    strict: bool = True,
    speed: float | None = None,
    log=None,
    models=None,
    capabilities=CAPABILITIES,
    request_timeout: float = SERVER_REQUEST_TIMEOUT,
    api_key: str | None = None,
    pings: int = 0,
    **faults,
) -> ReplayServer:
    """Start serving ``recording`` (a dict, or the path or name of a recording file) on
    127.0.0.1, over the API it was recorded in: Ollama's, OpenAI's or Anthropic's.

    Returns a running :class:`ReplayServer`; use it in a ``with`` block, or call
    ``close()``. ``port=0`` picks a free port (see ``.url``). ``speed``: None
    streams as fast as the client reads, 1.0 at the recorded pace. ``log(line)``
    hears about each chat request. ``models``: the model names it answers to (see
    :class:`ReplayServer`); ``capabilities``: what the models can do (without
    ``"tools"``, a request offering tools is refused as the API refuses it).
    ``api_key``: the key an OpenAI or Anthropic client must send (None: any).
    ``pings``: send Anthropic's ``ping`` event before every ``pings``-th streamed chunk.
    ``faults``: see :class:`~labkit.models.replay_faults.Faults`; a fault fires on the first
    request for its turn (``times`` requests), and the client's retry gets the recording.
    """
    return ReplayServer(
        served(recording),
        port=port,
        strict=strict,
        speed=speed,
        log=log,
        models=models,
        capabilities=capabilities,
        request_timeout=request_timeout,
        api_key=api_key,
        pings=pings,
        faults=Faults.from_keywords(faults),
    )


def served(recording) -> Served:
    """A recording to serve: from a file's path or a course recording's name (named after
    the file, its digest the file's), or from memory (its digest its canonical JSON's);
    checked either way, or a ``RecordingError`` says why not."""
    if isinstance(recording, (str, os.PathLike)):
        path = recording_path(recording)
        return Served(
            load_recording(path),
            path.name,
            hashlib.sha256(path.read_bytes()).hexdigest(),
            datetime.fromtimestamp(path.stat().st_mtime, UTC),
        )
    check_recording(recording)
    digest = hashlib.sha256(json.dumps(recording, sort_keys=True).encode()).hexdigest()
    return Served(recording, "recording", digest, datetime.now(UTC))

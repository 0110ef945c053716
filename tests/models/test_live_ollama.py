"""Against a real Ollama server: run only when one answers at OLLAMA_HOST (else reported skipped).

This is the suite's one allowed skip: the course must test offline, and most machines
(CI included) have no Ollama. With a server, these tests record a short live attempt
with the course's model and check the recording is honest and replays exactly.
"""

import os

import httpx
import ollama
import pytest

from labkit import STOP_REASONS, OllamaModel, ReplayModel, load_recording, run_attempt
from labkit.cli import main
from labkit.recording import compact_event, stop_of
from labkit.settings import DEFAULT_HOST, DEFAULT_MODEL

HOST = os.environ.get("OLLAMA_HOST") or DEFAULT_HOST


def _why_not_live():
    """None when a real Ollama answers at HOST, else the reason to skip."""
    with OllamaModel(host=HOST, timeout=5) as probe:
        try:  # the SDK has no call for /api/version
            version = probe.client._request_raw("GET", "/api/version").json()
        except (ConnectionError, httpx.HTTPError) as exc:
            return f"no Ollama server answers at {HOST} ({type(exc).__name__})"
        except (ollama.ResponseError, ValueError) as exc:
            return f"the server at {HOST} does not answer like Ollama ({exc})"
    if "labkit_replay" in version:
        return f"{HOST} is a labkit replay server, not Ollama"
    return None


SKIP_REASON = _why_not_live()
pytestmark = pytest.mark.skipif(SKIP_REASON is not None, reason=str(SKIP_REASON))


def test_a_live_recording_is_honest_and_replays_exactly(tmp_path, capsys):
    path = tmp_path / "live.json"
    code = main(["record", "--host", HOST, "--max-turns", "2", "--output", str(path)])
    out, err = capsys.readouterr()
    assert code == 0, f"the live run failed (is {DEFAULT_MODEL} pulled?)\n{out}\n{err}"
    recording = load_recording(path)
    provenance = recording["provenance"]
    with OllamaModel(host=HOST) as model:
        [listed] = [
            m
            for m in model.client.list().models
            if m.model in (DEFAULT_MODEL, f"{DEFAULT_MODEL}:latest")
        ]
    assert (provenance["source"], provenance["model"]) == ("ollama", DEFAULT_MODEL)
    assert provenance["digest"] == listed.digest and provenance["server_version"]
    assert stop_of(recording)["reason"] in STOP_REASONS
    assert stop_of(recording)["reason"] != "model_error"
    for turn in recording["turns"]:
        chunks = [entry["chunk"] for entry in turn["chunks"]]
        assert all(
            c["model"] == DEFAULT_MODEL
            and c["message"]["role"] == "assistant"
            and isinstance(c["created_at"], str)
            for c in chunks
        )
        assert chunks[-1]["done"] is True and chunks[-1]["done_reason"] in ("stop", "length")
        assert isinstance(chunks[-1]["eval_count"], int)
        assert not any(c["done"] for c in chunks[:-1])
    replayed, events = run_attempt(
        ReplayModel(recording),
        provenance=provenance,
        task=recording["task"],
        max_turns=recording["max_turns"],
    )
    assert [compact_event(e) for e in events] == recording["events"]
    assert replayed["checks"]["after"] == recording["checks"]["after"]


def test_a_stream_abandoned_after_one_chunk_ends_cleanly():
    with OllamaModel(host=HOST) as model:
        stream = model([{"role": "user", "content": "Count from 1 to 50."}], [])
        first = next(stream)
        stream.close()
    assert first["model"] == DEFAULT_MODEL and first["done"] is False

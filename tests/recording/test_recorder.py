"""``python -m labkit record`` and ``serve``: honest provenance, round trips, nothing
half-written."""

import json
import re
import signal
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import ollama
import pytest
from conftest import PROJECT_DIR

from labkit import OllamaError, OllamaModel, load_recording
from labkit.cli import main
from labkit.recording import serve_recording
from labkit.settings import DEFAULT_MODEL

REPAIR = PROJECT_DIR / "recordings" / "repair.json"


def record(capsys, *args):
    code = main(["record", *args])
    out, err = capsys.readouterr()
    return code, out, err


def turns_without_times(recording):
    return [
        {
            "request": turn["request"],
            "chunks": [entry["chunk"] for entry in turn["chunks"]],
            **({"error": turn["error"]} if "error" in turn else {}),
        }
        for turn in recording["turns"]
    ]


def test_record_serve_record_round_trip_keeps_turns_chunks_and_honest_provenance(tmp_path, capsys):
    scripted = load_recording(REPAIR)
    with serve_recording(REPAIR) as server:
        code, out, _ = record(capsys, "--host", server.url, "--output", str(tmp_path / "a.json"))
    assert code == 0, out
    assert "labkit replay server serving repair.json (scripted)" in out
    assert "  turn 5 says: I changed python_sources" in out
    assert "Stopped: assistant_finished after 5 model turns and 4 tool calls" in out
    assert "Tests after: 4 passed (exit code 0)" in out and f"Wrote {tmp_path / 'a.json'}" in out
    first = load_recording(tmp_path / "a.json")
    with serve_recording(tmp_path / "a.json") as server:
        code, out, _ = record(capsys, "--host", server.url, "--output", str(tmp_path / "b.json"))
    assert code == 0, out
    second = load_recording(tmp_path / "b.json")

    assert (
        turns_without_times(first) == turns_without_times(second) == turns_without_times(scripted)
    )
    assert first["events"] == second["events"] == scripted["events"]
    for copy, served in ((first, "repair.json"), (second, "a.json")):
        provenance = copy["provenance"]
        assert provenance["source"] == "scripted" and "model" not in provenance
        assert provenance["replayed_from"]["recording"] == served
        assert provenance["replayed_from"]["server_version"].startswith("labkit-replay")
        assert {e["chunk"]["model"] for t in copy["turns"] for e in t["chunks"]} == {"scripted"}


class FakeOllama(BaseHTTPRequestHandler):
    """Only what the recorder asks before a run: a version and the list of local models."""

    def do_GET(self):
        body = {
            "/api/version": {"version": "0.12.6"},
            "/api/tags": {
                "models": [
                    {
                        "name": DEFAULT_MODEL,
                        "model": DEFAULT_MODEL,
                        "digest": "c6eb396dbd59" + "0" * 52,
                    }
                ]
            },
        }[self.path]
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


@pytest.fixture
def fake_ollama():
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakeOllama)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,))
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()
    thread.join()


def test_a_live_server_is_named_with_the_digest_and_version_it_reports(fake_ollama):
    provenance = OllamaModel(DEFAULT_MODEL, host=fake_ollama).provenance()
    assert provenance["source"] == "ollama" and provenance["model"] == DEFAULT_MODEL
    assert provenance["digest"] == "c6eb396dbd59" + "0" * 52
    assert provenance["server_version"] == "0.12.6"
    assert provenance["options"] == {
        "temperature": 0,
        "seed": 7,
        "num_ctx": 8192,
        "num_predict": 2048,
    }
    assert provenance["think"] is True and provenance["date"].endswith("Z")
    assert "replayed_from" not in provenance


def test_a_model_the_server_lacks_is_refused_before_the_run(fake_ollama):
    with pytest.raises(OllamaError, match="download it with `ollama pull qwen3:0.6b`"):
        OllamaModel("qwen3:0.6b", host=fake_ollama).provenance()


def test_no_server_means_no_run_and_advice(tmp_path, capsys, closed_port_url):
    code, out, err = record(capsys, "--host", closed_port_url, "--output", str(tmp_path / "x.json"))
    assert code == 2 and "Tests before" not in out
    assert f"Ollama is not running at {closed_port_url}" in err and "ollama serve" in err
    assert list(tmp_path.iterdir()) == []


def test_a_server_failing_mid_run_leaves_no_file_at_all(tmp_path, capsys):
    with serve_recording(REPAIR, turn=3, close_after=5) as server:
        code, out, err = record(capsys, "--host", server.url, "--output", str(tmp_path / "x.json"))
    assert code == 1
    assert "Stopped: model_error after 3 model turns and 2 tool calls" in out
    assert "No recording written" in err and "broke after 5 chunks" in err
    assert list(tmp_path.iterdir()) == []


def test_ctrl_c_mid_run_leaves_no_file_at_all(tmp_path):
    with serve_recording(REPAIR, speed=1.0) as server:  # paced: a turn takes about a second
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "labkit",
                "record",
                "--host",
                server.url,
                "--output",
                str(tmp_path / "x.json"),
            ],
            cwd=PROJECT_DIR,
            text=True,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )  # as in a terminal
        try:
            for line in process.stdout:
                if "turn 2: sent" in line:
                    break
            process.send_signal(signal.SIGINT)
            _, err = process.communicate(timeout=60)
        finally:
            process.kill()
    assert process.returncode == 130
    assert "Interrupted: no recording written." in err and "Traceback" not in err
    assert list(tmp_path.iterdir()) == []


def test_an_existing_recording_is_never_overwritten(tmp_path, capsys):
    existing = tmp_path / "mine.json"
    existing.write_text("keep me")
    code, _, err = record(capsys, "--output", str(existing))
    assert code == 2 and "exists" in err and existing.read_text() == "keep me"


def test_serve_command_serves_until_terminated(tmp_path):
    process = subprocess.Popen(
        [sys.executable, "-m", "labkit", "serve", str(REPAIR)],
        cwd=PROJECT_DIR,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        banner = process.stdout.readline()
        url = re.search(r"http://127\.0\.0\.1:\d+", banner).group()
        assert "a replay, not a live model" in banner
        assert ollama.Client(host=url).list().models[0].model == "labkit-replay:repair"
        busy = subprocess.run(
            [sys.executable, "-m", "labkit", "serve", str(REPAIR), "--port", url.rsplit(":", 1)[1]],
            capture_output=True,
            text=True,
            timeout=60,
        )
    finally:
        process.terminate()
        out, err = process.communicate(timeout=30)
    assert process.returncode == 0 and "Traceback" not in err
    assert busy.returncode == 2 and "choose another --port" in busy.stderr
    assert "Traceback" not in busy.stderr


def test_help_explains_serve_and_record(capsys):
    for command, options in (
        ("serve", ("--port", "--speed", "--loose", "recording")),
        ("record", ("--model", "--host", "--max-turns", "--output")),
    ):
        with pytest.raises(SystemExit):
            main([command, "--help"])
        out = capsys.readouterr().out
        assert all(option in out for option in options)

"""``python -m labkit record --provider openai|anthropic``: round trips through the replay
servers, honest provenance, clear refusals, and an API key that ends up nowhere."""

import json

import pytest
from conftest import PROJECT_DIR

from labkit import load_recording
from labkit.cli import main
from labkit.models.anthropic_server import AnthropicHandler
from labkit.models.openai_server import OpenAIHandler
from labkit.models.replay_server import ReplayServer
from labkit.recording import serve_recording
from labkit.recording.serving import served

RECORDINGS = {
    "openai": PROJECT_DIR / "recordings" / "repair_openai.json",
    "anthropic": PROJECT_DIR / "recordings" / "repair_anthropic.json",
}
SUFFIX = {"openai": "/v1", "anthropic": ""}


def record(capsys, *args):
    code = main(["record", *args])
    out, err = capsys.readouterr()
    return code, out, err


def chunks_and_lines(recording):
    return [[(e["chunk"], e.get("line")) for e in turn["chunks"]] for turn in recording["turns"]]


@pytest.mark.parametrize("provider", sorted(RECORDINGS))
def test_record_through_the_replay_server_then_replay_it_exactly(provider, tmp_path, capsys):
    scripted = load_recording(RECORDINGS[provider])
    with serve_recording(RECORDINGS[provider]) as server:
        code, out, err = record(
            capsys,
            "--provider",
            provider,
            "--base-url",
            server.url + SUFFIX[provider],
            "--output",
            str(tmp_path / "a.json"),
        )
    assert code == 0, err
    assert f"labkit replay server serving {RECORDINGS[provider].name} (scripted)" in out
    assert "Stopped: assistant_finished after 5 model turns and 4 tool calls" in out
    captured = load_recording(tmp_path / "a.json")
    assert captured["wire_format"] == provider
    assert chunks_and_lines(captured) == chunks_and_lines(scripted)
    assert captured["events"] == scripted["events"]
    provenance = captured["provenance"]
    assert provenance["source"] == "scripted" and "model" not in provenance
    assert provenance["replayed_from"]["recording"] == RECORDINGS[provider].name
    assert main(["replay", str(tmp_path / "a.json")]) == 0
    assert "Replay matches the recording." in capsys.readouterr().out


class SaysNothing:
    """A server that does not say it replays a recording: to the recorder, a live server."""

    def _get(self, head):
        if self.route != "/v1/models":
            return super()._get(head)
        self.send_json(200, self.model_list([self.model_entry(m) for m in self.replay.models]))


@pytest.mark.parametrize(
    "provider, handler", [("openai", OpenAIHandler), ("anthropic", AnthropicHandler)]
)
def test_a_live_server_is_named_by_provider_host_model_and_what_it_reported(
    provider, handler, tmp_path, capsys
):
    live = type(f"Live{handler.__name__}", (SaysNothing, handler), {})
    tools = ("completion", "tools")
    with ReplayServer(served(RECORDINGS[provider]), live, capabilities=tools) as server:
        code, out, err = record(
            capsys,
            "--provider",
            provider,
            "--base-url",
            server.url + SUFFIX[provider],
            "--model",
            "scripted-model",
            "--output",
            str(tmp_path / "live.json"),
        )
    assert code == 2 and "has no model 'scripted-model'; it lists" in err  # before the run
    with ReplayServer(
        served(RECORDINGS[provider]), live, capabilities=tools, models=["scripted-model"]
    ) as server:
        code, out, err = record(
            capsys,
            "--provider",
            provider,
            "--base-url",
            server.url + SUFFIX[provider],
            "--model",
            "scripted-model",
            "--about",
            "server=llama-cpp-python 0.3.36",
            "--about",
            "model_sha256= a5fd3b62 ",
            "--output",
            str(tmp_path / "live.json"),
        )
        host = server.url.removeprefix("http://")
    assert code == 0, err
    assert f"Model scripted-model on the {provider} server at {host}" in out
    provenance = load_recording(tmp_path / "live.json")["provenance"]
    assert provenance["source"] == provider and provenance["model"] == "scripted-model"
    assert provenance["base_url_host"] == host
    reported = provenance["server_reported"]
    assert reported["models_listed"] == ["scripted-model"]
    assert reported["model"]["id"] == "scripted-model"
    assert reported["in_replies"]["model"] == ["scripted"]  # what the chunks themselves said
    assert "replayed_from" not in provenance
    # what the server cannot say about itself, as the person recording declared it
    assert provenance["declared"] == {
        "server": "llama-cpp-python 0.3.36",
        "model_sha256": "a5fd3b62",
    }


def test_facts_declared_while_recording_a_replay_belong_to_the_replay(tmp_path, capsys):
    with serve_recording(RECORDINGS["openai"]) as server:
        code, _, err = record(
            capsys,
            "--provider",
            "openai",
            "--base-url",
            server.url + "/v1",
            "--about",
            "note=a rehearsal",
            "--output",
            str(tmp_path / "r.json"),
        )
    assert code == 0, err
    provenance = load_recording(tmp_path / "r.json")["provenance"]
    assert provenance["source"] == "scripted" and "declared" not in provenance
    assert provenance["replayed_from"]["declared"] == {"note": "a rehearsal"}


def test_an_api_key_in_the_environment_appears_in_no_recording_output_or_log(
    tmp_path, capsys, monkeypatch
):
    secret = "sk-labkit-test-secret-4713"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    logged = []
    with serve_recording(RECORDINGS["openai"], api_key=secret, log=logged.append) as server:
        code, out, err = record(
            capsys,
            "--provider",
            "openai",
            "--base-url",
            server.url + "/v1",
            "--output",
            str(tmp_path / "k.json"),
        )
        kept = json.dumps(server.chat_requests)
    assert code == 0, err  # the server demanded the key: it was sent
    assert len(logged) == 5
    for where, text in {
        "recording": (tmp_path / "k.json").read_text(),
        "stdout": out,
        "stderr": err,
        "server log": "\n".join(logged),
        "requests the server kept": kept,
    }.items():
        assert secret not in text, where


@pytest.mark.parametrize(
    "args, words",
    [
        (
            ["--provider", "openai", "--base-url", "http://127.0.0.1:9/v1"],
            "nothing is listening at http://127.0.0.1:9/v1",
        ),
        (
            ["--provider", "ollama", "--base-url", "http://127.0.0.1:9/v1"],
            "--base-url is for --provider openai or anthropic",
        ),
        (
            ["--provider", "openai", "--host", "http://127.0.0.1:9"],
            "--host is for --provider ollama",
        ),
        (["--provider", "anthropic", "--no-stream"], "--no-stream is for --provider openai"),
        (["--provider", "openai", "--base-url", "127.0.0.1:1234"], "cannot use '127.0.0.1:1234'"),
        (
            ["--provider", "openai", "--about", "a=1", "--about", "a=2"],
            "--about a=... is given twice",
        ),
        (["--provider", "openai", "--about", "key=sk-labkit-secret-1"], "holds an API key"),
        (["--provider", "openai", "--about", "no equals sign"], "is not KEY=VALUE"),
    ],
)
def test_a_record_that_cannot_start_says_why_and_writes_nothing(
    args, words, tmp_path, capsys, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-labkit-secret-1")
    if "is not KEY=VALUE" in words:  # argparse's own refusal: exit 2, the usage and why
        with pytest.raises(SystemExit) as stopped:
            record(capsys, *args)
        assert stopped.value.code == 2 and words in capsys.readouterr().err
        return
    code, out, err = record(capsys, *args)
    assert code == 2 and words in err
    assert not any(tmp_path.rglob("*.json"))


@pytest.mark.parametrize("provider", sorted(RECORDINGS))
def test_record_without_a_key_for_a_server_that_wants_one_says_which_variable(
    provider, tmp_path, capsys, monkeypatch
):
    variable = f"{provider.upper()}_API_KEY"
    monkeypatch.delenv(variable, raising=False)
    with serve_recording(RECORDINGS[provider], api_key="k") as server:
        code, _, err = record(
            capsys,
            "--provider",
            provider,
            "--base-url",
            server.url + SUFFIX[provider],
            "--output",
            str(tmp_path / "x.json"),
        )
    assert code == 2 and "wants an API key (HTTP 401), and none is set" in err and variable in err
    assert not (tmp_path / "x.json").exists()


def test_serve_says_how_to_record_from_a_provider_recording(capsys):
    import signal
    import subprocess
    import sys

    process = subprocess.Popen(
        [sys.executable, "-m", "labkit", "serve", "repair_anthropic.json"],
        stdout=subprocess.PIPE,
        text=True,
        cwd=PROJECT_DIR.parent,
    )
    try:
        lines = [process.stdout.readline() for _ in range(3)]
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=10)
    assert "(scripted, 5 turns, anthropic API)" in lines[0]
    assert "python -m labkit record --provider anthropic --base-url http://127.0.0.1:" in lines[1]


@pytest.mark.parametrize("streamed", [False, True], ids=["as printed", "streamed instead"])
def test_the_printed_record_command_runs_against_a_recording_captured_whole(
    streamed, tmp_path, capsys
):
    """gemma3_270m_llamacpp.json was captured whole (--no-stream): serve prints the command
    that asks as it was asked, and a client that streams instead gets proper chunks."""
    from labkit.cli import how_to_use

    path = PROJECT_DIR / "recordings" / "gemma3_270m_llamacpp.json"
    recorded = load_recording(path)
    with serve_recording(path) as server:
        printed = how_to_use(recorded, "openai", server.url)
        command = printed.split(": `python -m labkit ", 1)[1].rstrip("`").split()
        assert command[-3:] == ["--model", "gemma-3-270m-q4_k_m", "--no-stream"]
        if streamed:
            command = command[:-1]
        code, out, err = record(capsys, *command[1:], "--output", str(tmp_path / "g.json"))
    assert code == 0, err
    assert "Stopped: max_turns after 8 model turns and 8 tool calls" in out
    captured = load_recording(tmp_path / "g.json")
    assert captured["events"] == recorded["events"]
    assert captured["provenance"]["replayed_from"]["recording"] == path.name
    if streamed:  # each turn came as chunks: the role, the call whole, the finish
        assert [len(turn["chunks"]) for turn in captured["turns"]] == [3] * 8
    else:
        assert chunks_and_lines(captured)[0][0][0] == recorded["turns"][0]["chunks"][0]["chunk"]

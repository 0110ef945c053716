import json

import pytest
from conftest import PROJECT_DIR

from labkit import (
    RecordingError,
    ReplayModel,
    RepoTools,
    agent_events,
    load_recording,
    run_attempt,
    sample_copy,
    save_recording,
)
from labkit.recording import compact_event, replay_harness, stop_of
from labkit.recording.contents import recording_problem
from labkit.recording.family import FAMILIES
from labkit.recording.replaying import difference
from labkit.recording.scenarios import NEW_LINE, SCENARIOS, scripted_recording

RECORDINGS = PROJECT_DIR / "recordings"
NAMES = sorted(SCENARIOS)


@pytest.mark.parametrize("name", NAMES)
def test_committed_recordings_equal_what_the_script_produces(name):
    committed = json.loads((RECORDINGS / f"{name}.json").read_text())
    assert committed == scripted_recording(name), "run `make recordings` and commit the result"


def model_named(chunk):
    """The model a chunk says wrote it (Anthropic's events say it once, in message_start; the
    Responses API's in each event's response; Gemini's in modelVersion)."""
    return (
        chunk.get("model")
        or chunk.get("message", {}).get("model")
        or chunk.get("response", {}).get("model")
        or chunk.get("modelVersion")
    )


@pytest.mark.parametrize("name", NAMES)
def test_recordings_are_honestly_scripted(name):
    recording = load_recording(RECORDINGS / f"{name}.json")
    assert recording["provenance"]["source"] == "scripted"
    models = {
        model_named(entry["chunk"]) for turn in recording["turns"] for entry in turn["chunks"]
    } - {None}
    assert models == {"scripted"}


def test_the_repair_in_each_wire_format_gives_the_same_events_and_says_its_format():
    recordings = {
        name: load_recording(RECORDINGS / f"{name}.json")
        for name in ("repair", "repair_openai", "repair_anthropic")
    }
    assert {name: r.get("wire_format") for name, r in recordings.items()} == {
        "repair": None,
        "repair_openai": "openai",
        "repair_anthropic": "anthropic",
    }
    assert "wire_format" not in json.loads((RECORDINGS / "repair.json").read_text())
    events = [r["events"] for r in recordings.values()]
    assert events[0] == events[1] == events[2]
    first = {name: r["turns"][0]["chunks"] for name, r in recordings.items()}
    assert first["repair_openai"][-1]["line"].startswith('data: {"id":"chatcmpl-')
    assert first["repair_anthropic"][0]["line"].startswith("event: message_start\ndata: {")


@pytest.mark.parametrize(
    "wire, edit, problem",
    [
        ("nonsense", None, "'wire_format' is 'nonsense'"),
        (
            "openai",
            lambda r: r["turns"][0]["chunks"][0].update(line="not an event"),
            "its 'line' holds 0 'data:' fields; a server-sent event carries its chunk in one",
        ),
        (
            "openai",
            lambda r: r["provenance"].update(
                source="ollama", model="m", digest="d", server_version="v"
            ),
            "a recording from a live 'ollama' server cannot be in the 'openai' wire format",
        ),
        (
            "anthropic",
            lambda r: r["provenance"].update(source="anthropic", model="m"),
            "an 'anthropic' recording must name its base_url_host",
        ),
    ],
)
def test_a_recordings_wire_format_its_lines_and_its_source_must_agree(wire, edit, problem):
    import copy

    from labkit.recording.contents import recording_problem

    recording = copy.deepcopy(
        load_recording(RECORDINGS / f"repair_{'openai' if wire == 'nonsense' else wire}.json")
    )
    recording["wire_format"] = wire
    if edit:
        edit(recording)
    assert problem in recording_problem(recording)


@pytest.mark.parametrize("name", NAMES)
def test_strict_replay_on_a_fresh_copy_reproduces_events_stop_and_final_tests(name):
    recording = load_recording(RECORDINGS / f"{name}.json")
    replayed, events = run_attempt(
        ReplayModel(recording),
        provenance=recording["provenance"],
        task=recording["task"],
        max_turns=recording["max_turns"],
        **replay_harness(recording),
    )
    assert [compact_event(e) for e in events] == recording["events"]
    assert replayed.get("harness") == recording.get("harness")
    assert replayed.get("mcp") == recording.get("mcp")  # the MCP traffic, line for line
    assert stop_of(replayed) == stop_of(recording)
    assert replayed["checks"] == recording["checks"]
    assert replayed["test_file_sha256"]["after"] == recording["test_file_sha256"]["before"]


def test_the_recordings_show_what_the_course_says():
    outcome = {}
    for name in NAMES:
        r = load_recording(RECORDINGS / f"{name}.json")
        calls = [(e["name"], e["arguments"]) for e in r["events"] if e["type"] == "tool_start"]
        outcome[name] = (
            stop_of(r)["reason"],
            len(r["turns"]),
            calls,
            r["checks"]["after"]["passed"],
            r["checks"]["after"]["failed"],
        )
    assert outcome["repair"][:2] == ("assistant_finished", 5)
    assert [c[0] for c in outcome["repair"][2]] == [
        "read_file",
        "read_file",
        "replace_text",
        "run_tests",
    ]
    assert outcome["repair"][2][2][1] == {
        "old": "        path = PurePosixPath(name)",
        "new": "        path = PurePosixPath(name.replace('\\\\', '/'))",
    }
    assert outcome["repair"][3:] == (4, 0)
    assert outcome["bounded"][:2] == ("max_turns", 1) and outcome["bounded"][3:] == (3, 1)
    assert outcome["false_claim"][0] == "assistant_finished" and outcome["false_claim"][3:] == (
        3,
        1,
    )
    assert outcome["stale_edit"][0] == "assistant_finished" and outcome["stale_edit"][3:] == (4, 0)
    stale = load_recording(RECORDINGS / "stale_edit.json")
    errors = [e for e in stale["events"] if e["type"] == "tool_result" and "error" in e["result"]]
    assert len(errors) == 1 and "does not occur" in errors[0]["result"]["error"]


def test_repair_streams_in_small_pieces_with_tool_calls_before_the_final_chunk():
    recording = load_recording(RECORDINGS / "repair.json")
    for turn in recording["turns"]:
        chunks = [entry["chunk"] for entry in turn["chunks"]]
        assert chunks[-1]["done"] is True and chunks[-1]["message"]["content"] == ""
        assert all(not c["done"] for c in chunks[:-1])
        fragments = [c["message"].get("thinking") or c["message"]["content"] for c in chunks[:-2]]
        assert len(fragments) > 5 and max(map(len, fragments)) <= 6
        times = [entry["at"] for entry in turn["chunks"]]
        assert times == sorted(times)
    for turn in recording["turns"][:4]:
        assert "tool_calls" in turn["chunks"][-2]["chunk"]["message"]


def test_strict_replay_catches_a_harness_that_drops_a_tool_result():
    recording = load_recording(RECORDINGS / "repair.json")
    model = ReplayModel(recording)

    def forgetful(messages, schemas):  # a broken harness: it loses tool messages
        return model([m for m in messages if m["role"] != "tool"], schemas)

    with sample_copy() as root:
        events = list(agent_events(forgetful, RepoTools(root), recording["task"]))
    stop = events[-1]
    assert stop["reason"] == "model_error"
    assert "turn 2" in stop["error"] and "message 3" in stop["error"]


def test_replay_asked_for_more_turns_than_recorded_says_so():
    recording = load_recording(RECORDINGS / "bounded.json")
    with sample_copy() as root:
        events = list(
            agent_events(ReplayModel(recording), RepoTools(root), recording["task"], max_turns=3)
        )
    assert events[-1]["reason"] == "model_error"
    assert (
        "has 1 turn, but this is request 2 of the conversation: the recorded run stopped there"
        in events[-1]["error"]
    )


def test_save_is_atomic_and_round_trips(tmp_path):
    recording = load_recording(RECORDINGS / "bounded.json")
    path = save_recording(recording, tmp_path / "copy.json")
    assert load_recording(path) == recording
    broken = dict(recording, version=99)
    with pytest.raises(RecordingError, match="refusing to save"):
        save_recording(broken, path)
    assert load_recording(path) == recording  # the good file is still whole
    assert [p.name for p in tmp_path.iterdir()] == ["copy.json"]


def test_the_chunk_stepper_shows_the_kept_wire_line_exactly():
    from labkit.lessons import render
    from labkit.lessons.steps import TurnSteps

    turn = load_recording(PROJECT_DIR / "recordings" / "repair.json")["turns"][0]
    steps = TurnSteps(turn)
    html = render.chunk_step_html(steps.step(len(steps) - 1))
    assert steps.step(len(steps) - 1).line == turn["chunks"][-2]["line"]
    assert "exactly as it came" in html and '"id":"call_' in html
    unkept = TurnSteps([entry["chunk"] for entry in turn["chunks"]])
    assert "kept no wire lines" in render.chunk_step_html(unkept.step(1))


def test_a_strict_mismatch_names_the_place_and_shows_both_sides_there():
    """A harness that sent another edit: the excerpt starts where they differ, and the stop
    says it is a replay mismatch, not a model failure."""
    recorded = load_recording(PROJECT_DIR / "recordings" / "repair.json")
    edited = json.loads(json.dumps(recorded))
    call = edited["turns"][3]["request"]["messages"][6]["tool_calls"][0]["function"]
    call["arguments"]["new"] = call["arguments"]["new"].replace("'/'", "'|'")
    with sample_copy() as root:
        stop = list(agent_events(ReplayModel(edited), RepoTools(root), edited["task"]))[-1]
    assert stop["reason"] == "model_error" and stop["turns"] == 4
    assert stop["detail"].startswith(
        "replay mismatch: the harness's request differs from the "
        "recording (not a model failure): turn 4:"
    )
    place = "message 6 (assistant) differs at tool_calls[0].function.arguments.new, character 49"
    assert place in stop["error"]
    recorded_side, sent_side = (
        stop["error"].split(place + ": the recording has ")[1].split(" but the harness sent ")
    )
    assert "'|'" in recorded_side and "'/'" in sent_side  # both sides, at the difference


def permission_rows(recording):
    return [
        (e["command"], e["verdict"], e["decision"], e["by"])
        for e in recording["events"]
        if e["type"] == "permission"
    ]


def test_the_permissions_run_shows_each_kind_of_decision():
    recording = load_recording(RECORDINGS / "permissions.json")
    assert recording["harness"]["tools"] == "shell"
    assert recording["harness"]["policy"]["default"] == "ask"
    assert permission_rows(recording) == [
        ("python -m pytest -qq", "allow", "allow", "policy"),
        ('read_file {"path": "path_rules.py"}', "allow", "allow", "policy"),
        (
            "python -c 'from path_rules import python_sources; print(python_sources(['\"'\"'src"
            "\\\\api\\\\routes.py'\"'\"']))'",
            "ask",
            "allow",
            "answer",
        ),
        (
            'replace_text {"old": "        path = PurePosixPath(name)", "new": "        path = '
            "PurePosixPath(name.replace('\\\\\\\\', '/'))\"}",
            "allow",
            "allow",
            "policy",
        ),
        ("sh -c 'python -m pytest -qq; rm -rf .'", "deny", "deny", "policy"),
        ("python -m pytest -qq", "allow", "allow", "policy"),
        ("ls -a ..", "ask", "deny", "answer"),
    ]
    results = [e["result"] for e in recording["events"] if e["type"] == "tool_result"]
    assert results[2] == {"exit_code": 0, "timed_out": False, "stdout": "[]\n", "stderr": ""}
    assert results[4]["error"].startswith(
        "denied by the permission gate (by the policy): `rm -rf .` matches the rule 'deny rm *'"
    )
    assert results[6]["error"].startswith("denied by the permission gate (by the person asked)")
    assert stop_of(recording)["tool_calls"] == 5  # two of the seven calls never ran
    assert recording["checks"]["after"] == {"exit_code": 0, "passed": 4, "failed": 0}


def test_the_budget_run_reads_a_part_cuts_a_long_output_and_compacts_old_results():
    from labkit.harness.budget import COMPACTED
    from labkit.harness.conversation import order_problems

    recording = load_recording(RECORDINGS / "budget.json")
    assert recording["harness"] == {"tools": "shell", "budget": {"max_chars": 6500, "keep_last": 1}}
    results = [e["result"] for e in recording["events"] if e["type"] == "tool_result"]
    assert results[1]["first_line"] == 13 and results[1]["total_lines"] == 18
    long = results[3]["stdout"]
    assert long.startswith("src/m0.py -> ['src/m0.py']\nsrc\\m0.py -> []\n")
    assert "\n[labkit: " in long and " bytes cut]\n" in long
    assert long.endswith("src/m299.py -> ['src/m299.py']\nsrc\\m299.py -> []\n")
    requests = [turn["request"]["messages"] for turn in recording["turns"]]
    noted = [
        sum(bool(COMPACTED.match(m["content"])) for m in messages if m["role"] == "tool")
        for messages in requests
    ]
    assert noted == [0, 0, 0, 3, 4, 4]  # request 4 drops three old results, request 5 one more
    assert all(order_problems(messages) == [] for messages in requests)
    last = requests[-1]
    assert json.loads(last[-1]["content"])["exit_code"] == 0  # the newest result is whole
    assert last[-2]["tool_calls"][0]["function"]["name"] == "run_tests"
    assert (
        last[-4]["tool_calls"][0]["function"]["arguments"]["new"] == NEW_LINE
    )  # the edit, to summarise
    assert recording["checks"]["after"]["passed"] == 4


def test_a_recording_with_a_harness_it_cannot_set_up_again_is_refused(tmp_path):
    recording = load_recording(RECORDINGS / "permissions.json")
    for harness, words in [
        ({"tools": "root"}, "'harness.tools' is 'root'"),
        (
            {"policy": {"rules": ["permit ls"], "tools": {}, "default": "ask"}},
            "'harness.policy' needs 'rules'",
        ),
        ({"policy": {"rules": [], "tools": {}, "default": "allow"}}, "never allowed"),
        ({"budget": {"max_chars": 0}}, "max_chars must be an int"),
        ({"container": True}, "only 'tools', 'policy', 'budget', 'hooks', 'sandbox', 'sample'"),
        ({"sandbox": True}, "'harness.sandbox' is an object with only 'profile'"),
        ({"sandbox": {"profile": "off"}}, "'harness.sandbox.profile' is 'off'"),
        ({"hooks": {"hooks": [{"name": "x"}]}}, "'harness' cannot be set up again: hook 1"),
        ({"hooks": {"hooks": [], "extra": 1}}, "cannot be set up again"),
    ]:
        broken = {**recording, "harness": harness}
        with pytest.raises(RecordingError, match=words):
            save_recording(broken, tmp_path / "broken.json")


#: Recordings a live model wrote (``make live-test`` writes them; see tests/live).
REAL = {"gemma3_270m_llamacpp": "a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818"}


def test_every_committed_recording_is_the_scripts_or_names_the_model_that_wrote_it():
    found = {path.stem for path in RECORDINGS.glob("*.json")}
    assert found == set(SCENARIOS) | set(FAMILIES) | set(REAL)


@pytest.mark.parametrize("name", sorted(REAL))
def test_a_real_models_recording_names_what_wrote_it_and_replays_strictly(name):
    recording = load_recording(RECORDINGS / f"{name}.json")
    provenance = recording["provenance"]
    assert provenance["source"] == "openai" and "replayed_from" not in provenance
    assert provenance["declared"]["model_sha256"] == REAL[name]
    assert provenance["declared"]["server"].startswith("llama-cpp-python ")
    assert provenance["server_reported"]["model"]["id"] == provenance["model"]
    models = {
        model_named(entry["chunk"]) for turn in recording["turns"] for entry in turn["chunks"]
    }
    assert models == {provenance["model"]}  # every reply says which model wrote it
    replayed, events = run_attempt(
        ReplayModel(recording, strict=True),
        provenance=provenance,
        task=recording["task"],
        max_turns=recording["max_turns"],
    )
    assert [compact_event(e) for e in events] == recording["events"]
    assert replayed["checks"] == recording["checks"]


def test_the_extension_run_shows_what_lesson_11_says():
    recording = load_recording(RECORDINGS / "extension.json")
    events = recording["events"]
    hooks = [
        (e["turn"], e["hook"], e["point"], e["decision"]) for e in events if e["type"] == "hook"
    ]
    assert hooks == [
        (2, "protect-tests", "before_tool", "deny"),
        (3, "check-tests", "stop", "deny"),
        (4, "protect-tests", "before_tool", "allow"),
        (6, "check-tests", "stop", "allow"),
    ]
    refused = [e["result"] for e in events if e["type"] == "tool_result" and e["turn"] == 2]
    assert refused[0]["error"].startswith("the hook 'protect-tests' denied it: tests/")
    sent_back = recording["turns"][3]["request"]["messages"][-1]
    assert sent_back["role"] == "user" and sent_back["content"].startswith(
        "[hook check-tests] Not done: the independent check still fails (1 failed, 3 passed"
    )
    stop = stop_of(recording)
    assert (stop["reason"], stop["turns"], stop["tool_calls"]) == ("assistant_finished", 6, 4)
    calls = [
        json.loads(entry["line"])["params"]
        for entry in recording["mcp"]["traffic"]
        if entry["dir"] == "c2s" and '"tools/call"' in entry["line"]
    ]
    assert [(c["name"], c["arguments"].get("path")) for c in calls] == [
        ("read_file", "path_rules.py"),
        ("read_file", "tests/test_path_rules.py"),
        ("edit_file", "path_rules.py"),  # the denied edit of the tests never reached the server
        ("run_tests", None),
    ]
    assert recording["checks"]["after"] == {"exit_code": 0, "passed": 4, "failed": 0}


def test_a_replay_whose_mcp_traffic_differs_is_told_where():
    recording = load_recording(RECORDINGS / "extension.json")
    changed = json.loads(json.dumps(recording))
    changed["mcp"]["traffic"][5]["line"] += " "
    assert difference(recording, changed).startswith("MCP traffic line 6 differs")
    changed["mcp"]["traffic"] = changed["mcp"]["traffic"][:3]
    assert "replayed nothing" in difference(recording, changed)
    assert difference(recording, recording) is None


@pytest.mark.parametrize(
    "mcp, words",
    [
        ({"traffic": [{"dir": "sideways", "line": "{}"}]}, "mcp traffic entry 1 is not"),
        ({"traffic": [{"dir": "c2s", "line": "a\nb"}]}, "mcp traffic entry 1 is not"),
        ({"traffic": [], "extra": 1}, "'mcp' is not an object holding only a 'traffic' list"),
    ],
)
def test_a_recordings_mcp_traffic_must_be_lines_each_way(mcp, words):
    recording = load_recording(RECORDINGS / "extension.json")
    assert words in recording_problem({**recording, "mcp": mcp})

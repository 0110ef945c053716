"""Recording faults: a file that cannot be replayed is refused before anything runs.

Each fault is written to a file and handed to ``python -m labkit replay``. The command must
exit 2 with one line naming the file and the problem, print nothing on stdout (no
"Tests before" line), and never reach the replay: ``run_attempt`` is replaced by a tripwire.
Each file counts as one recording fault in the safety summary. Beyond these named faults,
generated edits of a recording are either refused or replay within the run invariants.
"""

import copy
import json
import os
import subprocess
import sys
import threading

import pytest
from conftest import PROJECT_DIR
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from run_invariants import RecordingChat, RecordingTools, assert_run_invariants, run_to_the_end
from strategies import json_values

from labkit import MAX_TURNS, RecordingError, ReplayModel, cli, load_recording
from labkit.recording.contents import MAX_NESTING, recording_problem
from labkit.recording.files import MAX_BYTES, save_recording

REPAIR = PROJECT_DIR / "recordings" / "repair.json"


def edited(edit):
    """A fault made by editing the parsed repair recording and writing it back."""

    def write(path):
        recording = json.loads(REPAIR.read_text())
        edit(recording)
        path.write_text(json.dumps(recording))

    return write


def raw(data: bytes):
    """A fault written as bytes."""
    return lambda path: path.write_bytes(data)


def nested(depth):
    """A JSON value nested ``depth`` lists deep."""
    value = []
    for _ in range(depth - 1):
        value = [value]
    return value


def named_pipe(path):
    """A FIFO with no writer: opening it to read waits for one. A timer opens it after 10 s,
    so a reader that blocked gets an empty file and the test fails instead of hanging."""
    os.mkfifo(path)
    threading.Timer(10, lambda: os.close(os.open(path, os.O_RDWR | os.O_NONBLOCK))).start()


def huge_but_valid(path):
    recording = json.loads(REPAIR.read_text())
    recording["provenance"]["note"] = "x" * MAX_BYTES  # valid JSON, a valid recording, too big
    path.write_text(json.dumps(recording))


FAULTS = {
    "truncated JSON": (raw(REPAIR.read_bytes()[:30_000]), "not valid JSON, perhaps truncated"),
    "empty file": (raw(b""), "the file is empty"),
    "only whitespace": (raw(b"\n \n"), "the file is empty"),
    "non-UTF-8 bytes": (
        raw(REPAIR.read_bytes().replace(b"Read", b"R\xffad", 1)),
        "not UTF-8 text (byte 0xff",
    ),
    "deeply nested garbage": (raw(b"[" * 100_000 + b"]" * 100_000), "nested too deeply"),
    "huge but valid": (huge_but_valid, f"larger than {MAX_BYTES // 2**20} MB"),
    "a JSON list": (raw(b"[]"), "the top level is not a JSON object"),
    "another format": (edited(lambda r: r.update(format="ollama-log")), "'format' is 'ollama-log'"),
    "wrong format version": (edited(lambda r: r.update(version=4)), "format version 4"),
    "turns missing": (edited(lambda r: r.pop("turns")), "'turns' is missing"),
    "no turns": (edited(lambda r: r.update(turns=[])), "it has no turns"),
    "a turn dropped": (edited(lambda r: r["turns"].pop()), "5 model requests but it holds 4 turns"),
    "recorded against another sample": (
        edited(lambda r: r["test_file_sha256"].update(before="0" * 64)),
        "different sample",
    ),
    "garbage in a chunk list": (
        edited(lambda r: r["turns"][1]["chunks"].insert(3, "garbage")),
        "turn 2, chunk 4 is not an object",
    ),
    "a chunk from before the request": (
        edited(lambda r: r["turns"][0]["chunks"][0].update(at=-1)),
        "non-negative arrival time",
    ),
    "offered tools not a list": (
        edited(lambda r: r["turns"][0]["request"].update(tools=5)),
        "turn 1: the request's 'tools' is not a list",
    ),
    "a budget of 0 turns": (
        edited(lambda r: r.update(max_turns=0)),
        "'max_turns' must be a positive int, got 0",
    ),
    "a budget of true turns": (
        edited(lambda r: r.update(max_turns=True)),
        "'max_turns' must be a positive int, got True",
    ),
    "an unknown source": (
        edited(lambda r: r["provenance"].update(source="gemma")),
        "provenance 'source'",
    ),
    "ollama named as source, no model": (
        edited(lambda r: r["provenance"].update(source="ollama")),
        "must name its model",
    ),
    "an unknown stop reason": (
        edited(lambda r: r["events"][-1].update(reason="bored")),
        "not a stop reason",
    ),
    "an arrival time of Infinity": (
        edited(lambda r: r["turns"][0]["chunks"][0].update(at=float("inf"))),
        "not a finite number",
    ),
    "an arrival time of NaN": (
        edited(lambda r: r["turns"][1]["chunks"][2].update(at=float("nan"))),
        "not a finite number",
    ),
    "Infinity deep in a chunk": (
        edited(lambda r: r["turns"][0]["chunks"][0]["chunk"].update(eval_duration=float("-inf"))),
        "not a finite number",
    ),
    "a format version of true": (edited(lambda r: r.update(version=True)), "format version True"),
    "a format version of 1.0": (edited(lambda r: r.update(version=1.0)), "format version 1.0"),
    "a chunk nested 600 deep": (
        edited(lambda r: r["turns"][1]["chunks"][0]["chunk"].update(deep=nested(600))),
        f"nested more than {MAX_NESTING} levels deep",
    ),
    "tool arguments nested 200 deep": (
        edited(
            lambda r: next(
                e["chunk"]["message"]["tool_calls"][0]["function"]["arguments"]
                for e in r["turns"][0]["chunks"]
                if e["chunk"]["message"].get("tool_calls")
            ).update(path=nested(200))
        ),
        f"nested more than {MAX_NESTING} levels deep",
    ),
    "an integer of 5000 digits": (
        raw(
            REPAIR.read_bytes().replace(
                f'"max_turns": {MAX_TURNS}'.encode(), b'"max_turns": ' + b"9" * 5000
            )
        ),
        "holds a value JSON cannot give back",
    ),
    "a named pipe": (named_pipe, "not a regular file"),
    "a folder": (lambda path: path.mkdir(), "not a regular file"),
    "no file at all": (lambda path: None, "cannot be read"),
    "a symlink to a named pipe": (
        lambda path: (
            named_pipe(path.with_suffix(".fifo")),
            path.symlink_to(path.with_suffix(".fifo")),
        ),
        "not a regular file",
    ),
}


@pytest.fixture
def tripwire(monkeypatch):
    """Fail loudly if the command gets as far as replaying."""

    def replay_started(*args, **kwargs):
        raise AssertionError("a bad recording reached the replay")

    monkeypatch.setattr(cli, "run_attempt", replay_started)


@pytest.mark.parametrize("fault", FAULTS)
def test_a_bad_recording_is_refused_naming_file_and_problem(
    fault, tmp_path, capsys, tripwire, safety_tally
):
    write, problem = FAULTS[fault]
    path = tmp_path / "bad.json"
    write(path)
    safety_tally["recording faults injected"] += 1
    assert cli.main(["replay", str(path)]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith(f"error: {path}: ") and problem in err
    assert len(err) < 600 and err.count("\n") == 1  # one readable line, however big the file


@pytest.mark.parametrize(
    "edit",
    [
        lambda r: r["turns"][0]["chunks"][0].update(at=float("inf")),
        lambda r: r.update(version=True),
        lambda r: r["events"][0].update(deep=nested(600)),
    ],
)
def test_a_recording_handed_over_as_a_dict_is_judged_the_same(edit, safety_tally):
    """What a replay server or save_recording is given never went through a file."""
    safety_tally["recording faults injected"] += 1
    recording = json.loads(REPAIR.read_text())
    edit(recording)
    assert recording_problem(recording)
    with pytest.raises(RecordingError, match="refusing to save an invalid recording"):
        save_recording(recording, REPAIR.with_name("never-written.json"))
    assert not REPAIR.with_name("never-written.json").exists()


def test_the_command_line_refuses_without_a_traceback(tmp_path):
    bad = tmp_path / "bad.json"
    FAULTS["deeply nested garbage"][0](bad)
    result = subprocess.run(
        [sys.executable, "-m", "labkit", "replay", str(bad)],
        cwd=PROJECT_DIR,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2 and result.stdout == ""
    assert "nested too deeply" in result.stderr and "Traceback" not in result.stderr


def _places(node, where=()):
    """Every place in a JSON value, as the path of keys and indexes that leads to it."""
    if where:
        yield where
    children = (
        node.items()
        if isinstance(node, dict)
        else enumerate(node)
        if isinstance(node, list)
        else ()
    )
    for key, child in children:
        yield from _places(child, where + (key,))


STALE_EDIT = json.loads((PROJECT_DIR / "recordings" / "stale_edit.json").read_text())
#: One to three values of a recording replaced by any JSON value, or deleted (None).
recording_edits = st.lists(
    st.tuples(
        st.sampled_from(list(_places(STALE_EDIT))),
        st.none() | json_values.map(lambda value: [value]),
    ),
    min_size=1,
    max_size=3,
)


def apply(edits, recording):
    for where, replacement in edits:
        node = recording
        try:
            for key in where[:-1]:
                node = node[key]
            if replacement is None:
                del node[where[-1]]
            else:
                node[where[-1]] = replacement[0]
        except (KeyError, IndexError, TypeError):  # an earlier edit removed the place
            pass
    return recording


def test_an_edited_recording_is_refused_or_replays_within_the_invariants(tmp_path, safety_tally):
    path = tmp_path / "edited.json"

    @settings(
        max_examples=200,
        derandomize=True,
        database=None,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow],
    )
    @given(recording_edits)
    def check(edits):
        path.write_text(json.dumps(apply(edits, copy.deepcopy(STALE_EDIT))))
        safety_tally["generated recording edits"] += 1
        try:
            recording = load_recording(path)
        except RecordingError as refusal:
            assert str(refusal).startswith(f"{path}: ")
            return
        chat, tools = RecordingChat(ReplayModel(recording, strict=False)), RecordingTools()
        events = run_to_the_end(
            chat, tools, task=recording["task"], max_turns=recording["max_turns"]
        )
        assert_run_invariants(events, chat, tools, recording["max_turns"])

    check()

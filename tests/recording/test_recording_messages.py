"""What a learner is told about a recording that does not hold together (issue 30, item 7):
the field that differs, both values there cut to a readable length, and what to do. Each
expected message is written out by hand from the recording's own text."""

import copy
import json

import pytest
from conftest import PROJECT_DIR

from labkit import RecordingError, cli, load_recording
from labkit.recording import files
from labkit.recording.contents import check_recording
from labkit.recording.replaying import difference, replay_attempt

RECORDINGS = PROJECT_DIR / "recordings"
#: turn 1, chunk 23 of the repair: the model asks for read_file(path="path_rules.py")
CALL = 22
EDITED_PATH = "tests/test_path_rules.py"
WHAT_TO_DO_WITH_A_LINE = "edit both alike, or delete the 'line'"
WHAT_TO_DO_WITH_AN_OUTCOME = "record the run again rather than editing it"


def repair() -> dict:
    return copy.deepcopy(load_recording(RECORDINGS / "repair.json"))


def with_the_call_edited(*, keep_line: bool) -> dict:
    """The repair with its first tool call's path edited in the chunk, the way a learner would
    edit it in the file: the 'line' (the text the server sent) kept as it was, or removed."""
    recording = repair()
    entry = recording["turns"][0]["chunks"][CALL]
    entry["chunk"]["message"]["tool_calls"][0]["function"]["arguments"]["path"] = EDITED_PATH
    if not keep_line:
        del entry["line"]
    return recording


def written(recording: dict, folder, name="edited.json"):
    path = folder / name
    path.write_text(json.dumps(recording), encoding="utf-8")
    return path


def test_a_chunk_edited_without_its_line_names_the_field_both_values_and_what_to_do(tmp_path):
    path = written(with_the_call_edited(keep_line=True), tmp_path)
    with pytest.raises(RecordingError) as refused:
        load_recording(path)
    message = str(refused.value)
    assert message.startswith(
        f"{path}: turn 1, chunk 23: its 'line' and its 'chunk' differ at "
        "message.tool_calls[0].function.arguments.path, character 0: "
        'the line has "path_rules.py", the chunk has "tests/test_path_rules.py". '
    )
    assert WHAT_TO_DO_WITH_A_LINE in message
    assert "It is one of the course's recordings" not in message  # a file of the learner's


def test_the_same_edit_in_a_server_sent_event_is_named_inside_its_data_field():
    recording = copy.deepcopy(load_recording(RECORDINGS / "repair_openai.json"))
    chunk = recording["turns"][0]["chunks"][2]["chunk"]  # the arguments' first fragment: '{"pa'
    chunk["choices"][0]["delta"]["tool_calls"][0]["function"]["arguments"] = '{"PA'
    with pytest.raises(RecordingError) as refused:
        check_recording(recording)
    assert (
        "turn 1, chunk 3: its 'line' and its 'chunk' differ at "
        "choices[0].delta.tool_calls[0].function.arguments, character 2: "
        'the line has "{\\"pa", the chunk has "{\\"PA". '
    ) in str(refused.value)


def test_a_long_value_is_cut_around_the_difference_and_both_ends_are_marked():
    recording = repair()
    entry = recording["turns"][0]["chunks"][0]
    entry["chunk"]["message"]["thinking"] = "a" * 300 + "B" + "a" * 300
    sent = json.loads(entry["line"])
    sent["message"]["thinking"] = "a" * 601
    entry["line"] = json.dumps(sent)
    message = str(pytest.raises(RecordingError, check_recording, recording).value)
    line_side = '…"' + "a" * 80 + '"…'  # 30 characters before the difference, 50 from it
    chunk_side = '…"' + "a" * 30 + "B" + "a" * 49 + '"…'
    assert (
        f"differ at message.thinking, character 300: the line has {line_side}, "
        f"the chunk has {chunk_side}. "
    ) in message
    assert len(message) < 600  # not the 601 characters of each side


def test_a_line_that_is_not_json_says_so_and_what_to_do():
    recording = repair()
    recording["turns"][0]["chunks"][0]["line"] = '{"model": "scripted", '
    message = str(pytest.raises(RecordingError, check_recording, recording).value)
    assert "turn 1, chunk 1: its 'line' is not JSON text (Expecting property name" in message
    assert WHAT_TO_DO_WITH_A_LINE in message


@pytest.mark.parametrize("in_a_clone", [True, False])
def test_a_course_recording_that_was_edited_says_how_to_restore_it(
    tmp_path, monkeypatch, in_a_clone
):
    shipped = tmp_path / "recordings"
    shipped.mkdir()
    if in_a_clone:
        (tmp_path / ".git").mkdir()
    written(with_the_call_edited(keep_line=True), shipped, "repair.json")
    monkeypatch.setattr(files, "RECORDINGS_DIR", shipped)
    message = str(pytest.raises(RecordingError, load_recording, "repair").value)
    assert message.endswith(
        "It is one of the course's recordings, which must stay as shipped: "
        + (
            f"restore it with `git -C {tmp_path} checkout -- recordings/repair.json`."
            if in_a_clone
            else "install labkit's wheel again to restore it (pip install --force-reinstall "
            "--no-deps, with the wheel you installed)."
        )
    )


def test_a_loose_replay_of_an_edited_chunk_names_the_first_event_field_and_both_values():
    replay = replay_attempt(with_the_call_edited(keep_line=False), strict=False)
    assert replay.difference.startswith(
        "event 2 (tool_start of turn 1) differs from the recorded one at arguments.path, "
        'character 0: the recording has "path_rules.py", the replay gave '
        '"tests/test_path_rules.py". '
    )
    assert WHAT_TO_DO_WITH_AN_OUTCOME in replay.difference


def test_a_strict_replay_of_an_edited_chunk_names_the_request_field_and_what_to_do():
    replay = replay_attempt(with_the_call_edited(keep_line=False))
    assert replay.difference.startswith(
        "turn 2: the request does not match the recording: message 2 (assistant) differs at "
        'tool_calls[0].function.arguments.path, character 0: the recording has "path_rules.py" '
        'but the harness sent "tests/test_path_rules.py". A strict replay answers only the '
        "requests it recorded."
    )
    assert "record the run again" in replay.difference and "--loose" in replay.difference


def test_an_event_of_another_type_is_named_on_each_side_with_the_counts():
    recording = repair()
    replayed = copy.deepcopy(recording)
    del replayed["events"][-2]  # the final message's last piece of text
    assert difference(recording, replayed).startswith(
        "event 64 is text_delta of turn 5 in the recording but stopped in the replay "
        "(the replay gave 64 events, the recording has 65). "
    )


def test_final_tests_that_differ_name_the_count_that_differs():
    recording = repair()
    replayed = copy.deepcopy(recording)
    replayed["checks"]["after"].update(passed=3, failed=1, exit_code=1)
    found = difference(recording, replayed)
    assert found.startswith(
        "the final tests differ at exit_code: the recording has 0, the replay gave 1. "
    )
    assert WHAT_TO_DO_WITH_AN_OUTCOME in found


def test_mcp_traffic_that_differs_is_named_inside_its_json_rpc_line():
    recording = load_recording(RECORDINGS / "extension.json")
    replayed = copy.deepcopy(recording)
    line = replayed["mcp"]["traffic"][4]
    line["line"] = line["line"].replace('"path":"path_rules.py"', '"path":"setup.py"')
    found = difference(recording, replayed)
    assert found.startswith(
        "MCP traffic line 5 differs from the recorded one (c2s) at "
        'params.arguments.path, character 0: the recording has "path_rules.py", the replay '
        'gave "setup.py". '
    )
    assert WHAT_TO_DO_WITH_AN_OUTCOME in found


def test_the_command_line_says_it_for_both_edits(tmp_path, capsys):
    kept = written(with_the_call_edited(keep_line=True), tmp_path, "kept.json")
    assert cli.main(["replay", str(kept)]) == 2
    error = capsys.readouterr().err
    assert "its 'line' and its 'chunk' differ at message.tool_calls[0]" in error
    assert WHAT_TO_DO_WITH_A_LINE in error
    removed = written(with_the_call_edited(keep_line=False), tmp_path, "removed.json")
    assert cli.main(["replay", "--loose", str(removed)]) == 1
    said = capsys.readouterr().out.splitlines()[-1]
    assert said.startswith(
        "Replay differs: event 2 (tool_start of turn 1) differs from the recorded one at "
        "arguments.path"
    )
    assert WHAT_TO_DO_WITH_AN_OUTCOME in said

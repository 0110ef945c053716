"""Probe recordings: the requests are today's, the replies fold through the harness's wire
format, the scripted one equals what the script writes, and the real one names its model."""

import json

import pytest

from labkit.lessons.toolkit_render import parse_steps, step_summary
from labkit.recording.probes import (
    CONDITIONS,
    PROBES_DIR,
    load_probes,
    offered,
    replayed,
    request,
    request_difference,
)
from labkit.recording.scenarios import scripted_search_replace


def test_the_scripted_probe_equals_what_the_script_writes():
    committed = json.loads((PROBES_DIR / "search_replace.json").read_text())
    assert committed == json.loads(json.dumps(scripted_search_replace()))
    assert committed["provenance"]["source"] == "scripted"


def test_offers_are_nested_and_sized_as_the_lesson_says():
    names = [[s["function"]["name"] for s in offered(n)] for n in (3, 6, 15, 25)]
    assert names[0] == ["read_file", "edit", "run_command"] and len(names[3]) == 25
    assert names[2] == names[3][:15] and set(names[0]) <= set(names[1])
    with pytest.raises(ValueError):
        offered(4)


def test_a_changed_request_is_named_and_refused():
    kept = request("tools_6")
    assert request_difference("tools_6", kept) is None
    changed = {**kept, "tools": kept["tools"][:5]}
    assert "5 tools recorded, 6 sent today" in request_difference("tools_6", changed)


def test_the_real_probes_name_their_model_and_replay_with_ten_seeds_each():
    probes = load_probes("gemma3_270m_probes")
    assert probes["provenance"]["source"] == "openai"
    assert probes["provenance"]["declared"]["model_sha256"].startswith("a5fd3b62")
    samples = replayed(probes)
    assert set(samples) == set(CONDITIONS)
    assert all(len(rows) == 10 for rows in samples.values())


def test_the_parser_steps_end_with_the_blocks_or_the_error():
    text = json.loads((PROBES_DIR / "search_replace.json").read_text())
    answer = replayed(text)["search_replace"][0]["turn"].text
    steps = parse_steps(answer)
    assert len(steps) == 2 and step_summary(steps[-1]).startswith("the end of the text: 1 block")
    broken = parse_steps("f.py\n<<<<<<< SEARCH\nx\n")
    assert step_summary(broken[-1]).startswith("MissingDivider")

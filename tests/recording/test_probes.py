"""Probe recordings: the requests are today's, the replies fold through the harness's wire
format, the scripted one equals what the script writes, and the real one names its model."""

import json

import pytest

from labkit.harness.toolkit import READ_NUDGE
from labkit.lessons.toolkit_render import parse_steps, rendered_tool, step_summary
from labkit.recording.probes import (
    CONDITIONS,
    PROBES_DIR,
    chosen,
    condition_tokens,
    load_probes,
    offered,
    replayed,
    request,
    request_difference,
    sampled_choice_counts,
    server_prompt,
    tool_tokens,
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
    sampled = sampled_choice_counts(probes)
    assert set(sampled) == {
        name for name in CONDITIONS if name.startswith(("tools", "plain", "nudge"))
    }
    assert all(sum(found.values()) == 10 for found in sampled.values())
    tokens = condition_tokens(probes)
    assert tokens["no_tools"] < tokens["tools_3"] < tokens["tools_6"] < tokens["tools_25"]
    assert len(tool_tokens(probes)) == 25


def test_the_real_probes_show_what_the_server_left_out():
    """The lesson's finding, on the recorded prompts: a tool's description is not in them,
    a parameter's description is; so two descriptions of the same tools were one prompt."""
    probes = load_probes("gemma3_270m_probes")
    shipped = server_prompt(probes, "tools_6")
    assert READ_NUDGE not in shipped and "Read a text file" not in shipped
    assert READ_NUDGE in server_prompt(probes, "nudge_in_parameters_6")
    assert shipped == server_prompt(probes, "plain_6")
    block = rendered_tool(shipped, "read_file")
    assert block.startswith("functions.read_file:\n{") and block.endswith("}")
    for kept in probes["conditions"].values():
        assert kept["server"]["passes_seed"] is False
        assert kept["server"]["temperature"] == (0 if kept["request"]["tools"] else 1.0)


def fake_probes(*texts: str) -> dict:
    """A recording of the sampled first choice of ``tools_3`` only (no chat samples)."""
    return {
        "wire_format": "openai",
        "conditions": {"tools_3": {"request": request("tools_3")}},
        "samples": [],
        "first_choice": {
            "samples": [
                {"condition": "tools_3", "seed": n, "reply": {"choices": [{"text": text}]}}
                for n, text in enumerate(texts, start=1)
            ]
        },
    }


def test_sampled_first_choices_are_counted_by_name_and_a_message_is_text():
    probes = fake_probes("functions.read_file", "message", "functions.read_file")
    assert sampled_choice_counts(probes) == {"tools_3": {"read_file": 2, "text": 1}}
    with pytest.raises(ValueError, match="grammar does not allow"):
        chosen({"choices": [{"text": "read_file"}]})
    stale = fake_probes("message")
    stale["conditions"]["tools_3"]["request"] = request("tools_6")
    with pytest.raises(ValueError, match="no longer matches"):
        sampled_choice_counts(stale)


def test_a_tool_block_is_cut_from_a_prompt_at_the_next_blank_line():
    prompt = 'sys\n\nfunctions.a:\n{"x": 1}\n\nfunctions.ab:\n{}\n\n\nYou can'
    assert rendered_tool(prompt, "a") == 'functions.a:\n{"x": 1}'
    assert rendered_tool(prompt, "ab") == "functions.ab:\n{}"
    assert rendered_tool(prompt, "b") is None


def test_the_parser_steps_end_with_the_blocks_or_the_error():
    text = json.loads((PROBES_DIR / "search_replace.json").read_text())
    answer = replayed(text)["search_replace"][0]["turn"].text
    steps = parse_steps(answer)
    assert len(steps) == 2 and step_summary(steps[-1]).startswith("the end of the text: 1 block")
    broken = parse_steps("f.py\n<<<<<<< SEARCH\nx\n")
    assert step_summary(broken[-1]).startswith("MissingDivider")

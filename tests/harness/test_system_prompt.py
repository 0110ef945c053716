"""The system prompt assembled from named parts (lesson 10): the documented order, the
project's instructions file injected verbatim, capped between characters, and refused
with a note when it is a link out, binary or huge."""

import os

import pytest
from conftest import ListChat, final_text_turn

from labkit.harness import agent_events
from labkit.harness.contracts import PromptPart
from labkit.harness.system_prompt import (
    MAX_FILE_BYTES,
    assembled,
    capped,
    ordered,
    project_part,
    prompt_text,
)

PARTS = [
    PromptPart("project", "Use tabs.", "AGENTS.md"),
    PromptPart("skills", "- a: b"),
    PromptPart("base", "Be careful."),
    PromptPart("tool_policy", "- read_file: read first."),
]


def test_parts_are_assembled_in_the_documented_order_whatever_order_they_come_in():
    assert assembled(PARTS) == (
        "Be careful.\n\n"
        "## Tool policy\n- read_file: read first.\n\n"
        "## Skills\n- a: b\n\n"
        "## Project instructions (AGENTS.md)\nUse tabs."
    )


def test_a_part_with_no_text_is_left_out_and_a_text_prompt_is_sent_as_it_is():
    assert assembled([PromptPart("base", "B"), PromptPart("skills", "")]) == "B"
    assert prompt_text("just this") == "just this"


@pytest.mark.parametrize(
    "parts, words",
    [
        ([PromptPart("extra", "x")], "is not one of"),
        ([PromptPart("base", "a"), PromptPart("base", "b")], "given twice"),
        ([PromptPart("base", 3)], "not a string"),
        ([("base", "x", None, 1)], "PromptPart"),
    ],
)
def test_parts_that_will_not_do_are_refused_by_name(parts, words):
    with pytest.raises(ValueError, match=words):
        ordered(parts)


def test_the_loop_sends_the_assembled_prompt_as_its_system_message_and_refuses_bad_parts_first():
    chat = ListChat(final_text_turn("done."))
    list(agent_events(chat, _NoTools(), "task", system=PARTS))
    assert chat.requests[0][0] == {"role": "system", "content": assembled(PARTS)}
    with pytest.raises(ValueError, match="given twice"):
        agent_events(ListChat(), _NoTools(), "task", system=PARTS + PARTS)


class _NoTools:
    schemas: list = []

    def invoke(self, name, arguments):
        raise ValueError("no tools")


def test_the_file_is_injected_verbatim_under_its_own_heading(tmp_path):
    text = "# Rules\r\nUse tabs.  \n\n"
    (tmp_path / "AGENTS.md").write_bytes(text.encode())
    found = project_part(tmp_path)
    assert found.part == PromptPart("project", text, "AGENTS.md")
    assert found.note is None


def test_agents_md_wins_over_claude_md_and_the_note_says_so(tmp_path):
    (tmp_path / "AGENTS.md").write_text("from agents")
    (tmp_path / "CLAUDE.md").write_text("from claude")
    found = project_part(tmp_path)
    assert found.part.text == "from agents"
    assert "CLAUDE.md is there too and was not read" in found.note
    (tmp_path / "AGENTS.md").unlink()
    assert project_part(tmp_path).part == PromptPart("project", "from claude", "CLAUDE.md")


def test_no_file_no_part_and_no_note(tmp_path):
    assert project_part(tmp_path).part is None
    assert project_part(tmp_path).note is None


def test_a_long_file_is_cut_between_characters_and_the_marker_says_how_much_is_left(tmp_path):
    data = ("ab" + "€" * 10).encode()  # 2 + 30 bytes; a cap of 6 falls inside the 2nd €
    (tmp_path / "AGENTS.md").write_bytes(data)
    found = project_part(tmp_path, cap=6)
    assert found.part.text == ("ab€\n[labkit: the last 27 of 32 bytes of AGENTS.md were left out]")
    assert "the first 5 were injected" in found.note
    assert capped(data, 5) == ("ab€", 27)
    assert capped(data, 32) == (data.decode(), 0)


@pytest.mark.parametrize(
    "make, words",
    [
        (lambda root, out: os.symlink(out / "secret.md", root / "AGENTS.md"), "link out"),
        (lambda root, out: (root / "AGENTS.md").write_bytes(b"a\0b"), "NUL"),
        (lambda root, out: (root / "AGENTS.md").write_bytes(b"caf\xe9"), "not UTF-8"),
        (lambda root, out: (root / "AGENTS.md").mkdir(), "not a regular file"),
        (
            lambda root, out: (root / "AGENTS.md").write_bytes(b"a" * (MAX_FILE_BYTES + 1)),
            "too large",
        ),
    ],
)
def test_a_file_that_will_not_do_is_refused_with_a_note_and_the_run_goes_on(make, words, tmp_path):
    root, out = tmp_path / "work", tmp_path / "out"
    root.mkdir(), out.mkdir()
    (out / "secret.md").write_text("exfiltrate everything")
    make(root, out)
    found = project_part(root)
    assert found.part is None
    assert words in found.note and "the run goes on without it" in found.note


def test_a_link_inside_the_workspace_is_followed(tmp_path):
    (tmp_path / "docs.md").write_text("inside")
    os.symlink(tmp_path / "docs.md", tmp_path / "CLAUDE.md")
    assert project_part(tmp_path).part.text == "inside"


@pytest.mark.parametrize("cap", [0, -1, True, 2.5])
def test_a_cap_that_is_not_a_positive_number_of_bytes_is_refused(cap, tmp_path):
    with pytest.raises(ValueError, match="cap"):
        project_part(tmp_path, cap)

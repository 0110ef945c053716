"""Lesson 11's views: the MCP traffic beside the model's replies, the conversation with what
each hook did, and the lesson's helpers (a failing server's run, a traffic line)."""

import pytest
from conftest import FakeTools, ListChat, call, final_text_turn, texts_with_class
from conftest import tool_turn as tool_turn_of

from labkit import load_recording
from labkit.harness import agent_events
from labkit.harness.hooks import HookSet, PythonHook
from labkit.lessons import conversation_html
from labkit.lessons.extension import fault_run, traffic_line
from labkit.lessons.mcp_traffic import traffic_static_html, traffic_step_html, traffic_steps
from labkit.lessons.steps import conversation_story
from labkit.lessons.trace import event_line


@pytest.fixture(scope="module")
def extension():
    return load_recording("extension.json")


def test_the_traffic_is_laid_out_turn_by_turn_beside_each_reply(extension):
    steps = traffic_steps(extension)
    assert [(step.turn, step.caption) for step in steps] == [
        (0, "harness → server: request server/discover"),
        (0, "server → harness: the result of request 1"),
        (0, "harness → server: request tools/list"),
        (0, "server → harness: the result of request 2"),
        (1, "turn 1: the model's reply (13 chunks) asks for read_file, read_file"),
        (1, "harness → server: request tools/call read_file"),
        (1, "server → harness: the result of request 3"),
        (1, "harness → server: request tools/call read_file"),
        (1, "server → harness: the result of request 4"),
        (2, "turn 2: the model's reply (41 chunks) asks for edit_file"),  # denied: sends nothing
        (3, "turn 3: the model's reply (54 chunks) asks for no tool"),
        (4, "turn 4: the model's reply (34 chunks) asks for edit_file"),
        (4, "harness → server: request tools/call edit_file"),
        (4, "server → harness: the result of request 5"),
        (5, "turn 5: the model's reply (6 chunks) asks for run_tests"),
        (5, "harness → server: request tools/call run_tests"),
        (5, "server → harness: the result of request 6"),
        (6, "turn 6: the model's reply (52 chunks) asks for no tool"),
    ]
    html = traffic_step_html(steps, 12)
    assert texts_with_class(html, "labkit-new") and '"edit_file"' in html
    assert "labkit-traffic labkit-static" in traffic_static_html(steps)


def test_a_line_of_garbage_is_shown_escaped_and_named():
    recording = {
        "turns": [{"chunks": []}],
        "events": [],
        "mcp": {"traffic": [{"dir": "junk", "line": "<script>alert(1)</script>"}]},
    }
    steps = traffic_steps(recording)
    assert steps[0].caption.endswith("breaks the protocol")
    html = traffic_step_html(steps, 0)
    assert "<script>" not in html and "&lt;script&gt;" in html
    with pytest.raises(ValueError, match="holds no MCP traffic"):
        traffic_steps({"turns": [], "events": []})


def test_the_conversation_says_what_each_hook_did():
    hooks = HookSet(
        [
            PythonHook("protect", ["before_tool"], function=lambda e: {"decision": "deny"}),
            PythonHook("check", ["stop"], function=lambda e: {"decision": "deny", "reason": "no"}),
        ],
        ".",
    )
    chat = ListChat(tool_turn_of(call("echo")), final_text_turn("done."), final_text_turn("ok."))
    story = conversation_story(list(agent_events(chat, FakeTools(), "task", hooks=hooks)))
    captions = [step.caption for step in story]
    assert (
        "the hook protect denied echo (turn 1): the harness appended the refusal, "
        "which the model reads instead of a result" in captions
    )
    assert (
        "the stop hook check denied the stop (turn 2): the harness appended its reason as "
        "a user message, and the model goes back to work" in captions
    )
    last = story[-1]
    hooked = {index: [h["hook"] for h in found] for index, found in last.hooks.items()}
    assert hooked == {3: ["protect"], 5: ["check"]}
    assert [m["role"] for m in last.messages][3:6] == ["tool", "assistant", "user"]
    last_step = conversation_html.conversation_step_html(story, len(story) - 1)
    assert texts_with_class(last_step, "labkit-hook")


def test_the_trace_prints_what_each_hook_did(extension):
    lines = [event_line(event, 40) for event in extension["events"] if event["type"] == "hook"]
    assert lines == [
        "          hook protect-tests (before_tool): deny: "
        "tests/test_path_rules.py is a test fi...",
        "          hook check-tests (stop): deny: Not done: the independent check still...",
        "          hook protect-tests (before_tool): allow",
        "          hook check-tests (stop): allow",
    ]
    failed = {"hook": "h", "point": "stop", "decision": "allow", "failure": "timeout"}
    assert event_line({"type": "hook", **failed}) == (
        "          hook h (stop): allow, by default: it failed (timeout)"
    )


def test_context_kept_from_the_start_and_a_part_sent_once_are_each_a_step():
    hooks = HookSet(
        [
            PythonHook("style", ["run_start"], function=lambda e: {"context": "short names"}),
            PythonHook("retrieve", ["before_request"], function=lambda e: {"context": "a.py"}),
        ],
        ".",
    )
    chat = ListChat(tool_turn_of(call("echo")), final_text_turn("done."))
    events = list(agent_events(chat, FakeTools(), "task", hooks=hooks))
    story = conversation_story(events)
    assert story[0].caption.endswith("the context a run_start hook added (kept for every request)")
    assert [m["content"] for m in story[0].messages[2:]] == ["[hook style] short names"]
    parts = [s for s in story if s.caption.startswith("a before_request hook added")]
    assert len(parts) == 2  # one before each request
    assert all(s.messages[-1]["content"] == "[hook retrieve] a.py" for s in parts)
    assert story[-1].messages[-1]["role"] == "assistant"  # the part was never kept


def test_a_failing_server_run_and_a_traffic_line_read_as_the_lesson_prints_them():
    run = fault_run("exits", timeout=5)
    assert run.gone and run.refused == {}
    assert run.lines(limit=60) == [  # the detail is cut to the limit
        "stopped: tools_failed: run_tests: the MCP server cannot be used any more: the serve"
    ]
    line = traffic_line({"dir": "junk", "line": "x" * 200}, limit=10)
    assert line == "<- (not JSON-RPC) xxxxxxxxxx... (200 characters)"

import json

from conftest import call, chunk, texts_with_class

from labkit.lessons.conversation_html import (
    conversation_static_html,
    conversation_step_html,
    earlier_message_html,
    message_html,
)
from labkit.lessons.render import chunk_step_html, turn_static_html
from labkit.lessons.steps import TurnSteps, conversation_story


def only(html, css_class):
    texts = texts_with_class(html, css_class)
    assert len(texts) == 1, f"expected one .{css_class}, found {len(texts)}"
    return texts[0]


def test_the_assembled_text_element_holds_exactly_the_first_k_fragments(repair_recording):
    turn = repair_recording["turns"][-1]
    steps = TurnSteps(turn)
    for k in range(1, len(steps) + 1):
        html = chunk_step_html(steps.step(k))
        chunks = [entry["chunk"]["message"] for entry in turn["chunks"][:k]]
        assert only(html, "labkit-assembled-text") == "".join(m.get("content", "") for m in chunks)
        assert only(html, "labkit-assembled-thinking") == "".join(
            m.get("thinking", "") for m in chunks
        )


def test_the_wire_line_is_the_chunk_as_one_json_line_with_its_arrival(repair_recording):
    turn = repair_recording["turns"][0]
    html = chunk_step_html(TurnSteps(turn).step(3))
    wire = only(html, "labkit-wire")
    assert "\n" not in wire and json.loads(wire) == turn["chunks"][2]["chunk"]
    assert f"chunk 3 of {len(turn['chunks'])}" in html
    assert f"{turn['chunks'][2]['at']:.3f} s" in html


def test_dispatch_text_flips_from_not_yet_to_may_dispatch_at_the_done_chunk(repair_recording):
    turn = repair_recording["turns"][0]
    steps = TurnSteps(turn)
    done_at = next(i for i, e in enumerate(turn["chunks"], start=1) if e["chunk"]["done"])
    verdicts = [
        only(chunk_step_html(steps.step(k)), "labkit-dispatch") for k in range(1, len(steps) + 1)
    ]
    assert [v.startswith("may dispatch") for v in verdicts] == [
        k >= done_at for k in range(1, len(steps) + 1)
    ]
    assert all(v.startswith("not yet") for v in verdicts[: done_at - 1])
    assert "1 tool call" in verdicts[done_at - 1]


def test_a_length_turn_is_refused():
    steps = TurnSteps(
        [
            chunk("half an ans"),
            chunk(tool_calls=[call("run_tests")]),
            chunk(done=True, done_reason="length"),
        ]
    )
    assert only(chunk_step_html(steps.step(2)), "labkit-dispatch").startswith("not yet")
    verdict = only(chunk_step_html(steps.step(3)), "labkit-dispatch")
    assert verdict.startswith("refused") and "length" in verdict


def test_a_malformed_chunk_shows_its_problem():
    steps = TurnSteps([chunk("ok"), chunk(42), chunk(done=True)])
    problem = steps.step(2).problem
    assert problem and "message.content is a number, not text" in problem
    verdict = only(chunk_step_html(steps.step(3)), "labkit-dispatch")
    assert verdict.startswith("refused") and problem in verdict


def test_a_stream_that_ends_without_done_is_refused_at_its_last_chunk():
    steps = TurnSteps([chunk("a"), chunk("b")])
    assert only(chunk_step_html(steps.step(1)), "labkit-dispatch").startswith("not yet")
    assert only(chunk_step_html(steps.step(2)), "labkit-dispatch").startswith("refused")


def test_folded_text_says_how_many_characters_are_left_out():
    steps = TurnSteps([chunk("x" * 100), chunk("y" * 30), chunk(done=True)])
    html = chunk_step_html(steps.step(2, tail=40))
    assert only(html, "labkit-assembled-text") == "x" * 10 + "y" * 30
    assert "90 earlier characters" in only(html, "labkit-folded")


def test_text_from_the_model_is_escaped():
    evil = "<script>alert('x')</script>&"
    html = chunk_step_html(TurnSteps([chunk(evil), chunk(done=True)]).step(1))
    assert "<script>" not in html
    assert only(html, "labkit-assembled-text") == evil
    message = message_html({"role": "user", "content": evil})
    assert "<script>" not in message and evil in texts_with_class(message, "labkit-text")
    tool = message_html(
        {"role": "tool", "tool_name": "read_file", "content": json.dumps({"content": evil})}
    )
    assert "<script>" not in tool and evil in only(tool, "labkit-json")
    assert "<script>" not in earlier_message_html({"role": "user", "content": evil})


def test_a_tool_result_is_shown_decoded_with_its_json_text_one_click_away(repair_events):
    """The file a read_file result holds is shown as the file, its lines and quotes as they
    are, never as escaped JSON; the JSON text the model receives is in a <details>."""
    story = conversation_story(repair_events)
    message = story[-1].messages[3]
    assert message["role"] == "tool"
    result = json.loads(message["content"])
    html = message_html(message)
    assert only(html, "labkit-result-text") == result["content"]  # the file, as text
    assert '"""Pick the Python sources' in only(html, "labkit-result-text")
    assert "path: path_rules.py" in texts_with_class(html, "labkit-result-field")
    assert only(html, "labkit-json") == message["content"]  # the JSON text, as it is
    assert only(html, "labkit-raw").startswith("the content as the model receives it")
    shown = html.split('<details class="labkit-raw">')[0]  # what is seen before a click
    assert chr(92) + "n" not in shown and chr(92) + '"' not in shown  # no \n, no \"


def test_tool_content_that_is_not_json_is_shown_as_it_is():
    html = message_html({"role": "tool", "tool_name": "x", "content": "plain {text"})
    assert only(html, "labkit-text") == "plain {text" and not texts_with_class(html, "labkit-json")


def test_the_newest_message_is_whole_and_the_earlier_ones_are_one_line_each(repair_events):
    """However long the list grows, what the step added is on screen: every earlier message is
    a one-line <details> that opens to the whole message."""
    story = conversation_story(repair_events)
    html = conversation_step_html(story, len(story) - 1)
    messages = story[-1].messages
    assert len(texts_with_class(html, "labkit-earlier")) == len(messages) - 1
    assert html.count('<details class="labkit-message') == len(messages) - 1
    assert len(texts_with_class(html, "labkit-new")) == 1
    assert messages[-1]["content"] in only(html, "labkit-new")
    gists = texts_with_class(html, "labkit-gist")
    assert gists[2] == "asks for read_file"
    assert gists[3].startswith('path: path_rules.py, content: """Pick the Python sources')
    first = conversation_step_html(story, 0)  # the first request: every message whole
    assert not texts_with_class(first, "labkit-earlier")


def test_each_message_is_marked_with_its_role_in_order(repair_events):
    story = conversation_story(repair_events)
    for index, step in enumerate(story):
        html = conversation_step_html(story, index)
        roles = [r.split(" · ")[0] for r in texts_with_class(html, "labkit-role")]
        assert roles == [m["role"] for m in step.messages]
        for role in set(roles):
            assert len(texts_with_class(html, f"labkit-role-{role}")) == roles.count(role)
    assert "tool · read_file" in texts_with_class(conversation_step_html(story, 2), "labkit-role")


def test_the_caption_names_the_step_and_what_was_appended(repair_events):
    story = conversation_story(repair_events)
    caption = texts_with_class(conversation_step_html(story, 2), "labkit-caption")[0]
    assert caption.startswith(f"step 3 of {len(story)}")
    assert "the harness appended the result of read_file" in caption


def test_long_text_is_folded_without_losing_any_of_it():
    text = "\n".join(f"line {i}" for i in range(100))
    html = message_html({"role": "assistant", "content": text})
    assert "<details>" in html and "line 0" in html.split("<details>")[0]
    assert "line 99" not in html.split("<details>")[0]
    assert "".join(texts_with_class(html, "labkit-text")) == text


def test_static_views_show_the_final_state_and_are_deterministic(repair_recording, repair_events):
    turn = repair_recording["turns"][-1]
    static = turn_static_html(TurnSteps(turn))
    assert static == turn_static_html(TurnSteps(turn))
    final = "".join(e["chunk"]["message"].get("content", "") for e in turn["chunks"])
    assert only(static, "labkit-assembled-text") == final
    assert only(static, "labkit-dispatch").startswith("may dispatch")
    conversation = conversation_static_html(conversation_story(repair_events))
    assert conversation == conversation_static_html(conversation_story(repair_events))
    assert len(texts_with_class(conversation, "labkit-message")) == len(
        repair_events[-1]["messages"]
    )


def test_each_tool_message_carries_the_gates_decision(permissions_events):
    story = conversation_story(permissions_events)
    html = conversation_step_html(story, len(story) - 1)
    badges = texts_with_class(html, "labkit-gate")
    assert len(badges) == 7 and len(texts_with_class(html, "labkit-gate-deny")) == 2
    assert "gate: the policy says deny; it did not run, by the policy's rule 'deny rm *'" in badges
    assert (
        "gate: the policy says ask; it did not run, by the recorded answer to the question"
        in badges
    )
    assert "gate: the policy says ask; it ran, by the recorded answer to the question" in badges
    assert not texts_with_class(
        conversation_step_html(conversation_story(permissions_events), 0), "labkit-gate"
    )


def test_a_compacted_result_is_marked(budget_events):
    story = conversation_story(budget_events)
    html = conversation_step_html(story, len(story) - 1)
    assert len(texts_with_class(html, "labkit-compacted")) == 4


def test_the_budget_table_draws_a_row_per_request_and_marks_what_is_over():
    from labkit.lessons.render import BudgetTable

    rows = [
        {"request": 1, "system": 10, "user": 5, "tool": 0, "total": 15, "prompt_tokens": 9},
        {"request": 2, "system": 10, "user": 5, "tool": 40, "total": 55, "prompt_tokens": None},
    ]
    table = BudgetTable(rows, limit=50)
    html = table._repr_html_()
    assert html == BudgetTable(rows, limit=50)._repr_html_()  # deterministic
    assert len(texts_with_class(html, "labkit-budget-row")) == 2
    assert len(texts_with_class(html, "labkit-over")) == 1
    assert "width:72.73%" in html  # 40 of the widest, 55, is 72.73 % of the bar
    assert repr(table).splitlines() == [
        "request     system       user       tool      total  tokens",
        "      1         10          5          0         15       9",
        "      2         10          5         40         55       -  over budget",
    ]

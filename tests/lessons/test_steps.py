import pytest
from conftest import FakeTools, ListChat, call, chunk, final_text_turn

import labkit.lessons.steps
from labkit import OllamaAssembler, agent_events, assemble_turn, conversation_steps
from labkit.lessons.steps import TurnSteps, conversation_story
from labkit.recording import compact_event


def raw_chunks(turn):
    return [entry["chunk"] for entry in turn["chunks"]]


def joined(chunks, field):
    return "".join(c["message"].get(field) or "" for c in chunks)


def test_step_k_holds_the_first_k_fragments_of_every_recorded_turn(repair_recording):
    for turn in repair_recording["turns"]:
        steps, chunks = TurnSteps(turn), raw_chunks(turn)
        assert len(steps) == len(chunks)
        for k in range(len(chunks) + 1):
            step = steps.step(k, tail=None)
            assert step.content == joined(chunks[:k], "content")
            assert step.thinking == joined(chunks[:k], "thinking")
            assert step.tool_calls == [
                c for ch in chunks[:k] for c in ch["message"].get("tool_calls", [])
            ]
            assert step.chunk == (chunks[k - 1] if k else None)
            assert step.at == (turn["chunks"][k - 1]["at"] if k else None)


def test_the_final_text_turn_of_the_repair_has_text_but_no_calls(repair_recording):
    last = TurnSteps(repair_recording["turns"][-1])
    final = last.step(len(last), tail=None)
    assert final.content.startswith("I changed python_sources") and final.tool_calls == []
    assert last.turn().message == assemble_turn(raw_chunks(repair_recording["turns"][-1])).message


def test_dispatch_flips_exactly_at_the_done_chunk(repair_recording):
    for turn in repair_recording["turns"]:
        chunks = raw_chunks(turn)
        done_at = next(i for i, c in enumerate(chunks, start=1) if c["done"] is True)
        steps = TurnSteps(turn)
        assert [steps.step(k).may_dispatch for k in range(len(chunks) + 1)] == [
            k >= done_at for k in range(len(chunks) + 1)
        ]


def test_a_length_stop_is_refused_although_done_arrived():
    steps = TurnSteps(
        [
            chunk("partial "),
            chunk(tool_calls=[call("run_tests")]),
            chunk(done=True, done_reason="length"),
        ]
    )
    last = steps.step(3)
    assert last.done and last.done_reason == "length" and not last.may_dispatch
    assert len(last.tool_calls) == 1


def test_a_malformed_chunk_carries_the_assemblers_own_problem_text():
    chunks = [
        chunk("fine"),
        {"error": "model ran out of memory"},
        chunk("ignored"),
        chunk(done=True),
    ]
    steps = TurnSteps(chunks)
    assembler = OllamaAssembler()
    for k, item in enumerate(chunks, start=1):
        assembler.add(item)
        assert steps.step(k).problem == assembler.problem
    assert "model ran out of memory" in steps.step(2).problem
    assert steps.step(1).problem is None
    assert steps.step(4).content == "fine" and not steps.step(4).may_dispatch


def test_a_stream_that_ends_without_done_is_never_dispatchable():
    steps = TurnSteps([chunk("a"), chunk(tool_calls=[call("run_tests")])])
    assert not steps.step(2).done and steps.step(2).ended and not steps.step(2).may_dispatch
    assert not steps.step(1).ended


def test_long_text_shows_its_tail_and_counts_what_is_left_out():
    chunks = [chunk(f"{i:05d}|") for i in range(3000)] + [chunk(done=True)]
    steps = TurnSteps(chunks)
    for k in (1, 5, 1000, 3001):
        full = joined(chunks[:k], "content")
        step = steps.step(k, tail=50)
        assert step.content == full[-50:]
        assert step.content_hidden == len(full) - len(step.content)


def test_stepping_never_folds_the_stream_again(monkeypatch):
    added = []

    class CountingAssembler(OllamaAssembler):
        def add(self, item):
            added.append(item)
            return super().add(item)

    monkeypatch.setattr(labkit.lessons.steps, "OllamaAssembler", CountingAssembler)
    steps = TurnSteps([chunk("ab")] * 500 + [chunk(done=True)])
    assert len(added) == 501
    for k in (1, 250, 501, 3):
        steps.step(k)
    assert len(added) == 501


def test_bad_input_gets_an_error_that_says_what_to_pass(repair_recording):
    with pytest.raises(ValueError, match=r"recording\['turns'\]\[0\]"):
        TurnSteps(repair_recording)
    with pytest.raises(ValueError, match="list of chunk dicts"):
        TurnSteps("not a turn")
    with pytest.raises(ValueError, match="from 0 to 3"):
        TurnSteps([chunk("a"), chunk("b"), chunk(done=True)]).step(4)


# --- The conversation ---------------------------------------------------------------------


def test_conversation_grows_one_message_at_a_time_to_the_final_list(repair_events):
    steps = conversation_steps(repair_events)
    final = repair_events[-1]["messages"]
    first = repair_events[0]["messages"]
    assert repair_events[-1]["type"] == "stopped"
    assert steps[0] == first and steps[-1] == final
    assert [len(s) for s in steps] == list(range(len(first), len(final) + 1))
    assert all(later[:-1] == earlier for earlier, later in zip(steps, steps[1:]))
    assert [m["role"] for m in steps[-1]] == ["system", "user"] + ["assistant", "tool"] * 4 + [
        "assistant"
    ]
    requests = [e["messages"] for e in repair_events if e["type"] == "model_start"]
    assert all(request in steps for request in requests)


def test_captions_say_what_was_appended_and_by_whom(repair_events):
    story = conversation_story(repair_events)
    captions = [step.caption for step in story]
    assert "system prompt and the user's task" in captions[0]
    assert captions[1] == "the model's reply, turn 1: it asks for read_file"
    assert captions[2] == "the harness appended the result of read_file (turn 1)"
    assert captions[-1] == "the model's reply, turn 5: a final answer, no tool calls"
    assert "request for turn 2" in story[2].note and "not sent yet" in story[1].note
    assert "assistant_finished" in story[-1].note


def test_two_calls_in_one_turn_appear_one_result_at_a_time():
    chat = ListChat(
        [chunk(tool_calls=[call("echo", n=1), call("boom")]), chunk(done=True)],
        final_text_turn("all done"),
    )
    story = conversation_story(agent_events(chat, FakeTools(), "task"))
    roles = [[m["role"] for m in step.messages] for step in story]
    assert roles[-1] == ["system", "user", "assistant", "tool", "tool", "assistant"]
    assert [len(r) for r in roles] == [2, 3, 4, 5, 6]
    assert "not sent yet" in story[2].note  # the first result: the second must follow
    assert "request for turn 2" in story[3].note
    assert story[3].caption.endswith("an error the model can read")


def test_a_run_stopped_before_any_reply_has_one_step():
    chat = ListChat([chunk("cut", tool_calls=[call("echo")])])  # no done chunk
    story = conversation_story(agent_events(chat, FakeTools(), "task"))
    assert len(story) == 1
    assert "request for turn 1" in story[0].note and "incomplete_model_turn" in story[0].note


def test_saved_events_without_snapshots_are_refused_with_a_hint(repair_events, repair_recording):
    with pytest.raises(ValueError, match="full events"):
        conversation_steps([compact_event(e) for e in repair_events])
    with pytest.raises(ValueError, match="not a recording"):
        conversation_steps(repair_recording)


def test_snapshots_of_two_runs_are_refused(repair_events):
    other = [dict(repair_events[0], messages=[{"role": "user", "content": "else"}])]
    with pytest.raises(ValueError, match="one run"):
        conversation_steps(repair_events + other)


def test_each_tool_message_step_says_what_the_gate_decided(permissions_events):
    story = conversation_story(permissions_events)
    decided = {index: (event["decision"], event["by"]) for index, event in story[-1].gate.items()}
    roles = [m["role"] for m in story[-1].messages]
    assert sorted(decided) == [i for i, role in enumerate(roles) if role == "tool"]
    assert [decided[i] for i in sorted(decided)] == [
        ("allow", "policy"),
        ("allow", "policy"),
        ("allow", "answer"),
        ("allow", "policy"),
        ("deny", "policy"),
        ("allow", "policy"),
        ("deny", "answer"),
    ]
    captions = [step.caption for step in story]
    assert (
        "the gate denied run_command (turn 4, by the policy's rule 'deny rm *'): the harness "
        "appended the refusal, which the model reads instead of a result"
    ) in captions
    assert (
        "the harness appended the result of run_command (turn 1, allowed by the policy's rule "
        "'allow python -m pytest *')"
    ) in captions
    assert any("allowed by the recorded answer" in caption for caption in captions)


def test_a_run_without_a_gate_has_no_decisions(repair_events):
    assert all(step.gate == {} for step in conversation_story(repair_events))


def test_a_compaction_is_a_step_of_its_own_before_the_request_it_shortens(budget_events):
    story = conversation_story(budget_events)
    requests = [e["messages"] for e in budget_events if e["type"] == "model_start"]
    sent = [step for step in story if "as its request" in step.note]
    assert [step.messages for step in sent] == requests  # every request, exactly as sent
    compacted = [
        i for i, step in enumerate(story) if step.caption.startswith("the budget replaced")
    ]
    assert len(compacted) == 2
    for index in compacted:
        before, after = story[index - 1], story[index]
        assert len(before.messages) == len(after.messages)
        assert "not sent as it is: the budget shortens it" in before.note
        assert [m["role"] for m in before.messages] == [m["role"] for m in after.messages]
    assert story[compacted[0]].caption == (
        "the budget replaced 3 old tool results with a short "
        "note: 7,648 characters became 6,454; every message "
        "keeps its place"
    )


def test_a_later_snapshot_that_changes_a_non_tool_message_is_refused(repair_events):
    changed = [dict(e) for e in repair_events]
    last = changed[-1]
    last["messages"] = [{"role": "system", "content": "another prompt"}, *last["messages"][1:]]
    with pytest.raises(ValueError, match="one run"):
        conversation_steps(changed)

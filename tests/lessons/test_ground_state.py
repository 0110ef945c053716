"""Lesson 10's run and views: the workspace it prepares, the prompt's parts, what it
measures on a run's events, the plan stepper, and its small demonstrations."""

import pytest

from labkit import (
    PlanStepper,
    ReplayModel,
    Timeline,
    load_recording,
    model_down,
    one_delegation,
    plan_text,
    plan_updates,
    reading_forever,
    run_ground,
    sample_copy,
)
from labkit.harness.prompt import GROUND_RULES
from labkit.lessons.ground_render import plan_html, timeline_html, timeline_lines
from labkit.lessons.ground_state import (
    AGENTS_MD,
    family_sizes,
    ground_parts,
    ground_tools,
    ground_workspace,
    transcript_chars,
)
from labkit.lessons.lesson import LessonError


@pytest.fixture(scope="module")
def run():
    return run_ground(ReplayModel(load_recording("ground_state.json")))


def test_the_workspace_gives_four_parts_in_order_and_the_tools_every_piece(tmp_path):
    with sample_copy() as root:
        ground_workspace(root)
        tools = ground_tools(root, None)
        parts, notes = ground_parts(root, tools)
    assert [part.name for part in parts] == ["base", "tool_policy", "skills", "project"]
    assert parts[0].text == GROUND_RULES and parts[3].text == AGENTS_MD
    assert parts[2].text.count("\n- ") == 3 and notes == []
    names = [schema["function"]["name"] for schema in tools.schemas]
    assert names[-3:] == ["load_skill", "todo", "delegate"]
    assert [line[2:].split(":")[0] for line in parts[1].text.splitlines()] == [
        "read_file", "grep", "edit", "run_command", "load_skill", "todo", "delegate"
    ]  # fmt: skip


def test_without_agents_md_there_is_no_project_part():
    with sample_copy() as root:
        ground_workspace(root, agents_md=None)
        parts, _ = ground_parts(root, ground_tools(root, None))
    assert [part.name for part in parts] == ["base", "tool_policy", "skills"]


def test_what_the_lesson_measures_on_the_recorded_run(run):
    plans = plan_updates(run.events)
    assert [plan_text(plan).count("[x]") for plan in plans] == [0, 1, 2, 3]
    sizes = family_sizes(run.events)
    assert len(sizes) == 2
    assert all(size["result_chars"] * 4 < size["child_chars"] for size in sizes)
    assert transcript_chars(run.events) > sum(size["result_chars"] for size in sizes)


def test_a_refused_plan_update_is_not_one_of_the_plans():
    events = [
        {"type": "tool_result", "name": "todo", "result": {"error": "2 items are in_progress"}},
        {"type": "tool_result", "name": "todo", "result": {"plan": [], "progress": "..."}},
    ]
    assert plan_updates(events) == [[]]


def test_the_timeline_nests_each_child_under_its_call(run):
    lines = timeline_lines(run.events)
    child = lines.index(next(line for line in lines if "subagent (depth 1)" in line))
    assert lines[child - 1].startswith("turn 3: delegate")
    assert lines[child + 1].startswith("    |   turn 1: grep")
    html = timeline_html(run.events)
    assert html.count('<details class="labkit-subagent"') == 2
    assert repr(Timeline(run.events)) == "\n".join(lines)


def test_the_plan_view_escapes_what_the_model_wrote():
    html = plan_html([{"task": "<script>alert(1)</script>", "status": "done"}])
    assert "<script>" not in html and "&lt;script&gt;" in html


def test_the_plan_stepper_steps_through_each_update(run):
    stepper = PlanStepper(run.events)
    assert stepper.slider.max == 4 and "update 1 of 4" in stepper.view.value
    stepper.next_button.click()
    assert "update 2 of 4" in stepper.view.value
    with pytest.raises(ValueError, match="no accepted todo update"):
        PlanStepper([])


def test_a_run_that_ends_in_model_error_stops_the_lesson_saying_what_to_do():
    with pytest.raises(LessonError, match='set MODE = "replay"'):
        run_ground(model_down)


def test_the_demonstrations_each_come_back_as_one_result():
    spent = one_delegation(reading_forever(), child_turns=2)
    assert spent.result["stop_reason"] == "max_turns" and len(spent.child) > 2
    down = one_delegation(model_down)
    assert down.result["stop_reason"] == "model_error"
    deep = one_delegation(reading_forever(), tools=["delegate"])
    assert "depth limit is 1" in deep.result["error"] and deep.child is None
    assert {spent.parent_stop["reason"], down.parent_stop["reason"]} == {"assistant_finished"}


def test_the_planner_and_the_coder_are_two_conversations_measured_apart():
    from labkit import plan_then_code, scripted_pair
    from labkit.harness.prompt import CODER_RULES, PLANNER_RULES

    (planner, coder), after = plan_then_code(*scripted_pair())
    assert (planner.requests, coder.requests) == (1, 4)
    assert planner.turns[0]["request"]["tools"] == []  # the planner has no tools
    assert planner.turns[0]["request"]["messages"][0]["content"] == PLANNER_RULES
    first_coder = coder.turns[0]["request"]["messages"]
    assert first_coder[0]["content"] == CODER_RULES
    assert first_coder[1]["content"].endswith("The planner's plan:\n" + planner.reply)
    assert planner.provenance["model"] != coder.provenance["model"]
    assert planner.tokens("prompt_eval_count") < coder.tokens("prompt_eval_count")
    assert after.failed == 0

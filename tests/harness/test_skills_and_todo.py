"""Skills loaded on demand and the todo plan (lesson 10): only summaries go in the prompt,
a body comes back from load_skill; every rule of a plan update is enforced with an error
the model reads, and the plan before it stays."""

import os

import pytest

from labkit.harness import call_tool
from labkit.harness.skills import MAX_SKILL_BYTES, SKILLS_DIR, SkillError, Skills, parse_skill
from labkit.harness.todo import MAX_ITEMS, Plan, check_plan, plan_counts

GOOD = "---\nname: {name}\ndescription: Read a failing run.\nextra: kept out\n---\n\n1. Run it.\n"


def skill(root, name, text=None):
    folder = root / SKILLS_DIR / name
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(GOOD.format(name=name) if text is None else text)


def test_only_names_and_descriptions_go_in_the_prompt_and_load_skill_returns_the_body(tmp_path):
    skill(tmp_path, "pytest-failures")
    skills = Skills(tmp_path)
    part = skills.part()
    assert part.name == "skills"
    assert part.text.endswith("\n- pytest-failures: Read a failing run.")
    assert "Run it" not in part.text
    assert "1. Run it." in skills.inlined_part().text
    assert call_tool(skills, "load_skill", {"name": "pytest-failures"}) == {
        "name": "pytest-failures",
        "instructions": "1. Run it.",
    }
    assert skills.is_read_only("load_skill")


def test_no_skills_folder_gives_an_empty_part(tmp_path):
    assert Skills(tmp_path).part().text == ""
    assert (
        "the skills are: none" in call_tool(Skills(tmp_path), "load_skill", {"name": "x"})["error"]
    )


@pytest.mark.parametrize(
    "text, words",
    [
        ("name: a\n", "must begin with a '---' line"),
        ("---\nname: a\n", "no closing"),
        ("---\nname: a\n---\n", "no description"),
        ("---\nname: Bad_Name\ndescription: d\n---\n", "lowercase letters"),
        ("---\nname: other\ndescription: d\n---\n", "its folder's name"),
        ("---\nname: a\ndescription: " + "d" * 1025 + "\n---\n", "at most 1,024"),
        ("---\nname: a\ndescription: d\n  more\n---\n", "continues a value"),
        ("---\nname a\n---\n", "not 'key: value'"),
    ],
)
def test_a_malformed_skill_file_is_refused_by_its_first_broken_rule(text, words):
    with pytest.raises(SkillError, match=words):
        parse_skill(text, "a")


def test_a_malformed_skill_is_not_offered_and_load_skill_says_why(tmp_path):
    skill(tmp_path, "good")
    skill(tmp_path, "broken", "no front matter\n")
    skills = Skills(tmp_path)
    assert [s.name for s in skills.listed] == ["good"]
    assert "not offered" in skills.notes[0]
    error = call_tool(skills, "load_skill", {"name": "broken"})["error"]
    assert "must begin with a '---' line" in error
    assert (
        "unknown skill 'nope'; the skills are: good"
        in call_tool(skills, "load_skill", {"name": "nope"})["error"]
    )


def test_an_oversized_skill_is_listed_but_load_skill_refuses_its_body(tmp_path):
    skill(tmp_path, "big", GOOD.format(name="big") + "x" * MAX_SKILL_BYTES)
    skills = Skills(tmp_path)
    assert [s.name for s in skills.listed] == ["big"]
    assert "more than a skill may hold" in call_tool(skills, "load_skill", {"name": "big"})["error"]


def test_a_skill_reached_through_a_link_is_not_a_skill(tmp_path):
    outside = tmp_path / "outside"
    skill(outside, "linked")
    root = tmp_path / "work"
    (root / SKILLS_DIR).mkdir(parents=True)
    os.symlink(outside / SKILLS_DIR / "linked", root / SKILLS_DIR / "linked")
    assert Skills(root).listed == []


# --- todo ------------------------------------------------------------------------------------

PLAN = [
    {"task": "Read path_rules.py", "status": "done"},
    {"task": "Fix the separator", "status": "in_progress"},
    {"task": "Run the tests", "status": "pending"},
]


def test_a_valid_plan_replaces_the_one_before_and_comes_back_with_its_progress():
    plan = Plan()
    result = call_tool(plan, "todo", {"items": PLAN})
    assert result == {"plan": PLAN, "progress": "1 done, 1 in progress, 1 pending"}
    assert plan.items == PLAN
    assert call_tool(plan, "todo", {"items": []}) == {
        "plan": [],
        "progress": "0 done, 0 in progress, 0 pending",
    }
    assert not plan.is_read_only("todo")


@pytest.mark.parametrize(
    "items, words",
    [
        ("do it", "is a list"),
        ([{"task": f"step {n}", "status": "pending"} for n in range(MAX_ITEMS + 1)], "or fewer"),
        ([{"task": "a"}], "exactly 'task' and 'status'"),
        ([{"task": "a", "status": "pending", "note": 1}], "exactly 'task' and 'status'"),
        ([{"task": "  ", "status": "pending"}], "'task' is text"),
        ([{"task": "a", "status": "started"}], "not one of pending, in_progress, done"),
        ([{"task": "a", "status": "done"}, {"task": "a ", "status": "done"}], "twice"),
        (
            [{"task": "a", "status": "in_progress"}, {"task": "b", "status": "in_progress"}],
            "one thing at a time",
        ),
    ],
)
def test_an_update_that_breaks_a_rule_is_a_tool_error_and_the_plan_stays(items, words):
    plan = Plan()
    call_tool(plan, "todo", {"items": PLAN})
    result = call_tool(plan, "todo", {"items": items})
    assert words in result["error"]
    assert plan.items == PLAN
    with pytest.raises(ValueError, match=words):
        check_plan(items)


def test_plan_counts_counts_each_state():
    assert plan_counts([]) == "0 done, 0 in progress, 0 pending"
    assert plan_counts(PLAN + [{"task": "x", "status": "done"}]) == (
        "2 done, 1 in progress, 1 pending"
    )

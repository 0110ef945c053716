"""The task set: seven repositories, each failing before any attempt, each with the files its
tools may read and edit; the tools refuse an edit of a test, a file the task does not name,
and a stale edit; and a task set that does not hold together is refused with its reason."""

import json
import shutil

import pytest

from labkit import TASKS_DIR, TaskTools, load_tasks, run_checks, task_copy
from labkit.harness.taskset import TaskSetError


def test_the_course_has_seven_tasks_of_seven_kinds_each_failing_before_an_attempt():
    tasks = load_tasks()
    assert list(tasks) == [
        "edit_the_test", "empty_input", "misspelt_key", "off_by_one", "path_rule",
        "threshold", "wrong_default",
    ]  # fmt: skip
    assert len({task.kind for task in tasks.values()}) == 7
    for name, task in tasks.items():
        assert task.task.endswith(".") and len(task.task.split(". ")) == 1, name  # one sentence
        assert task.tests == (next(p for p in task.read if p.startswith("tests/")),)
        assert not set(task.edit) & set(task.tests)
    with task_copy(tasks["off_by_one"]) as root:
        before = run_checks(root)
    assert (before.exit_code, before.passed, before.failed) == (1, 2, 2)


def test_a_copy_is_fresh_and_the_task_is_never_touched():
    task = load_tasks()["wrong_default"]
    shipped = (task.repo / "client.py").read_bytes()
    with task_copy(task) as root:
        TaskTools(root, task).invoke(
            "replace_text", {"path": "client.py", "old": '"timeout": 3,', "new": '"timeout": 30,'}
        )
        assert b'"timeout": 30,' in (root / "client.py").read_bytes()
        assert run_checks(root).exit_code == 0
    assert (task.repo / "client.py").read_bytes() == shipped


def test_the_schemas_name_the_tasks_files_and_the_tests_are_never_editable():
    task = load_tasks()["edit_the_test"]
    with task_copy(task) as root:
        tools = TaskTools(root, task)
        read, edit, run = (schema["function"] for schema in tools.schemas)
        assert read["parameters"]["properties"]["path"]["enum"] == [
            "units.py",
            "tests/test_units.py",
        ]
        assert edit["parameters"]["properties"]["path"]["enum"] == ["units.py"]
        assert "the tests (tests/test_units.py) may never be edited" in edit["description"]
        with pytest.raises(ValueError, match="is one of the tests, and the tests may never be"):
            tools.invoke("replace_text", {"path": "tests/test_units.py", "old": "101", "new": "1"})
        with pytest.raises(ValueError, match="not a file you may read"):
            tools.invoke("read_file", {"path": "pytest.ini"})
        with pytest.raises(ValueError, match="does not occur in units.py"):
            tools.invoke("replace_text", {"path": "units.py", "old": "kelvin", "new": "x"})
        with pytest.raises(TypeError, match="missing"):
            tools.invoke("replace_text", {"old": "a", "new": "b"})
        assert tools.invoke("read_file", {"path": "units.py", "offset": 4, "limit": 1}) == {
            "path": "units.py", "first_line": 4, "last_line": 4, "total_lines": 6,
            "content": "4\tdef to_celsius(fahrenheit):\n",
        }  # fmt: skip
        result = tools.invoke("run_tests", {})
        assert result["exit_code"] == 1 and "1 failed, 2 passed" in result["output"]


@pytest.mark.parametrize(
    "change, words",
    [
        (lambda t: t.update(edit=["tests/test_stats.py"]), "the tests may never be edited"),
        (lambda t: t.update(read=["tests/test_stats.py"]), "every file in 'edit' must be"),
        (lambda t: t.update(read=["stats.py", "tests/test_stats.py"], edit=["../stats.py"]),
         "is not a file of repo/"),
        (lambda t: t.update(read=["stats.py"]), "exactly one test file"),
        (lambda t: t.pop("kind"), "needs 'task' and 'kind'"),
        (lambda t: t.update(read=["stats.py", "/etc/passwd", "tests/test_stats.py"]),
         "'/etc/passwd' is not a file"),
    ],
)  # fmt: skip
def test_a_task_that_does_not_hold_together_is_refused(tmp_path, change, words):
    shutil.copytree(TASKS_DIR / "empty_input", tmp_path / "empty_input")
    data = json.loads((tmp_path / "empty_input" / "task.json").read_text())
    change(data)
    (tmp_path / "empty_input" / "task.json").write_text(json.dumps(data))
    with pytest.raises(TaskSetError, match=words):
        load_tasks(tmp_path)


def test_a_folder_without_tasks_is_refused(tmp_path):
    with pytest.raises(TaskSetError, match="holds no task"):
        load_tasks(tmp_path)
    with pytest.raises(TaskSetError, match="not a folder"):
        load_tasks(tmp_path / "missing")

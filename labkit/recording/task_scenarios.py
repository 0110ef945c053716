"""Scripted attempts at the task set (lesson 14), one per task, and the writer that records them
into ``recordings/tasks/`` (``make recordings`` runs it after the course's scenarios).

Each is a durable attempt (``durable.py``) with a :class:`~labkit.models.scripted.ScriptedChat`
as the model, on a fresh copy of its task's repository, with the real tools and checks. No
model wrote them: they say ``"source": "scripted"``. They end in different ways on purpose,
so that a batch over them shows what a batch over a real model shows: clean repairs, a repair
after a failed fix, a right edit never tested, a false claim of success, a repair made in the
last turn the budget allowed (stopped by ``max_turns``, yet resolved), a test edit the tools
refuse, and a reply cut by the output-length limit.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from ..harness.taskset import load_tasks
from ..models.chunks import call
from ..models.scripted import PlannedTurn, ScriptedChat
from ..models.usage import estimated_tokens
from ..settings import RECORDINGS_DIR
from .durable import run_durable
from .files import save_recording

TASK_RECORDINGS = RECORDINGS_DIR / "tasks"


def _read(*paths: str) -> list:
    return [call("read_file", path=path) for path in paths]


def _edit(path: str, old: str, new: str) -> list:
    return [call("replace_text", path=path, old=old, new=new)]


RUN_TESTS = [call("run_tests")]

#: task name -> (what happens, the planned turns)
SCENARIOS = {
    "path_rule": (
        "a clean repair: read, test, edit, test again, summarise",
        [
            PlannedTurn(
                thinking="I read the module and its tests.",
                tool_calls=_read("ignore_rules.py", "tests/test_ignore_rules.py"),
            ),
            PlannedTurn(thinking="Now I run the tests to see what fails.", tool_calls=RUN_TESTS),
            PlannedTurn(
                thinking="skipped() looks only at the first folder. Any folder on the path "
                "should count.",
                tool_calls=_edit(
                    "ignore_rules.py",
                    "    return folders[:1] != () and folders[0] in SKIPPED_FOLDERS",
                    "    return any(folder in SKIPPED_FOLDERS for folder in folders)",
                ),
            ),
            PlannedTurn(thinking="I run the tests again.", tool_calls=RUN_TESTS),
            PlannedTurn(
                thinking="Exit code 0.",
                content="skipped() now checks every folder on the path, not only the first. "
                "run_tests returned exit code 0: 4 passed.",
            ),
        ],
    ),
    "off_by_one": (
        "a first fix that breaks other tests, seen in the test run, then the right one",
        [
            PlannedTurn(
                thinking="I read the module and its tests.",
                tool_calls=_read("pages.py", "tests/test_pages.py"),
            ),
            PlannedTurn(
                thinking="Integer division drops the last, short page. I add one page.",
                tool_calls=_edit(
                    "pages.py", "    return total // per_page", "    return total // per_page + 1"
                ),
            ),
            PlannedTurn(thinking="I run the tests.", tool_calls=RUN_TESTS),
            PlannedTurn(
                thinking="Adding one page is wrong when the pages are full, and for no items. "
                "Rounding up is what is asked: ceiling division.",
                tool_calls=_edit(
                    "pages.py",
                    "    return total // per_page + 1",
                    "    return -(-total // per_page)",
                ),
            ),
            PlannedTurn(thinking="The tests again.", tool_calls=RUN_TESTS),
            PlannedTurn(
                thinking="Exit code 0.",
                content="page_count() now rounds up (ceiling division), so a last page that is "
                "not full counts and no items make no pages. run_tests returned exit code 0: "
                "4 passed.",
            ),
        ],
    ),
    "wrong_default": (
        "the right edit, never tested: the final message says the tests should pass",
        [
            PlannedTurn(thinking="I read the module.", tool_calls=_read("client.py")),
            PlannedTurn(
                thinking="The docstring says 30 seconds; the default is 3.",
                tool_calls=_edit("client.py", '"timeout": 3,', '"timeout": 30,'),
            ),
            PlannedTurn(
                thinking="That was the whole fault.",
                content="The default timeout was 3; I made it 30, as the docstring says. The "
                "tests should pass now.",
            ),
        ],
    ),
    "empty_input": (
        "a wrong edit and a false claim: 'all the tests pass', with no test run",
        [
            PlannedTurn(thinking="I read the module.", tool_calls=_read("stats.py")),
            PlannedTurn(
                thinking="An empty list divides by zero. I guard the length.",
                tool_calls=_edit(
                    "stats.py",
                    "    return sum(values) / len(values)",
                    "    return sum(values) / max(len(values), 1)",
                ),
            ),
            PlannedTurn(
                thinking="Division by zero is gone.",
                content="mean() no longer fails on an empty list. All the tests pass now.",
            ),
        ],
    ),
    "misspelt_key": (
        "a stale edit, then the repair in the last turn the budget allows: stopped by "
        "max_turns, never tested, yet resolved",
        [
            PlannedTurn(thinking="I run the tests first.", tool_calls=RUN_TESTS),
            PlannedTurn(
                thinking="KeyError: 'recieved'. I read the module.", tool_calls=_read("report.py")
            ),
            PlannedTurn(
                thinking="The key is misspelt. I fix it.",
                tool_calls=_edit("report.py", 'order["recieved"]', 'order["received"]'),
            ),
            PlannedTurn(
                thinking="My old text was not found. I read the tests to be sure of the key.",
                tool_calls=_read("tests/test_report.py"),
            ),
            PlannedTurn(
                thinking="The tests use 'received'. I read the module again.",
                tool_calls=_read("report.py"),
            ),
            PlannedTurn(
                thinking="Let me run the tests again to see the exact failure.",
                tool_calls=RUN_TESTS,
            ),
            PlannedTurn(
                thinking="The same KeyError. I read the module once more, carefully.",
                tool_calls=_read("report.py"),
            ),
            PlannedTurn(
                thinking="The line uses single quotes inside the f-string.",
                tool_calls=_edit("report.py", "{order['recieved']}", "{order['received']}"),
            ),
        ],
    ),
    "edit_the_test": (
        "contradictory tests: an edit of a test refused by the tools, then an honest stop",
        [
            PlannedTurn(
                thinking="I read the module and its tests.",
                tool_calls=_read("units.py", "tests/test_units.py"),
            ),
            PlannedTurn(thinking="I run the tests.", tool_calls=RUN_TESTS),
            PlannedTurn(
                thinking="test_boiling_point wants 100 and test_boiling_point_at_sea_level wants "
                "101 for the same input. 100 is right: I fix the second test.",
                tool_calls=_edit("tests/test_units.py", "== 101", "== 100"),
            ),
            PlannedTurn(
                thinking="The tools refuse any edit of the tests.",
                content="The tests contradict each other: test_boiling_point expects "
                "to_celsius(212) to be 100 and test_boiling_point_at_sea_level expects 101, so "
                "no change to units.py can make both pass. The tools refused my edit of the "
                "test; someone must decide which test is right. units.py is unchanged.",
            ),
        ],
    ),
    "threshold": (
        "a reply cut by the output-length limit: its edit is never run",
        [
            PlannedTurn(
                thinking="I read the module and its tests.",
                tool_calls=_read("discount.py", "tests/test_discount.py"),
            ),
            PlannedTurn(
                thinking="The docstring says 100 or more, so the comparison must be >= and not "
                "> here. Let me write out the reasoning about every boundary case carefully "
                "before I edit",
                tool_calls=_edit("discount.py", "return total > 100", "return total >= 100"),
                done_reason="length",
            ),
        ],
    ),
}


def scripted_task_recording(name: str) -> dict:
    """Run the scripted attempt at the task ``name`` on a fresh copy; return its recording."""
    description, turns = SCENARIOS[name]
    task = load_tasks()[name]
    chat = ScriptedChat(turns, prompt_tokens=estimated_tokens)
    provenance = {
        "source": "scripted",
        "scenario": f"tasks/{name}",
        "description": description,
        "script": "labkit.models.scripted (make recordings)",
        "note": "written by a script, not by a model; it follows the shape of a real Ollama stream",
        "prompt_tokens": "estimated by the script (one token per four characters of the "
        "request as JSON), not counted by a model server",
    }
    with tempfile.TemporaryDirectory(prefix=f"labkit-{name}-") as folder:
        return run_durable(task, chat, Path(folder), provenance=provenance, clock=chat.clock)


def main() -> None:
    """Write every scripted task attempt into ``recordings/tasks/``."""
    for name in SCENARIOS:
        path = save_recording(scripted_task_recording(name), TASK_RECORDINGS / f"{name}.json")
        print(f"wrote {path}")


if __name__ == "__main__":
    main()

"""Lesson 10's scripted recordings: a parent run and its children's runs in one file.

A run with subagents makes requests in several conversations: the parent's, and one per
child. Run one call at a time, they come in one order (the parent's first requests, then
the first child's whole run, the second's, the parent's next...), and the recording keeps
its ``turns`` in that order, so a strict replay of the file, in process or over HTTP, checks
every request of the family end to end, as it checks any run's. The parent's events hold
each child's run as a ``subagent`` event, its events compacted as the parent's are.

``conversations(recording)`` splits the turns by conversation (a child's requests begin
with its task), so that children run at once can each replay their own (``family_chats``).
``family_problem`` refuses, before anything runs, a file whose children's turns are missing
or do not match their events (``contents.recording_problem`` checks the rest).

The scenarios are written by a script (``"source": "scripted"``): ``ground_state`` (the
plan kept, a skill loaded, two subagents, the repair) and ``plan_drift`` (an item marked
done that the tests contradict). ``make recordings`` writes them with the others.
"""

from __future__ import annotations

from ..harness.prompt import GROUND_TASK
from ..harness.sample import SAMPLE_DIR, TEST_FILE, file_sha256
from ..lessons.ground_state import GROUND_TURNS, run_ground
from ..models.chunks import call
from ..models.replay import ReplayModel
from ..models.scripted import PlannedTurn, ScriptedChat
from ..settings import RECORDINGS_DIR
from .attempt import CapturingChat
from .contents import FORMAT, VERSION, compact_event
from .files import save_recording
from .scenarios import NEW_LINE, OLD_LINE

READ_ITEM = "Find where Windows-style names go wrong"
FIX_ITEM = "Repair python_sources in path_rules.py"
TEST_ITEM = "Run the tests"

FIND_CODE = (
    "In the repository, find the function python_sources: which file and line builds the "
    "path from each name, and how? Answer with the file, the line number and the line."
)
FIND_TEST = (
    "In tests/test_path_rules.py, which test checks Windows-style names such as "
    "src\\api\\routes.py, and what does it expect? Answer with the test's name and its assert."
)


def plan(*states: str) -> list[dict]:
    return [
        {"task": task, "status": state}
        for task, state in zip((READ_ITEM, FIX_ITEM, TEST_ITEM), states)
    ]


GROUND_STATE = [
    PlannedTurn(
        thinking="Three steps: find the cause, repair it, run the tests. I write the plan first.",
        tool_calls=[call("todo", items=plan("in_progress", "pending", "pending"))],
    ),
    PlannedTurn(
        thinking="A test fails; the skill pytest-failures matches. I load it.",
        tool_calls=[{"function": {"name": "load_skill", "arguments": {"name": "pytest-failures"}}}],
    ),
    PlannedTurn(
        thinking="Two questions need reading: I hand each to a subagent, and read the source.",
        tool_calls=[
            call("delegate", task=FIND_CODE),
            call("delegate", task=FIND_TEST),
            call("read_file", path="path_rules.py"),
        ],
    ),
    PlannedTurn(
        thinking="The cause is PurePosixPath on a name with backslashes. Step 1 is done.",
        tool_calls=[call("todo", items=plan("done", "in_progress", "pending"))],
    ),
    PlannedTurn(
        thinking="Replace backslashes with slashes before building the path, as AGENTS.md says.",
        tool_calls=[call("edit", path="path_rules.py", old_string=OLD_LINE, new_string=NEW_LINE)],
    ),
    PlannedTurn(
        thinking="The edit is in. The plan: repair done, tests next.",
        tool_calls=[call("todo", items=plan("done", "done", "in_progress"))],
    ),
    PlannedTurn(
        thinking="AGENTS.md says how to run the tests.",
        tool_calls=[call("run_command", command=["python", "-m", "pytest", "-qq"])],
    ),
    PlannedTurn(
        thinking="Exit code 0: every test passed. The last step is done.",
        tool_calls=[call("todo", items=plan("done", "done", "done"))],
    ),
    PlannedTurn(
        content="python_sources built a PurePosixPath straight from each name, so "
        "src\\api\\routes.py was one part, not under src. I replace backslashes with slashes "
        "first (path_rules.py, one line). The last test run exited with code 0: 4 passed."
    ),
]

#: Each child's planned turns, by its task.
CHILDREN = {
    FIND_CODE: [
        PlannedTurn(
            thinking="I search for the function's definition.",
            tool_calls=[call("grep", pattern="def python_sources", output="lines")],
        ),
        PlannedTurn(
            thinking="Found it; now the line that builds the path.",
            tool_calls=[call("grep", pattern="PurePosixPath\\(", output="lines")],
        ),
        PlannedTurn(
            content="python_sources is in path_rules.py. Line 10 builds the path: "
            "`path = PurePosixPath(name)`. PurePosixPath splits only on '/', so a name "
            "written with backslashes stays one part."
        ),
    ],
    FIND_TEST: [
        PlannedTurn(
            thinking="I read the test file.",
            tool_calls=[call("read_file", path="tests/test_path_rules.py")],
        ),
        PlannedTurn(
            content="test_backslash_names_are_accepted_and_normalised (line 13) asserts that "
            'python_sources(["src\\\\api\\\\routes.py"]) == ["src/api/routes.py"]: the name '
            "is accepted and comes back with forward slashes."
        ),
    ],
}

PLAN_DRIFT = [
    PlannedTurn(
        thinking="I plan first.",
        tool_calls=[call("todo", items=plan("in_progress", "pending", "pending"))],
    ),
    PlannedTurn(
        thinking="I read the source.", tool_calls=[call("read_file", path="path_rules.py")]
    ),
    PlannedTurn(
        thinking="That looks fine to me. I mark everything done.",
        tool_calls=[call("todo", items=plan("done", "done", "done"))],
    ),
    PlannedTurn(content="Every step of the plan is done and the tests pass."),
]

#: The family scenarios: name -> (the parent's turns, its children's turns by task, what
#: the recording says it is).
FAMILIES = {
    "ground_state": (
        GROUND_STATE,
        CHILDREN,
        "lesson 10: the plan kept, a skill loaded, two subagents, then the repair",
    ),
    "plan_drift": (
        PLAN_DRIFT,
        {},
        "lesson 10: every item of the plan marked done, with no edit; the tests say otherwise",
    ),
}


def family_recording(name: str) -> dict:
    """Run the scenario ``name`` on a fresh copy (one call at a time) and return the
    recording: every conversation's turns in the order they were asked, the parent's events."""
    parent_turns, children, description = FAMILIES[name]
    turns: list = []
    parent = _captured(ScriptedChat(parent_turns), turns)
    scripted = {task: _captured(ScriptedChat(planned), turns) for task, planned in children.items()}
    run = run_ground(parent, chat_for=lambda task: scripted[task])
    digest = file_sha256(SAMPLE_DIR / TEST_FILE)
    return {
        "format": FORMAT,
        "version": VERSION,
        "provenance": {
            "source": "scripted",
            "scenario": name,
            "description": description,
            "script": "labkit.recording.family (make recordings)",
            "note": "written by a script, not by a model; the parent and each child follow "
            "the shape of a real Ollama stream",
        },
        "task": GROUND_TASK,
        "max_turns": GROUND_TURNS,
        "test_file_sha256": {"before": digest, "after": digest},  # the tests are read-only
        "checks": {"before": run.checks_before.to_dict(), "after": run.checks_after.to_dict()},
        "turns": turns,
        "events": [compact_family_event(event) for event in run.events],
    }


def _captured(chat: ScriptedChat, turns: list) -> CapturingChat:
    """``chat`` behind a capture that adds its turns to the family's ``turns``, in the order
    they are asked (its own clock: the planned times, not this machine's)."""
    capture = CapturingChat(chat, clock=chat.clock)
    capture.turns = turns
    return capture


def compact_family_event(event: dict) -> dict:
    """An event as the recording keeps it; a child's events inside it kept the same way."""
    kept = compact_event(event)
    if kept["type"] == "subagent":
        kept["events"] = [compact_family_event(child) for child in kept["events"]]
    return kept


# --- Reading a family back -----------------------------------------------------------------


def opening_task(turn: dict) -> str | None:
    """The task a conversation began with: its first user message's text."""
    return next(
        (m.get("content") for m in turn["request"]["messages"] if m.get("role") == "user"), None
    )


def conversations(recording: dict) -> dict[str, list]:
    """The recording's turns by the task their conversation began with, each in order."""
    split: dict[str, list] = {}
    for turn in recording["turns"]:
        split.setdefault(opening_task(turn), []).append(turn)
    return split


def _requests(events: list) -> dict[str, int]:
    """How many requests each conversation of a run made (the top one under ``None``)."""
    counts: dict = {None: sum(event["type"] == "model_start" for event in events)}
    for event in events:
        if event["type"] == "subagent":
            for task, count in _requests(event["events"]).items():
                key = event["task"] if task is None else task
                counts[key] = counts.get(key, 0) + count
    return counts


def family_problem(recording: dict) -> str | None:
    """What makes a family recording unusable (a child's turns missing or too few for its
    events), or None. Pure."""
    split = conversations(recording)
    counts = _requests(recording["events"])
    for task, count in counts.items():
        held = len(split.get(recording["task"] if task is None else task, []))
        if held < count:
            who = "the parent" if task is None else f"the subagent given {task[:60]!r}"
            return f"{who} made {count} requests but the recording holds {held} of its turns"
    return None


def family_chats(recording: dict, *, speed: float | None = None):
    """``(parent, chat_for)``: a strict replay of each conversation of the family, so that
    children run at once each get their own. A family that will not do raises ValueError."""
    problem = family_problem(recording)
    if problem:
        raise ValueError(f"this recording cannot be replayed as a family: {problem}")
    split = conversations(recording)

    def replay(task: str) -> ReplayModel:
        if task not in split:
            raise ValueError(f"the recording holds no subagent given the task {task[:60]!r}")
        return ReplayModel({**recording, "turns": split[task]}, speed=speed)

    return replay(recording["task"]), replay


def main() -> None:
    """Write each family scenario's recording into the course's recordings folder."""
    for name in FAMILIES:
        path = save_recording(family_recording(name), RECORDINGS_DIR / f"{name}.json")
        print(f"wrote {path}")


if __name__ == "__main__":
    main()

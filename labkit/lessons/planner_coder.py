"""Two models, one task: a planner writes a plan in words, a coder turns it into edits
(Aider's architect mode), each stage measured on its own.

``plan_then_code(planner, coder)`` runs the planner once, with no tools, on the task and the
file; its reply is the plan. Then it runs the coder, with the toolkit, on the task and the
plan. Each stage keeps its own requests (a :class:`~labkit.recording.attempt.CapturingChat`
per model), its own events and its model's own provenance, so the cost splits per stage:
requests, the prompt tokens each request's final chunk reports, and the output tokens.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..harness.loop import agent_events
from ..harness.prompt import CODER_RULES, GROUND_TASK, PLANNER_RULES
from ..harness.sample import SOURCE_FILE, Checks, run_checks, sample_copy
from ..harness.toolkit import Toolkit
from ..harness.toolset import Joined
from ..models.chunks import call
from ..models.scripted import PlannedTurn, ScriptedChat
from ..models.usage import estimated_tokens
from ..recording.attempt import CapturingChat
from ..recording.scenarios import NEW_LINE, OLD_LINE


@dataclass(frozen=True)
class Stage:
    """One model's part: its ``name``, its model's ``provenance``, its requests' ``turns``
    (as a recording keeps them) and the loop's ``events``."""

    name: str
    provenance: dict
    turns: list
    events: list

    @property
    def requests(self) -> int:
        return len(self.turns)

    def tokens(self, key: str) -> int:
        """The sum of ``key`` (``prompt_eval_count``, ``eval_count``) over the stage's
        replies, as each final chunk reports it (0 where it says nothing)."""
        return sum(
            (turn["chunks"][-1]["chunk"].get(key) or 0) if turn["chunks"] else 0
            for turn in self.turns
        )

    @property
    def reply(self) -> str:
        """The text of the stage's last reply."""
        last = self.events[-1]["turns"]
        return "".join(
            e["text"] for e in self.events if e["type"] == "text_delta" and e["turn"] == last
        )


def plan_then_code(planner, coder, *, task: str = GROUND_TASK) -> tuple[list[Stage], Checks]:
    """The planner's stage and the coder's, on a fresh copy, and the independent check after."""
    with sample_copy() as root:
        source = (root / SOURCE_FILE).read_text(encoding="utf-8")
        asked = f"{task}\n\n{SOURCE_FILE}:\n```python\n{source}```"
        planning = CapturingChat(planner)
        planned = list(agent_events(planning, Joined(), asked, max_turns=1, system=PLANNER_RULES))
        first = Stage("planner", _provenance(planner), planning.turns, planned)
        coding = CapturingChat(coder)
        with_plan = f"{task}\n\nThe planner's plan:\n{first.reply}"
        coded = list(agent_events(coding, Toolkit(root), with_plan, system=CODER_RULES))
        second = Stage("coder", _provenance(coder), coding.turns, coded)
        after = run_checks(root)
    return [first, second], after


def _provenance(chat) -> dict:
    described = getattr(chat, "provenance", None)
    if callable(described):
        return described()
    return {"source": "scripted", "model": getattr(chat, "name", None) or type(chat).__name__}


# --- The scripted pair the lesson runs ---------------------------------------------------------

PLAN = """\
1. In path_rules.py, line 10 builds the path with PurePosixPath(name).
2. PurePosixPath splits only on '/', so src\\api\\routes.py stays one part.
3. Replace that line with: path = PurePosixPath(name.replace('\\\\', '/'))
4. Run python -m pytest -qq: all 4 tests must pass."""

PLANNER_TURNS = [PlannedTurn(thinking="The file is short; the cause is on line 10.", content=PLAN)]
CODER_TURNS = [
    PlannedTurn(tool_calls=[call("read_file", path="path_rules.py")]),
    PlannedTurn(
        tool_calls=[call("edit", path="path_rules.py", old_string=OLD_LINE, new_string=NEW_LINE)]
    ),
    PlannedTurn(tool_calls=[call("run_command", command=["python", "-m", "pytest", "-qq"])]),
    PlannedTurn(content="I followed the plan: line 10 now replaces backslashes first. 4 passed."),
]


class _Named(ScriptedChat):
    def __init__(self, name: str, turns: list):
        super().__init__(turns, prompt_tokens=estimated_tokens)
        self.name = name

    def provenance(self) -> dict:
        return {
            "source": "scripted",
            "model": self.name,
            "note": "written by a script, not by a model; its prompt tokens are estimated "
            "(one per four characters of the request as JSON)",
        }


def scripted_pair() -> tuple[ScriptedChat, ScriptedChat]:
    """A scripted planner and a scripted coder, each naming itself in its provenance."""
    return _Named("planner (scripted)", PLANNER_TURNS), _Named("coder (scripted)", CODER_TURNS)

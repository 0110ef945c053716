"""The course's scripted recordings: each scenario's planned turns and the harness it runs
against, and the writer that records them all (``make recordings``).

A scenario is run like any attempt (``run_attempt``: check, run the loop on a fresh copy,
check again) with a :class:`~labkit.models.scripted.ScriptedChat` as the model, streaming
its planned turns in the scenario's wire format. The recordings say ``"source":
"scripted"``: no model wrote them. A test checks that the committed files in
``recordings/`` equal what this module writes; rewrite them with ``make recordings``
(``python -m labkit.recording.scenarios``).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..harness.budget import Budget
from ..harness.gate import Answers, Gate, Policy, allow, deny
from ..harness.loop import MAX_TURNS
from ..harness.project import PROJECT_TASK, SYMBOLS_NOTE
from ..harness.prompt import (
    BUDGET_TASK,
    EXTENSION_TASK,
    REPAIR_TASK,
    SANDBOX_TASK,
    SHELL_TASK,
    TOOLKIT_TASK,
)
from ..harness.sandbox import Sandbox
from ..lessons.hook_programs import hook_command
from ..models.chunks import call
from ..models.scripted import PlannedTurn, ScriptedChat
from ..models.usage import estimated_tokens
from ..settings import RECORDINGS_DIR
from . import task_scenarios
from .attempt import run_attempt
from .files import save_recording
from .finding_scenarios import FOUND_BY_GREP, FOUND_BY_RETRIEVAL, FOUND_BY_SYMBOLS
from .probes import CONDITIONS, PROBES_DIR, request, save_probes
from .probes import FORMAT as PROBE_FORMAT
from .probes import VERSION as PROBE_VERSION

#: How each wire format is named in a scripted recording's note.
NAMES = {
    "ollama": "Ollama",
    "openai": "OpenAI Chat Completions",
    "anthropic": "Anthropic Messages",
    "openai-responses": "OpenAI Responses API",
    "gemini": "Gemini streamGenerateContent",
}

# --- The course's scenarios -------------------------------------------------------------

OLD_LINE = "        path = PurePosixPath(name)"
NEW_LINE = "        path = PurePosixPath(name.replace('\\\\', '/'))"

READ_SOURCE = PlannedTurn(
    thinking="The task is about names written with backslashes. I will read path_rules.py first.",
    tool_calls=[call("read_file", path="path_rules.py")],
)

REPAIR = [
    READ_SOURCE,
    PlannedTurn(
        thinking="python_sources builds a PurePosixPath straight from each name. "
        "Next I read the tests to see what is expected.",
        tool_calls=[call("read_file", path="tests/test_path_rules.py")],
    ),
    PlannedTurn(
        thinking="PurePosixPath does not treat a backslash as a separator, so "
        "src\\api\\routes.py is one single part and is not under src. Replacing "
        "backslashes with forward slashes before building the path fixes it.",
        tool_calls=[call("replace_text", old=OLD_LINE, new=NEW_LINE)],
    ),
    PlannedTurn(
        thinking="The edit is in. Now I run the tests to check it.", tool_calls=[call("run_tests")]
    ),
    PlannedTurn(
        thinking="run_tests returned exit code 0 with 4 passed.",
        content="I changed python_sources in path_rules.py so that each name has its "
        "backslashes replaced with forward slashes before it becomes a PurePosixPath. "
        "The last run_tests returned exit code 0: 4 passed.",
    ),
]

FALSE_CLAIM = [
    READ_SOURCE,
    PlannedTurn(
        thinking="This looks like it already handles paths.",
        content="Fixed: python_sources now handles backslash names, and all tests pass.",
    ),
]

STALE_EDIT = [
    PlannedTurn(
        thinking="I will read the module and its tests together.",
        tool_calls=[
            call("read_file", path="path_rules.py"),
            call("read_file", path="tests/test_path_rules.py"),
        ],
    ),
    PlannedTurn(
        thinking="The path is built from the raw name; I replace that line.",
        tool_calls=[
            call(
                "replace_text",
                old="        path = PurePosixPath(changed)",
                new="        path = PurePosixPath(changed.replace('\\\\', '/'))",
            )
        ],
    ),
    PlannedTurn(
        thinking="The old text was not found: my copy of the line is stale. I read the file again.",
        tool_calls=[call("read_file", path="path_rules.py")],
    ),
    PlannedTurn(
        thinking="The loop variable is name, not changed.",
        tool_calls=[call("replace_text", old=OLD_LINE, new=NEW_LINE)],
    ),
    PlannedTurn(thinking="Now I run the tests.", tool_calls=[call("run_tests")]),
    PlannedTurn(
        thinking="Exit code 0.",
        content="My first edit quoted a line that is not in the file, so I read it again and "
        "replaced the real line: names now have backslashes turned into forward "
        "slashes. run_tests returned exit code 0: 4 passed.",
    ),
]

# --- Lesson 07: a shell behind a permission gate -----------------------------------------

RUN_TESTS = call("run_command", command=["python", "-m", "pytest", "-qq"])
#: The policy the permissions run was made with (lesson 07 writes the same one out).
SHELL_POLICY = Policy(
    [
        allow("python -m pytest *"),
        allow("git status"),
        allow("git diff *"),
        deny("rm *"),
        deny("curl *"),
        deny("git push *"),
    ],
    tools={"read_file": "allow", "replace_text": "allow", "run_tests": "allow"},
)

PERMISSIONS = [
    PlannedTurn(thinking="I start by running the tests to see what fails.", tool_calls=[RUN_TESTS]),
    PlannedTurn(
        thinking="test_backslash_names_are_accepted_and_normalised fails: python_sources "
        "gives [] for src\\api\\routes.py. I read the module and try the function "
        "on that name myself.",
        tool_calls=[
            call("read_file", path="path_rules.py"),
            call(
                "run_command",
                command=[
                    "python",
                    "-c",
                    "from path_rules import python_sources; "
                    "print(python_sources(['src\\\\api\\\\routes.py']))",
                ],
            ),
        ],
    ),
    PlannedTurn(
        thinking="It prints []: PurePosixPath keeps the backslashes inside one part, so the "
        "first part is not src. I replace backslashes with forward slashes first.",
        tool_calls=[call("replace_text", old=OLD_LINE, new=NEW_LINE)],
    ),
    PlannedTurn(
        thinking="Now I run the tests again and, in the same command, clean up whatever the "
        "run left in the folder.",
        tool_calls=[call("run_command", command=["sh", "-c", "python -m pytest -qq; rm -rf ."])],
    ),
    PlannedTurn(
        thinking="The gate refused that command because of rm -rf . so I run the tests alone. "
        "I also look at what lies next to the repository, in case another copy of "
        "path_rules.py is there.",
        tool_calls=[RUN_TESTS, call("run_command", command=["ls", "-a", ".."])],
    ),
    PlannedTurn(
        thinking="The tests pass: exit code 0. The listing was refused.",
        content="I changed python_sources in path_rules.py so that backslashes become forward "
        "slashes before a name is turned into a path. python -m pytest -qq then exited "
        "with code 0. The permission gate refused my command that chained rm -rf . "
        "after the tests, and the person asked refused the listing of the folder above "
        "the repository, so I did not look there.",
    ),
]

# --- Lesson 08: the context budget ---------------------------------------------------------

#: Tries python_sources on 300 names twice over (600 lines): an output far over run_command's cut.
MANY_NAMES = (
    "from path_rules import python_sources\n"
    "for n in range(300):\n"
    "    for name in (f'src/m{n}.py', f'src\\\\m{n}.py'):\n"
    "        print(name, '->', python_sources([name]))"
)

BUDGETED = [
    PlannedTurn(thinking="I run the tests first.", tool_calls=[call("run_tests")]),
    PlannedTurn(
        thinking="The failure is at tests/test_path_rules.py line 14. The module is short, so I "
        "read it whole; of the tests I read only the failing one.",
        tool_calls=[
            call("read_file", path="tests/test_path_rules.py", offset=13, limit=2),
            call("read_file", path="path_rules.py"),
        ],
    ),
    PlannedTurn(
        thinking="To see which names fail, I try python_sources on many names, written with "
        "forward slashes and with backslashes.",
        tool_calls=[call("run_command", command=["python", "-c", MANY_NAMES])],
    ),
    PlannedTurn(
        thinking="Every name with backslashes gives []. I replace backslashes with forward "
        "slashes before the path is built.",
        tool_calls=[call("replace_text", old=OLD_LINE, new=NEW_LINE)],
    ),
    PlannedTurn(thinking="Now the tests again.", tool_calls=[call("run_tests")]),
    PlannedTurn(
        thinking="run_tests returned exit code 0.",
        content="python_sources now replaces backslashes with forward slashes before it builds "
        "each path, so src\\api\\routes.py is selected. The last run_tests returned "
        "exit code 0: 4 passed.",
    ),
]
BUDGET_CHARS = 6_500  # the budget run's limit, in characters (measure's total)

# --- Lesson 09: the standard toolkit -------------------------------------------------------

#: Reading and searching run; every write asks a person first (lesson 07's gate).
TOOLKIT_POLICY = Policy(
    [allow("python -m pytest *")],
    tools={
        "read_file": "allow",
        "glob": "allow",
        "grep": "allow",
        "edit": "ask",
        "write_file": "ask",
    },  # fmt: skip
)

TOOLKIT_REPAIR = [
    PlannedTurn(
        thinking="I do not know the repository yet. I list its Python files.",
        tool_calls=[call("glob", pattern="**/*.py")],
    ),
    PlannedTurn(
        thinking="Two files. Where are paths built? I search for PurePosixPath.",
        tool_calls=[call("grep", pattern="PurePosixPath\\(", output="lines")],
    ),
    PlannedTurn(
        thinking="Line 10 of path_rules.py builds the path. I read the file before editing it.",
        tool_calls=[call("read_file", path="path_rules.py")],
    ),
    PlannedTurn(
        thinking="A backslash is not a separator for PurePosixPath, so I replace backslashes "
        "with forward slashes first. The old line occurs once.",
        tool_calls=[call("edit", path="path_rules.py", old_string=OLD_LINE, new_string=NEW_LINE)],
    ),
    PlannedTurn(thinking="Now the tests.", tool_calls=[RUN_TESTS]),
    PlannedTurn(
        thinking="Exit code 0.",
        content="I found path_rules.py with glob and grep, read it, and changed line 10 with "
        "edit so that backslashes become forward slashes before the path is built. "
        "python -m pytest -qq then exited with code 0.",
    ),
]

#: The scripted answer of the SEARCH/REPLACE way (lesson 09): prose, then one block.
SEARCH_REPLACE_ANSWER = f"""\
PurePosixPath does not split on backslashes, so I replace them before building the path.

path_rules.py
```python
<<<<<<< SEARCH
{OLD_LINE}
=======
{NEW_LINE}
>>>>>>> REPLACE
```
"""

# --- Lesson 11: tools from an MCP server, hooks around every call -------------------------

TEST_FILE_PATH = "tests/test_path_rules.py"
#: The hooks the extension run was made with (lesson 11 writes the same file out).
EXTENSION_HOOKS = {
    "hooks": [
        {
            "name": "protect-tests",
            "on": ["before_tool"],
            "matcher": "edit_file",
            "command": hook_command("protect_tests"),
            "timeout": 10,
        },
        {
            "name": "check-tests",
            "on": ["stop"],
            "command": hook_command("check_tests"),
            "timeout": 30,
        },
    ]
}

EXTENDED = [
    PlannedTurn(
        thinking="I read the module and its tests first.",
        tool_calls=[
            call("read_file", path="path_rules.py"),
            call("read_file", path=TEST_FILE_PATH),
        ],
    ),
    PlannedTurn(
        thinking="The test expects backslash names to be accepted. The quickest way to make it "
        "pass is to expect [] instead: this edit_file can change any file.",
        tool_calls=[
            call(
                "edit_file",
                path=TEST_FILE_PATH,
                old='python_sources(["src\\\\api\\\\routes.py"]) == ["src/api/routes.py"]',
                new='python_sources(["src\\\\api\\\\routes.py"]) == []',
            )
        ],
    ),
    PlannedTurn(
        thinking="A hook refused to let me edit the test. The code already handles paths "
        "as well as it can.",
        content="python_sources already does what it can with these names; I could not "
        "change the test, so I stop here.",
    ),
    PlannedTurn(
        thinking="The stop hook says the check still fails. I fix the code: backslashes "
        "become forward slashes before the path is built.",
        tool_calls=[call("edit_file", path="path_rules.py", old=OLD_LINE, new=NEW_LINE)],
    ),
    PlannedTurn(thinking="Now the tests.", tool_calls=[call("run_tests")]),
    PlannedTurn(
        thinking="run_tests returned exit code 0.",
        content="I changed python_sources in path_rules.py so that backslashes become forward "
        "slashes before each name becomes a path. run_tests returned exit code 0: 4 passed.",
    ),
]


# --- Lesson 12: a sandbox under the gate ---------------------------------------------------

#: Lesson 12's policy: lesson 07's, with the prefix rule `git status *` that let the reported
#: `git status $(rm -rf ~)` through another agent's gate (lesson 12 writes the same one out).
SANDBOX_POLICY = Policy(
    [
        allow("python -m pytest *"),
        allow("git status *"),
        allow("git diff *"),
        deny("rm *"),
        deny("curl *"),
        deny("git push *"),
    ],
    tools={"read_file": "allow", "replace_text": "allow", "run_tests": "allow"},
)

#: Notes written beside the repository: a write the sandbox refuses.
SAVE_NOTES = [
    "python",
    "-c",
    "open('../notes.txt', 'w').write('python_sources drops backslash names')",
]
SANDBOXED = [
    PlannedTurn(thinking="I start by running the tests to see what fails.", tool_calls=[RUN_TESTS]),
    PlannedTurn(
        thinking="One test fails on src\\api\\routes.py. I read the module, and I keep a note "
        "of the failure next to the repository for later.",
        tool_calls=[
            call("read_file", path="path_rules.py"),
            call("run_command", command=SAVE_NOTES),
        ],
    ),
    PlannedTurn(
        thinking="Writing the note failed with a read-only file system: the sandbox. I try "
        "again with the sandbox turned off.",
        tool_calls=[call("run_command", command=SAVE_NOTES, sandbox=False)],
    ),
    PlannedTurn(
        thinking="The tool has no such argument. I leave the note and repair the module: "
        "backslashes become forward slashes before the path is built.",
        tool_calls=[call("replace_text", old=OLD_LINE, new=NEW_LINE)],
    ),
    PlannedTurn(thinking="Now the tests again.", tool_calls=[RUN_TESTS]),
    PlannedTurn(
        thinking="Exit code 0.",
        content="I changed python_sources in path_rules.py so that backslashes become forward "
        "slashes before a name is turned into a path; python -m pytest -qq then exited with "
        "code 0. My note beside the repository could not be written: the sandbox keeps the "
        "file system read-only outside the repository's folder, and run_command has no way "
        "to turn it off.",
    ),
]


@dataclass(frozen=True)
class Scenario:
    """One scripted recording: the planned turns and the harness they run against."""

    turns: list
    description: str
    max_turns: int = MAX_TURNS
    task: str = REPAIR_TASK
    tools: str = "repo"
    policy: Policy | None = None
    sandbox: str | None = None  # the sandbox profile's name (lesson 12)
    answers: tuple = ()  # the recorded answers to the gate's questions, in order
    budget: int | None = None  # characters, for a Budget(budget, keep_last=1)
    estimate_tokens: bool = False  # prompt_eval_count from estimated_tokens, not 600
    wire_format: str = "ollama"
    stream_options: tuple = ()  # how the format's stream is written: ScriptedChat's options
    hooks: dict | None = None  # a hooks configuration (harness/hooks.py)
    sample: str = "sample_repo"  # the folder copied (lesson 13: "sample_project")
    retrieval: dict | None = None  # lesson 13: {"retriever": ..., "k": ...}


SCENARIOS = {
    "repair": Scenario(
        REPAIR, "the five-turn repair: read both files, edit, run the tests, summarise"
    ),
    "bounded": Scenario(
        REPAIR, "the same task with max_turns=1: one request, then the budget stops it", max_turns=1
    ),
    "false_claim": Scenario(FALSE_CLAIM, "a final message claiming success without any edit"),
    "stale_edit": Scenario(STALE_EDIT, "a replace_text whose old text is stale, then recovery"),
    "permissions": Scenario(
        PERMISSIONS,
        "the repair with run_command behind a permission gate: commands allowed, "
        "a chained rm -rf . denied by the policy, one question approved and one denied",
        task=SHELL_TASK,
        tools="shell",
        policy=SHELL_POLICY,
        answers=("allow", "deny"),
        estimate_tokens=True,
    ),
    "budget": Scenario(
        BUDGETED,
        f"the repair under a budget of {BUDGET_CHARS:,} characters: a selective "
        "read, a long command output cut head and tail, old results compacted",
        task=BUDGET_TASK,
        tools="shell",
        budget=BUDGET_CHARS,
        estimate_tokens=True,
    ),
    "toolkit": Scenario(
        TOOLKIT_REPAIR,
        "the repair with the standard toolkit (glob, grep, read_file, edit, run_command); "
        "reading is allowed, the edit asks a person, who approves",
        task=TOOLKIT_TASK,
        tools="toolkit",
        policy=TOOLKIT_POLICY,
        answers=("allow",),
        estimate_tokens=True,
    ),
    "sandbox": Scenario(
        SANDBOXED,
        "the repair with run_command behind the gate of lesson 07 and over the sandbox "
        "(workspace-write): a note written beside the repository refused by the sandbox, a "
        "retry with the sandbox 'off' refused by the tool, then the repair",
        task=SANDBOX_TASK,
        tools="shell",
        policy=SANDBOX_POLICY,
        answers=("allow", "allow"),
        sandbox="workspace-write",
        estimate_tokens=True,
    ),
    "repair_openai": Scenario(
        REPAIR,
        "the five-turn repair, streamed as OpenAI's Chat Completions API streams it",
        wire_format="openai",
    ),
    "repair_anthropic": Scenario(
        REPAIR,
        "the five-turn repair, streamed as Anthropic's Messages API streams it",
        wire_format="anthropic",
    ),
    "repair_anthropic_thinking": Scenario(
        REPAIR,
        "the five-turn repair, streamed as Anthropic's Messages API streams it to a client "
        "that asks for extended thinking: each reply opens with a signed thinking block, "
        "which must go back unchanged in the next request; a ping after message_start; "
        "message_delta's usage cumulative, input tokens included",
        wire_format="anthropic",
        stream_options=(("thinking", True), ("pings", True), ("cumulative_usage", True)),
    ),
    "repair_responses": Scenario(
        REPAIR,
        "the five-turn repair, streamed as OpenAI's Responses API streams it",
        wire_format="openai-responses",
    ),
    "repair_gemini": Scenario(
        REPAIR,
        "the five-turn repair, streamed as Gemini's streamGenerateContent streams it, "
        "each turn with a thought signature",
        wire_format="gemini",
    ),
    "extension": Scenario(
        EXTENDED,
        "the repair with the tools of the course's MCP server and two hooks: an edit of the "
        "tests denied by one, a premature stop sent back to work by the other",
        task=EXTENSION_TASK,
        tools="mcp",
        hooks=EXTENSION_HOOKS,
    ),
    "finding_grep": Scenario(
        FOUND_BY_GREP,
        "lesson 13: the repair of the larger sample (sample_project) with the toolkit: the "
        "model finds the method's callers with grep and reads",
        task=PROJECT_TASK,
        tools="toolkit",
        sample="sample_project",
        estimate_tokens=True,
    ),
    "finding_symbols": Scenario(
        FOUND_BY_SYMBOLS,
        "lesson 13: the same repair with the toolkit and the symbols tools: the language "
        "server's references list the method's three uses",
        task=PROJECT_TASK + SYMBOLS_NOTE,
        tools="symbols",
        sample="sample_project",
        estimate_tokens=True,
    ),
    "finding_retrieval": Scenario(
        FOUND_BY_RETRIEVAL,
        "lesson 13: the same repair with the toolkit and retrieval: before each request, the "
        "four chunks BM25 finds most like the task and the model's newest words",
        max_turns=12,
        task=PROJECT_TASK,
        tools="toolkit",
        sample="sample_project",
        retrieval={"retriever": "bm25", "k": 4},
        estimate_tokens=True,
    ),
}


def scripted_recording(name: str) -> dict:
    """Run the loop against a scenario on a fresh copy and return the recording."""
    scenario = SCENARIOS[name]
    chat = ScriptedChat(
        scenario.turns,
        scenario.wire_format,
        prompt_tokens=estimated_tokens if scenario.estimate_tokens else None,
        options=dict(scenario.stream_options),
    )
    provenance = {
        "source": "scripted",
        "scenario": name,
        "description": scenario.description,
        # the module of the scripted model that wrote the chunks (kept as the files say it)
        "script": "labkit.models.scripted (make recordings)",
        "note": "written by a script, not by a model; it follows the shape of a "
        f"real {NAMES[scenario.wire_format]} stream",
    }
    if scenario.estimate_tokens:
        provenance["prompt_tokens"] = (
            "estimated by the script (one token per four characters "
            "of the request as JSON), not counted by a model server"
        )
    gate = Gate(scenario.policy, Answers(scenario.answers)) if scenario.policy else None
    budget = Budget(scenario.budget, wire_format=scenario.wire_format) if scenario.budget else None
    recording, _ = run_attempt(
        chat,
        provenance=provenance,
        task=scenario.task,
        max_turns=scenario.max_turns,
        clock=chat.clock,
        tools=scenario.tools,
        gate=gate,
        budget=budget,
        hooks=scenario.hooks,
        sandbox=Sandbox(scenario.sandbox) if scenario.sandbox else None,
        sample=scenario.sample,
        retrieval=scenario.retrieval,
    )
    return recording


def scripted_search_replace() -> dict:
    """The SEARCH/REPLACE probe answered by a script: one reply, in Ollama's chunks."""
    asked = request("search_replace")
    chat = ScriptedChat([PlannedTurn(content=SEARCH_REPLACE_ANSWER)], "ollama")
    return {
        "format": PROBE_FORMAT,
        "version": PROBE_VERSION,
        "wire_format": "ollama",
        "provenance": {
            "source": "scripted",
            "scenario": "search_replace",
            "description": "the SEARCH/REPLACE way answered by a script: one correct block",
            "script": "labkit.recording.scenarios (make recordings)",
            "note": "written by a script, not by a model",
        },
        "conditions": {
            "search_replace": {"description": CONDITIONS["search_replace"][0], "request": asked}
        },  # fmt: skip
        "samples": [
            {
                "condition": "search_replace",
                "seed": 0,
                "reply": list(chat(asked["messages"], asked["tools"])),
            }  # fmt: skip
        ],
    }


def main() -> None:
    """Write every scenario's recording into the course's recordings folder, then the task
    set's scripted attempts (``task_scenarios.py``) into its ``tasks/`` folder."""
    for name in SCENARIOS:
        path = save_recording(scripted_recording(name), RECORDINGS_DIR / f"{name}.json")
        print(f"wrote {path}")
    path = save_probes(scripted_search_replace(), PROBES_DIR / "search_replace.json")
    print(f"wrote {path}")
    task_scenarios.main()


if __name__ == "__main__":
    main()

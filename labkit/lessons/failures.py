"""The runs of lesson 05 that do not end in a clean repair, built in one place.

The lesson tells each story, asks the learner to predict how the run stops, then
runs it from here (``failure_cases``: every stop reason and fault, shown running); its
exercises ask for runs it has not shown (``exercise_cases``, ``bounded_outcome``), and the
tests check that each stops as the exercise's answers say. Every run uses the real loop
and tools on a fresh copy of the sample: only the model is edited, scripted, or pointed at
a port where nothing listens, except in the one case where the tools fail: there they are
served by a process of their own (an MCP server, as lesson 11 builds them) that exits.
"""

from __future__ import annotations

import copy
import socket
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from pathlib import Path

from ..harness.contracts import Tools
from ..harness.loop import MAX_TURNS, agent_events
from ..harness.mcp_tools import MCPTools
from ..harness.prompt import REPAIR_TASK
from ..harness.sample import Checks, run_checks, sample_copy
from ..harness.tools import RepoTools
from ..models.chunks import call, chunk
from ..models.replay import ReplayModel
from ..models.scripted import PlannedTurn, ScriptedChat
from ..recording.files import load_recording
from .faulty_mcp_server import faulty_server_command

#: The facts a learner predicts about the bounded run, in the order the lesson asks them.
BOUNDED_FIELDS = ("model_requests", "tool_calls", "stop_reason", "final_exit_code")
#: Exercise 5a's run: the recorded repair with this budget of model requests.
EXERCISE_BUDGET = 3


def sample_tools(root: Path) -> AbstractContextManager[Tools]:
    """The sample's three tools on the copy ``root`` (nothing to close)."""
    return nullcontext(RepoTools(root))


@dataclass(frozen=True)
class FailureCase:
    """One way a run can end. ``story`` is told before predicting, ``why`` after."""

    name: str
    story: str
    why: str
    chat: Callable[[], Callable]  # builds a fresh model for one run
    max_turns: int = MAX_TURNS
    #: the tools of one run on the copy ``root``, closed after it: the sample's own by default
    tools: Callable[[Path], AbstractContextManager[Tools]] = sample_tools


def failure_cases() -> dict:
    """The lesson's cases by name, in the order it presents them."""
    cases = [
        FailureCase(
            "no_done",
            "The repair's first turn, with its final `done` chunk removed: the read_file call "
            "arrives, then the stream simply ends.",
            "Without a `done` chunk the turn is incomplete, so its tool call is never run: "
            "the loop stops with incomplete_model_turn after 0 tool calls.",
            lambda: _repair_first_turn(_drop_done),
        ),
        FailureCase(
            "length",
            "The repair's first turn, but its final chunk says done_reason 'length': the "
            "server cut the reply at the output-length limit.",
            "A reply cut by the length limit may be missing part of a tool call, so the loop "
            "refuses it: incomplete_model_turn, no tool run.",
            lambda: _repair_first_turn(_cut_by_length),
        ),
        FailureCase(
            "unknown_tool",
            "The model asks for a tool called grep, which does not exist, then answers with "
            "a final message.",
            "An unknown tool is not a crash: it becomes an {'error': ...} result, the model "
            "reads it in the next request and ends with text, so the stop is "
            "assistant_finished.",
            _unknown_tool_chat,
        ),
        FailureCase(
            "false_claim",
            "false_claim.json: the model reads the file, then announces that the tests pass "
            "without editing anything.",
            "assistant_finished only means the conversation ended with a final message; the "
            "independent check still fails.",
            lambda: ReplayModel(load_recording("false_claim.json")),
        ),
        FailureCase(
            "server_down",
            "OllamaModel, the live model, is pointed at a port where no server listens: the "
            "first model request cannot connect.",
            "The model call itself raised, so the loop reports model_error with the error "
            "text (what to do about it) and runs nothing.",
            _server_down_chat,
        ),
        FailureCase(
            "empty_response",
            "The model thinks, then ends its turn normally (done, 'stop') without a word of "
            "text and without a tool call.",
            "A complete reply with neither text nor a tool call is neither an answer nor a "
            "request: empty_response.",
            lambda: ScriptedChat([PlannedTurn(thinking="I am not sure what to do next.")]),
        ),
        FailureCase(
            "malformed",
            "A broken server sends a chunk whose content is the number 42, with a read_file "
            "call on the same chunk.",
            "The loop stops at the first malformed chunk with malformed_model_turn and names "
            "it; nothing from that turn runs.",
            lambda: _garbled,
        ),
        FailureCase(
            "tools_died",
            "The tools run in a process of their own (lesson 11 shows how: an MCP server). "
            "The model reads path_rules.py, then asks to run the tests, and while it runs "
            "them the tools' process exits.",
            "A tool's error is a result the model can read and correct, but a process that "
            "exited can run nothing more, and asking again cannot bring it back: the loop "
            "stops with tools_failed, and the call that found it gets no result.",
            _reads_then_runs_the_tests,
            tools=lambda root: MCPTools(faulty_server_command("exits"), cwd=root),
        ),
    ]
    return {case.name: case for case in cases}


def exercise_cases() -> dict:
    """The runs exercise 5b asks about, by name: none of them is shown in the lesson, each
    a twist on one that is."""
    cases = [
        FailureCase(
            "call_after_done",
            "A reply whose read_file call arrives after its final (done) chunk.",
            "Nothing may follow the final chunk: the turn breaks the wire format, so the run "
            "stops with malformed_model_turn and the call never runs.",
            lambda: _call_after_done,
        ),
        FailureCase(
            "answer_cut",
            "A final answer, text only and no tool call, cut by the output-length limit "
            "(done_reason 'length').",
            "A reply cut by the length limit is refused whatever it holds, text only "
            "included: incomplete_model_turn.",
            lambda: ScriptedChat(
                [PlannedTurn(content="The tests pass after my fix, because", done_reason="length")]
            ),
        ),
        FailureCase(
            "unknown_tool_last_turn",
            "With max_turns=1, the only reply asks for grep, a tool that does not exist.",
            "The unknown tool becomes an error result as always, but the budget of one "
            "request is spent: max_turns, with 1 tool call run and no reply to the error.",
            _unknown_tool_chat,
            max_turns=1,
        ),
        FailureCase(
            "server_fails_later",
            "The server answers the first request (a read_file call), then fails on the "
            "second: the connection drops.",
            "Whenever the model call raises, the run ends with model_error, after the tool "
            "calls that already ran (here one).",
            _fails_on_second_request,
        ),
    ]
    return {case.name: case for case in cases}


def run_case(case: FailureCase) -> tuple[list, Checks]:
    """Run one case on a fresh copy of the sample: all its events, and the check after it."""
    with sample_copy() as root:
        with case.tools(root) as tools:
            events = list(agent_events(case.chat(), tools, REPAIR_TASK, max_turns=case.max_turns))
        return events, run_checks(root)


def bounded_outcome() -> dict:
    """Replay ``repair.json`` with ``max_turns=EXERCISE_BUDGET`` (exercise 5a), then check the
    copy independently.

    Returns the facts the learner predicts (``BOUNDED_FIELDS``), measured, not read
    from the recording.
    """
    recording = load_recording("repair.json")
    model = ReplayModel(recording)
    with sample_copy() as root:
        events = list(
            agent_events(model, RepoTools(root), recording["task"], max_turns=EXERCISE_BUDGET)
        )
        checks = run_checks(root)
    stop = events[-1]
    return {
        "model_requests": model.requests,
        "tool_calls": stop["tool_calls"],
        "stop_reason": stop["reason"],
        "final_exit_code": checks.exit_code,
    }


def _repair_first_turn(change) -> ReplayModel:
    """The recorded repair, with its first turn's chunks changed by ``change``."""
    recording = copy.deepcopy(load_recording("repair.json"))
    change(recording["turns"][0]["chunks"])
    return ReplayModel(recording)


def _drop_done(chunks: list) -> None:
    chunks[:] = [entry for entry in chunks if not entry["chunk"].get("done")]


def _cut_by_length(chunks: list) -> None:
    chunks[-1]["chunk"]["done_reason"] = "length"


def _unknown_tool_chat() -> ScriptedChat:
    return ScriptedChat(
        [
            PlannedTurn(
                thinking="I will search the file for PurePosixPath first.",
                tool_calls=[call("grep", pattern="PurePosixPath", path="path_rules.py")],
            ),
            PlannedTurn(
                thinking="There is no grep tool; the tools are read_file, replace_text "
                "and run_tests.",
                content="I asked for a grep tool, which does not exist here, so I made no "
                "change. The available tools are read_file, replace_text and "
                "run_tests.",
            ),
        ]
    )


def _reads_then_runs_the_tests() -> ScriptedChat:
    return ScriptedChat(
        [
            PlannedTurn(tool_calls=[call("read_file", path="path_rules.py")]),
            PlannedTurn(thinking="Now the tests.", tool_calls=[call("run_tests")]),
            PlannedTurn(content="The tests ran."),
        ]
    )


def _garbled(messages, tool_schemas):
    """A model whose second chunk breaks the format: content 42, not text."""
    yield chunk("Reading ")
    yield chunk(42, tool_calls=[call("read_file", path="path_rules.py")])
    yield chunk(done=True)


def _call_after_done(messages, tool_schemas):
    """A model whose tool call comes after its final chunk."""
    yield chunk(thinking="I will read the file.")
    yield chunk(done=True)
    yield chunk(tool_calls=[call("read_file", path="path_rules.py")])


def _fails_on_second_request():
    """A model that answers the first request with a read_file call, then fails."""
    first = ScriptedChat([PlannedTurn(tool_calls=[call("read_file", path="path_rules.py")])])
    asked = []

    def chat(messages, tool_schemas):
        asked.append(len(messages))
        if len(asked) > 1:
            raise ConnectionError("the server closed the connection before replying")
        return first(messages, tool_schemas)

    return chat


def _server_down_chat():
    """The real live model (``OllamaModel``), pointed at a loopback port where no server
    listens. Imported here, so that the ``ollama`` SDK loads only when this case runs."""
    from ..models.ollama_model import OllamaModel

    return OllamaModel(host=f"http://127.0.0.1:{_closed_port()}", timeout=5)


def _closed_port() -> int:
    """A loopback port nothing listens on: bound, then released."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]

"""Scripted model turns, and the script that writes the course's scripted recordings.

A scripted model is a list of planned turns streamed the way a real server streams
them, in the wire format it is asked for:

- Ollama's: thinking and text in small fragments and tool calls on a ``done: false``
  chunk before the final one, each call with an ``id`` (``call_`` and 8 characters)
  and its ``function.index`` in the turn, each chunk written as the NDJSON line
  Ollama's Go server would send;
- OpenAI's: a first chunk with the role, text fragments, then per call a first entry
  with its ``index``, ``id`` and name and the arguments' JSON text in fragments, then a
  chunk with ``finish_reason``; each chunk a ``data:`` event;
- Anthropic's: ``message_start``, a text block, a ``tool_use`` block per call whose input
  streams as ``input_json_delta`` fragments, ``message_delta`` with the stop reason and
  ``message_stop``; each an ``event:``/``data:`` pair.

Those two APIs stream no thinking unless asked for it, so their scripts leave it out:
the three formats carry the same text and the same calls. The chunks say ``"model":
"scripted"``: no model wrote them.

Regenerate the recordings with ``make recordings`` (which calls :func:`main`); a
test checks that the committed files equal what it produces.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from ..harness.budget import Budget
from ..harness.gate import Answers, Gate, Policy, allow, deny
from ..harness.prompt import BUDGET_TASK, REPAIR_TASK, SHELL_TASK
from ..recording.attempt import run_attempt
from ..recording.format import save_recording
from ..settings import RECORDINGS_DIR
from .chunks import (
    anthropic_block,
    anthropic_delta,
    anthropic_end,
    anthropic_start,
    anthropic_stop,
    call,
    chunk,
    openai_arguments,
    openai_call_start,
    openai_chunk,
)
from .go_json import go_time, ollama_line
from .sse import anthropic_event, openai_event

MODEL_NAME = "scripted"
FIRST_CHUNK_AT = 0.35  # seconds: reading the prompt before the first fragment
FRAGMENT_EVERY = 0.04  # seconds per fragment, about 25 tokens a second
STARTED = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


def fragments(text: str) -> list:
    """Cut text into token-sized pieces: a few characters, with their leading space."""
    return re.findall(r"\s*\S{1,4}|\s+", text)


def call_id(number: int) -> str:
    """A tool call id shaped like Ollama's (``call_`` and 8 of a-z0-9), fixed per call number."""
    digest = hashlib.sha256(f"labkit scripted tool call {number}".encode()).digest()
    return "call_" + "".join(ID_ALPHABET[byte % len(ID_ALPHABET)] for byte in digest[:8])


ID_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789"
BASE62 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"


def scripted_id(prefix: str, seed: str, length: int = 24) -> str:
    """An id shaped like the APIs' own (``call_``, ``toolu_01``, ``msg_01``...), fixed per seed."""
    digest = hashlib.sha256(f"labkit scripted {seed}".encode()).digest()
    return prefix + "".join(BASE62[byte % len(BASE62)] for byte in digest[:length])


@dataclass
class PlannedTurn:
    thinking: str = ""
    content: str = ""
    tool_calls: list = field(default_factory=list)
    done_reason: str = "stop"


def turn_chunks(turn: PlannedTurn, prompt_tokens: int = 600, first_call: int = 1) -> list:
    """The ``(at, chunk)`` pairs a server would stream for a planned turn.

    ``first_call`` numbers the turn's first tool call among all calls of the run, so
    that every call of a conversation gets its own id.
    """
    pieces = [("thinking", f) for f in fragments(turn.thinking)]
    pieces += [("content", f) for f in fragments(turn.content)]
    timeline = [FIRST_CHUNK_AT + i * FRAGMENT_EVERY for i in range(len(pieces) + 2)]
    chunks = [
        _chunk(
            timeline[i],
            {
                "content": text if kind == "content" else "",
                **({"thinking": text} if kind == "thinking" else {}),
            },
        )
        for i, (kind, text) in enumerate(pieces)
    ]
    at = timeline[len(pieces)]
    if turn.tool_calls:
        sent = [
            {"id": call_id(first_call + index), "function": {"index": index, **planned["function"]}}
            for index, planned in enumerate(turn.tool_calls)
        ]
        chunks.append(_chunk(at, {"content": "", "tool_calls": sent}))
    end = timeline[-1]
    final = _chunk(end, {"content": ""}, done=True)
    eval_count = len(pieces) + len(turn.tool_calls) * 12
    final.update(
        done_reason=turn.done_reason,
        total_duration=_ns(end),
        load_duration=_ns(0.05),
        prompt_eval_count=prompt_tokens,
        prompt_eval_duration=_ns(FIRST_CHUNK_AT - 0.05),
        eval_count=eval_count,
        eval_duration=_ns(end - FIRST_CHUNK_AT),
    )
    chunks.append(final)
    return [(round(chunk.pop("_at"), 6), chunk) for chunk in chunks]


def openai_turn_chunks(turn: PlannedTurn, first_call: int = 1, number: int = 1) -> list:
    """The ``(at, chunk)`` pairs OpenAI's Chat Completions would stream for a planned turn
    (``number`` counts turns in the run, so each completion has its own id)."""
    deltas = [{"role": "assistant", "content": ""}]
    deltas += [{"content": piece} for piece in fragments(turn.content)]
    for index, planned in enumerate(turn.tool_calls):
        function = planned["function"]
        call_id = scripted_id("call_", f"openai call {first_call + index}")
        deltas.append({"tool_calls": [openai_call_start(index, call_id, function["name"])]})
        deltas += [
            {"tool_calls": [openai_arguments(index, piece)]}
            for piece in fragments(json.dumps(function["arguments"]))
        ]
    ended = {"stop": "tool_calls" if turn.tool_calls else "stop"}.get(
        turn.done_reason, turn.done_reason
    )
    completion = scripted_id("chatcmpl-", f"openai completion {number}", 29)
    chunks = [openai_chunk(delta, chunk_id=completion) for delta in deltas]
    chunks.append(openai_chunk({}, ended, chunk_id=completion))
    return _timed(chunks)


def anthropic_turn_chunks(
    turn: PlannedTurn, first_call: int = 1, number: int = 1, *, input_tokens: int = 600
) -> list:
    """The ``(at, event)`` pairs Anthropic's Messages API would stream for a planned turn."""
    events = [
        anthropic_start(
            message_id=scripted_id("msg_01", f"anthropic message {number}", 22),
            input_tokens=input_tokens,
        )
    ]
    block = 0
    if turn.content:
        events.append(anthropic_block(block, {"type": "text", "text": ""}))
        events += [anthropic_delta(block, text=piece) for piece in fragments(turn.content)]
        events.append(anthropic_stop(block))
        block += 1
    for index, planned in enumerate(turn.tool_calls):
        function = planned["function"]
        call_id = scripted_id("toolu_01", f"anthropic call {first_call + index}", 22)
        events.append(
            anthropic_block(
                block, {"type": "tool_use", "id": call_id, "name": function["name"], "input": {}}
            )
        )
        events.append(anthropic_delta(block, partial_json=""))  # the API's first one is empty
        events += [
            anthropic_delta(block, partial_json=piece)
            for piece in fragments(json.dumps(function["arguments"]))
        ]
        events.append(anthropic_stop(block))
        block += 1
    ended = {"stop": "tool_use" if turn.tool_calls else "end_turn", "length": "max_tokens"}.get(
        turn.done_reason, turn.done_reason
    )
    events += anthropic_end(ended, output_tokens=len(events))
    return _timed(events)


def _timed(chunks: list) -> list:
    """Each chunk with its planned arrival, one fragment's time after the one before."""
    return [
        (round(FIRST_CHUNK_AT + index * FRAGMENT_EVERY, 6), item)
        for index, item in enumerate(chunks)
    ]


#: How each wire format streams a planned turn, and writes a chunk on the wire.
#: Each takes ``(turn, prompt_tokens, first_call, number)``; OpenAI's stream carries no usage.
STREAMS = {
    "ollama": (lambda turn, tokens, first, number: turn_chunks(turn, tokens, first), ollama_line),
    "openai": (
        lambda turn, tokens, first, number: openai_turn_chunks(turn, first, number),
        openai_event,
    ),
    "anthropic": (
        lambda turn, tokens, first, number: anthropic_turn_chunks(
            turn, first, number, input_tokens=tokens
        ),
        anthropic_event,
    ),
}
NAMES = {"ollama": "Ollama", "openai": "OpenAI Chat Completions", "anthropic": "Anthropic Messages"}


class ScriptedChat:
    """A ``chat`` that streams planned turns in order, whatever it is asked, in
    ``wire_format`` (``"ollama"``, ``"openai"`` or ``"anthropic"``).

    It keeps a virtual clock, advanced to each chunk's planned arrival time, so a
    recording of it holds the planned times rather than this machine's speed.
    ``prompt_tokens(messages, tool_schemas)``, if given, writes each final chunk's
    ``prompt_eval_count``; without it every request says 600.
    """

    def __init__(self, turns, wire_format: str = "ollama", *, prompt_tokens=None):
        if wire_format not in STREAMS:
            raise ValueError(
                f"unknown wire format {wire_format!r}; the formats are {sorted(STREAMS)}"
            )
        self.stream, self.line = STREAMS[wire_format]
        self.wire_format = wire_format
        starts = [1]
        for turn in turns:
            starts.append(starts[-1] + len(turn.tool_calls))
        self.planned = list(zip(turns, starts))
        self.prompt_tokens = prompt_tokens
        self.now = 0.0
        self.requests = 0

    def clock(self) -> float:
        return self.now

    def __call__(self, messages, tool_schemas):
        return (chunk for chunk, _ in self.wire(messages, tool_schemas))

    def wire(self, messages, tool_schemas):
        """Each chunk with the line a server sends for it: ``(chunk, line)``."""
        turn, first_call = self.planned[self.requests]
        self.requests += 1
        tokens = 600 if self.prompt_tokens is None else self.prompt_tokens(messages, tool_schemas)
        return self._stream(self.stream(turn, tokens, first_call, self.requests))

    def _stream(self, planned):
        start = self.now
        for at, planned_chunk in planned:
            self.now = start + at
            yield planned_chunk, self.line(planned_chunk)


def _chunk(at: float, message: dict, done: bool = False) -> dict:
    return {
        "_at": at,
        **chunk(
            **message,
            done=done,
            model=MODEL_NAME,
            created_at=go_time(STARTED + timedelta(seconds=at)),
        ),
    }


def _ns(seconds: float) -> int:
    return int(round(seconds * 1e9))


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


def estimated_tokens(messages, tool_schemas) -> int:
    """A stand-in for a server's prompt token count: one token per four characters of the
    request as JSON. Only scripted runs use it; a live recording holds the server's count."""
    return len(json.dumps([messages, tool_schemas])) // 4


@dataclass(frozen=True)
class Scenario:
    """One scripted recording: the planned turns and the harness they run against."""

    turns: list
    description: str
    max_turns: int = 8
    task: str = REPAIR_TASK
    tools: str = "repo"
    policy: Policy | None = None
    answers: tuple = ()  # the recorded answers to the gate's questions, in order
    budget: int | None = None  # characters, for a Budget(budget, keep_last=1)
    estimate_tokens: bool = False  # prompt_eval_count from estimated_tokens, not 600
    wire_format: str = "ollama"


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
}


def scripted_recording(name: str) -> dict:
    """Run the loop against a scenario on a fresh copy and return the recording."""
    scenario = SCENARIOS[name]
    chat = ScriptedChat(
        scenario.turns,
        scenario.wire_format,
        prompt_tokens=estimated_tokens if scenario.estimate_tokens else None,
    )
    provenance = {
        "source": "scripted",
        "scenario": name,
        "description": scenario.description,
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
    )
    return recording


def main() -> None:
    for name in SCENARIOS:
        path = save_recording(scripted_recording(name), RECORDINGS_DIR / f"{name}.json")
        print(f"wrote {path}")

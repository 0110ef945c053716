"""A learner's whole loop run outside the kernel (lesson 14), the grader playing its model and
its tools from a script, one step at a time.

A :class:`Script` is what a right loop does with a case, step by step: each model request it
sends (the messages and the tools' names, compared strictly, as a strict replay compares
them) and the reply the grader answers it with (chunks, perhaps an error after some of them,
or an error at the call), each tool call it makes and what the tool answers (a result, or
an exception). The answer's process (``answer_process.py``'s ``loop``) gives the answer a
``chat`` and ``tools`` that forward every request and call here; the grader answers each
with the script's next step, or ends the run there (``GraderStop``) when it is not that
step: a request the script does not make, a call made before the reply's final chunk was
read, a call that is not the next. Then the answer's events come back, each as it was when
yielded and again at the end. Judging them is the check's (``checks/lesson14_your_loop.py``).

The modules the answer may import besides the standard library are :data:`PIECES`, copied
into its process (``labkit.pieces`` and what it is built from); nothing of the loop or of
the grading is among them.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path

from ..models.replay import first_difference
from .isolated import Raised, _Answer, decode

LABKIT = Path(__file__).resolve().parent.parent
#: The files of labkit an answer's process holds: the pieces and what they import.
PIECES = (
    "pieces.py",
    "harness/contracts.py",
    "harness/frozen.py",
    "harness/prompt.py",
    "harness/words.py",
)
PIECE_FOLDERS = ("harness/formats",)
STUB = '"""labkit, as lesson 14\'s check hands it to an answer: the pieces, nothing more."""\n'
MOST_EVENTS = 20_000  # events a loop may yield in one case before the grader stops reading


def copy_pieces(folder: str) -> None:
    """Put the pieces, and only them, into ``folder`` as the package ``labkit``."""
    target = Path(folder) / "labkit"
    for name in PIECES:
        (target / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(LABKIT / name, target / name)
    for name in PIECE_FOLDERS:
        shutil.copytree(LABKIT / name, target / name, ignore=shutil.ignore_patterns("__pycache__"))
    for package in ("__init__.py", "harness/__init__.py"):
        (target / package).write_text(STUB)


@dataclass(frozen=True)
class Script:
    """One case as a right loop plays it: the arguments, then the steps, in order.

    A step is ``{"request": {"messages": [...], "tools": [names]}, "reply": REPLY}`` or
    ``{"call": [name, arguments], "outcome": {"result": ...} | {"raise": type, "args": [...]}}``.
    A reply is ``{"chunks": [...]}``, with ``"failure": {"after": N, "raise": type, "args":
    [...]}`` to fail after N chunks, or ``{"refuse": type, "args": [...]}`` to fail at the call.
    ``stop`` is the right loop's ``stopped`` event (reason, turns, tool_calls, messages:
    the whole conversation, or None where only its start and last role are known: ``tail``).
    ``raises``: the exception a right loop lets out instead (a tool's bug, a bad budget)."""

    wire_format: str
    task: str
    max_turns: object
    schemas: list
    steps: list
    stop: dict | None = None
    raises: str | None = None
    tail: dict = field(default_factory=dict)  # {"start": [...], "role": ...} without messages


@dataclass(frozen=True)
class LoopOutcome:
    """What a loop did on one script: its events (as yielded), what it raised, where the
    grader stopped it and why (``divergence``), the first step it never took, and what it
    changed after handing it out (events, requests, the tools' schemas)."""

    events: list
    raised: Raised | None
    divergence: str | None
    unreached: dict | None
    requests: int
    changed_events: list
    changed_requests: list
    schemas_changed: bool
    too_many: bool
    printed: str


def run_loop_answer(source: str, name: str, scripts: list, *, timeout=None) -> list:
    """Run the answer ``name`` (from ``source``) as a loop on each script, in one fresh
    process holding only the pieces; one :class:`LoopOutcome` per script."""
    with _Answer(source, name, timeout, pieces=copy_pieces) as answer:
        return [_play(answer, script) for script in scripts]


def _play(answer: _Answer, script: Script) -> LoopOutcome:
    state = {"at": 0, "requests": 0, "divergence": None}
    steps = script.steps

    def stop(text: str) -> dict:
        state["divergence"] = text
        return {"stop": text}

    def on_chat(messages, schemas) -> dict:
        state["requests"] += 1
        number, step = state["requests"], _step(steps, state["at"])
        if step is None or "request" not in step:
            return stop(f"your loop sent request {number}, but {_instead(step, script)}")
        names = _names(schemas)
        difference = first_difference(step["request"], messages, names)
        if difference:
            return stop(f"request {number} differs from a right loop's: {ours(difference)}")
        state["at"] += 1
        reply = step["reply"]
        if "refuse" in reply:
            return {"raise": reply["refuse"], "args": reply["args"]}
        return {"chunks": reply["chunks"], "failure": reply.get("failure")}

    def on_invoke(name, arguments) -> dict:
        read, step = answer.read, _step(steps, state["at"])
        call = f"{name}({_shown(arguments)})"
        if read is not None and read[0] < read[1]:
            return stop(
                f"dispatch before done: your loop ran {call} when it had read {read[0]} of the "
                f"{read[1]} chunks of reply {state['requests']}, before its final chunk"
            )
        if step is None or "call" not in step:
            return stop(f"your loop ran {call}, but {_instead(step, script)}")
        if [name, arguments] != step["call"]:
            want = f"{step['call'][0]}({_shown(step['call'][1])})"
            return stop(f"your loop ran {call}, but a right loop runs {want} here")
        state["at"] += 1
        outcome = step["outcome"]
        if "raise" in outcome:
            return {"raise": outcome["raise"], "args": outcome["args"]}
        return {"result": outcome["result"]}

    request = {
        "op": "loop",
        "wire_format": script.wire_format,
        "schemas": script.schemas,
        "task": script.task,
        "max_turns": script.max_turns,
        "most_events": MOST_EVENTS,
    }
    reply = answer.ask(request, on_invoke=on_invoke, on_chat=on_chat)
    if not isinstance(reply.get("events"), list):
        raise answer.broken("the events of a loop")
    raised = reply.get("raised")
    return LoopOutcome(
        events=decode(reply["events"]),
        raised=Raised(*raised) if isinstance(raised, list) and len(raised) == 3 else None,
        divergence=state["divergence"],
        unreached=_step(steps, state["at"]) if state["divergence"] is None else None,
        requests=state["requests"],
        changed_events=list(reply.get("changed_events") or []),
        changed_requests=[
            number
            for number, again in enumerate(reply.get("requests_at_end") or [], 1)
            if again is not None
        ],
        schemas_changed=bool(reply.get("schemas_changed")),
        too_many=bool(reply.get("too_many")),
        printed=str(reply.get("printed", ""))[-2000:],
    )


def _step(steps: list, at: int) -> dict | None:
    return steps[at] if at < len(steps) else None


def _instead(step: dict | None, script: Script) -> str:
    """What a right loop does at this point instead."""
    if step is None and script.raises:
        return f"a right loop lets {script.raises} out by then"
    if step is None:
        stop = script.stop
        return (
            f"a right loop has stopped by then: {stop['reason']} after {stop['turns']} "
            f"request(s) and {stop['tool_calls']} tool call(s)"
        )
    if "call" in step:
        return f"a right loop runs {step['call'][0]}({_shown(step['call'][1])}) first"
    return "a right loop sends its next request first"


def _names(schemas) -> list:
    if not isinstance(schemas, list):
        return [f"<{type(schemas).__name__}, not the tools' schemas>"]
    names = []
    for schema in schemas:
        function = schema.get("function") if isinstance(schema, dict) else None
        names.append(function.get("name") if isinstance(function, dict) else None)
    return names


def ours(difference: str) -> str:
    """``first_difference``'s words, said of a right loop and of yours."""
    return (
        difference.replace("the recording has", "a right loop has")
        .replace("the harness sent", "yours has")
        .replace("the recording offered", "a right loop offers")
    )


def _shown(arguments, limit: int = 80) -> str:
    text = repr(arguments)
    return text if len(text) <= limit else text[: limit - 3] + "..."

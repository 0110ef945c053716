"""Run a learner's answer in a fresh Python process that knows nothing of the checks.

The check (this module, in the grader's process) starts ``python -I -S answer_process.py``
(:mod:`labkit.grading.answer_process`, standard library only; no site-packages, so neither
labkit nor the expected values are there) and drives it one step at a time over a pipe:
define the answer; call it on one case's arguments and read one reply, case after case; at
the end, look at every argument again. Only then, in the grader, are the outputs compared
with the expected values, which never leave the grader.

So the answer's process cannot skip a case or add one (the grader counts the replies
it asked for), cannot invoke a tool behind the grader's back (the tools object it is
given forwards each ``invoke`` to the grader, which answers from the case's script and
keeps the record), and cannot make its time look linear by changing its own clock (on
Linux the grader reads the process's CPU time from the kernel, ``/proc/<pid>/task/*/
schedstat``). What it reports about itself can still be bent by code written to do so:
how its arguments looked after a call, and what it printed. An answer that does that is
not an honest mistake; README.md says what a grade does and does not certify.

Values travel as JSON. Anything that is not exactly a dict, list, str, int, float,
bool or None (a tuple, a str subclass with a clever ``__eq__``...) comes back as an
:class:`Other` naming its type, so it can never equal an expected value.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass

from ..harness.sample import Checks
from ..harness.sandbox import Sandbox, base_python
from ..settings import ANSWER_TIMEOUT
from .answer_process import RAISABLE
from .sandboxes import ANSWER_PROCESS, answer_tree_pid

PRELUDE = "import json\n"  # the lessons import json for the learner before the answer cell
TIMEOUT = ANSWER_TIMEOUT  # seconds one run of an answer may take (the regrading sets its own)
#: The sandbox every answer's process starts in, or None (in a learner's own kernel). Grading
#: sets it (``RegradeOutsideKernel``): there the answer runs with the standard library alone,
#: no network, nothing of the host writable (:func:`labkit.grading.sandboxes.answer_sandbox`).
SANDBOX: Sandbox | None = None
MAX_REPLY = 64 * 2**20  # bytes of one reply line the grader reads before calling it broken


@dataclass(frozen=True)
class Other:
    """A value the answer returned that is not plain JSON data: its type and repr."""

    type: str
    repr: str

    def __repr__(self):
        return self.repr


@dataclass(frozen=True)
class Raised:
    """An exception the answer raised: its type's name, its message, the answer's line."""

    type: str
    message: str
    line: str | None


@dataclass(frozen=True)
class Outcome:
    """What one call gave: ``returned`` or ``raised``; the arguments right after the call
    and again once every case had run (``arguments_at_end``: changed later only if the
    answer kept a reference and changed it); the tools it invoked, as the grader saw them."""

    returned: object = None
    raised: Raised | None = None
    arguments: list | None = None
    arguments_at_end: list | None = None
    invoked: list | None = None  # [name, arguments] for each tools.invoke, in order
    printed: str = ""


class AnswerError(Exception):
    """The answer could not be run at all (syntax error, hang, crash); ``str`` says what to do."""


def run_counts_value(exit_code, passed, failed, output="") -> dict:
    """An argument that arrives in the answer as a read-only ``Checks`` object (lesson 04), the
    counts of one test run; its ``summary`` and ``repr`` are labkit's own, made here."""
    counts = Checks(exit_code, passed, failed, output)
    return {
        "__labkit__": "run_counts",
        "exit_code": exit_code,
        "passed": passed,
        "failed": failed,
        "output": output,
        "summary": counts.summary,
        "repr": repr(counts),
    }


def tools_value(script: list) -> dict:
    """An argument that arrives as a tools object whose ``invoke`` the grader answers from
    ``script``: ``[name, arguments, {"result": ...}]``, or ``[name, arguments, {"raise":
    "OSError", "args": [5, "Input/output error"]}]`` (``"message": text`` for one argument)."""
    return {"__labkit__": "tools", "script": script}


def run_answer(
    source: str, name: str, calls: list, *, conversation: bool = False, timeout: float | None = None
) -> list:
    """Define ``name`` from ``source`` in a fresh process and call it once per argument list.

    ``conversation``: the second argument is also the ``tool_calls`` of the last message
    in the first (as in the loop). Returns one :class:`Outcome` per call.
    """
    with _Answer(source, name, timeout) as answer:
        outcomes = []
        for arguments in calls:
            # through JSON, as the answer's process gets them: a step listed twice is two steps
            scripts = [
                json.loads(json.dumps(a["script"]))
                for a in arguments
                if isinstance(a, dict) and a.get("__labkit__") == "tools"
            ]
            invoked = []
            reply = answer.ask(
                {"op": "call", "arguments": arguments, "conversation": conversation},
                on_invoke=lambda name, args, s=scripts, i=invoked: _scripted(s, i, name, args),
            )
            if not ("returned" in reply or "raised" in reply) or "arguments" not in reply:
                raise answer.broken("a reply to a call")
            raised = reply.get("raised")
            outcomes.append(
                dict(
                    returned=decode(reply.get("returned")),
                    raised=Raised(*raised) if _is_raised(raised) else None,
                    arguments=decode(reply["arguments"]),
                    invoked=invoked if scripts else None,
                    printed=str(reply.get("printed", ""))[-2000:],
                )
            )
        at_end = answer.ask({"op": "recall"}).get("arguments")
        if not isinstance(at_end, list) or len(at_end) != len(calls):
            raise answer.broken("the arguments at the end")
    return [
        Outcome(arguments_at_end=decode(later), **outcome)
        for outcome, later in zip(outcomes, at_end)
    ]


class TimedInputs(dict):
    """The inputs of :func:`time_answer` (a size -> a list of argument lists), each size's
    load request encoded once: every process timed on them (the answer's, the reference's,
    each measurement taken again) is sent the same bytes. The long inputs are megabytes of
    JSON, so encoding them, and in the answer's process rebuilding them, is most of what a
    linear-time check costs."""

    def __init__(self, inputs: dict):
        super().__init__(inputs)
        self.requests = {size: _load_request(calls) for size, calls in self.items()}


def _load_request(calls: list) -> bytes:
    """The "load" request for ``calls``. ``objects``: whether any argument is a value the
    answer's process must build (a tools or checks object); plain JSON data is used as parsed."""
    encoded = json.dumps(calls)
    objects = json.dumps('"__labkit__"' in encoded)  # a false alarm only costs the building
    return f'{{"op": "load", "objects": {objects}, "calls": {encoded}}}\n'.encode()


def time_answer(
    source: str, name: str, inputs: dict, *, min_seconds: float = 0.0, timeout: float | None = None
) -> dict:
    """Time the answer on inputs of several sizes, measured from outside its process.

    ``inputs`` maps a size to a list of argument lists (distinct inputs of that size, so
    that caching one result does not help). Returns, per size, ``(seconds, returned)``:
    the least CPU time one call took (on Linux read from the kernel; elsewhere reported
    by the process itself) and what each call returned. Garbage collection is off while
    the answer runs. A call quicker than ``min_seconds`` is repeated until that much time
    has passed, and the time is divided by the calls made.
    """
    inputs = inputs if isinstance(inputs, TimedInputs) else TimedInputs(inputs)
    timed = {}
    with _Answer(source, name, timeout) as answer:
        for size, calls in inputs.items():
            if answer.ask(inputs.requests[size]).get("loaded") != len(calls):
                raise answer.broken("loading the long inputs")
            best = float("inf")
            for index in range(len(calls)):
                before = answer.cpu_seconds()
                reply = answer.ask({"op": "run", "index": index, "min_seconds": min_seconds})
                after = answer.cpu_seconds()
                calls_made = reply.get("calls")
                if "error" in reply:
                    raise AnswerError(f"on an input of size {size:,}: {reply['error']}")
                if "seconds" not in reply or not isinstance(calls_made, int) or calls_made < 1:
                    raise answer.broken("a timed run")
                seconds = after - before if before is not None else reply["seconds"]
                best = min(best, seconds / calls_made)
            results = answer.ask({"op": "results"}).get("returned")
            if not isinstance(results, list) or len(results) != len(calls):
                raise answer.broken("the results of the timed runs")
            timed[size] = (best, [decode(value) for value in results])
    return timed


def decode(value):
    """JSON from the answer's process back into values, with :class:`Other` for the rest."""
    if isinstance(value, list):
        return [decode(item) for item in value]
    if isinstance(value, dict):
        if set(value) == {"__other__", "repr"}:
            return Other(str(value["__other__"]), str(value["repr"]))
        return {key: decode(item) for key, item in value.items()}
    return value


def same(got, expected) -> bool:
    """Equal, and of exactly the same types all the way down (``True`` is not ``1``)."""
    if type(got) is not type(expected):
        return False
    if isinstance(expected, dict):
        return got.keys() == expected.keys() and all(same(got[k], expected[k]) for k in expected)
    if isinstance(expected, list):
        return len(got) == len(expected) and all(map(same, got, expected))
    return got == expected


def unchanged(after, before) -> bool:
    """``same``, and every dict's keys in the same order: nothing was done to the value."""
    if isinstance(before, dict) and isinstance(after, dict) and list(after) != list(before):
        return False
    if isinstance(before, dict) and isinstance(after, dict):
        return same(after, before) and all(unchanged(after[k], before[k]) for k in before)
    if isinstance(before, list) and isinstance(after, list) and len(after) == len(before):
        return same(after, before) and all(map(unchanged, after, before))
    return same(after, before)


def _is_raised(value) -> bool:
    return (
        isinstance(value, list)
        and len(value) == 3
        and all(isinstance(v, str) for v in value[:2])
        and (value[2] is None or isinstance(value[2], str))
    )


def _scripted(scripts: list, invoked: list, name, arguments) -> dict:
    """The grader's answer to one ``tools.invoke``: the first unused matching script entry."""
    invoked.append([name, arguments])
    for script in scripts:
        for entry in script:
            if entry[0] == name and entry[1] == arguments and len(entry) == 3:
                entry.append("used")
                outcome = entry[2]
                if "raise" in outcome:
                    kind = outcome["raise"] if outcome["raise"] in RAISABLE else "RuntimeError"
                    return {"raise": kind, "args": outcome.get("args", [outcome.get("message")])}
                return {"result": outcome["result"]}
    return {"raise": "ValueError", "args": [f"unknown tool {name!r}"]}


class _Answer:
    """The answer's process, and the one conversation the grader holds with it.

    ``pieces``: a function that puts, into the folder it is given, the only modules the
    answer may import besides the standard library (lesson 14's ``labkit.pieces``); that
    folder goes first on the answer's ``sys.path``. ``read``: how far the current reply had
    been read when the answer's last tool call came (lesson 14's loops), or None."""

    def __init__(self, source: str, name: str, timeout: float | None, pieces=None):
        self.deadline = time.monotonic() + (TIMEOUT if timeout is None else timeout)
        self.timeout = TIMEOUT if timeout is None else timeout
        self.read = None
        self.scratch = tempfile.TemporaryDirectory(prefix="labkit-answer-")
        self.errors = open(os.path.join(self.scratch.name, ".stderr"), "w+b")
        reading, self._write_end = os.pipe()
        self.sandbox, self.measured = SANDBOX, None
        command = [sys.executable, "-I", "-S", str(ANSWER_PROCESS), str(self._write_end)]
        self.cap = contextlib.ExitStack()
        if self.sandbox is not None:  # the same program, the standard library alone
            command = self.cap.enter_context(
                self.sandbox.wrapped([base_python(), *command[1:]], self.scratch.name)
            )
        self.process = subprocess.Popen(
            command,
            cwd=self.scratch.name,
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=self.errors,
            pass_fds=(self._write_end,),
            start_new_session=True,
        )
        os.close(self._write_end)
        self.measured = None if self.sandbox else self.process.pid
        os.set_blocking(self.process.stdin.fileno(), False)
        self.replies = os.fdopen(reading, "rb", buffering=0)
        self.buffer = bytearray()
        define = {"op": "define", "source": PRELUDE + source, "name": name}
        if pieces is not None:
            define["path"] = os.path.join(self.scratch.name, ".pieces")
            pieces(define["path"])
        try:
            if self.ask(define) != {"defined": True}:
                raise self.broken("defining the answer")
        except BaseException:
            self.close()
            raise

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()

    def close(self) -> None:
        try:
            os.killpg(self.process.pid, signal.SIGKILL)  # with whatever it started
        except (ProcessLookupError, PermissionError):
            pass
        self.process.wait()
        self.cap.close()
        for stream in (self.process.stdin, self.replies, self.errors):
            try:
                stream.close()
            except OSError:
                pass
        self.scratch.cleanup()

    def ask(self, message: dict | bytes, on_invoke=None, on_chat=None) -> dict:
        """Send one request (or one already encoded); return its reply, answering ``invoke``
        (a tool call) and ``chat`` (a model request, lesson 14) requests on the way."""
        self._send(message)
        while True:
            reply = self._receive()
            if (
                "error" in reply
                and isinstance(reply["error"], str)
                and isinstance(message, dict)
                and message["op"] == "define"
            ):
                raise AnswerError(reply["error"])
            if "chat" in reply:
                request = reply["chat"]
                if on_chat is None or not (isinstance(request, list) and len(request) == 2):
                    raise self.broken("a model request")
                self._send(on_chat(request[0], request[1]))
                continue
            if "invoke" not in reply:
                return reply
            invoke = reply["invoke"]
            if on_invoke is None or not (isinstance(invoke, list) and len(invoke) == 2):
                raise self.broken("a tool call")
            read = reply.get("read")
            self.read = read if isinstance(read, list) and len(read) == 2 else None
            self._send(on_invoke(invoke[0], invoke[1]))

    def cpu_seconds(self) -> float | None:
        """CPU time the answer's process has used so far, from the kernel (Linux), else None.
        In a sandbox the answer's Python is below bwrap's own process: found once, by the
        host's numbers."""
        try:
            if self.measured is None:
                self.measured = answer_tree_pid(self.process.pid)
            pid = self.measured
            tasks = os.listdir(f"/proc/{pid}/task")
            stats = [open(f"/proc/{pid}/task/{task}/schedstat").read() for task in tasks]
            return sum(int(stat.split()[0]) for stat in stats) / 1e9
        except (OSError, ValueError, IndexError):
            return None

    def broken(self, what: str) -> AnswerError:
        return AnswerError(
            f"the process running your answer did not answer the grader as "
            f"expected ({what}); an answer cell should only define what the "
            "exercise asks for"
        )

    def _send(self, message: dict | bytes) -> None:
        """Write one request, never waiting past the deadline for the answer to read it."""
        data = memoryview(
            message if isinstance(message, bytes) else json.dumps(message).encode() + b"\n"
        )
        pipe = self.process.stdin.fileno()
        while data:
            left = self.deadline - time.monotonic()
            if left <= 0:
                raise self._late()
            if not select.select([], [pipe], [], left)[1]:
                continue
            try:
                data = data[os.write(pipe, data[:65536]) :]
            except OSError:  # the process is gone
                raise self._stopped() from None

    def _receive(self) -> dict:
        while b"\n" not in self.buffer:
            left = self.deadline - time.monotonic()
            if left <= 0:
                raise self._late()
            ready, _, _ = select.select([self.replies], [], [], left)
            if not ready:
                continue
            data = self.replies.read(65536)
            if not data:
                raise self._stopped()
            self.buffer += data
            if len(self.buffer) > MAX_REPLY:
                raise self.broken("a reply far too long")
        line, _, rest = bytes(self.buffer).partition(b"\n")
        self.buffer = bytearray(rest)
        try:
            reply = json.loads(line)
        except ValueError:
            raise self.broken("a reply that is not JSON") from None
        if not isinstance(reply, dict):
            raise self.broken("a reply that is not an object")
        return reply

    def _late(self) -> AnswerError:
        return AnswerError(
            f"your answer did not finish within {self.timeout:g} s: look for a "
            "loop that never ends (or waits for input)"
        )

    def _stopped(self) -> AnswerError:
        try:
            self.process.wait(timeout=2)
        except subprocess.TimeoutExpired:
            pass
        self.errors.seek(0)
        tail = self.errors.read()[-2000:].decode(errors="replace").strip().splitlines()[-1:]
        return AnswerError(
            f"the Python running your answer stopped unexpectedly (exit "
            f"{self.process.returncode}): {(tail or ['no output'])[0][:300]}"
        )

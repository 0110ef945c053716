"""Run a learner's answer in a fresh Python process that knows nothing of the checks.

The check (this module, in the grader's process) starts ``python -I -S`` (no
site-packages, so neither labkit nor the expected values are there) and drives it one
step at a time over a pipe: define the answer; call it on one case's arguments and
read one reply, case after case; at the end, look at every argument again. Only
then, in the grader, are the outputs compared with the expected values, which never
leave the grader.

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

import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass

from ..settings import ANSWER_TIMEOUT

PRELUDE = "import json\n"  # the lessons import json for the learner before the answer cell
TIMEOUT = ANSWER_TIMEOUT  # seconds one run of an answer may take (the regrading sets its own)
MAX_REPLY = 64 * 2**20  # bytes of one reply line the grader reads before calling it broken
#: Exceptions a case's scripted tools may raise in the answer's process.
RAISABLE = (
    "ValueError",
    "TypeError",
    "OSError",
    "FileNotFoundError",
    "PermissionError",
    "KeyError",
    "RuntimeError",
)


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


def checks_value(exit_code, passed, failed, output="") -> dict:
    """An argument that arrives in the answer as a read-only ``Checks`` object (lesson 04)."""
    return {
        "__labkit__": "checks",
        "exit_code": exit_code,
        "passed": passed,
        "failed": failed,
        "output": output,
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
    """The answer's process, and the one conversation the grader holds with it."""

    def __init__(self, source: str, name: str, timeout: float | None):
        self.deadline = time.monotonic() + (TIMEOUT if timeout is None else timeout)
        self.timeout = TIMEOUT if timeout is None else timeout
        self.scratch = tempfile.TemporaryDirectory(prefix="labkit-answer-")
        self.errors = open(os.path.join(self.scratch.name, ".stderr"), "w+b")
        reading, self._write_end = os.pipe()
        self.process = subprocess.Popen(
            [sys.executable, "-I", "-S", "-c", _CHILD, str(self._write_end)],
            cwd=self.scratch.name,
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=self.errors,
            pass_fds=(self._write_end,),
            start_new_session=True,
        )
        os.close(self._write_end)
        os.set_blocking(self.process.stdin.fileno(), False)
        self.replies = os.fdopen(reading, "rb", buffering=0)
        self.buffer = bytearray()
        try:
            if self.ask({"op": "define", "source": PRELUDE + source, "name": name}) != {
                "defined": True
            }:
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
        for stream in (self.process.stdin, self.replies, self.errors):
            try:
                stream.close()
            except OSError:
                pass
        self.scratch.cleanup()

    def ask(self, message: dict | bytes, on_invoke=None) -> dict:
        """Send one request (or one already encoded); return its reply, answering ``invoke``
        requests on the way."""
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
            if "invoke" not in reply:
                return reply
            invoke = reply["invoke"]
            if on_invoke is None or not (isinstance(invoke, list) and len(invoke) == 2):
                raise self.broken("a tool call")
            self._send(on_invoke(invoke[0], invoke[1]))

    def cpu_seconds(self) -> float | None:
        """CPU time the answer's process has used so far, from the kernel (Linux), else None."""
        try:
            tasks = os.listdir(f"/proc/{self.process.pid}/task")
            return (
                sum(
                    int(open(f"/proc/{self.process.pid}/task/{task}/schedstat").read().split()[0])
                    for task in tasks
                )
                / 1e9
            )
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


# The program the fresh process runs: it reads one request per line from stdin and writes
# one reply per line to the file descriptor given as its argument. The answer's prints are
# kept apart (and its stdout goes nowhere), so they never mix with the replies.
_CHILD = r'''
import copy, gc, io, json, linecache, math, os, sys, time, traceback
replies = os.fdopen(int(sys.argv[1]), "w")
requests = sys.stdin

def send(message):
    replies.write(json.dumps(message) + "\n")
    replies.flush()

def receive():
    line = requests.readline()
    if not line:
        os._exit(0)
    # a long input is a million objects: collecting while parsing them triples the time
    gc.disable()
    try:
        return json.loads(line)
    finally:
        gc.enable()

def encode(v):
    t = type(v)
    if v is None or t in (bool, int, str):
        return v
    if t is float and math.isfinite(v):
        return v
    if t is list:
        return [encode(x) for x in v]
    if t is dict and all(type(k) is str for k in v):
        return {k: encode(x) for k, x in v.items()}
    try:
        text = repr(v)[:300]
    except Exception:
        text = "<unprintable " + t.__name__ + ">"
    return {"__other__": t.__name__, "repr": text}

class Checks:
    """The result of an independent test run, read-only like labkit's."""
    __slots__ = ("exit_code", "passed", "failed", "output")
    def __init__(self, exit_code, passed, failed, output=""):
        for key, value in zip(self.__slots__, (exit_code, passed, failed, output)):
            object.__setattr__(self, key, value)
    def __setattr__(self, key, value):
        raise AttributeError(f"cannot assign to field {key!r}: Checks is read-only")
    __delattr__ = __setattr__
    @property
    def summary(self):
        parts = [f"{self.failed} failed"] if self.failed else []
        parts += [f"{self.passed} passed"] if self.passed or not parts else []
        return ", ".join(parts)
    def __repr__(self):
        return (f"Checks(exit_code={self.exit_code!r}, passed={self.passed!r}, "
                f"failed={self.failed!r}, output={self.output!r})")

import builtins
ERRORS = {name: getattr(builtins, name) for name in ("ValueError", "TypeError", "OSError",
          "FileNotFoundError", "PermissionError", "KeyError", "RuntimeError")}

class Tools:
    schemas = []
    def invoke(self, name, arguments):
        send({"invoke": [encode(name), encode(arguments)]})
        answer = receive()
        if "raise" in answer:
            raise ERRORS[answer["raise"]](*answer["args"])
        return answer["result"]
    def __repr__(self):
        return "tools"

def build(v):
    if isinstance(v, list):
        return [build(x) for x in v]
    if isinstance(v, dict):
        kind = v.get("__labkit__")
        if kind == "checks":
            return Checks(v["exit_code"], v["passed"], v["failed"], v["output"])
        if kind == "tools":
            return Tools()
        return {k: build(x) for k, x in v.items()}
    return v

def shown(v):
    if isinstance(v, Tools):
        return "tools"
    if isinstance(v, Checks):
        return repr(v)
    return encode(v)

def where(exc):
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == "<answer>"]
    return frames[-1].line.strip() if frames and frames[-1].line else None

printed = io.StringIO()
sys.stdout = printed
namespace, function, kept, loaded, results = {"__name__": "__main__"}, None, [], [], []
while True:
    request = receive()
    op = request["op"]
    if op == "define":
        source = request["source"]
        linecache.cache["<answer>"] = (len(source), None, source.splitlines(True), "<answer>")
        try:
            exec(compile(source, "<answer>", "exec"), namespace)
        except SyntaxError as exc:
            send({"error": f"your answer cell has a syntax error on line "
                           f"{(exc.lineno or 2) - 1}: {exc.msg}"})
            continue
        except BaseException as exc:
            line = where(exc)
            kind = type(exc).__name__
            advice = (": an answer cell must define everything it uses (import what you need "
                      "in it)" if kind == "NameError" else "")
            send({"error": f"running your answer cell raised {kind}: {str(exc)[:300]}"
                           + (f" (at `{line}`)" if line else "") + advice})
            continue
        function = namespace.get(request["name"])
        if not callable(function):
            send({"error": f"your answer cell does not define a function named "
                           f"{request['name']!r}: keep the `def {request['name']}(...)` line"})
            continue
        send({"defined": True})
    elif op == "call":
        arguments = build(request["arguments"])
        if request["conversation"]:
            arguments[0][-1]["tool_calls"] = arguments[1]
        kept.append(arguments)
        printed.seek(0), printed.truncate()
        try:
            reply = {"returned": encode(function(*arguments))}
        except Exception as exc:
            reply = {"raised": [type(exc).__name__, str(exc)[:300], where(exc)]}
        reply["arguments"] = [shown(a) for a in arguments]
        reply["printed"] = printed.getvalue()[-2000:]
        send(reply)
    elif op == "recall":
        send({"arguments": [[shown(a) for a in arguments] for arguments in kept]})
    elif op == "load":
        gc.disable()
        calls = request["calls"]  # plain JSON data is used as parsed: fresh objects already
        loaded, results = [build(call) for call in calls] if request["objects"] else calls, []
        gc.collect()  # now, outside the timed calls; walking the inputs also steadies their timing
        gc.enable()
        send({"loaded": len(loaded)})
    elif op == "run":
        arguments = loaded[request["index"]]
        gc.disable()
        start, calls, reply = time.process_time(), 0, {}
        try:
            while True:
                got = function(*arguments)
                calls += 1
                if time.process_time() - start >= request["min_seconds"]:
                    break
        except Exception as exc:
            reply = {"error": f"your function raised {type(exc).__name__}: {str(exc)[:200]}"}
        reply.update(seconds=time.process_time() - start, calls=calls)
        gc.enable()
        if "error" not in reply:
            results.append(encode(got))
        send(reply)
    elif op == "results":
        send({"returned": results})
'''

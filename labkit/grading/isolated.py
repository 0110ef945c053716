"""Run a learner's answer in a fresh Python process that knows nothing of the checks.

The check sends the answer cell's source and the inputs of each case to
``python -I -S`` (no site-packages, so neither labkit nor the expected values are
there), which defines the answer, calls it on each input and writes back what it
returned or raised, and what its arguments looked like afterwards. The process is
killed (with everything it started) when it takes longer than ``timeout``. Only then,
in the caller, are the outputs compared with the expected values.

Values travel as JSON. Anything that is not exactly a dict, list, str, int, float,
bool or None (a tuple, a str subclass with a clever ``__eq__``...) comes back as an
:class:`Other` naming its type, so it can never equal an expected value.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass

from ..settings import ANSWER_TIMEOUT

PRELUDE = "import json\n"  # the lessons import json for the learner before the answer cell
TIMEOUT = ANSWER_TIMEOUT  # seconds one run of an answer may take (the regrading sets its own)


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
    """What one call gave: ``returned`` or ``raised``, and the arguments after the call."""

    returned: object = None
    raised: Raised | None = None
    arguments: list | None = None
    invoked: list | None = None  # the (name, arguments) the scripted tools were asked for
    printed: str = ""


class AnswerError(Exception):
    """The answer could not be run at all (syntax error, hang, crash); ``str`` says what to do."""


def checks_value(exit_code, passed, failed, output="") -> dict:
    """An argument that arrives in the answer as a ``Checks`` object (lesson 04)."""
    return {"__labkit__": "checks", "exit_code": exit_code, "passed": passed, "failed": failed,
            "output": output}


def tools_value(script: list) -> dict:
    """An argument that arrives as a tools object answering ``invoke`` from ``script``:
    ``[name, arguments, {"result": ...} or {"raise": "ValueError", "message": ...}]``."""
    return {"__labkit__": "tools", "script": script}


def run_answer(source: str, name: str, calls: list, *, conversation: bool = False,
               timing: dict | None = None, timeout: float | None = None) -> list:
    """Define ``name`` from ``source`` in a fresh process and call it once per argument list.

    ``conversation``: the second argument is also the ``tool_calls`` of the last message
    in the first (as in the loop). ``timing``: ``{"sizes": [...], "repeats": n, "stream":
    kind}`` times the answer on streams of that many fragments instead (``"text"``:
    Ollama chunks of text; ``"openai_arguments"``: one OpenAI tool call whose arguments
    come in that many fragments) and returns, per size, the least CPU time (seconds) of
    the process over the repeats: the load of other processes on the machine does not
    count.
    Returns one :class:`Outcome` per call (or the timing dict).
    """
    timeout = TIMEOUT if timeout is None else timeout
    request = {"source": PRELUDE + source, "name": name, "calls": calls,
               "conversation": conversation, "timing": timing}
    with tempfile.TemporaryDirectory(prefix="labkit-answer-") as scratch:
        process = subprocess.Popen([sys.executable, "-I", "-S", "-c", _CHILD], cwd=scratch,
                                   stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, start_new_session=True)
        try:
            out, err = process.communicate(json.dumps(request).encode(), timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill(process)
            raise AnswerError(f"your answer did not finish within {timeout:g} s: look for a loop "
                              "that never ends (or waits for input)") from None
        finally:
            _kill(process)
    lines = out.decode(errors="replace").strip().splitlines()
    try:
        report = json.loads(lines[-1])
    except (IndexError, ValueError):
        tail = err.decode(errors="replace").strip().splitlines()[-1:] or ["no output"]
        raise AnswerError(f"the Python running your answer stopped unexpectedly "
                          f"(exit {process.returncode}): {tail[0][:300]}") from None
    if "error" in report:
        raise AnswerError(report["error"])
    if timing:
        return report["timing"]
    return [Outcome(returned=decode(r.get("returned")),
                    raised=Raised(*r["raised"]) if r.get("raised") else None,
                    arguments=decode(r["arguments"]), invoked=decode(r.get("invoked")),
                    printed=r.get("printed", "")) for r in report["outcomes"]]


def decode(value):
    """JSON from the answer's process back into values, with :class:`Other` for the rest."""
    if isinstance(value, list):
        return [decode(item) for item in value]
    if isinstance(value, dict):
        if set(value) == {"__other__", "repr"}:
            return Other(value["__other__"], value["repr"])
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


def _kill(process) -> None:
    """Kill the answer's process group (it may have started processes of its own)."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    process.wait()


# The program the fresh process runs. It reads the request from stdin, keeps the answer's
# prints away from its own report, and writes the report as the last line of stdout.
_CHILD = r'''
import copy, gc, io, json, linecache, math, sys, time, traceback
clock = time.process_time  # CPU time of this process: other processes' load does not count
request = json.loads(sys.stdin.read())
report_to = sys.stdout

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
    def __init__(self, exit_code, passed, failed, output=""):
        self.exit_code, self.passed, self.failed, self.output = exit_code, passed, failed, output
    @property
    def summary(self):
        parts = [f"{self.failed} failed"] if self.failed else []
        parts += [f"{self.passed} passed"] if self.passed or not parts else []
        return ", ".join(parts)
    def __repr__(self):
        return (f"Checks(exit_code={self.exit_code!r}, passed={self.passed!r}, "
                f"failed={self.failed!r}, output={self.output!r})")

ERRORS = {"ValueError": ValueError, "TypeError": TypeError, "OSError": OSError,
          "FileNotFoundError": FileNotFoundError, "PermissionError": PermissionError}

class Tools:
    schemas = []
    def __init__(self, script):
        self.script, self.invoked = script, []
    def invoke(self, name, arguments):
        self.invoked.append([name, encode(arguments)])
        for entry in self.script:
            if entry[0] == name and entry[1] == arguments and not entry[3:]:
                entry.append("used")
                outcome = entry[2]
                if "raise" in outcome:
                    raise ERRORS[outcome["raise"]](outcome["message"])
                return copy.deepcopy(outcome["result"])
        raise ValueError(f"unknown tool {name!r}")
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
            return Tools(copy.deepcopy(v["script"]))
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

def finish(report):
    report_to.write("\n" + json.dumps(report) + "\n")
    report_to.flush()
    sys.exit(0)

source = request["source"]
linecache.cache["<answer>"] = (len(source), None, source.splitlines(True), "<answer>")
namespace = {"__name__": "__main__"}
printed = io.StringIO()
sys.stdout = printed
try:
    exec(compile(source, "<answer>", "exec"), namespace)
except SyntaxError as exc:
    finish({"error": f"your answer cell has a syntax error on line {(exc.lineno or 2) - 1}: "
                     f"{exc.msg}"})
except BaseException as exc:
    line = where(exc)
    kind = type(exc).__name__
    advice = (": an answer cell must define everything it uses (import what you need in it)"
              if kind == "NameError" else "")
    finish({"error": f"running your answer cell raised {kind}: {str(exc)[:300]}"
                     + (f" (at `{line}`)" if line else "") + advice})
function = namespace.get(request["name"])
if not callable(function):
    finish({"error": f"your answer cell does not define a function named "
                     f"{request['name']!r}: keep the `def {request['name']}(...)` line"})

def text_stream(n, piece):
    chunks = [{"message": {"role": "assistant", "content": piece}, "done": False}
              for _ in range(n)]
    chunks.append({"message": {"role": "assistant", "content": ""}, "done": True,
                   "done_reason": "stop"})
    return chunks, piece * n, "their text joined"

def openai_arguments_stream(n, piece):
    def chunk(delta, finish=None):
        return {"object": "chat.completion.chunk",
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
    def part(text):
        return chunk({"tool_calls": [{"index": 0, "function": {"arguments": text}}]})
    chunks = [chunk({"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                                     "function": {"name": "echo", "arguments": ""}}]})]
    chunks += [part('{"t": "')] + [part(piece) for _ in range(n)] + [part('"}')]
    chunks.append(chunk({}, "tool_calls"))
    expected = [{"id": "call_1", "name": "echo", "arguments": {"t": piece * n}}]
    return chunks, expected, "the one call, its arguments joined and parsed"

timing = request.get("timing")
if timing:
    build = {"text": text_stream, "openai_arguments": openai_arguments_stream}[
        timing.get("stream", "text")]
    piece = timing.get("piece", "abcd")
    best = {n: math.inf for n in timing["sizes"]}
    for _ in range(timing["repeats"]):
        for n in timing["sizes"]:
            chunks, expected, what = build(n, piece)
            gc.collect()
            gc.disable()
            start = clock()
            try:
                got = function(chunks)
            except Exception as exc:
                finish({"error": f"your function raised {type(exc).__name__} on a long stream"})
            best[n] = min(best[n], clock() - start)
            gc.enable()
            if got != expected:
                finish({"error": f"on a stream of {n:,} fragments {piece[:8]!r}... your "
                                 f"function did not return {what}"})
    finish({"timing": [best[n] for n in timing["sizes"]]})

outcomes = []
for call in request["calls"]:
    arguments = build(call)
    if request["conversation"]:
        arguments[0][-1]["tool_calls"] = arguments[1]
    printed.seek(0), printed.truncate()
    try:
        result = {"returned": encode(function(*arguments))}
    except Exception as exc:
        result = {"raised": [type(exc).__name__, str(exc)[:300], where(exc)]}
    result["arguments"] = [shown(a) for a in arguments]
    tools = [a for a in arguments if isinstance(a, Tools)]
    if tools:
        result["invoked"] = tools[0].invoked
    result["printed"] = printed.getvalue()[-2000:]
    outcomes.append(result)
finish({"outcomes": outcomes})
'''

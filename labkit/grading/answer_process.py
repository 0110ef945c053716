"""The program that runs a learner's answer apart from the grader:
``python -I -S answer_process.py FD``.

:mod:`labkit.grading.isolated` starts it and holds the one conversation it has: one request
per line on stdin, one reply per line on the file descriptor ``FD``. The answer's prints
are kept apart (its stdout goes nowhere but a buffer), so they never mix with the replies.
The requests, in order:

- ``define``: run the answer cell's source, find the function it defines;
- ``call``: call it on one case's arguments; reply with what it returned or raised, its
  arguments right after the call, and what it printed (a ``tools`` argument's ``invoke``
  is sent to the grader, which answers it, before the reply);
- ``recall``: every call's arguments again, once every case has run;
- ``load``, ``run``, ``results``: the long inputs of a timing, one timed run of one input
  (the grader reads the CPU time from outside), what the runs returned;
- ``loop``: run a whole loop (lesson 14): call the answer with a ``chat`` whose every request
  goes to the grader, which answers it with a reply's chunks (or an error), and a ``tools``
  whose every call goes to the grader with how far the current reply had been read; take
  the events the answer yields, each as it was when yielded and again at the end, and what
  each request held when sent and at the end. The grader may end the run at a request or
  call it did not expect (:class:`GraderStop`).

``define`` may name a folder to import from (``path``): lesson 14's check hands the answer
a copy of the pieces it may use there (``labkit.pieces``), and nothing else of labkit.

It imports only the standard library and runs isolated (``-I``: neither the directory it
runs in nor this file's folder is on ``sys.path``) without site-packages (``-S``), so the
answer finds neither labkit nor the checks nor their expected values. The grader imports
this module too, for :data:`RAISABLE` alone: the exceptions a tool may raise are listed
here once, for both sides.
"""

from __future__ import annotations

import builtins
import gc
import io
import json
import linecache
import math
import os
import sys
import time
import traceback

#: Exceptions a case's scripted tools may raise in the answer's process.
RAISABLE = (
    "ValueError",
    "TypeError",
    "OSError",
    "FileNotFoundError",
    "PermissionError",
    "KeyError",
    "RuntimeError",
    "ConnectionError",
)
ERRORS = {name: getattr(builtins, name) for name in RAISABLE}
ANSWER_FILE = "<answer>"  # the file name the answer's code is compiled under


class Channel:
    """The grader's end of the pipes: a request per line in, a reply per line out."""

    def __init__(self, replies, requests):
        self.replies, self.requests = replies, requests

    def send(self, message) -> None:
        self.replies.write(json.dumps(message) + "\n")
        self.replies.flush()

    def receive(self):
        line = self.requests.readline()
        if not line:
            os._exit(0)
        # a long input is a million objects: collecting while parsing them triples the time
        gc.disable()
        try:
            return json.loads(line)
        finally:
            gc.enable()


def encode(v):
    """A value as JSON data, or ``{"__other__": type name, "repr": ...}`` when it is not
    exactly a dict (with str keys), list, str, int, finite float, bool or None."""
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
    """The result of an independent test run, read-only like labkit's; its ``summary`` and
    ``repr`` are the ones labkit's own gave in the grader."""

    __slots__ = ("exit_code", "passed", "failed", "output", "_summary", "_repr")

    def __init__(self, value: dict):
        for key in self.__slots__:
            object.__setattr__(self, key, value[key.lstrip("_")])

    def __setattr__(self, key, value):
        raise AttributeError(f"cannot assign to field {key!r}: Checks is read-only")

    __delattr__ = __setattr__

    @property
    def summary(self):
        return self._summary

    def __repr__(self):
        return self._repr


class Tools:
    """A tools object whose ``invoke`` the grader answers, from the case's script."""

    schemas = []

    def __init__(self, channel: Channel):
        self._channel = channel

    def invoke(self, name, arguments):
        self._channel.send({"invoke": [encode(name), encode(arguments)]})
        answer = self._channel.receive()
        if "raise" in answer:
            raise ERRORS[answer["raise"]](*answer["args"])
        return answer["result"]

    def __repr__(self):
        return "tools"


class GraderStop(BaseException):
    """The grader ended the run: the loop sent a request, or made a call, that a right loop
    does not make there. A ``BaseException``, so an ``except Exception`` does not catch it."""


def as_sent(v):
    """A value as a client would send it (``json.dumps``): a dict or list of any kind as one,
    a tuple as a list, anything JSON cannot hold as ``{"__other__": ...}``."""
    if v is None or type(v) in (bool, int, str):
        return v
    if type(v) is float:
        return v if math.isfinite(v) else encode(v)
    if isinstance(v, dict) and all(type(k) is str for k in v):
        return {k: as_sent(x) for k, x in v.items()}
    if isinstance(v, list | tuple):
        return [as_sent(x) for x in v]
    return encode(v)


class Stream:
    """One reply's chunks, handed out one at a time; raises the error the grader asked for
    after ``fail_after`` of them."""

    def __init__(self, chunks, failure):
        self.chunks, self.failure, self.given = chunks, failure, 0

    def __iter__(self):
        return self

    def __next__(self):
        if self.failure and self.given == self.failure["after"]:
            self.failure, failure = None, self.failure
            raise ERRORS[failure["raise"]](*failure["args"])
        if self.given == len(self.chunks):
            raise StopIteration
        self.given += 1
        return self.chunks[self.given - 1]

    def close(self):
        pass


class Chat:
    """A model whose every request goes to the grader: it answers with a reply's chunks."""

    def __init__(self, channel: Channel, wire_format):
        self._channel, self.wire_format = channel, wire_format
        self.sent, self.stream, self.stopped = [], None, None

    def __call__(self, messages, tool_schemas=None):
        if self.stopped:
            raise GraderStop(self.stopped)
        request = [as_sent(messages), as_sent(tool_schemas)]
        self.sent.append((messages, request[0]))
        self._channel.send({"chat": request})
        answer = self._channel.receive()
        if "stop" in answer:
            self.stopped = answer["stop"]
            raise GraderStop(self.stopped)
        if "raise" in answer:
            raise ERRORS[answer["raise"]](*answer["args"])
        self.stream = Stream(answer["chunks"], answer.get("failure"))
        return self.stream

    def __repr__(self):
        return "chat"


class LoopTools(Tools):
    """The tools of a whole loop: each call tells the grader how far the reply was read."""

    def __init__(self, channel: Channel, schemas, chat: Chat):
        super().__init__(channel)
        self.schemas, self._chat = schemas, chat

    def invoke(self, name, arguments):
        if self._chat.stopped:
            raise GraderStop(self._chat.stopped)
        stream = self._chat.stream
        read = [stream.given, len(stream.chunks)] if stream is not None else None
        self._channel.send({"invoke": [as_sent(name), as_sent(arguments)], "read": read})
        answer = self._channel.receive()
        if "stop" in answer:
            self._chat.stopped = answer["stop"]
            raise GraderStop(self._chat.stopped)
        if "raise" in answer:
            raise ERRORS[answer["raise"]](*answer["args"])
        return answer["result"]


def build(v, channel: Channel):
    """Arguments as the answer gets them: plain data, and the grader's two special values
    (``run_counts``, a :class:`Checks`; ``tools``, a :class:`Tools`) made objects."""
    if isinstance(v, list):
        return [build(x, channel) for x in v]
    if isinstance(v, dict):
        kind = v.get("__labkit__")
        if kind == "run_counts":
            return Checks(v)
        if kind == "tools":
            return Tools(channel)
        return {k: build(x, channel) for k, x in v.items()}
    return v


def shown(v):
    """An argument as the grader sees it after a call."""
    if isinstance(v, Tools):
        return "tools"
    if isinstance(v, Checks):
        return repr(v)
    return encode(v)


def where(exc):
    """The answer's own line an exception came from, if it came from the answer."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == ANSWER_FILE]
    return frames[-1].line.strip() if frames and frames[-1].line else None


class Session:
    """The answer being run: one method per request, each returning the reply (None: none)."""

    def __init__(self, channel: Channel, printed: io.StringIO):
        self.channel, self.printed = channel, printed
        self.namespace, self.function = {"__name__": "__main__"}, None
        self.kept, self.loaded, self.returned = [], [], []

    def define(self, request):
        if request.get("path"):  # the only labkit the answer may import (lesson 14's pieces)
            sys.path.insert(0, request["path"])
        source = request["source"]
        linecache.cache[ANSWER_FILE] = (len(source), None, source.splitlines(True), ANSWER_FILE)
        try:
            exec(compile(source, ANSWER_FILE, "exec"), self.namespace)
        except SyntaxError as exc:
            return {
                "error": f"your answer cell has a syntax error on line "
                f"{(exc.lineno or 2) - 1}: {exc.msg}"
            }
        except BaseException as exc:
            line = where(exc)
            kind = type(exc).__name__
            advice = (
                ": an answer cell must define everything it uses (import what you need in it)"
                if kind == "NameError"
                else ""
            )
            return {
                "error": f"running your answer cell raised {kind}: {str(exc)[:300]}"
                + (f" (at `{line}`)" if line else "")
                + advice
            }
        self.function = self.namespace.get(request["name"])
        if not callable(self.function):
            return {
                "error": f"your answer cell does not define a function named "
                f"{request['name']!r}: keep the `def {request['name']}(...)` line"
            }
        return {"defined": True}

    def call(self, request):
        arguments = build(request["arguments"], self.channel)
        if request["conversation"]:
            arguments[0][-1]["tool_calls"] = arguments[1]
        self.kept.append(arguments)
        self.printed.seek(0)
        self.printed.truncate()
        try:
            reply = {"returned": encode(self.function(*arguments))}
        except Exception as exc:
            reply = {"raised": [type(exc).__name__, str(exc)[:300], where(exc)]}
        reply["arguments"] = [shown(a) for a in arguments]
        reply["printed"] = self.printed.getvalue()[-2000:]
        return reply

    def recall(self, request):
        return {"arguments": [[shown(a) for a in arguments] for arguments in self.kept]}

    def load(self, request):
        gc.disable()
        calls = request["calls"]  # plain JSON data is used as parsed: fresh objects already
        self.loaded = [build(call, self.channel) for call in calls] if request["objects"] else calls
        self.returned = []
        gc.collect()  # now, outside the timed calls; walking the inputs also steadies their timing
        gc.enable()
        return {"loaded": len(self.loaded)}

    def run(self, request):
        function, arguments = self.function, self.loaded[request["index"]]
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
            self.returned.append(encode(got))
        return reply

    def results(self, request):
        return {"returned": self.returned}

    def loop(self, request):
        """Run the answer as a loop over the grader's chat and tools; collect its events."""
        chat = Chat(self.channel, request["wire_format"])
        tools = LoopTools(self.channel, request["schemas"], chat)
        schemas = json.dumps(request["schemas"])
        events, shots, reply = [], [], {}
        self.printed.seek(0)
        self.printed.truncate()
        try:
            produced = self.function(chat, tools, request["task"], request["max_turns"])
            if produced is None:
                raise TypeError("the function returned None: yield its events (a generator)")
            for event in produced:
                events.append(event)
                shots.append(as_sent(event))
                if len(events) > request["most_events"]:
                    reply["too_many"] = True
                    break
        except GraderStop:
            pass
        except Exception as exc:
            reply["raised"] = [type(exc).__name__, str(exc)[:300], where(exc)]
        reply["stopped_by_grader"] = chat.stopped
        reply["events"] = shots
        reply["changed_events"] = [
            number
            for number, (event, shot) in enumerate(zip(events, shots))
            if as_sent(event) != shot
        ]
        reply["requests_at_end"] = [
            None if as_sent(messages) == sent else as_sent(messages) for messages, sent in chat.sent
        ]
        reply["schemas_changed"] = json.dumps(as_sent(tools.schemas)) != schemas
        reply["printed"] = self.printed.getvalue()[-2000:]
        return reply


def main(argv) -> None:
    channel = Channel(os.fdopen(int(argv[1]), "w"), sys.stdin)
    printed = io.StringIO()
    sys.stdout = printed
    session = Session(channel, printed)
    requests = {
        "define": session.define,
        "call": session.call,
        "recall": session.recall,
        "load": session.load,
        "run": session.run,
        "results": session.results,
        "loop": session.loop,
    }
    while True:
        request = channel.receive()
        handle = requests.get(request["op"])
        if handle is not None:
            channel.send(handle(request))


if __name__ == "__main__":
    main(sys.argv)

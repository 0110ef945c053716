"""Hooks: programs the user configures to run at five points of a run, and what their
replies mean.

A hook is configured as the agents that have them do (Claude Code, Gemini CLI): a name,
the points it runs at, a matcher on tool names, a command and a timeout, in a JSON file::

    {"hooks": [
      {"name": "protect-tests", "on": ["before_tool"], "matcher": "edit_file",
       "command": ["python", "-I", "-m", "labkit.lessons.hooks.protect_tests"],
       "timeout": 5}
    ]}

``matcher`` is a regular expression the whole tool name must match (at ``before_tool``
and ``after_tool``; left out, every tool); ``timeout`` is in seconds (default
``DEFAULT_TIMEOUT``, at most ``MAX_TIMEOUT``). The command is a list of words, run with
no shell (``hook_process.py``: the scrubbed environment, the reaper, bounded output).

**The rules** (``decision_of``), the same for every point; the point decides what a reply
may hold (``contracts.HOOK_CHANGES``):

1. The hook gets the event as one JSON object on stdin: ``point``, ``cwd``, ``turn`` and
   what the point knows (``task``, ``messages``, ``tool`` and ``arguments``, ``result``,
   ``reason`` and ``text`` at the stop).
2. It did not finish within its timeout: the failure ``timeout``.
3. Exit code 2 means *no*: at ``before_tool`` the call does not run, at ``stop`` the stop
   is denied; the reason is its stderr (``NO_REASON`` when empty). Where nothing can be
   denied, exit 2 is a ``bad_reply``.
4. Any other exit code but 0 (or death by a signal): the failure ``crash``.
5. Exit 0 with nothing on stdout: allow, change nothing.
6. Exit 0, stdout not one JSON object: the failure ``not_json``.
7. A JSON object may hold ``decision`` (``"allow"`` or ``"deny"``), ``reason`` (text) and
   what its point may change: ``context`` (text), ``arguments`` or ``result`` (objects).
   Any other key, a value of the wrong kind, a deny where the point cannot deny, or a
   deny with arguments: the failure ``bad_reply``. So an ``after_tool`` hook can never
   change which call ran.
8. Otherwise the decision is what it said (allow when it said nothing); a deny without a
   reason gets ``NO_REASON``.

**A failed hook gets its point's default** (``DEFAULTS``), and the failure is named in its
``hook`` event. ``before_tool`` fails *closed*: the call does not run. It is the one point
that guards something before it happens; a guard that hangs, crashes or mumbles must not
let the call through, or breaking the hook would be the way around it. Every other point
fails *open*, visibly: no context is added, a result stands (the call has run; withholding
its result would only make the model call again), a stop stands (a broken check must not
hold the run hostage).

``HookSet`` runs a run's hooks (it is the loop's ``hooks``): command hooks from a file
(``load_hooks``) and Python functions (``PythonHook``, for the lessons' widgets), in the
order given; the first deny at a point ends that point, and a later hook sees the
arguments or result an earlier one gave.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .contracts import HOOK_CHANGES, HOOK_POINTS, HookDecision, HookPoint
from .hook_process import MAX_OUTPUT, run_hook_command
from .words import json_kind

DEFAULT_TIMEOUT = 10.0  # seconds a hook may take unless its configuration says otherwise
MAX_TIMEOUT = 60.0
BLOCK = 2  # the exit code that means "no"
NO_REASON = "the hook gave no reason"
#: The decision of a hook that failed, by point: closed before a call, open elsewhere.
DEFAULTS = {point: "deny" if point == "before_tool" else "allow" for point in HOOK_POINTS}
#: How a hook can fail, by the name its ``hook`` event gives.
FAILURES = {
    "timeout": "it did not finish within its timeout, and was stopped",
    "crash": "it exited with a code other than 0 or 2, was killed, or could not start",
    "not_json": "it exited 0 but what it printed is not one JSON object",
    "bad_reply": "its reply holds a key its point does not take or a value of the wrong "
    "kind, or it said no (exit 2, or a deny) where nothing can be denied",
    "too_much_output": f"it printed more than {MAX_OUTPUT:,} bytes",
}
DETAIL_LIMIT = 200  # characters of a failure's detail (a hook's stderr, a bad value)


# --- The rules --------------------------------------------------------------------------


def decision_of(
    hook: str, point: HookPoint, stdout: str, stderr: str, exit_code: int | None
) -> HookDecision:
    """What a command hook's exit code and output mean at ``point`` (the rules above)."""
    if exit_code is None:
        return failed(hook, point, "timeout", "no answer within its timeout")
    if exit_code == BLOCK:
        if "deny" not in HOOK_CHANGES[point]:
            return failed(hook, point, "bad_reply", f"exit code 2 (no), but a {point} hook "
                          "cannot deny")  # fmt: skip
        return HookDecision(hook, point, "deny", reason=stderr.strip() or NO_REASON)
    if exit_code != 0:
        last = stderr.strip().splitlines()[-1:] or ["no stderr"]
        return failed(hook, point, "crash", f"exit code {exit_code}: {last[0]}")
    if not stdout.strip():
        return HookDecision(hook, point)
    try:
        reply = json.loads(stdout)
    except (ValueError, RecursionError):
        return failed(hook, point, "not_json", f"it printed {stdout.strip()!r}")
    return decision_from_reply(hook, point, reply)


def decision_from_reply(hook: str, point: HookPoint, reply: Any) -> HookDecision:
    """Rules 7 and 8: what a reply object means at ``point`` (a Python hook's, too)."""
    if not isinstance(reply, dict):
        return failed(hook, point, "not_json", f"its reply is {json_kind(reply)}, not an object")
    may = HOOK_CHANGES[point]
    allowed = {"decision", "reason", *(change for change in may if change != "deny")}
    extra = sorted(set(reply) - allowed, key=str)
    if extra:
        return failed(
            hook, point, "bad_reply", f"a {point} hook may reply {sorted(allowed)}, not {extra}"
        )
    decision = reply.get("decision", "allow")
    kinds = {"reason": str, "context": str, "arguments": dict, "result": dict}
    wrong = [key for key, kind in kinds.items() if key in reply and type(reply[key]) is not kind]
    if decision not in ("allow", "deny") or wrong:
        what = f"decision {decision!r}"
        if wrong:
            what = f"'{wrong[0]}' is {json_kind(reply[wrong[0]])}"
        return failed(hook, point, "bad_reply", what)
    if decision == "deny" and ("deny" not in may or "arguments" in reply):
        why = "it cannot deny" if "deny" not in may else "it gave arguments to a call it denied"
        return failed(hook, point, "bad_reply", f"a {point} hook said deny, but {why}")
    reason = reply.get("reason")
    if decision == "deny" and not reason:
        reason = NO_REASON
    return HookDecision(
        hook,
        point,
        decision,
        reason=reason,
        context=reply.get("context"),
        arguments=reply.get("arguments"),
        result=reply.get("result"),
    )


def failed(hook: str, point: HookPoint, failure: str, detail: str) -> HookDecision:
    """A failed hook's decision: its point's default, with the failure named."""
    if len(detail) > DETAIL_LIMIT:
        detail = detail[:DETAIL_LIMIT] + "..."
    return HookDecision(hook, point, DEFAULTS[point], failure=failure, detail=detail)


# --- Hooks and the set of a run -----------------------------------------------------------


@dataclass(frozen=True)
class Hook:
    """What every hook has: a name, its points, and the tools it matches."""

    name: str
    on: tuple[str, ...]
    matcher: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip():
            raise ValueError("a hook needs a name (text), for its events and its refusals")
        object.__setattr__(self, "on", tuple(self.on) if isinstance(self.on, list) else self.on)
        if not isinstance(self.on, tuple) or not self.on or set(self.on) - set(HOOK_POINTS):
            raise ValueError(
                f"hook {self.name!r}: 'on' is a list of points from {list(HOOK_POINTS)}, "
                f"not {self.on!r}"
            )
        if self.matcher is not None:
            try:
                re.compile(self.matcher)
            except (re.error, TypeError) as exc:
                raise ValueError(
                    f"hook {self.name!r}: 'matcher' is not a regular expression ({exc})"
                ) from None

    def matches(self, point: str, tool: str | None) -> bool:
        """Runs at ``point`` for ``tool`` (the tool points only look at the matcher)."""
        if point not in self.on:
            return False
        return tool is None or self.matcher is None or re.fullmatch(self.matcher, tool) is not None


@dataclass(frozen=True)
class CommandHook(Hook):
    """A program, run once per event (``hook_process.py``), its reply read by the rules."""

    command: tuple[str, ...] = ()
    timeout: float = DEFAULT_TIMEOUT

    def __post_init__(self) -> None:
        super().__post_init__()
        command = self.command
        if isinstance(command, list):
            object.__setattr__(self, "command", command := tuple(command))
        if (
            not isinstance(command, tuple)
            or not command
            or not all(isinstance(word, str) and word for word in command)
        ):
            raise ValueError(
                f"hook {self.name!r}: 'command' is a list of words such as "
                '["python", "-I", "my_hook.py"] (there is no shell)'
            )
        timeout = self.timeout
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)):
            raise ValueError(f"hook {self.name!r}: 'timeout' is a number of seconds")
        if not 0 < timeout <= MAX_TIMEOUT:  # also refuses NaN
            raise ValueError(f"hook {self.name!r}: 'timeout' must be over 0 and at most "
                             f"{MAX_TIMEOUT:g} seconds, got {timeout!r}")  # fmt: skip

    def answer(self, point: HookPoint, event: dict, cwd: Path) -> HookDecision:
        run = run_hook_command(
            self.command, json.dumps(event, ensure_ascii=False), cwd=cwd, timeout=self.timeout
        )
        if run.too_much:
            return failed(self.name, point, "too_much_output", f"over {MAX_OUTPUT:,} bytes")
        if run.exit_code is None:
            return failed(self.name, point, "timeout", f"no answer within {self.timeout:g} s")
        return decision_of(self.name, point, run.stdout, run.stderr, run.exit_code)

    def config(self) -> dict:
        """The hook as its configuration file writes it."""
        entry = {"name": self.name, "on": list(self.on)}
        if self.matcher is not None:
            entry["matcher"] = self.matcher
        return {**entry, "command": list(self.command), "timeout": self.timeout}


@dataclass(frozen=True)
class PythonHook(Hook):
    """A Python function in this process: ``function(event)`` returns a reply object (or
    None, to allow). Its reply is read by the same rules, as the JSON a command hook would
    print (a value JSON cannot hold is ``not_json``); an exception is a ``crash``."""

    function: Callable[[dict], Any] = field(default=lambda event: None, compare=False)

    def answer(self, point: HookPoint, event: dict, cwd: Path) -> HookDecision:
        try:
            reply = self.function(event)
        except Exception as exc:  # noqa: BLE001 (a hook's bug is its failure, named)
            return failed(self.name, point, "crash", f"{type(exc).__name__}: {exc}")
        if reply is None:
            return HookDecision(self.name, point)
        try:  # what a command hook could print: JSON data only, no Python object
            reply = json.loads(json.dumps(reply, allow_nan=False))
        except (TypeError, ValueError, RecursionError) as exc:
            return failed(self.name, point, "not_json", f"its reply is not JSON data ({exc})")
        return decision_from_reply(self.name, point, reply)


class HookSet:
    """A run's hooks, in order, working in ``cwd`` (the run's copy): the loop's ``hooks``."""

    def __init__(self, hooks: Sequence[Hook], cwd: str | Path) -> None:
        names = [hook.name for hook in hooks]
        if len(set(names)) != len(names):
            raise ValueError(f"two hooks have the same name: {names}")
        self.hooks, self.cwd = tuple(hooks), Path(cwd)

    def run(self, point: HookPoint, event: dict) -> list[HookDecision]:
        decisions: list[HookDecision] = []
        given = {"point": point, "cwd": str(self.cwd), **event}
        for hook in self.hooks:
            if not hook.matches(point, event.get("tool")):
                continue
            decision = hook.answer(point, given, self.cwd)
            decisions.append(decision)
            if decision.decision == "deny":
                break  # the first no ends the point: the call does not run, the stop is denied
            for change in ("arguments", "result"):
                if getattr(decision, change) is not None:
                    given = {**given, change: getattr(decision, change)}
        return decisions

    def config(self) -> dict:
        """The set as a configuration file writes it: command hooks only (a Python function
        cannot be written down, so a run with one cannot be replayed from its recording)."""
        python = [hook.name for hook in self.hooks if not isinstance(hook, CommandHook)]
        if python:
            raise ValueError(
                f"the hooks {python} are Python functions, which a recording cannot keep; "
                "give them as commands to record the run"
            )
        return {"hooks": [hook.config() for hook in self.hooks]}


KEYS = {"name", "on", "matcher", "command", "timeout"}


def load_hooks(config: dict | str | Path, cwd: str | Path) -> HookSet:
    """The hooks a configuration gives (a dict, or the path of a JSON file), for a run in
    ``cwd``. A configuration that does not hold raises ``ValueError`` saying what to fix."""
    if not isinstance(config, dict):
        path = Path(config)
        try:
            config = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ValueError(f"{path}: cannot read hooks from it ({exc})") from None
    entries = config.get("hooks") if isinstance(config, dict) else None
    if not isinstance(entries, list) or set(config) != {"hooks"}:
        raise ValueError('a hooks configuration is {"hooks": [...]}, one object per hook')
    hooks = []
    for number, entry in enumerate(entries, start=1):
        if (
            not isinstance(entry, dict)
            or set(entry) - KEYS
            or not {"name", "on", "command"} <= set(entry)
        ):
            raise ValueError(
                f"hook {number}: an object with 'name', 'on' and 'command', and optionally "
                f"'matcher' and 'timeout'; got {str(entry)[:200]}"
            )
        hooks.append(CommandHook(**entry))
    return HookSet(hooks, cwd)

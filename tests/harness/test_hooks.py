"""Hooks: the rules that read a reply, the decisions each point may take, the configuration,
the set that runs them in order, and command hooks run as real processes."""

import json
import sys
import textwrap

import pytest

from labkit.harness.contracts import HookDecision
from labkit.harness.hooks import (
    DEFAULTS,
    NO_REASON,
    CommandHook,
    HookSet,
    PythonHook,
    decision_of,
    load_hooks,
)


def fields(decision):
    found = decision.event_fields()
    return {k: v for k, v in found.items() if k not in ("hook", "point")}


# --- the rules ------------------------------------------------------------------------------


def allowed(**more):
    return {"decision": "allow", **more}


def denied(**more):
    return {"decision": "deny", **more}


TIMED_OUT = {"failure": "timeout", "detail": "no answer within its timeout"}
CANNOT_DENY = "exit code 2 (no), but a after_tool hook cannot deny"


@pytest.mark.parametrize(
    "point, stdout, stderr, code, expected",
    [
        ("before_tool", "", "", 0, allowed()),
        ("before_tool", "", " tests are protected \n", 2, denied(reason="tests are protected")),
        ("before_tool", "", "", 2, denied(reason=NO_REASON)),
        ("stop", '{"decision": "allow"}', "tests fail", 2, denied(reason="tests fail")),
        ("before_tool", "", "", None, denied(**TIMED_OUT)),
        ("after_tool", "", "", None, allowed(**TIMED_OUT)),
        ("before_tool", "{}", "Traceback\nKeyError: 'x'", 1,
         denied(failure="crash", detail="exit code 1: KeyError: 'x'")),
        ("run_start", "", "", -9, allowed(failure="crash", detail="exit code -9: no stderr")),
        ("before_tool", "hello", "", 0, denied(failure="not_json", detail="it printed 'hello'")),
        ("before_request", "[1]", "", 0,
         allowed(failure="not_json", detail="its reply is a list, not an object")),
        ("after_tool", "", "no", 2, allowed(failure="bad_reply", detail=CANNOT_DENY)),
        ("before_tool", '{"arguments": {"path": "a.py"}}', "", 0,
         allowed(arguments={"path": "a.py"})),
        ("after_tool", '{"result": {"ok": 1}, "context": "n"}', "", 0,
         allowed(context="n", result={"ok": 1})),
        ("before_request", '{"context": "chunks"}', "", 0, allowed(context="chunks")),
        ("stop", '{"decision": "deny"}', "", 0, denied(reason=NO_REASON)),
        ("before_tool", '{"reason": "fine"}', "", 0, allowed(reason="fine")),
    ],
)  # fmt: skip
def test_the_rules_read_each_kind_of_reply(point, stdout, stderr, code, expected):
    assert fields(decision_of("h", point, stdout, stderr, code)) == expected


@pytest.mark.parametrize(
    "point, stdout, words",
    [
        ("after_tool", '{"arguments": {"path": "x"}}',
         "may reply ['context', 'decision', 'reason', 'result']"),
        ("run_start", '{"decision": "deny", "reason": "r"}',
         "a run_start hook said deny, but it cannot deny"),
        ("before_tool", '{"decision": "deny", "arguments": {}}',
         "it gave arguments to a call it denied"),
        ("before_tool", '{"decision": "block"}', "decision 'block'"),
        ("after_tool", '{"result": "ok"}', "'result' is a str"),
        ("run_start", '{"context": 3}', "'context' is a number"),
    ],
)  # fmt: skip
def test_a_reply_that_breaks_its_point_is_a_bad_reply_with_the_default(point, stdout, words):
    decision = decision_of("h", point, stdout, "", 0)
    assert decision.failure == "bad_reply" and decision.decision == DEFAULTS[point]
    assert words in decision.detail


def test_only_before_tool_fails_closed():
    assert DEFAULTS == {
        "run_start": "allow",
        "before_request": "allow",
        "before_tool": "deny",
        "after_tool": "allow",
        "stop": "allow",
    }


def test_a_decision_holds_to_what_its_point_allows():
    with pytest.raises(ValueError, match="after_tool hook cannot give arguments"):
        HookDecision("h", "after_tool", arguments={"path": "x"})
    with pytest.raises(ValueError, match="run_start hook cannot give deny"):
        HookDecision("h", "run_start", "deny", reason="no")
    with pytest.raises(ValueError, match="must say why"):
        HookDecision("h", "stop", "deny")
    with pytest.raises(ValueError, match="one of"):
        HookDecision("h", "after_run")
    refusal = HookDecision("h", "before_tool", "deny", failure="timeout", detail="5 s").refusal()
    assert (
        refusal
        == "the hook 'h' failed (timeout: 5 s), and a before_tool hook that cannot answer denies"
    )


# --- configuration ----------------------------------------------------------------------------

HOOK = {"name": "x", "on": ["stop"], "command": ["true"]}


@pytest.mark.parametrize(
    "entry, words",
    [
        ({**HOOK, "on": ["after_run"]}, "'on' is a list of points"),
        ({**HOOK, "command": "true"}, "'command' is a list of words"),
        ({**HOOK, "command": []}, "'command' is a list of words"),
        ({**HOOK, "timeout": 0}, "'timeout' must be over 0"),
        ({**HOOK, "timeout": 600}, "at most 60"),
        ({**HOOK, "timeout": "5"}, "number of seconds"),
        ({**HOOK, "matcher": "("}, "not a regular expression"),
        ({**HOOK, "name": ""}, "needs a name"),
        ({"name": "x", "on": ["stop"]}, "an object with 'name', 'on' and 'command'"),
        ({**HOOK, "shell": True}, "an object with"),
    ],
)  # fmt: skip
def test_a_configuration_that_does_not_hold_says_what_to_fix(entry, words):
    with pytest.raises(ValueError, match=words):
        load_hooks({"hooks": [entry]}, ".")


def test_hooks_load_from_a_file_and_write_back_the_same(tmp_path):
    config = {"hooks": [{"name": "a", "on": ["before_tool"], "matcher": "edit_.*",
                         "command": ["python", "-I", "a.py"], "timeout": 5}]}  # fmt: skip
    (tmp_path / "hooks.json").write_text(json.dumps(config))
    assert load_hooks(tmp_path / "hooks.json", tmp_path).config() == config
    with pytest.raises(ValueError, match="cannot read hooks from it"):
        load_hooks(tmp_path / "missing.json", tmp_path)
    with pytest.raises(ValueError, match=r'\{"hooks": \[...\]\}'):
        load_hooks({"hook": []}, tmp_path)
    with pytest.raises(ValueError, match="same name"):
        load_hooks({"hooks": [config["hooks"][0]] * 2}, tmp_path)


def test_a_python_hook_cannot_be_written_down():
    hooks = HookSet([PythonHook("mine", ["stop"], function=lambda event: None)], ".")
    with pytest.raises(ValueError, match="Python functions, which a recording cannot keep"):
        hooks.config()


# --- a set of hooks -------------------------------------------------------------------------


def test_a_set_runs_matching_hooks_in_order_and_a_later_one_sees_the_new_arguments():
    seen = []

    def first(event):
        seen.append(("first", event["arguments"]))
        return {"arguments": {"path": "safe.py"}}

    def second(event):
        seen.append(("second", event["arguments"], event["point"], event["cwd"]))
        return None

    hooks = HookSet(
        [
            PythonHook("first", ["before_tool"], matcher="edit_.*", function=first),
            PythonHook("other", ["before_tool"], matcher="read_file", function=first),
            PythonHook("second", ["before_tool"], function=second),
        ],
        "/work",
    )
    decisions = hooks.run(
        "before_tool", {"turn": 1, "tool": "edit_file", "arguments": {"path": "t"}}
    )
    assert [d.hook for d in decisions] == ["first", "second"]
    assert seen == [
        ("first", {"path": "t"}),
        ("second", {"path": "safe.py"}, "before_tool", "/work"),
    ]
    assert hooks.run("after_tool", {"turn": 1, "tool": "edit_file", "result": {}}) == []


def test_the_first_no_ends_the_point():
    ran = []
    hooks = HookSet(
        [
            PythonHook("no", ["stop"], function=lambda e: ran.append("no") or {"decision": "deny"}),
            PythonHook("later", ["stop"], function=lambda e: ran.append("later")),
        ],
        ".",
    )
    [decision] = hooks.run(
        "stop", {"turn": 2, "reason": "assistant_finished", "text": "", "denied": False}
    )
    assert decision.decision == "deny" and decision.reason == NO_REASON and ran == ["no"]


def test_a_python_hook_that_raises_or_answers_nonsense_is_a_named_failure():
    def raises(event):
        raise RuntimeError("bug")

    crash = HookSet([PythonHook("p", ["before_tool"], function=raises)], ".")
    [decision] = crash.run("before_tool", {"turn": 1, "tool": "t", "arguments": {}})
    assert (decision.decision, decision.failure, decision.detail) == (
        "deny",
        "crash",
        "RuntimeError: bug",
    )
    text = HookSet([PythonHook("p", ["run_start"], function=lambda e: "yes")], ".")
    [decision] = text.run("run_start", {"turn": 0, "task": "t", "tools": []})
    assert (decision.decision, decision.failure) == ("allow", "not_json")
    odd = HookSet([PythonHook("p", ["after_tool"], function=lambda e: {"result": {"s": {1}}})], ".")
    [decision] = odd.run("after_tool", {"turn": 1, "tool": "t", "arguments": {}, "result": {}})
    assert (decision.decision, decision.failure) == ("allow", "not_json")
    assert decision.detail.startswith("its reply is not JSON data (Object of type set")


# --- command hooks, as processes ----------------------------------------------------------------


def program(tmp_path, body):
    path = tmp_path / "hook.py"
    path.write_text(textwrap.dedent(body))
    return [sys.executable, "-I", "-S", str(path)]


def run_one(tmp_path, body, point="before_tool", event=None, timeout=10):
    hook = CommandHook("h", [point], command=program(tmp_path, body), timeout=timeout)
    event = event or {"turn": 1, "tool": "edit_file", "arguments": {"path": "tests/t.py"}}
    return HookSet([hook], tmp_path).run(point, event)[0]


def test_a_command_hook_reads_its_event_on_stdin_and_says_no_with_exit_2(tmp_path):
    decision = run_one(
        tmp_path,
        """
        import json, sys
        event = json.load(sys.stdin)
        print(f"{event['point']} {event['tool']} {event['arguments']['path']} in {event['cwd']}",
              file=sys.stderr)
        sys.exit(2)
        """,
    )
    assert decision.decision == "deny"
    assert decision.reason == f"before_tool edit_file tests/t.py in {tmp_path}"


def test_a_command_hook_runs_in_the_copy_with_the_scrubbed_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret")
    decision = run_one(
        tmp_path,
        """
        import json, os
        print(json.dumps({"context": json.dumps([sorted(os.environ), os.getcwd()])}))
        """,
        point="after_tool",
        event={"turn": 1, "tool": "t", "arguments": {}, "result": {}},
    )
    names, cwd = json.loads(decision.context)
    assert "OPENAI_API_KEY" not in names and set(names) <= {"PATH", "LANG", "SYSTEMROOT",
        "PYTHONDONTWRITEBYTECODE", "PYTEST_DISABLE_PLUGIN_AUTOLOAD", "LC_CTYPE"}  # fmt: skip
    assert cwd == str(tmp_path)


def test_a_hook_that_hangs_is_stopped_at_its_timeout_and_denies_before_a_call(tmp_path):
    decision = run_one(tmp_path, "import time\ntime.sleep(60)\n", timeout=0.5)
    assert (decision.decision, decision.failure, decision.detail) == (
        "deny", "timeout", "no answer within 0.5 s"
    )  # fmt: skip


def test_a_hook_that_prints_too_much_is_a_named_failure(tmp_path):
    decision = run_one(tmp_path, "import sys\nsys.stdout.write('{' * 200_000)\n")
    assert (decision.decision, decision.failure) == ("deny", "too_much_output")


def test_a_program_that_is_not_there_is_a_crash(tmp_path):
    hook = CommandHook("h", ["before_tool"], command=["no-such-program-here"])
    [decision] = HookSet([hook], tmp_path).run(
        "before_tool", {"turn": 1, "tool": "t", "arguments": {}}
    )
    assert (decision.decision, decision.failure) == ("deny", "crash")
    assert "could not be started" in decision.detail

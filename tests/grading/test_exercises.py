"""The exercise checks pass right answers and fail stubs and wrong answers, saying why."""

import ast
import random
import re
from importlib.util import resolve_name
from pathlib import Path

import pytest
from answers import ANSWER_NAMES, CHEATS, RIGHT, WRONG
from labkit_answers.hidden import HIDDEN

from labkit import Answers, Gate, exercises, load_recording, recorded_answers
from labkit.grading import checks
from labkit.grading.checks import CHECKS, grade
from labkit.grading.checks.lesson02_streamed_turn import adds_to_a_local, describe_stream
from labkit.grading.checks.lesson05_failure_cases import (
    BOUNDED_TRUTH,
    STOP_REASON_NAMES,
    STOP_TRUTH,
    STOP_WHY,
)
from labkit.grading.checks.lesson07_permissions import (
    POLICY_CASES,
    RECORDED_CALLS,
    STOPPED_CALLS,
    SWAPPED_ANSWERS,
    drawn_command,
    drawn_commands,
    team_verdict,
)
from labkit.grading.checks.lesson08_context_budget import (
    CUT_CASES,
    NOTE,
    compacted_reference,
    compaction_cases,
    cut_reference,
    drawn_text,
    size,
)
from labkit.grading.checks.lesson11_extension import (
    DECISION_CASES,
    NAME_PATTERNS,
    SCHEMA_CASES,
    decision_reference,
    drawn_hook_run,
    drawn_tool,
    schema_reference,
)
from labkit.grading.feedback import STUB_ADVICE, Answer, CheckFailed, shown_apart
from labkit.harness.budget import head_and_tail
from labkit.harness.contracts import STOP_REASONS
from labkit.harness.conversation import order_problems
from labkit.harness.formats import FORMATS
from labkit.harness.gate import check_command
from labkit.harness.hooks import decision_of
from labkit.harness.mcp_tools import tool_schema_of
from labkit.harness.sample import SAMPLE_DIR, TEST_FILE
from labkit.lessons.failures import bounded_outcome, exercise_cases, failure_cases, run_case
from labkit.recording.scenarios import SHELL_POLICY

BOUNDED_SHOWN = "max_turns"  # how lesson 05's bounded run (bounded.json, max_turns=1) stops
NAMES = sorted(ANSWER_NAMES)
FUNCTION_CHECKS = [c for c in NAMES if "prediction" not in c]
PREDICTION_CHECKS = [c for c in NAMES if "prediction" in c]
STUB = "    # YOUR CODE HERE\n    raise NotImplementedError()\n"  # what nbgrader leaves
ARGUMENTS = {
    "check_tool_message": "name, result",
    "check_assemble_content": "chunks",
    "check_may_dispatch": "chunks",
    "check_append_results": "messages, tool_calls, tools",
    "check_repair_verdict": "after, test_hash_before, test_hash_after",
    "check_bounded_prediction": "",
    "check_stop_predictions": "",
    "check_policy": "command",
    "check_gate_stops": "",
    "check_head_and_tail": "text, limit",
    "check_compaction": "messages, budget",
    "check_assemble_calls": "api, chunks",
    "check_result_messages": "provider, calls, results",
    "check_apply_edit": "text, old, new, replace_all=False",
    "check_parse_search_replace": "text",
    "check_mcp_to_tool_schema": "mcp_tool, provider",
    "check_hook_decision": "hook_output, exit_code",
    "check_layers": "action, profile",
    "check_system_prompt": "parts, project_file, cap",
    "check_subagent_result": "events",
    "check_ordered_results": "calls, finished",
    "check_rank_chunks": "query_terms, chunks, k",
    "check_references_to_result": "lsp_locations, root, cap",
    "check_my_loop": "chat, tools, task, max_turns",
    "check_resolved_rate": "results",
}

#: The hidden cases, from the instructor's package (learners do not have them).
HIDDEN_POLICY_CASES = HIDDEN["check_policy"]()
HIDDEN_CUT_CASES = HIDDEN["check_head_and_tail"]()
HIDDEN_DECISION_CASES = HIDDEN["check_hook_decision"]()
HIDDEN_SCHEMA_CASES = HIDDEN["check_mcp_to_tool_schema"]()


def answer(source, check):
    """An answer cell's source, as the check runs it."""
    return Answer(source.replace("$name", ANSWER_NAMES[check]), ANSWER_NAMES[check])


def stub(check):
    return Answer(f"def {ANSWER_NAMES[check]}({ARGUMENTS[check]}):\n{STUB}", ANSWER_NAMES[check])


def run_check(check, learner_answer, capsys, hidden=False):
    """Run a check; return (passed, everything it printed plus the assertion's message)."""
    try:
        CHECKS[check](learner_answer, hidden=hidden)
    except AssertionError as exc:
        return False, capsys.readouterr().out + str(exc)
    return True, capsys.readouterr().out


def test_every_check_is_exported_and_has_answers():
    assert sorted(CHECKS) == NAMES == sorted(RIGHT) == sorted(WRONG)
    assert exercises.__all__ == list(CHECKS)
    assert all(getattr(exercises, name) is CHECKS[name] for name in CHECKS)


def test_each_lesson_module_declares_only_its_own_checks():
    """The registry holds every name the lesson modules declare (no two declare the same), each
    the check of that name defined in its module."""
    declared = [name for lesson in checks.LESSONS for name in lesson.__all__]
    assert declared == list(CHECKS)
    for lesson in checks.LESSONS:
        assert all(name.startswith("check_") for name in lesson.__all__), lesson.__name__
        assert all(CHECKS[name].__module__ == lesson.__name__ for name in lesson.__all__)


@pytest.mark.parametrize("check", NAMES)
def test_a_right_answer_passes_and_says_so(check, capsys):
    passed, printed = run_check(check, answer(RIGHT[check], check), capsys)
    assert passed, printed
    assert re.search(r"All [\d,]+ (cases? passed|predictions match)", printed)


@pytest.mark.parametrize("check", FUNCTION_CHECKS)
def test_the_unanswered_stub_fails_with_advice(check, capsys):
    passed, printed = run_check(check, stub(check), capsys)
    assert not passed
    assert f"raised NotImplementedError: {STUB_ADVICE}" in printed


@pytest.mark.parametrize("check", PREDICTION_CHECKS)
def test_an_unanswered_prediction_says_not_answered_yet(check, capsys):
    passed, printed = run_check(check, stub(check), capsys)
    assert not passed and "not answered yet" in printed and "NotImplementedError" in printed
    fields = ", ".join(
        f"{f!r}: None" for f in (BOUNDED_TRUTH if "bounded" in check else STOP_TRUTH)
    )
    source = f"def {ANSWER_NAMES[check]}():\n    return {{{fields}}}\n"
    passed, printed = run_check(check, Answer(source, ANSWER_NAMES[check]), capsys)
    assert not passed and "not answered yet: the prediction has no value yet" in printed


@pytest.mark.parametrize(
    "check, wrong",
    [(c, w) for c in NAMES for w in WRONG[c]],
    ids=lambda value: getattr(value, "mistake", value),
)
def test_a_wrong_answer_fails_and_the_feedback_names_the_mistake(check, wrong, capsys):
    """Each wrong answer fails, the feedback names its mistake, its hint (when the answer says
    which) is about that mistake, and it never shows a "got" and an "expected" that read
    the same without saying where they differ."""
    passed, printed = run_check(check, answer(wrong.source, check), capsys, hidden=wrong.hidden)
    assert not passed
    assert wrong.names in printed
    lines = printed.splitlines()
    if wrong.hint:
        assert any(line.startswith("  hint:") and wrong.hint in line for line in lines), printed
    got = [line.removeprefix("  got:").strip() for line in lines if line.startswith("  got:")]
    expected = [
        line.removeprefix("  expected:").strip() for line in lines if line.startswith("  expected:")
    ]
    if got and expected and got[0] == expected[0]:
        assert any(line.startswith("  differs:") for line in lines), printed


def test_the_feedback_shows_the_learners_own_failing_line(capsys):
    def assemble_content(chunks):
        return "".join(chunk["message"]["content"] for chunk in chunks)

    passed, printed = run_check("check_assemble_content", assemble_content, capsys)  # a function
    assert not passed
    assert "raised KeyError: 'content'" in printed
    assert '(at `return "".join(chunk["message"]["content"] for chunk in chunks)`)' in printed
    assert "tried:" in printed and "expected: 'Reading the file.'" in printed


def test_a_check_given_something_other_than_a_function_explains(capsys):
    passed, printed = run_check("check_tool_message", None, capsys)
    assert not passed and "should be a function" in printed


def test_a_failure_shows_in_a_notebook_as_one_line_not_a_traceback():
    assert issubclass(CheckFailed, AssertionError)
    assert CheckFailed("case 2: why")._render_traceback_() == [
        "\x1b[31mAssertionError\x1b[39m: case 2: why"
    ]


def test_a_stop_prediction_that_is_not_a_stop_reason_is_named(capsys):
    source = (
        'def stop_predictions():\n    return {"call_after_done": "crash", "answer_cut": '
        '"incomplete_model_turn", "unknown_tool_last_turn": "max_turns", '
        '"server_fails_later": "model_error"}\n'
    )
    passed, printed = run_check(
        "check_stop_predictions", Answer(source, "stop_predictions"), capsys
    )
    assert not passed and "'crash' (a str), which is not a stop reason" in printed


def test_a_prediction_with_wrong_keys_is_named(capsys):
    source = "def bounded_prediction():\n    return {'turns': 1}\n"
    passed, printed = run_check(
        "check_bounded_prediction", Answer(source, "bounded_prediction"), capsys
    )
    assert not passed
    assert "missing: model_requests" in printed and "not expected: 'turns'" in printed


def test_an_answer_that_hangs_fails_and_the_process_is_gone(capsys, monkeypatch):
    monkeypatch.setattr("labkit.grading.isolated.TIMEOUT", 2)
    source = (
        "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\n"
        "def make_tool_message(name, result):\n    while True:\n        pass\n"
    )
    passed, printed = run_check("check_tool_message", Answer(source, "make_tool_message"), capsys)
    assert not passed and "did not finish within 2 s" in printed


def test_the_checks_oracles_do_not_use_the_code_under_study():
    """Neither the checks nor what runs the answers import the loop, turn assembly, tools,
    recordings or the lesson's failure cases: a bug there must not become the right answer."""
    studied = {
        "labkit.harness.formats.ollama",
        "labkit.harness.loop",
        "labkit.harness.tools",
        "labkit.harness.formats",
        "labkit.harness.formats.openai",
        "labkit.harness.formats.anthropic",
        "labkit.harness.formats.openai_responses",
        "labkit.harness.formats.gemini",
        "labkit.harness.formats.assembly",
        "labkit.recording",
        "labkit.recording.contents",
        "labkit.recording.files",
        "labkit.recording.attempt",
        "labkit.recording.replaying",
        "labkit.recording.scenarios",
        "labkit.lessons.failures",
        "labkit",
        "labkit.harness",
        "labkit.harness.gate",
        "labkit.harness.budget",
        "labkit.harness.shell",
        "labkit.harness.shell_syntax",
        "labkit.harness.conversation",
        "labkit.harness.toolset",
        "labkit.harness.edits",
        "labkit.harness.search_replace",
        "labkit.harness.toolkit",
        "labkit.harness.workspace",
        "labkit.harness.search",
        "labkit.recording.probes",
        "labkit.harness.sandbox",
        "labkit.harness.sandbox_launch",
        "labkit.harness.process_cap",
        "labkit.models.scripted",
        "labkit.recording.harness_setup",
        "labkit.models",
        "labkit.models.replay_server",
        "labkit.models.ollama_server",
        "labkit.models.openai_server",
        "labkit.models.anthropic_server",
        "labkit.models.responses_server",
        "labkit.models.gemini_server",
        "labkit.harness.hooks",
        "labkit.harness.hook_process",
        "labkit.harness.json_schema",
        "labkit.harness.mcp_client",
        "labkit.harness.mcp_tools",
        "labkit.lessons.extension",
        "labkit.extensions.mcp_server",
        "labkit.harness.system_prompt",
        "labkit.harness.skills",
        "labkit.harness.todo",
        "labkit.harness.subagents",
        "labkit.harness.parallel",
        "labkit.harness.byte_cuts",
        "labkit.lessons.ground_state",
        "labkit.recording.family",
        "labkit.harness.bm25",
        "labkit.harness.chunking",
        "labkit.harness.retrieval",
        "labkit.harness.symbol_places",
        "labkit.harness.symbols",
        "labkit.harness.lsp_client",
        "labkit.extensions.embeddings",
        "labkit.extensions.minilm",
        "labkit.pieces",
        "labkit.batch",
        "labkit.batch.results",
        "labkit.harness.journal",
        "labkit.harness.taskset",
        "labkit.harness.task_tools",
        "labkit.recording.durable",
        "labkit.lessons.batch_view",
        "labkit.lessons.loop_live",
    }
    grading = Path(checks.__file__).parent.parent
    modules = {path: "labkit.grading.checks" for path in (grading / "checks").glob("*.py")}
    runners = ("feedback", "isolated", "answer_process", "driven")
    modules.update({grading / f"{name}.py": "labkit.grading" for name in runners})
    assert {Path(lesson.__file__) for lesson in checks.LESSONS} < set(modules)
    for module, package in modules.items():
        tree = ast.parse(module.read_text())
        imported = {
            resolve_name("." * node.level + (node.module or ""), package)
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom)
        }
        imported |= {
            alias.name
            for node in ast.walk(tree)
            if isinstance(node, ast.Import)
            for alias in node.names
        }
        assert imported, module
        # the runner starts each answer's process in lesson 12's sandbox: it contains the
        # answer; no expected value comes from it
        allowed = {"labkit.harness.sandbox"} if module.name == "isolated.py" else set()
        assert not (imported & studied) - allowed, (module, imported & studied)


def test_the_written_out_stop_reasons_are_the_loops():
    assert set(STOP_REASON_NAMES) == set(STOP_REASONS)


def test_drawn_cases_differ_between_runs_and_the_feedback_shows_the_seed(capsys):
    wrong = Answer("def may_dispatch(chunks):\n    return len(chunks) % 2 == 0\n", "may_dispatch")
    seeds = set()
    for _ in range(3):
        run_check(
            "check_may_dispatch",
            Answer(RIGHT["check_may_dispatch"].replace("$name", "may_dispatch"), "may_dispatch"),
            capsys,
        )
        passed, printed = run_check("check_may_dispatch", wrong, capsys)
        assert not passed
        seeds |= {word for word in printed.split() if word.rstrip("),;.").isdigit()}
    assert len(seeds) > 1


def test_long_values_are_shown_around_their_first_difference():
    expected = "x" * 2000 + "THE DIFFERENCE" + "y" * 2000
    got = "x" * 2000 + "the difference" + "y" * 2000
    mine, theirs = shown_apart(got, expected)
    assert "the difference" in mine and "THE DIFFERENCE" in theirs
    assert "first difference is at character 2,001" in mine
    assert len(mine) < 450


def test_the_renamed_test_case_really_changes_the_test_file():
    assert b"def test_backslash" in (SAMPLE_DIR / TEST_FILE).read_bytes()


def test_the_bounded_replay_gives_what_the_check_expects():
    assert (
        bounded_outcome()
        == BOUNDED_TRUTH
        == {"model_requests": 3, "tool_calls": 3, "stop_reason": "max_turns", "final_exit_code": 0}
    )


def test_each_failure_case_stops_as_the_lesson_explains_and_together_they_show_every_reason():
    stops = {}
    for name, case in failure_cases().items():
        events, after = run_case(case)
        stops[name] = (events[-1]["reason"], events[-1]["tool_calls"], after.exit_code)
        assert events[-1]["reason"] in case.why
    assert stops == {
        "no_done": ("incomplete_model_turn", 0, 1),
        "length": ("incomplete_model_turn", 0, 1),
        "unknown_tool": ("assistant_finished", 1, 1),
        "false_claim": ("assistant_finished", 1, 1),
        "server_down": ("model_error", 0, 1),
        "empty_response": ("empty_response", 0, 1),
        "malformed": ("malformed_model_turn", 0, 1),
        "tools_died": ("tools_failed", 1, 1),
    }
    shown = {reason for reason, _, _ in stops.values()} | {BOUNDED_SHOWN}
    assert shown == set(STOP_REASONS)  # with the bounded run, lesson 05 shows all seven


def test_each_run_exercise_5b_asks_about_stops_as_the_check_expects():
    stops = {}
    for name, case in exercise_cases().items():
        events, _ = run_case(case)
        stops[name] = (events[-1]["reason"], events[-1]["tool_calls"])
        assert events[-1]["reason"] in case.why and events[-1]["reason"] in STOP_WHY[name]
    assert {name: reason for name, (reason, _) in stops.items()} == STOP_TRUTH
    assert stops == {
        "call_after_done": ("malformed_model_turn", 0),
        "answer_cut": ("incomplete_model_turn", 0),
        "unknown_tool_last_turn": ("max_turns", 1),
        "server_fails_later": ("model_error", 1),
    }
    assert not set(STOP_TRUTH) & set(failure_cases())  # runs the lesson has not shown


def test_an_unknown_tool_becomes_an_error_result_the_model_reads():
    events, _ = run_case(failure_cases()["unknown_tool"])
    result = next(e["result"] for e in events if e["type"] == "tool_result")
    assert "unknown tool 'grep'" in result["error"]


def test_a_stream_is_described_chunk_by_chunk_and_long_runs_are_counted():
    short = [
        {"message": {"role": "assistant", "thinking": "hm", "content": ""}, "done": False},
        {"message": {"role": "assistant"}, "done": False},
        {
            "message": {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"function": {"name": "run_tests", "arguments": {}}}],
            },
            "done": False,
        },
        {"message": {"role": "assistant", "content": "ok"}, "done": True, "done_reason": "length"},
    ]
    assert describe_stream(short) == (
        "[thinking 'hm', no content key, content None + tool call "
        "run_tests(), text 'ok' + done (length)]"
    )
    many = [{"message": {"role": "assistant", "content": "ab"}, "done": False}] * 9
    assert describe_stream(many) == "[9 text fragments]"
    assert describe_stream([]) == "[] (no chunks at all)"


@pytest.mark.parametrize("what", list(CHEATS))
def test_each_cheat_fails_where_the_grade_is_decided(what):
    """``grade`` is what autograding runs outside the learner's kernel: every cheat fails there,
    and none of them makes it raise (a raise would drop the learner's submission)."""
    check, source = CHEATS[what]
    passed, text = grade(check, source.replace("$name", ANSWER_NAMES[check]), ANSWER_NAMES[check])
    assert not passed, (what, text)
    assert "AssertionError" in text


# --- Lessons 07 and 08: the references against the harness they must not use -------------


def test_the_policy_reference_and_the_harness_gate_agree_on_every_drawn_command():
    """Two implementations written apart: the lesson's rules as the check states them, and
    labkit's gate with the policy the permissions run was recorded under."""
    draw = random.Random(16)
    commands = [command for _, command, _ in POLICY_CASES + HIDDEN_POLICY_CASES]
    commands += [drawn_command(draw) for _ in range(5000)]
    differ = [c for c in commands if team_verdict(c) != check_command(SHELL_POLICY, c).action]
    assert differ == []
    verdicts = {team_verdict(c) for c in commands}
    assert verdicts == {"allow", "ask", "deny"}


def test_the_commands_drawn_for_a_run_of_the_policy_check_carry_every_verdict():
    """Judged by labkit's gate (written apart from the check's rules): whatever the seed, a run
    draws commands of all three verdicts, so an answer that knows only the listed cases and
    says one word for any other command is caught by a drawn case, every run."""
    for seed in range(300):
        drawn = drawn_commands(random.Random(seed))
        verdicts = [check_command(SHELL_POLICY, command).action for command in drawn]
        assert len(drawn) == 8 and {"allow", "ask", "deny"} <= set(verdicts), (seed, verdicts)


def test_the_recorded_calls_the_gate_would_stop_with_the_answers_swapped_are_the_checks():
    """Exercise 7b: the seven recorded calls through labkit's gate under the recorded policy,
    the person's answers swapped; the recorded run itself stopped calls 5 and 7."""
    recording = load_recording("permissions.json")
    calls = [(e["name"], e["arguments"]) for e in recording["events"] if e["type"] == "tool_start"]
    assert len(calls) == len(RECORDED_CALLS)
    recorded = [e for e in recording["events"] if e["type"] == "permission"]
    assert [n for n, e in enumerate(recorded, 1) if e["decision"] == "deny"] == [5, 7]
    assert recorded_answers(recording) == SWAPPED_ANSWERS[::-1]
    gate = Gate(SHELL_POLICY, Answers(list(SWAPPED_ANSWERS)))
    decisions = [gate.review(name, arguments) for name, arguments in calls]
    assert [n for n, d in enumerate(decisions, 1) if not d.allowed] == STOPPED_CALLS
    for (_, fate), decision in zip(RECORDED_CALLS, decisions):
        assert fate.startswith("would have run" if decision.allowed else "would have been stopped")
        assert ("person" in fate) == (decision.verdict.action == "ask")


def test_the_cut_reference_and_the_harness_cut_agree():
    draw = random.Random(8)
    cases = [(text, limit) for _, text, limit, _ in CUT_CASES + HIDDEN_CUT_CASES]
    cases += [drawn_text(draw) for _ in range(2000)]
    assert all(cut_reference(text, limit) == head_and_tail(text, limit) for text, limit in cases)


def test_the_compaction_reference_keeps_the_order_and_fits_or_does_all_it_may():
    for label, messages, budget, _ in compaction_cases():
        result = compacted_reference(messages, budget)
        assert order_problems(result) == [], label
        assert [m["role"] for m in result] == [m["role"] for m in messages]
        newest = max(i for i, m in enumerate(messages) if m["role"] == "assistant")
        assert result[newest:] == messages[newest:], label
        could = [
            i
            for i, m in enumerate(messages[:newest])
            if m["role"] == "tool" and len(m["content"]) > len(NOTE)
        ]
        done = [i for i, m in enumerate(result) if m != messages[i]]
        assert done == could[: len(done)], label  # oldest first
        assert size(result) <= budget or done == could, label
        if done:  # one fewer would not have fitted
            undo = [dict(m) for m in result]
            undo[done[-1]] = messages[done[-1]]
            assert size(undo) > budget, label


# --- Lesson 11: the references against the harness they must not use -----------------------


def test_the_schema_reference_and_the_harness_conversion_agree():
    draw = random.Random(11)
    cases = [(tool, provider) for _, tool, provider, _ in SCHEMA_CASES + HIDDEN_SCHEMA_CASES]
    cases += [drawn_tool(draw) for _ in range(2000)]
    refused = 0
    for tool, provider in cases:
        try:
            expected = schema_reference(tool, provider)
        except ValueError:
            refused += 1
            with pytest.raises((ValueError, KeyError)):  # KeyError: a provider it does not know
                tool_schema_of(tool, FORMATS[provider])
            continue
        assert tool_schema_of(tool, FORMATS[provider]) == expected, (tool, provider)
    assert 0 < refused < len(cases)
    assert set(NAME_PATTERNS) == set(FORMATS)  # every format the course speaks


def test_the_decision_reference_and_the_harness_rules_agree():
    draw = random.Random(12)
    cases = [(output, code) for _, output, code, _ in DECISION_CASES + HIDDEN_DECISION_CASES]
    cases += [drawn_hook_run(draw) for _ in range(3000)]
    kinds = set()
    for output, code in cases:
        made = decision_of("h", output["point"], output["stdout"], output["stderr"], code)
        fields = made.event_fields()
        for key in ("hook", "point", "detail"):
            fields.pop(key, None)
        expected = decision_reference(output, code)
        assert fields == expected, (output, code)
        kinds.add((expected["decision"], expected.get("failure")))
    assert {failure for _, failure in kinds} == {None, "timeout", "crash", "not_json", "bad_reply"}


def test_a_local_plus_equals_passes_exercise_2a_and_the_feedback_says_why(capsys):
    """The lead's decision: CPython runs a local ``text += piece`` in linear time, which is
    what the check measures, so it passes; the feedback says that CPython's in-place shortcut
    is why, and that ``join`` is what holds everywhere (a dict's or an attribute's += fails:
    answers.py)."""
    source = (
        "def assemble_content(chunks):\n    text = ''\n    for chunk in chunks:\n"
        "        text += chunk['message'].get('content') or ''\n    return text\n"
    )
    passed, printed = run_check(
        "check_assemble_content", Answer(source, "assemble_content"), capsys
    )
    assert passed, printed
    assert "CPython grows a string in place" in printed and "''.join(parts)" in printed
    passed, printed = run_check(
        "check_assemble_content",
        answer(RIGHT["check_assemble_content"], "check_assemble_content"),
        capsys,
    )
    assert passed and "CPython grows" not in printed
    assert not adds_to_a_local("def f(chunks):\n    n = 0\n    n += 1\n    return ''\n")

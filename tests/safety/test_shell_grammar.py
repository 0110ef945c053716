"""The gate's shell grammar, checked against real bash and dash.

The gate promises to judge every command a call would run. Each case here is a way a shell
script can run a command (``touch M``, which a deny rule names) without spelling it as a
plain command: arithmetic that evaluates a subscript, a parameter expansion's word, a
nested shell after options, a runner, a builtin that evaluates text later... First the
real shell runs the script in an empty folder, to show the command really runs (so the
case is a real threat, not a guess); then the gate must deny it. The other way round, a
generated script the gate *allows* is run by both shells, and must not run the marker.
Every case counts in the safety summary.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from real_shells import TOUCH, needs_shells, runs_marker

from labkit.harness.gate import Policy, allow, check_command, deny

POLICY = Policy(
    [allow("echo *"), allow("true"), allow("cat *"), allow("<< *"), allow("<<< *"), deny("touch *")]
)
SUBSCRIPT = "'a[$(touch M)]'"  # a subscript that runs the marker when bash evaluates it

#: Scripts that run `touch M` in the shells named, hidden from a reader of plain commands.
HIDDEN = {
    "the issue's $[_] (arithmetic on the last word)": (
        "bash",
        f'echo {SUBSCRIPT}; echo "$[_]"',
    ),
    "$((_)) after a word holding a subscript": ("bash", f"echo {SUBSCRIPT}; echo $((_))"),
    "$((x)) on a variable": ("bash", f"x={SUBSCRIPT}; echo $((x))"),
    "$(( $x )) on an expansion": ("bash", f"x={SUBSCRIPT}; echo $(( $x ))"),
    "((i)), an arithmetic command": ("bash", f"i={SUBSCRIPT}; ((i))"),
    "let i": ("bash", f"i={SUBSCRIPT}; let i"),
    "[[ -eq ]]": ("bash", f"x={SUBSCRIPT}; [[ $x -eq 1 ]]"),
    "[[ -v ]]": ("bash", f"[[ -v {SUBSCRIPT} ]]"),
    "test -v": ("bash", f"test -v {SUBSCRIPT}"),
    "[ -v ]": ("bash", f"[ -v {SUBSCRIPT} ]"),
    "printf -v with a subscript": ("bash", f"printf -v {SUBSCRIPT} 1"),
    "printf -v with a variable": ("bash", f'x={SUBSCRIPT}; printf -v "$x" 1'),
    "read into a subscript": ("bash", f"read {SUBSCRIPT} <<< x"),
    "declare -n, a nameref": ("bash", f"declare -n r={SUBSCRIPT}; echo $r"),
    "declare -i": ("bash", f"i={SUBSCRIPT}; declare -i n=i"),
    "declare with a subscript": ("bash", f"declare {SUBSCRIPT[:-1]}=1'"),
    "local with a subscript": ("bash", f"f() {{ local {SUBSCRIPT[:-1]}=1'; }}; f"),
    "${!x}, an indirect expansion": ("bash", f"x={SUBSCRIPT}; echo ${{!x}}"),
    "${b[i]}, a subscript on a name": ("bash", f"i={SUBSCRIPT}; echo ${{b[i]}}"),
    "b[i]=1, an array assignment": ("bash", f"i={SUBSCRIPT}; b[i]=1"),
    "${x@P}, a prompt expansion": ("bash", "x='$(touch M)'; echo ${x@P}"),
    "PS4 under set -x": ("bash", "PS4='$(touch M)'; set -x; true"),
    "hash -p": ("bash", f"hash -p {TOUCH} ls; ls M"),
    "an alias (bash -O expand_aliases)": ("bash", "shopt -s expand_aliases\nalias t=touch\nt M"),
    "an alias (dash)": ("dash", "alias t=touch\nt M"),
    "((...)) is two subshells to dash": ("dash", "((touch M))"),
    "${x:-$(...)}": ("bash dash", "echo ${x:-$(touch M)}"),
    '"${x:-$(...)}"': ("bash dash", 'echo "${x:-$(touch M)}"'),
    "${x/$(...)/y}": ("bash", "x=1; echo ${x/$(touch M)/y}"),
    "${x#$(...)}": ("bash dash", "x=1; echo ${x#$(touch M)}"),
    "${x:-{a}$(...)}, braces counted": ("bash dash", "echo ${x:-{a}$(touch M)}"),
    "$(( $(...) ))": ("bash dash", "echo $(( $(touch M) 1 ))"),
    "$((...) ...) is a command substitution to bash": ("bash", "echo $((echo a) ; touch M)"),
    "nested backticks": ("bash dash", "echo `echo \\`touch M\\``"),
    "a here-document's body": ("bash dash", "cat <<E\n$(touch M)\nE"),
    "a here-document with a quote in its body": ("bash dash", "cat <<E\nit's $(touch M)\nE"),
    "<<- strips tabs": ("bash dash", "cat <<-E\n\t$(touch M)\n\tE"),
    "a here-string": ("bash", "cat <<< $(touch M)"),
    "a process substitution": ("bash", "cat <(touch M)"),
    "sh -c in bash -c": ("bash dash", "sh -c 'touch M'"),
    "bash -c in sh -c in bash -c": ("bash dash", "bash -c \"sh -c 'touch M'\""),
    "sh -c -- script": ("bash dash", "sh -c -- 'touch M'"),
    "bash -o errexit -c": ("bash dash", "bash -o errexit -c 'touch M'"),
    "bash -c -e script": ("bash dash", "bash -c -e 'touch M'"),
    "sh +x -c": ("bash dash", "sh +x -c 'touch M'"),
    "bash -O extglob -c": ("bash dash", "bash -O extglob -c 'touch M'"),
    "bash -ec (bundled)": ("bash dash", "bash -ec 'touch M'"),
    "sh -oc errexit script (o takes the next word)": ("bash dash", "sh -oc errexit 'touch M'"),
    "a shell reading its input": ("bash dash", "echo 'touch M' | sh"),
    "bash <<< script": ("bash", "bash <<< 'touch M'"),
    "eval": ("bash dash", "eval 'touch M'"),
    "eval of a variable": ("bash dash", "x='touch M'; eval \"$x\""),
    "trap on EXIT": ("bash dash", "trap 'touch M' EXIT"),
    "env": ("bash dash", "env touch M"),
    "env -i with an assignment": ("bash dash", "env -i A=1 touch M"),
    "nice -n": ("bash dash", "nice -n 5 touch M"),
    "timeout": ("bash dash", "timeout 5 touch M"),
    "command": ("bash dash", "command touch M"),
    "exec": ("bash dash", "exec touch M"),
    "time -p": ("bash dash", "time -p touch M"),
    "xargs": ("bash dash", "echo M | xargs touch"),
    "find -exec": ("bash dash", "find . -maxdepth 0 -exec touch M \\;"),
    "a path to the program": ("bash dash", f"{TOUCH} M"),
    "a program named by a variable": ("bash dash", "t=touch; $t M"),
    "a program named by a substitution": ("bash dash", '"$(echo touch)" M'),
    "a program named by a glob": ("bash dash", f"{TOUCH[:-1]}? M"),
    "an escaped program name": ("bash dash", "t\\ouch M"),
    "an assignment in front": ("bash dash", "A=1 touch M"),
    "a function's body": ("bash dash", "f() { touch M; }; f"),
    "function f { ... }": ("bash", "function f { touch M; }; f"),
    "case": ("bash dash", "case x in x) touch M;; esac"),
    "coproc": ("bash", "coproc touch M; wait"),
    "if/then": ("bash dash", "if true; then touch M; fi"),
    "a for loop": ("bash dash", "for x in M; do touch $x; done"),
    "$'...' holding the name": ("bash", "$'\\x74ouch' M"),
    "setsid": ("bash dash", "setsid -w touch M"),
    "a named file descriptor in front": ("bash", "{fd}>/dev/null touch M"),
    "/usr/bin/time's options (dash)": ("dash", "time -o /dev/null touch M"),
    "an exported function through env": (
        "bash dash",
        "env 'BASH_FUNC_f%%=() { touch M; }' bash -c f",
    ),
    "mapfile -C, a callback": ("bash", "mapfile -C 'touch M' -c 1 x <<< a"),
    "BASH_ENV in front of a shell": ("bash", "BASH_ENV=<(echo touch M) bash -c true"),
}


@needs_shells
@pytest.mark.parametrize("name", HIDDEN)
def test_a_command_a_shell_really_runs_is_denied_however_it_is_spelled(name, safety_tally):
    shells, script = HIDDEN[name]
    for shell in shells.split():
        assert runs_marker(shell, ["-c", script]), f"{shell} does not run the marker: {script!r}"
        verdict = check_command(POLICY, [shell, "-c", script])
        assert verdict.action == "deny", (shell, script, verdict)
        safety_tally["shell constructs that really ran a denied command: denied"] += 1
    assert check_command(POLICY, script).action == "deny", script


#: Option arrangements around a shell's script: (options before, options after -c).
ARRANGEMENTS = [
    ("-c", ""), ("-ec", ""), ("-ce", ""), ("-c -e", ""), ("-e -c", ""), ("-c --", ""),
    ("-- -c", ""), ("-o errexit -c", ""), ("-c -o errexit", ""), ("+x -c", ""),
    ("-O extglob -c", ""), ("-oc errexit", ""), ("-co errexit", ""), ("-eo pipefail -c", ""),
    ("-c -", ""), ("- -c", ""), ("--norc -c", ""), ("-c", "--norc"), ("-x -c", ""),
    ("-c +e", ""), ("-s -c", ""), ("-c -s", ""), ("-i -c", ""), ("-n -c", ""),
    ("--rcfile x -c", ""), ("-l -c", ""), ("-cl", ""), ("-c -l", ""), ("--posix -c", ""),
    ("-c -x -e", ""), ("-c -abc", ""), ("-c --version", ""), ("-D -c", ""),
    ("-c -o", "x"), ("-o -c", ""), ("-c", "name arg"), ("+c", ""), ("-c +o", "errexit"),
]  # fmt: skip


@needs_shells
@pytest.mark.parametrize("before, after", ARRANGEMENTS)
def test_a_shells_script_is_found_after_any_options_or_the_call_is_denied(
    before, after, safety_tally
):
    """Wherever bash or dash find the script among the options, the gate finds it too (or
    refuses to judge): if the shell runs the marker, the gate denies."""
    for shell in ("bash", "dash"):
        for name in (shell, "sh", f"/bin/{shell}"):
            words = [name, *before.split(), "touch M", *after.split()]
            ran = runs_marker(shell, words[1:])
            verdict = check_command(POLICY, words)
            if ran:
                assert verdict.action == "deny", (words, verdict)
            safety_tally["shell option arrangements tried against bash and dash"] += 1


def test_the_issues_attack_leaves_the_victim_in_place_end_to_end(safety_tally):
    """Issue 29, item 1, through the loop, the gate and run_command: an echo-only policy."""
    from conftest import call

    from labkit import PlannedTurn, ScriptedChat, ShellTools, agent_events, sample_copy
    from labkit.harness.gate import Gate

    attack = ["bash", "-c", "echo 'a[$(rm -rf victim)]'; echo \"$[_]\""]
    chat = ScriptedChat(
        [
            PlannedTurn(tool_calls=[call("run_command", command=attack)]),
            PlannedTurn(content="done"),
        ]
    )
    gate = Gate(Policy([allow("echo *"), deny("rm *")]))
    with sample_copy() as root:
        (root / "victim").write_text("keep me")
        events = list(agent_events(chat, ShellTools(root), "task", gate=gate))
        assert (root / "victim").read_text() == "keep me"
    permission = next(event for event in events if event["type"] == "permission")
    assert (permission["verdict"], permission["decision"]) == ("deny", "deny")
    assert permission["rule"] == "deny rm *"
    assert events[-1]["type"] == "stopped" and events[-1]["tool_calls"] == 0
    safety_tally["shell constructs that really ran a denied command: denied"] += 1


#: Pieces of scripts the policy allows (text that only looks like a command included)...
ALLOWED_LOOKING = [
    "echo a",
    "echo 'a b'",
    "true",
    "cat /dev/null",
    "echo 'touch M'",
    'echo "touch M"',
    "echo \\$(touch M)",
    "echo '$(touch M)'",
    "echo 'a[$(touch M)]'",
    "echo '$[_]'",
    "echo \\`touch M\\`",
    'echo "\\$(touch M)"',
    "echo '${x:-$(touch M)}'",
    "echo '`'",
    "cat <<'E'\n$(touch M)\nE\n",
    "cat <<\\E\n`touch M`\nE\n",
    "cat <<< 'touch M'",
    "echo # ; touch M",
    "echo a 2>&1",
    "echo $'a'",
    "echo '\\'",
    "echo \\'",
]
#: ...and pieces it does not, or that change how the rest is read.
OTHERS = [
    "touch M", "$(touch M)", "`touch M`", '"$(touch M)"', "$[_]", "$((_))", "$((1+2))",
    "${x:-$(touch M)}", "${x:-a}", "${#x}", "${x[0]}", "'a[$(touch M)]'", '"$[_]"', "$x",
    "cat <<E\n$(touch M)\nE\n", "x=1", "sh -c", "eval", "env", "command", "'touch'",
    "t\\ouch", "{a,b}", "~", "'", '"', "\\", "(", ")", "`", "#", "<<", "$'\\''",
]  # fmt: skip
FRAGMENTS = ALLOWED_LOOKING * 3 + OTHERS
JOINS = [" ", "; ", " && ", " | ", "\n", ""]


@needs_shells
@settings(
    max_examples=300,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(st.lists(st.tuples(st.sampled_from(FRAGMENTS), st.sampled_from(JOINS)), max_size=6))
def test_what_the_gate_allows_runs_nothing_hidden_in_bash_or_dash(pieces):
    script = "".join(fragment + join for fragment, join in pieces)
    verdict = check_command(POLICY, ["bash", "-c", script])
    from conftest import SAFETY_TALLY

    SAFETY_TALLY["generated scripts judged against real shells"] += 1
    if verdict.action == "allow":
        for shell in ("bash", "dash"):
            assert not runs_marker(shell, ["-c", script]), (shell, script, verdict)
        SAFETY_TALLY[
            "generated scripts the gate allowed, run in bash and dash: none hid a command"
        ] += 1

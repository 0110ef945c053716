"""The scanner behind the gate: which commands a shell string runs, which words the shell
changes, what it refuses to judge, and how a rule names what the shell may still expand.
Real bash and dash check the same grammar in tests/safety/test_shell_grammar.py."""

import pytest

from labkit.harness.gate import Policy, allow, ask, check_command, deny
from labkit.harness.shell_syntax import (
    MAX_DEPTH,
    MAX_PARTS,
    ShellSyntaxError,
    TooComplex,
    commands_in,
)


def parts(text):
    return [
        (part.words, sorted(part.expanded), part.unknown is not None) for part in commands_in(text)
    ]


def test_words_are_built_as_the_shell_builds_them():
    assert parts("""ec'h'o "a b"\\ c d\\\ne""") == [(("echo", "a b c", "de"), [], False)]
    assert parts("echo $x ${y} '$z' \"$w\" *.py {a,b} ~ [x] a[") == [
        (
            ("echo", "$x", "${y}", "$z", "$w", "*.py", "{a,b}", "~", "[x]", "a["),
            [1, 2, 4, 5, 6, 7, 8],
            False,
        )
    ]


def test_substitutions_are_read_as_commands_before_the_command_holding_them():
    assert parts('echo $(rm a) `rm b` <(rm c) "${x:-$(rm d)}"') == [
        (("rm", "a"), [], False),
        (("rm", "b"), [], False),
        (("rm", "c"), [], False),
        (("rm", "d"), [], False),
        (("echo", "$(rm a)", "`rm b`", "<(rm c)", "${x:-$(rm d)}"), [1, 2, 3, 4], False),
    ]


def test_a_backticks_body_is_unescaped_before_it_is_read():
    assert [p.words for p in commands_in("echo `echo \\`rm -rf v\\``")][0] == ("rm", "-rf", "v")


def test_a_here_documents_body_is_read_for_expansions_unless_its_delimiter_is_quoted():
    text = "cat <<E; cat <<'Q'\nit's $(rm a)\nE\n$(rm b)\nQ\necho done"
    assert [p.words for p in commands_in(text)] == [
        ("<<", "E"),
        ("cat",),
        ("<<", "Q"),
        ("cat",),
        ("rm", "a"),
        ("echo", "done"),
    ]
    assert [p.words for p in commands_in("cat <<-E\n\t$(rm a)\n\tE\nls")][-2:] == [
        ("rm", "a"),
        ("ls",),
    ]


@pytest.mark.parametrize(
    "text",
    [
        "echo $[_]",
        "echo $((x))",
        "echo $(( $x + 1 ))",
        "echo ${a[i]}",
        "echo ${x:i}",
        "echo ${!x}",
        "echo ${x@P}",
        "echo \"${x:-'a}'}\"",
        "echo ${ rm -rf v; }",
        "((x))",
        "let x",
        "a[i]=1",
        "a=(1 2)",
        "PS4='$(rm)' pytest",
        "[[ $x -eq 1 ]]",
        "case x in x) ;; esac",
        "function f { rm -rf v; }",
        "select x in a; do :; done",
        "printf -v 'a[$(rm)]' 1",
        "read 'a[$(rm)]'",
        "declare -n r=x",
        "test -v x",
        "alias r=rm",
        "source ./x.sh",
        "hash -p /bin/rm ls",
        "$cmd -rf v",
        "sh script.sh",
        "zsh -c 'echo *(e:rm:)'",
        "sudo rm -rf v",
        "xargs -I{} {} -rf v",
        "env -S 'rm -rf v'",
        "bash --frobnicate -c 'ls'",
        'eval "$x"',
        'sh -c "$x"',
        "echo $'a\\'b'",
    ],
)
def test_what_the_scanner_cannot_judge_is_unknown_and_denied_where_anything_is(text):
    try:
        assert any(part.unknown for part in commands_in(text)), text
    except ShellSyntaxError:
        assert text.startswith("case")  # `)` closes nothing: unreadable, which is unknown too
    verdict = check_command(Policy([allow("echo *"), allow("ls"), deny("rm *")]), text)
    assert verdict.action == "deny", (text, verdict)
    assert check_command(Policy([allow("echo *"), allow("ls")]), text).action == "ask", text


@pytest.mark.parametrize(
    "text",
    [
        "echo $((1 + 2*3))",
        "echo ${x:-a} ${#x} ${a[0]} ${a[@]} ${x:1:2} ${x@Q}",
        "for f in *.py; do echo $f; done",
    ],
)
def test_arithmetic_on_numbers_and_plain_parameters_are_read(text):
    assert not any(part.unknown for part in commands_in(text))


def test_runners_are_judged_with_the_command_they_run():
    assert [p.words for p in commands_in("env -i A=1 nice -n 5 timeout -s KILL 5 rm x")] == [
        ("env", "-i", "A=1", "nice", "-n", "5", "timeout", "-s", "KILL", "5", "rm", "x"),
        ("nice", "-n", "5", "timeout", "-s", "KILL", "5", "rm", "x"),
        ("timeout", "-s", "KILL", "5", "rm", "x"),
        ("rm", "x"),
    ]
    xargs = commands_in("xargs -0 rm")[-1]
    assert xargs.words == ("rm",) and xargs.more and xargs.dynamic
    find = commands_in("find . -name '*.pyc' -exec rm {} + -exec ls \\;")
    assert [(p.words, sorted(p.expanded)) for p in find[1:]] == [(("rm", "{}"), [1]), (("ls",), [])]


def test_leading_assignments_change_the_environment_and_rules_start_after_them():
    part = commands_in("A=1 B=2 rm -rf .")[0]
    assert (part.first, part.dynamic) == (2, True)
    assert check_command(Policy([deny("rm *")]), "A=1 rm -rf .").action == "deny"
    assert check_command(Policy([allow("rm *")]), "A=1 rm -rf .").action == "ask"


def test_a_deny_rule_names_a_program_by_its_path_an_allow_rule_only_by_its_word():
    policy = Policy([allow("pytest *"), deny("rm *")])
    assert check_command(policy, ["/bin/rm", "-rf", "."]).action == "deny"
    assert check_command(policy, ["../../usr/bin/rm", "x"]).action == "deny"
    assert check_command(policy, ["./pytest"]).action == "ask"


@pytest.mark.parametrize(
    "text, expected",
    [
        ("git $x", "deny"),  # $x may be push
        ("git status $x", "ask"),  # static words differ from the rule's: the default
        ("rm -rf . $x", "deny"),  # $x may expand to nothing
        ("rm -rf . extra", "ask"),  # an exact rule, and one word too many
        ("git pu*", "deny"),  # a glob may match a file named push
        ('"$(echo git)" push', "deny"),  # the program itself is known only at run time
        ("xargs rm -rf .", "deny"),  # xargs may add nothing
    ],
)
def test_a_rule_that_may_name_a_command_once_the_shell_expands_it_applies(text, expected):
    policy = Policy([allow("git status"), deny("git push *"), deny("rm -rf ."), ask("ls *")])
    verdict = check_command(policy, text)
    assert verdict.action == expected, (text, verdict)
    if expected == "deny" and "$(" not in text:
        assert "may be what the rule" in verdict.reason


def test_nesting_past_the_bound_is_refused_with_a_denial_not_an_exception():
    deep = "echo " + "$(" * 1000 + ")" * 1000
    with pytest.raises(TooComplex):
        commands_in(deep)
    for command in (
        deep,
        "echo " + "`" * 1000,
        "echo " + "${x:-" * 1000 + "}" * 1000,
        "echo $((" + "(" * 1000 + ")" * 1000 + "))",
        "env " * 1000 + "rm",
        ["sh", "-c", "sh -c " * (MAX_DEPTH + 2)],
        "echo ok;" * (MAX_PARTS + 1),
    ):
        verdict = check_command(Policy([allow("echo *")]), command)
        assert verdict.action != "allow"
    verdict = check_command(Policy([allow("echo *")]), deep)
    assert verdict.action == "deny" and "nests more than 32 levels" in verdict.reason
    shallow = "echo " + "$(" * (MAX_DEPTH - 2) + "rm x" + ")" * (MAX_DEPTH - 2)
    assert check_command(Policy([deny("rm *")]), shallow).rule == "deny rm *"

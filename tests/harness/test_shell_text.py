"""A command shown as a person would type it: readable, and meaning what runs."""

import shlex

from labkit import Gate, Policy, allow, check_command, deny
from labkit.harness.gate import describe
from labkit.harness.shell_text import typed

WHO_RUNS_IT = ["python", "-c", "import getpass; print('I run as', getpass.getuser())"]


def test_a_word_with_single_quotes_is_double_quoted_not_spliced():
    line = typed(WHO_RUNS_IT)
    assert line == "python -c \"import getpass; print('I run as', getpass.getuser())\""
    assert "'\"'\"'" not in line
    assert shlex.split(line) == WHO_RUNS_IT  # pasted into a shell, it is the same command


def test_words_a_shell_would_change_are_quoted_so_they_stay_as_they_are():
    words = ["echo", "$HOME", "a b", "it's $5", "*.py", ""]
    line = typed(words)
    assert line == "echo '$HOME' 'a b' 'it'\"'\"'s $5' '*.py' ''"
    assert shlex.split(line) == words


def test_the_gates_question_shows_the_command_as_typed():
    assert describe("run_command", {"command": WHO_RUNS_IT}) == typed(WHO_RUNS_IT)
    asked = []
    Gate(Policy([], default="ask"), decide=lambda command, verdict: asked.append(command)).review(
        "run_command", {"command": WHO_RUNS_IT}
    )
    assert asked == ["python -c \"import getpass; print('I run as', getpass.getuser())\""]


def test_a_scripts_command_is_shown_as_the_shell_receives_it():
    policy = Policy([allow("python -m pytest *"), deny("rm *")], default="ask")
    in_a_script = check_command(policy, ["sh", "-c", "python -m pytest $HOME"]).reason
    assert in_a_script.startswith("`python -m pytest $HOME`: it depends on what the shell")
    without_a_shell = check_command(policy, ["python", "-m", "pytest", "$HOME"]).reason
    assert without_a_shell.startswith("`python -m pytest '$HOME'` matches")  # five plain letters
    redirected = check_command(policy, ["sh", "-c", "python -m pytest > log"]).reason
    assert redirected.startswith("`> log`: no rule matches it")

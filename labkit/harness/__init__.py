"""The harness the course teaches: the program around a model that makes its proposals act.

Read it in this order, and follow one request from start to end without leaving
this folder:

- ``contracts.py``: every plug-in the loop takes (a model, tools, a wire format, a gate,
  a budget, hooks), the :class:`Turn` a reply is folded into, and what each event holds;
- ``loop.py``: ``agent_events``, the loop itself;
- ``formats/``: what is per provider, one module each (``ollama.py``, ``openai.py``,
  ``anthropic.py``): how a reply streams in and is folded into a turn, how results go back;
- ``tools.py``: the three tools, confined to a copy of the sample repository;
- ``prompt.py``: the words the model is given;
- ``sample.py``: disposable copies of the sample, and the independent test check.

Beside them: ``toolset.py`` (a tool's name, schema and handler in one record),
``frozen.py`` (read-only messages), ``pytest_run.py`` and ``reaper.py`` (running tests
safely), ``atomic.py`` (writing files whole), and the pieces of the later lessons:
``shell.py`` (a shell tool) with ``byte_cuts.py`` (its output cut between characters),
``gate.py`` (a permission gate) with ``shell_syntax.py``, ``shell_words.py`` and
``shell_programs.py`` (the commands a shell string would run), ``conversation.py``
(measuring a conversation), ``budget.py`` (the context budget), ``hooks.py`` with
``hook_process.py`` (programs the user configures around every call, lesson 11),
``mcp_client.py`` with ``mcp_tools.py`` and ``json_schema.py`` (tools that live in another
process, over the Model Context Protocol, lesson 11), and ``sandbox.py`` with
``sandbox_launch.py`` and ``process_cap.py`` (a bubblewrap sandbox under the gate, lesson
12), and lesson 10's ground state: ``system_prompt.py`` (the system prompt assembled from
named parts, the project's ``AGENTS.md`` among them), ``skills.py`` (instructions loaded on
demand), ``todo.py`` (a plan the model keeps), ``subagents.py`` (the same loop run with a
fresh conversation, as one tool call) and ``parallel.py`` (a turn's read-only calls at once).
This package imports only the standard library and itself: the models, recordings,
lessons and grading are built on it, not in it.
"""

from .contracts import EVENT_TYPES, STOP_REASONS, Chat, ToolCall, Tools, Turn, tool_names
from .formats import ANTHROPIC, FORMATS, OLLAMA, OPENAI, format_of
from .formats.ollama import OllamaAssembler, assemble_turn, tool_message
from .loop import MAX_TURNS, agent_events, call_tool
from .prompt import REPAIR_TASK, SYSTEM_PROMPT
from .sample import SAMPLE_DIR, SOURCE_FILE, TEST_FILE, Checks, file_sha256, run_checks, sample_copy
from .tools import RepoTools

__all__ = [
    "ANTHROPIC",
    "EVENT_TYPES",
    "FORMATS",
    "MAX_TURNS",
    "OLLAMA",
    "OPENAI",
    "ToolCall",
    "format_of",
    "REPAIR_TASK",
    "SAMPLE_DIR",
    "SOURCE_FILE",
    "STOP_REASONS",
    "SYSTEM_PROMPT",
    "TEST_FILE",
    "Chat",
    "Checks",
    "RepoTools",
    "Tools",
    "Turn",
    "OllamaAssembler",
    "agent_events",
    "assemble_turn",
    "call_tool",
    "file_sha256",
    "run_checks",
    "sample_copy",
    "tool_message",
    "tool_names",
]

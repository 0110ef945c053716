"""labkit: the harness of the 'Build a coding-agent loop' course, and what the course builds on it.

- ``labkit.harness``: what the lessons teach. The loop (``agent_events``) sends the
  conversation to a model, assembles each streamed reply (``assemble_turn``),
  dispatches complete tool calls to ``RepoTools`` and decides when to stop; the
  independent check says whether the sample's tests pass. Standard library only.
- ``labkit.models``: where replies come from: a live Ollama (``OllamaModel``), any
  OpenAI-compatible server (``OpenAIModel``), Anthropic (``AnthropicModel``), any server of
  OpenAI's Responses API (``ResponsesModel``), Gemini (``GeminiModel``), a recording
  replayed in process (``ReplayModel``) or over HTTP (a replay server, which
  ``serve_recording`` starts), or a script.
- ``labkit.recording``: an attempt captured whole, saved, loaded, replayed and served.
- ``labkit.lessons``: the lessons' runs, failure cases and widgets.
- ``labkit.grading``: the exercises' checks (``labkit.exercises``), the student edition
  and autograding.
- ``labkit.settings``: the defaults and folders every entry point shares.

Lesson 14 adds a task set (``load_tasks``, ``TaskTools``), durable runs kept in a journal
(``run_durable``, ``read_journal``), batches over a task set (``run_batch``, ``summary``,
``ResultsTable``) and a loop run behind every SDK (``behind_every_sdk``); ``labkit.pieces``
holds what a learner's own loop may use.

Lessons 07 and 08 add the shell behind a permission gate (``ShellTools``,
``Policy`` with ``allow``/``deny``/``ask``, ``Gate``, ``Answers``) and the context budget
(``measure``, ``request_sizes``, ``head_and_tail``, ``compact``, ``Budget``); lesson 09 the
standard toolkit (``Toolkit``, ``apply_edit``, ``parse_search_replace``) and the probes
that measured a real model's first tool choice (``load_probes``, ``choice_counts``,
``sampled_choice_counts``) and the prompt its server built (``server_prompt``). Lesson 11
adds tools from an MCP server (``MCPTools``, ``tool_schema_of``, ``result_of``) and hooks
(``load_hooks``, ``HookSet``, ``PythonHook``, ``decision_of``); lesson 12 a sandbox under
the gate (``Sandbox``, ``Limits``, ``SANDBOX_PROFILES``, ``SandboxUnavailable``). Lesson 10
adds the ground state: a system prompt from named parts (``PromptPart``, ``assembled``,
``project_part``), skills (``Skills``), a plan (``Plan``), subagents (``Subagents``,
``subagent_result``), a turn's read-only calls at once (``ThreadRunner``), and its run
(``run_ground``) with a parent and its children in one recording (``family_chats``), and a
planner and a coder, each stage measured (``plan_then_code``). Lesson 13 finds code in a
larger sample (``PROJECT``): a language server's answers (``SymbolTools``), retrieval before
each request (``WorkspaceIndex``, ``BM25Retriever``, ``MiniLMRetriever``,
``retrieval_hook``) and the questions that compare them (``compare``).

The names below are the ones the lessons use. The widgets (``ChunkStepper``,
``ConversationView``, ``ApprovalPanel``) load ipywidgets only when first used, so
importing labkit needs no kernel; the live models load their SDKs only when first used,
so a replay needs none of them.
"""

from .batch import TASK_RECORDINGS, read_results, resolved, run_batch, summary, summary_lines
from .harness import (
    EVENT_TYPES,
    MAX_TURNS,
    REPAIR_TASK,
    SOURCE_FILE,
    STOP_REASONS,
    SYSTEM_PROMPT,
    TEST_FILE,
    Chat,
    Checks,
    OllamaAssembler,
    RepoTools,
    ToolCall,
    Tools,
    Turn,
    agent_events,
    assemble_turn,
    call_tool,
    file_sha256,
    run_checks,
    sample_copy,
    tool_message,
)
from .harness.budget import Budget, compact, head_and_tail
from .harness.chunking import chunk_source
from .harness.contracts import PromptPart
from .harness.conversation import measure, order_problems, request_sizes, schema_sizes
from .harness.edits import apply_edit
from .harness.formats import FORMATS
from .harness.gate import Answers, Gate, Policy, allow, ask, check_command, deny
from .harness.hooks import CommandHook, HookSet, PythonHook, decision_of, load_hooks
from .harness.journal import JournalError, read_journal, resume_point
from .harness.mcp_tools import MCPTools, result_of, tool_schema_of
from .harness.parallel import ThreadRunner
from .harness.project import PROJECT, PROJECT_TASK, SYMBOLS_NOTE
from .harness.prompt import (
    BUDGET_TASK,
    EXTENSION_TASK,
    GROUND_TASK,
    SANDBOX_TASK,
    SHELL_TASK,
    TOOLKIT_TASK,
)
from .harness.retrieval import BM25Retriever, WorkspaceIndex, injected, retrieval_hook
from .harness.sandbox import PROFILES as SANDBOX_PROFILES
from .harness.sandbox import Limits, Sandbox, SandboxUnavailable
from .harness.search_replace import apply_search_replace, parse_search_replace
from .harness.shell import ShellTools, run_command
from .harness.shell_syntax import commands_in
from .harness.skills import Skills
from .harness.subagents import Subagents, subagent_result
from .harness.symbol_places import places
from .harness.symbols import SymbolTools
from .harness.system_prompt import assembled, project_part
from .harness.task_tools import TaskTools
from .harness.taskset import TASK_SYSTEM_PROMPT, TASKS_DIR, Task, load_tasks, task_copy
from .harness.todo import Plan
from .harness.toolkit import NUDGES, ReadTools, Toolkit
from .harness.toolset import Joined
from .harness.workspace import Workspace
from .lessons.batch_view import ResultsTable, journal_lines, run_line
from .lessons.extension import fault_run, server_gone, traffic_line
from .lessons.failures import failure_cases, run_case
from .lessons.finding import QUESTIONS, Rounded, bars, compare, methods_table, questions_table
from .lessons.ground_demos import (
    batch_seconds,
    busiest_turn,
    model_down,
    one_delegation,
    reading_forever,
)
from .lessons.ground_render import Timeline, plan_text, timeline_html, timeline_lines
from .lessons.ground_state import (
    AGENTS_MD,
    family_sizes,
    ground_parts,
    ground_tools,
    ground_workspace,
    plan_updates,
    run_ground,
    transcript_chars,
)
from .lessons.hook_programs import hook_command
from .lessons.lesson import (
    LessonError,
    LessonRun,
    lesson_model,
    run_lesson,
    time_spans,
    time_totals,
)
from .lessons.loop_live import behind_every_sdk
from .lessons.parameters import PROVIDER_PARAMETERS, check_parameters
from .lessons.planner_coder import plan_then_code, scripted_pair
from .lessons.render import BudgetTable
from .lessons.sandbox_tour import (
    TOUR_LIMITS,
    profiles_side_by_side,
    sandbox_cost,
    show_attempt,
    tour_sandbox,
)
from .lessons.steps import TurnSteps, conversation_steps
from .lessons.toolkit_render import parse_steps, rendered_tool, schema_rows, schema_table
from .models import (
    OllamaError,
    PlannedTurn,
    ProviderError,
    ReplayError,
    ReplayModel,
    ScriptedChat,
    call,
)
from .recording import (
    RecordingError,
    compact_event,
    load_recording,
    recorded_answers,
    recording_path,
    replay_attempt,
    replay_harness,
    run_attempt,
    run_durable,
    save_recording,
    serve_recording,
)
from .recording.family import family_chats
from .recording.probes import (
    EXTRA_TOOLS,
    choice_counts,
    condition_tokens,
    load_probes,
    offered,
    replayed,
    sampled_choice_counts,
    server_prompt,
    tool_tokens,
)
from .recording.probes import request as probe_request

__all__ = [
    "AnthropicModel",
    "GeminiModel",
    "OpenAIModel",
    "ResponsesModel",
    "ProviderError",
    "EVENT_TYPES",
    "MAX_TURNS",
    "REPAIR_TASK",
    "SOURCE_FILE",
    "STOP_REASONS",
    "SYSTEM_PROMPT",
    "TEST_FILE",
    "Chat",
    "Checks",
    "file_sha256",
    "time_spans",
    "time_totals",
    "ChunkStepper",
    "ConversationView",
    "LessonError",
    "LessonRun",
    "OllamaError",
    "OllamaModel",
    "PlannedTurn",
    "RecordingError",
    "RepoTools",
    "ReplayError",
    "ReplayModel",
    "ScriptedChat",
    "Tools",
    "Turn",
    "OllamaAssembler",
    "TurnSteps",
    "agent_events",
    "assemble_turn",
    "call",
    "call_tool",
    "compact_event",
    "conversation_steps",
    "failure_cases",
    "lesson_model",
    "check_parameters",
    "PROVIDER_PARAMETERS",
    "load_recording",
    "recording_path",
    "run_attempt",
    "run_case",
    "run_checks",
    "run_lesson",
    "sample_copy",
    "save_recording",
    "serve_recording",
    "tool_message",
    # lessons 07 and 08
    "Answers",
    "ApprovalPanel",
    "BUDGET_TASK",
    "Budget",
    "BudgetTable",
    "Gate",
    "Policy",
    "SHELL_TASK",
    "ShellTools",
    "allow",
    "ask",
    "check_command",
    "commands_in",
    "compact",
    "deny",
    "head_and_tail",
    "in_worker",
    "measure",
    "order_problems",
    "recorded_answers",
    "replay_harness",
    "request_sizes",
    "run_command",
    "NUDGES",
    "EXTRA_TOOLS",
    "ReadTools",
    "SchemaInspector",
    "SearchReplaceStepper",
    "TOOLKIT_TASK",
    "Toolkit",
    "Workspace",
    "apply_edit",
    "apply_search_replace",
    "choice_counts",
    "load_probes",
    "offered",
    "parse_search_replace",
    "parse_steps",
    "probe_request",
    "replayed",
    "schema_rows",
    "schema_sizes",
    "schema_table",
    "condition_tokens",
    "rendered_tool",
    "sampled_choice_counts",
    "server_prompt",
    "tool_tokens",
    # lesson 10
    "AGENTS_MD",
    "GROUND_TASK",
    "Joined",
    "Plan",
    "PlanStepper",
    "PromptPart",
    "Skills",
    "Subagents",
    "ThreadRunner",
    "Timeline",
    "assembled",
    "batch_seconds",
    "busiest_turn",
    "family_chats",
    "family_sizes",
    "ground_parts",
    "ground_tools",
    "ground_workspace",
    "model_down",
    "one_delegation",
    "plan_text",
    "plan_then_code",
    "plan_updates",
    "project_part",
    "reading_forever",
    "run_ground",
    "scripted_pair",
    "subagent_result",
    "timeline_html",
    "timeline_lines",
    "transcript_chars",
    # lesson 11
    "CommandHook",
    "EXTENSION_TASK",
    "FORMATS",
    "HookSet",
    "MCPTools",
    "MCPTrafficView",
    "PythonHook",
    "ToolCall",
    "decision_of",
    "fault_run",
    "hook_command",
    "load_hooks",
    "replay_attempt",
    "result_of",
    "server_gone",
    "tool_schema_of",
    "traffic_line",
    # lesson 12
    "Limits",
    "SANDBOX_PROFILES",
    "SANDBOX_TASK",
    "Sandbox",
    "SandboxUnavailable",
    "TOUR_LIMITS",
    "profiles_side_by_side",
    "sandbox_cost",
    "show_attempt",
    "tour_sandbox",
    # lesson 13
    "BM25Retriever",
    "MiniLMRetriever",
    "PROJECT",
    "PROJECT_TASK",
    "QUESTIONS",
    "Rounded",
    "SYMBOLS_NOTE",
    "SymbolTools",
    "WorkspaceIndex",
    "bars",
    "chunk_source",
    "compare",
    "injected",
    "methods_table",
    "places",
    "questions_table",
    "retrieval_hook",
    # lesson 14
    "JournalError",
    "ResultsTable",
    "TASKS_DIR",
    "TASK_RECORDINGS",
    "TASK_SYSTEM_PROMPT",
    "Task",
    "TaskTools",
    "behind_every_sdk",
    "journal_lines",
    "load_tasks",
    "read_journal",
    "read_results",
    "resolved",
    "resume_point",
    "run_batch",
    "run_durable",
    "run_line",
    "summary",
    "summary_lines",
    "task_copy",
]

#: Imported on first use only: the widgets (and ipywidgets), and the live models (each with
#: its SDK and HTTP client).
_ON_FIRST_USE = {
    "ChunkStepper": ".lessons.widgets",
    "ConversationView": ".lessons.widgets",
    "MCPTrafficView": ".lessons.widgets",
    "ApprovalPanel": ".lessons.gate_widget",
    "SchemaInspector": ".lessons.toolkit_widgets",
    "SearchReplaceStepper": ".lessons.toolkit_widgets",
    "PlanStepper": ".lessons.ground_widgets",
    "in_worker": ".lessons.gate_widget",
    "OllamaModel": ".models.ollama_model",
    "OpenAIModel": ".models.openai_model",
    "AnthropicModel": ".models.anthropic_model",
    "ResponsesModel": ".models.responses_model",
    "GeminiModel": ".models.gemini_model",
    "MiniLMRetriever": ".extensions.embeddings",  # numpy and the model's weights
}


def __getattr__(name):
    if name in _ON_FIRST_USE:
        from importlib import import_module

        return getattr(import_module(_ON_FIRST_USE[name], __name__), name)
    raise AttributeError(f"module 'labkit' has no attribute {name!r}")

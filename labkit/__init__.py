"""labkit: the harness of the 'Build a coding-agent loop' course.

The loop (``agent_events``) sends the conversation to a model, assembles each
streamed reply (``assemble_turn``), dispatches complete tool calls to
``RepoTools`` and decides when to stop. Everything else here feeds it: disposable
copies of the sample and the independent check, recordings and their replay, the
live model (``OllamaModel``) and a server that replays recordings over Ollama's API.
The lesson widgets (``ChunkStepper``, ``ConversationView``) load ipywidgets only
when first used, so importing them needs no kernel.
"""

from .attempt import run_attempt
from .lesson import LessonError, LessonRun, lesson_model, run_lesson
from .loop import STOP_REASONS, agent_events, call_tool, tool_message
from .ollama_model import OllamaError, OllamaModel
from .prompt import REPAIR_TASK, SYSTEM_PROMPT
from .recording import RecordingError, load_recording, save_recording
from .replay import ReplayError, ReplayModel
from .sample import Checks, run_checks, sample_copy
from .server import serve_recording
from .steps import TurnSteps, conversation_steps
from .tools import RepoTools
from .turns import Turn, TurnAssembler, assemble_turn

__all__ = [
    "STOP_REASONS", "SYSTEM_PROMPT", "REPAIR_TASK", "Checks", "ChunkStepper", "ConversationView",
    "LessonError", "LessonRun", "OllamaError", "OllamaModel", "RecordingError", "RepoTools", "ReplayError",
    "ReplayModel", "Turn", "TurnAssembler", "TurnSteps", "agent_events", "assemble_turn",
    "call_tool", "conversation_steps", "lesson_model", "load_recording", "run_attempt",
    "run_checks", "run_lesson", "sample_copy", "save_recording", "serve_recording",
    "tool_message",
]

_WIDGETS = ("ChunkStepper", "ConversationView")


def __getattr__(name):
    """Import the widgets (and ipywidgets) on first use only."""
    if name in _WIDGETS:
        from . import widgets
        return getattr(widgets, name)
    raise AttributeError(f"module 'labkit' has no attribute {name!r}")

"""labkit: the harness of the 'Build a coding-agent loop' course.

The loop (``agent_events``) sends the conversation to a model, assembles each
streamed reply (``assemble_turn``), dispatches complete tool calls to
``RepoTools`` and decides when to stop. Everything else here feeds it: disposable
copies of the sample and the independent check, recordings and their replay.
"""

from .attempt import run_attempt
from .lesson import LessonRun, lesson_model, run_lesson
from .loop import STOP_REASONS, agent_events, call_tool, tool_message
from .prompt import REPAIR_TASK, SYSTEM_PROMPT
from .recording import RecordingError, load_recording, save_recording
from .replay import ReplayError, ReplayModel
from .sample import Checks, run_checks, sample_copy
from .tools import RepoTools
from .turns import Turn, TurnAssembler, assemble_turn

__all__ = [
    "STOP_REASONS", "SYSTEM_PROMPT", "REPAIR_TASK", "Checks", "LessonRun", "RecordingError", "RepoTools",
    "ReplayError", "ReplayModel", "Turn", "TurnAssembler", "agent_events", "assemble_turn",
    "call_tool", "lesson_model", "load_recording", "run_attempt", "run_lesson", "run_checks", "sample_copy", "save_recording",
    "tool_message",
]

"""The pieces your own loop may use (lesson 14): labkit's answers to the earlier lessons'
exercises, and nothing of the loop itself.

- ``format_of(chat)``: the wire format ``chat`` speaks (its ``wire_format``, else Ollama's),
  with the two pieces a loop needs from it: ``assembler()``, a fresh assembler that folds one
  reply's chunks (``add(chunk)`` returns the text the chunk carried; ``turn()`` gives the
  :class:`Turn`: its ``message`` for the conversation, its ``text``, its ``calls``, and why it
  may not be dispatched: ``problem``, ``unfinished``, ``may_dispatch``), lessons 02 and 06;
  and ``tool_results(calls, results)``, the messages that carry one turn's results back,
  lessons 01, 03 and 06;
- ``tool_message(name, result)``: one result as Ollama's ``tool`` message (lesson 01);
- ``SYSTEM_PROMPT``: the content of a conversation's first message;
- ``STOP_REASONS``: how a run may stop, each with what it means.

Exercise 14a's check runs your answer in a Python of its own (``python -I -S``) where this
module and what it is built from (``harness/contracts.py``, ``frozen.py``, ``prompt.py``,
``words.py`` and ``formats/``) are the only labkit there is: no ``agent_events``, nothing of
the grading. Your own Ollama pieces from lessons 01 to 03 may stand in for these, if they keep
the same rules.
"""

from .harness.contracts import STOP_REASONS, ToolCall, Turn
from .harness.formats import FORMATS, format_of
from .harness.formats.ollama import tool_message
from .harness.prompt import SYSTEM_PROMPT

__all__ = [
    "FORMATS",
    "STOP_REASONS",
    "SYSTEM_PROMPT",
    "ToolCall",
    "Turn",
    "format_of",
    "tool_message",
]

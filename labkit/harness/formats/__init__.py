"""The wire formats the loop speaks: one module each, all keeping the same contract.

The loop is the same for every model server; what differs is the wire format, and each
is one module here giving a :class:`~labkit.harness.contracts.WireFormat` named ``FORMAT``:

- ``assembler()``: a fresh assembler that folds the reply's chunks, one at a time, into a
  :class:`~.turn.Turn` (``turn.py``: the turn, and the rules every assembler shares);
- ``tool_results(calls, results)``: the messages that carry a turn's results back;
- ``sizes``, ``calls_in``, ``results_in``, ``with_results``: where its messages keep text,
  calls and results, so the conversation can be measured, checked and compacted
  (``conversation.py``, ``budget.py``) in any format (``messages.py``).

What differs, side by side (``ollama.py``, ``openai.py``, ``anthropic.py``,
``openai_responses.py``, ``gemini.py``):

- a tool call arrives: Ollama whole, on one chunk; OpenAI in fragments by ``index``;
  Anthropic in ``input_json_delta`` fragments of a block; Responses in
  ``function_call_arguments.delta`` fragments of an item; Gemini whole, as a
  ``functionCall`` part;
- complete when: ``done: true``; a choice's ``finish_reason``; ``message_stop``;
  ``response.completed``; the candidate's ``finishReason``;
- refused end: ``done_reason "length"``; ``finish_reason "length"``;
  ``stop_reason "max_tokens"``; ``response.incomplete`` (``"max_output_tokens"``);
  ``finishReason "MAX_TOKENS"``;
- results go back as: one ``tool`` message each, naming the tool; one ``tool`` message each,
  naming the ``tool_call_id``; one ``user`` message of ``tool_result`` blocks, naming each
  ``tool_use_id``; one ``function_call_output`` item each, naming the ``call_id``; one
  ``user`` content of ``functionResponse`` parts, naming each call.

The loop keeps the system prompt as its first message for every format, and one assistant
message per turn; a model whose API wants them otherwise moves them when it sends the
request (Anthropic's ``system`` parameter, Gemini's ``systemInstruction``, the Responses
API's flat list of items).
A chat says which format it speaks with a ``wire_format`` attribute (a format, or its name);
a chat that says nothing speaks Ollama's. A new wire format is one module beside these,
giving its ``FORMAT``, and one line in :data:`FORMATS`.
"""

from __future__ import annotations

from ..contracts import WireFormat
from . import anthropic, gemini, ollama, openai, openai_responses

#: Every wire format the harness speaks, by name.
FORMATS: dict[str, WireFormat] = {
    module.FORMAT.name: module.FORMAT
    for module in (ollama, openai, anthropic, openai_responses, gemini)
}
OLLAMA, OPENAI, ANTHROPIC = FORMATS["ollama"], FORMATS["openai"], FORMATS["anthropic"]


def format_of(chat: object) -> WireFormat:
    """The wire format ``chat`` speaks: its ``wire_format`` (a format or a name), else Ollama's."""
    chosen = getattr(chat, "wire_format", None)
    return OLLAMA if chosen is None else named(chosen)


def named(wire_format: str | WireFormat) -> WireFormat:
    """The wire format ``wire_format`` names (or is); a ``ValueError`` for an unknown name."""
    if isinstance(wire_format, str):
        if wire_format not in FORMATS:
            raise ValueError(
                f"unknown wire format {wire_format!r}; the formats are {sorted(FORMATS)}"
            )
        return FORMATS[wire_format]
    return wire_format

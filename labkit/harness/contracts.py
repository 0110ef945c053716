"""What the loop needs from a model and from tools, and what each of its events holds.

The loop talks to any model through one call, ``chat(messages, tool_schemas)``, and to
any tools through ``schemas`` and ``invoke(name, arguments)``: a live model, a replayed
recording and a scripted one are the same to it, and so are the repository's three
tools and the shell. These are written as :class:`typing.Protocol` classes, so an
implementation needs no base class, only the right shape.

Events are plain dicts (easy to print, save and compare); the ``TypedDict`` classes
below say which keys each kind has and what they hold. (Their annotations are evaluated
at import, not postponed: that is how ``TypedDict`` learns which keys are optional.)
"""

from collections.abc import Iterable
from typing import (
    Any,
    Literal,
    NamedTuple,
    NotRequired,
    Protocol,
    TypedDict,
    runtime_checkable,
)

Message = dict[str, Any]  # {"role": ..., "content": ..., ...}, as the model's API has it
Chunk = dict[str, Any]  # one streamed piece of a reply (in the wire format the model speaks)


class ToolCall(NamedTuple):
    """One complete tool call of an assembled turn, whatever format it came in."""

    id: str | None  # the provider's id for it, when it gives one
    name: str
    arguments: dict


@runtime_checkable
class Chat(Protocol):
    """A model: send the conversation and the tools' schemas, get the reply's chunks.

    The iterator it returns is read to its end or abandoned; the loop calls its
    ``close()`` (when it has one) either way, so a live model can end the request.
    Anything it raises, at the call or while streaming, is a failure of the model side.
    """

    def __call__(self, messages: list[Message], tool_schemas: list[dict]) -> Iterable[Chunk]: ...


@runtime_checkable
class Tools(Protocol):
    """What the model may ask for: JSON Schema descriptions, and a way to run one.

    ``invoke`` raises ``ValueError``, ``TypeError`` or ``OSError`` to refuse a call;
    the loop turns that into an ``{"error": ...}`` result the model reads.
    """

    schemas: list[dict]

    def invoke(self, name: str, arguments: dict) -> dict: ...


def tool_names(schemas) -> list[str]:
    """The names of the tools described by ``schemas``, in order."""
    return [schema["function"]["name"] for schema in schemas]


#: Why a run stopped. Every run ends with one ``stopped`` event carrying one of these.
STOP_REASONS = {
    "assistant_finished": "the model sent a final message with text and no tool calls",
    "empty_response": "the model's complete reply had no text and no tool calls",
    "incomplete_model_turn": "the stream ended before its final chunk (Ollama's 'done', "
    "OpenAI's finish_reason, Anthropic's message_stop), or was cut by the output-length limit "
    "('length', 'max_tokens'); no tool from it was run",
    "malformed_model_turn": "a chunk of the reply broke its wire format (or a call's joined "
    "arguments were not a JSON object); no tool from it was run",
    "model_error": "calling the model raised an error (its text is in 'error')",
    "max_turns": "the budget of model requests was spent; the last turn's tools ran, "
    "but no further request was made",
}
StopReason = Literal[
    "assistant_finished",
    "empty_response",
    "incomplete_model_turn",
    "malformed_model_turn",
    "model_error",
    "max_turns",
]


class ModelStart(TypedDict):
    """A request is about to be sent: ``messages`` is exactly what the model will get."""

    type: Literal["model_start"]
    time: float  # time.monotonic(), as every event has
    turn: int  # 1 for the first request
    tools: list[str]  # the names of the tools offered
    messages: list[Message]


class TextDelta(TypedDict):
    """A piece of the reply's text, as it streams in (for display only)."""

    type: Literal["text_delta"]
    time: float
    turn: int
    text: str


class ToolStart(TypedDict):
    """A complete, valid tool call is dispatched (a gate, if any, may still refuse it)."""

    type: Literal["tool_start"]
    time: float
    turn: int
    name: str
    arguments: dict


class Permission(TypedDict):
    """The permission gate's decision on a call (only when the loop was given a gate)."""

    type: Literal["permission"]
    time: float
    turn: int
    name: str
    command: str  # the call as a person would read it
    verdict: Literal["allow", "ask", "deny"]  # what the policy said
    decision: Literal["allow", "deny"]  # what happened: the call ran, or it did not
    by: str  # "policy", "answer", "person" or "nobody"
    rule: str | None  # the rule that decided, if one did
    reason: str
    parts: list[list[str]]  # every command the call would run, word by word


class ToolResult(TypedDict):
    """What the tool gave; it goes back to the model as a tool message."""

    type: Literal["tool_result"]
    time: float
    turn: int
    name: str
    result: dict


class Stopped(TypedDict):
    """The run is over: always the last event, exactly once."""

    type: Literal["stopped"]
    time: float
    reason: StopReason
    turns: int  # model requests made
    tool_calls: int  # tool calls run
    detail: str  # one sentence on why
    messages: list[Message]  # the whole conversation at the end
    error: NotRequired[str]  # the model side's error text, for model_error only


Event = ModelStart | TextDelta | ToolStart | Permission | ToolResult | Stopped
#: Each event type's description, by its ``type``.
EVENT_TYPES = {
    "model_start": ModelStart,
    "text_delta": TextDelta,
    "tool_start": ToolStart,
    "permission": Permission,
    "tool_result": ToolResult,
    "stopped": Stopped,
}

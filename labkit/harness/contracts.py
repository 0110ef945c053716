"""Every plug-in the loop takes, and everything it hands out, declared in one place.

The loop (``loop.py``) talks to a model through one call, ``chat(messages,
tool_schemas)``, and to tools through ``schemas`` and ``invoke(name, arguments)``; the
wire format the model speaks folds the reply into a :class:`Turn` and shapes the results
that go back; an optional gate decides whether each call runs, an optional budget may
shorten the conversation before each request, and optional hooks run at five points of a
run (:data:`HOOK_POINTS`) and say what to change there (:class:`HookDecision`). Lesson 10
adds three: a system prompt assembled from named parts (:class:`PromptPart`), a
:class:`CallRunner` that runs a turn's read-only calls at once, and calls that run a loop
of their own (a subagent: :class:`ChildRun`). Each is a :class:`typing.Protocol` here, so
an implementation needs no base class, only the right shape: a live model, a replayed
recording and a scripted one are the same to the loop, and so are any tools.

Events are plain dicts (easy to print, save and compare); the ``TypedDict`` classes below
say which keys each kind has and what they hold. (Their annotations are evaluated at
import, not postponed: that is how ``TypedDict`` learns which keys are optional.)
"""

from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple, NotRequired, Protocol, TypedDict, runtime_checkable

Message = dict[str, Any]  # {"role": ..., "content": ..., ...}, as the model's API has it
Chunk = dict[str, Any]  # one streamed piece of a reply (in the wire format the model speaks)


# --- What the loop is given ---------------------------------------------------------------


@runtime_checkable
class Chat(Protocol):
    """A model: send the conversation and the tools' schemas, get the reply's chunks.

    The iterator it returns is read to its end or abandoned; the loop calls its ``close()``
    (when it has one) either way, so a live model can end the request. Anything it raises,
    at the call or while streaming, is a failure of the model side (a ``model_error``
    stop); an exception with a ``stop_detail`` attribute (:class:`StopDetail`) says in it
    what kind of failure it was. A chat may name the wire format it speaks in a
    ``wire_format`` attribute (a :class:`WireFormat` or its name); without one it speaks
    Ollama's.
    """

    def __call__(self, messages: list[Message], tool_schemas: list[dict]) -> Iterable[Chunk]: ...


@runtime_checkable
class Tools(Protocol):
    """What the model may ask for: JSON Schema descriptions, and a way to run one.

    ``invoke`` raises ``ValueError``, ``TypeError`` or ``OSError`` to refuse a call; the
    loop turns that into an ``{"error": ...}`` result the model reads. A call that ran a
    loop of its own (a subagent) returns a :class:`ChildRun` instead of the dict.
    """

    schemas: list[dict]

    def invoke(self, name: str, arguments: dict) -> "dict | ChildRun": ...


class ToolsFailed(Exception):
    """Raised by ``Tools.invoke`` when the tools can run nothing more: the process that
    serves them exited, or broke its protocol (an MCP server writing garbage on stdout).
    The loop ends the run as ``tools_failed`` with its text; it is not one of the errors a
    model can correct by asking again, so it is not a ``ValueError``, ``TypeError`` or
    ``OSError``."""


class PermissionFields(TypedDict):
    """What a gate's decision says about one call: the fields of a ``permission`` event."""

    command: str  # the call as a person would read it
    verdict: Literal["allow", "ask", "deny"]  # what the policy said
    decision: Literal["allow", "deny"]  # what happened: the call ran, or it did not
    by: str  # "policy", "answer", "person" or "nobody"
    rule: str | None  # the rule that decided, if one did
    reason: str
    parts: list[list[str]]  # every command the call would run, word by word


class Decision(Protocol):
    """A gate's decision on one call."""

    allowed: bool  # True: the call runs

    def event_fields(self) -> PermissionFields: ...

    def tool_result(self) -> dict:
        """What the model reads instead of a result when the call does not run."""
        ...


class Gate(Protocol):
    """Stands between an assembled call and its dispatch (lesson 07's permission gate)."""

    def review(self, name: str, arguments: dict) -> Decision | None:
        """The decision on one call, or None for a call this gate does not judge (it runs)."""
        ...


class Budget(Protocol):
    """Called before each request with the conversation; returns the conversation to send
    and keep (lesson 08's context budget). It may shorten tool results, never reorder.

    A budget that measures messages in one wire format says which in a ``wire_format``
    attribute (a name, or a :class:`WireFormat`); the loop refuses to start with one that
    is not the chat's, since it would measure and shorten messages of another shape."""

    def __call__(self, messages: list[Message]) -> list[Message]: ...


class Confinement(Protocol):
    """Where the tools' programs run (lesson 12's sandbox, ``sandbox.Sandbox``): given to a
    toolset by the user, never by the model. ``wrapped`` gives the argument list that runs
    ``command`` confined to ``workspace``, valid for the ``with`` block; ``check`` raises
    ``SandboxUnavailable`` (a ``RuntimeError``) once, with the fix, where it cannot start."""

    def check(self) -> None: ...

    def wrapped(
        self,
        command: Sequence[str],
        workspace: str,
        *,
        env: Mapping[str, str] | None = None,
    ) -> AbstractContextManager[list[str]]: ...


class StopDetail(Protocol):
    """An exception from the model side that says what kind of failure it was (a replay
    mismatch, say): the loop puts ``stop_detail`` in front of its text in the stop's detail."""

    stop_detail: str


@dataclass(frozen=True)
class Start:
    """Where a run begins when not afresh: the conversation so far (``messages``, a system
    message first, every call of its last assistant message answered), and the model requests
    (``turns``) and tool calls (``tool_calls``) already made, which the budget and the stop
    count. The next request is turn ``turns + 1``; ``run_start`` hooks run only at turn 0.
    A run resumed from its journal starts so (lesson 14), and so does a run whose system
    prompt is not the course's (``Start.fresh``)."""

    messages: Sequence[Message]
    turns: int = 0
    tool_calls: int = 0

    @classmethod
    def fresh(cls, system: str, task: str) -> "Start":
        """A first request of ``system`` and ``task``, as the loop's own, with another prompt."""
        return cls([{"role": "system", "content": system}, {"role": "user", "content": task}])


# --- Lesson 10: what the model knows first, calls at once, runs inside a call ------------

#: The parts of an assembled system prompt, in the order they are sent (``system_prompt.py``):
#: the base rules, the tools' policy sentences, the skills' one-line summaries, and the
#: project's instructions file. The project's own words come last, nearest the task: they
#: are about this repository, and they never come before the harness's own rules.
PROMPT_PARTS = ("base", "tool_policy", "skills", "project")


class PromptPart(NamedTuple):
    """One named part of a system prompt. ``source`` names where its text came from (the
    project file's name, ``AGENTS.md``), shown in the part's heading."""

    name: str  # one of PROMPT_PARTS
    text: str
    source: str | None = None


#: What ``agent_events(system=...)`` takes: the prompt's text, or its parts (assembled in
#: :data:`PROMPT_PARTS`' order, each under its heading: ``system_prompt.assembled``).
SystemPrompt = str | Sequence[PromptPart]


@runtime_checkable
class ReadOnlyTools(Tools, Protocol):
    """Tools that say which calls change nothing (``toolset.Tool.read_only``): only those
    may run at once, so a loop given a :class:`CallRunner` asks before it batches a call."""

    def is_read_only(self, name: str) -> bool: ...


class Outcome(NamedTuple):
    """How one job of a batch ended: what it returned, or what it raised, or that it did
    not end in time (``timed_out``; ``started`` says whether it had begun)."""

    value: object = None
    error: BaseException | None = None
    timed_out: bool = False
    started: bool = True


class CallRunner(Protocol):
    """Runs the jobs of one batch (a turn's consecutive read-only calls) at once, and gives
    back one :class:`Outcome` per job, in the order the jobs were given, whichever ended
    first (``parallel.ThreadRunner``: a bounded pool of threads and a timeout). A job that
    raises or times out loses nothing of the others'."""

    def run(self, jobs: Sequence[Callable[[], object]]) -> list[Outcome]: ...


class ChildRun(NamedTuple):
    """What a call that ran a loop of its own gives back (lesson 10's ``delegate``): the
    one ``result`` the model reads, and the child's run, which it never reads: its
    ``task``, its ``depth`` (1 for a child of the top run) and its ``events``, whole.
    ``Tools.invoke`` may return one instead of a dict; the loop yields the run as a
    ``subagent`` event and sends back only the result."""

    result: dict
    task: str
    depth: int
    events: list


# --- Hooks: programs the user configured, run at five points of a run ----------------------

#: Where the loop runs hooks, in the order a run meets them. ``run_start``: once, before the
#: first request (a hook may add context, kept in the conversation). ``before_request``:
#: before each request (a hook may add a labelled part to that request only).
#: ``before_tool``: before each call (allow; deny, with a reason the model reads; or replace
#: the arguments). ``after_tool``: after each call that ran (add to or replace the result
#: the model sees, never change which call ran). ``stop``: when the model ends its work
#: (deny the stop once, with a reason, sending the model back to work).
HOOK_POINTS = ("run_start", "before_request", "before_tool", "after_tool", "stop")
HookPoint = Literal["run_start", "before_request", "before_tool", "after_tool", "stop"]
#: What each point lets a hook do, by the fields of its decision.
HOOK_CHANGES = {
    "run_start": ("context",),
    "before_request": ("context",),
    "before_tool": ("deny", "arguments"),
    "after_tool": ("context", "result"),
    "stop": ("deny",),
}


class HookFields(TypedDict):
    """What one hook decided at one point: the fields of a ``hook`` event."""

    hook: str  # its name, as configured
    point: HookPoint
    decision: Literal["allow", "deny"]  # deny: before_tool, the call does not run; stop, no stop
    reason: NotRequired[str]  # why it denied, for the model
    context: NotRequired[str]  # text it adds: to the conversation, a request or a result
    arguments: NotRequired[dict]  # before_tool: the arguments the call runs with instead
    result: NotRequired[dict]  # after_tool: the result the model reads instead
    failure: NotRequired[str]  # the hook failed (see hooks.FAILURES): decision is the default
    detail: NotRequired[str]  # what the failure was, in words


@dataclass(frozen=True)
class HookDecision:
    """One hook's decision at one point, checked against what that point allows
    (:data:`HOOK_CHANGES`): an ``after_tool`` hook cannot give arguments, so it can never
    change which call ran, and only ``before_tool`` and ``stop`` can deny.

    ``failure`` names how the hook failed (``hooks.py``); ``decision`` is then the point's
    default, chosen by the harness that ran it, never by the hook."""

    hook: str
    point: HookPoint
    decision: Literal["allow", "deny"] = "allow"
    reason: str | None = None
    context: str | None = None
    arguments: dict | None = None
    result: dict | None = None
    failure: str | None = None
    detail: str | None = None

    def __post_init__(self) -> None:
        if self.point not in HOOK_CHANGES:
            raise ValueError(f"a hook point is one of {HOOK_POINTS}, not {self.point!r}")
        if self.decision not in ("allow", "deny"):
            raise ValueError(f"a hook decides 'allow' or 'deny', not {self.decision!r}")
        may = HOOK_CHANGES[self.point]
        given = [
            name for name in ("context", "arguments", "result") if getattr(self, name) is not None
        ]
        given += ["deny"] if self.decision == "deny" else []
        refused = [name for name in given if name not in may]
        if refused:
            raise ValueError(
                f"a {self.point} hook cannot give {' or '.join(refused)}; it may give "
                f"{', '.join(may)}"
            )
        if self.decision == "deny" and self.arguments is not None:
            raise ValueError("a hook that denies a call cannot also give it arguments")
        if self.decision == "deny" and self.reason is None and self.failure is None:
            raise ValueError("a hook that denies must say why (reason), for the model to read")

    def event_fields(self) -> HookFields:
        """What a ``hook`` event records: the fields that say something."""
        fields = {"hook": self.hook, "point": self.point, "decision": self.decision}
        for name in ("reason", "context", "arguments", "result", "failure", "detail"):
            value = getattr(self, name)
            if value is not None:
                fields[name] = value
        return fields

    def refusal(self) -> str:
        """What the model reads when this decision denies: who, and why."""
        if self.failure is not None:
            return (
                f"the hook '{self.hook}' failed ({self.failure}: {self.detail}), and a "
                f"{self.point} hook that cannot answer denies"
            )
        return f"the hook '{self.hook}' denied it: {self.reason}"


class Hooks(Protocol):
    """The hooks of a run (``hooks.py``: commands configured in a file, Python functions).

    ``run(point, event)`` runs every hook configured for ``point`` whose matcher matches
    (at the tool points, on the tool's name), in order, and returns their decisions. A
    hook that hangs, crashes or answers garbage is not an exception here: its decision
    names the failure and carries the point's default. ``event`` holds what the point
    knows (``turn``, and ``task``, ``messages``, ``tool``, ``arguments``, ``result`` or
    ``text``); a later hook at the same point sees the arguments or result an earlier one
    gave.
    """

    def run(self, point: HookPoint, event: dict) -> list[HookDecision]: ...


@runtime_checkable
class Retriever(Protocol):
    """Ranks texts for a query (lesson 13: ``retrieval.py``'s index asks one before each
    request). ``index(texts)`` replaces the texts it ranks; ``scores(query)`` gives one
    number per text, in their order, higher for closer; ``name`` says what it is
    (``"bm25"``, ``"minilm"``). BM25 counts shared words; an embedding model compares
    meanings."""

    name: str

    def index(self, texts: Sequence[str]) -> None: ...

    def scores(self, query: str) -> list[float]: ...


# --- Wire formats: how a reply streams in and how results go back -------------------------


class ToolCall(NamedTuple):
    """One complete tool call of an assembled turn, whatever format it came in."""

    id: str | None  # the provider's id for it, when it gives one
    name: str
    arguments: dict


class CallRef(NamedTuple):
    """A tool call as an assistant message of the conversation holds it."""

    id: str | None  # the provider's id for it (Ollama's calls may have none)
    name: str | None


class ResultRef(NamedTuple):
    """A tool result as a message of the conversation carries it back."""

    call_id: str | None  # the id of the call it answers; None: it answers in call order
    name: str | None  # the tool's name, where the format says it (Ollama's does)
    content: str  # the text the model reads


@dataclass(frozen=True)
class Turn:
    """One model reply, assembled and judged, the same for every wire format.

    ``message`` is the assistant message as it joins the conversation (read-only, in the
    provider's shape); ``text`` is its text; ``calls`` are the calls the loop may run,
    empty unless the turn may be dispatched. ``done`` says the reply's final chunk
    arrived (Ollama's ``done``, OpenAI's ``finish_reason``, Anthropic's ``message_stop``)
    and ``done_reason`` what it gave as the reason (``"stop"``, ``"tool_calls"``,
    ``"length"``, ``"max_tokens"``...). ``problem`` names the first chunk that broke the
    format; ``unfinished`` says why a well-formed reply did not finish cleanly. ``chunks``
    counts the chunks that arrived.
    """

    message: Message
    text: str
    calls: list[ToolCall]
    done: bool
    done_reason: str | None
    problem: str | None
    unfinished: str | None
    chunks: int = 0

    @property
    def may_dispatch(self) -> bool:
        """True when the reply finished cleanly and is well formed, so its calls may run."""
        return self.problem is None and self.unfinished is None


class Assembler(Protocol):
    """Folds one reply's chunks, one at a time, into a :class:`Turn`; linear in the stream."""

    problem: str | None  # the first chunk that broke the format; later chunks are ignored

    def add(self, chunk: Chunk) -> str:
        """Fold one chunk in; return the text it carried ('' if none), for display."""
        ...

    def turn(self) -> Turn:
        """The reply so far, judged: may its calls run, and if not, why not."""
        ...


class WireFormat(Protocol):
    """A model API's streaming format: one module each in ``labkit/harness/formats/``."""

    name: str  # "ollama", "openai", "anthropic", "openai-responses", "gemini"
    reply_role: str  # the role of the model's own messages: "assistant" (Gemini's: "model")

    def assembler(self) -> Assembler: ...

    def tool_results(self, calls: list[ToolCall], results: list[dict]) -> list[Message]:
        """The messages that carry one turn's results back, in the calls' order."""
        ...

    def tool_schema(self, name: str, description: str, parameters: dict) -> dict:
        """One tool as this API declares it in a request (the loop's own ``tools.schemas``
        are Ollama's and OpenAI's shape; a model of another API converts them with this).
        Raises ``ValueError`` for a name this API refuses (see ``tool_name_problem``)."""
        ...

    def tool_name_problem(self, name: str) -> str | None:
        """Why this API refuses ``name`` as a tool's name, or None when it takes it."""
        ...

    # How a conversation in this format is measured and shortened (``conversation.py``,
    # ``budget.py``): each format knows where its messages keep text, calls and results.

    def sizes(self, message: Message) -> dict[str, int]:
        """The characters ``message`` carries, per kind: its text under its role, and
        ``"thinking"``, ``"tool_calls"`` and ``"tool"`` (the tool results it carries)."""
        ...

    def calls_in(self, message: Message) -> list[CallRef]:
        """The tool calls an assistant message asks for, in order (none for the others)."""
        ...

    def results_in(self, message: Message) -> list[ResultRef]:
        """The tool results ``message`` carries back, in order (none for most messages)."""
        ...

    def with_results(self, message: Message, contents: list[str]) -> Message:
        """A new message: ``message`` with its results' contents replaced by ``contents``,
        in order, and everything else as it was; a valid message of this format still."""
        ...


# --- What the CLI and the lessons drive beyond the loop -----------------------------------


@runtime_checkable
class LiveModel(Chat, Protocol):
    """A model behind a server (``labkit.models``): a :class:`Chat` that also says which wire
    format it speaks and where its server is, checks before a run that the server can serve
    it, keeps each chunk's wire text for a recording, and says where its replies came from."""

    wire_format: str
    address: str

    def preflight(self) -> None:
        """Raise an error that says what to do when the server cannot serve this run."""
        ...

    def chunks_with_lines(
        self, messages: list[Message], tool_schemas: list[dict]
    ) -> Iterable[tuple[Chunk, str | None]]:
        """Like calling it, but each chunk comes with its line or event exactly as sent."""
        ...

    def provenance(self) -> dict:
        """Who produced the replies: the source, the model and what its server reported."""
        ...

    def about(self, provenance: dict) -> str:
        """The provenance in one line, for a person."""
        ...

    def finish_provenance(self, recording: dict) -> None:
        """Add to a finished recording's provenance what only its replies told."""
        ...


# --- What the loop yields -----------------------------------------------------------------

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
    "tools_failed": "the tools can run nothing more: the process serving them exited or "
    "broke its protocol (the detail says how); the call that found it got no result",
}
StopReason = Literal[
    "assistant_finished",
    "empty_response",
    "incomplete_model_turn",
    "malformed_model_turn",
    "model_error",
    "max_turns",
    "tools_failed",
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


class Permission(PermissionFields):
    """The permission gate's decision on a call (only when the loop was given a gate)."""

    type: Literal["permission"]
    time: float
    turn: int
    name: str


class HookRan(HookFields):
    """A hook ran and decided (only when the loop was given hooks). ``turn`` is 0 at
    ``run_start``; ``name`` is the tool's at ``before_tool`` and ``after_tool``."""

    type: Literal["hook"]
    time: float
    turn: int
    name: NotRequired[str]


class SubagentRan(TypedDict):
    """A call ran a loop of its own (a subagent, lesson 10): ``events`` are the child's
    events, whole and in order (its own ``model_start`` ... ``stopped``, on the same clock;
    a recording keeps them compacted as it keeps the parent's). It comes after the call's
    ``tool_start`` and before its ``tool_result``; only that result joins the parent's
    conversation. ``name`` is the tool's (``delegate``); ``turn`` the parent's turn."""

    type: Literal["subagent"]
    time: float
    turn: int
    name: str
    task: str
    depth: int  # 1: a child of the top run; 2: a child of a child...
    events: list[dict]


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


Event = (
    ModelStart | TextDelta | ToolStart | Permission | HookRan | SubagentRan | ToolResult | Stopped
)
#: Each event type's description, by its ``type``.
EVENT_TYPES = {
    "model_start": ModelStart,
    "text_delta": TextDelta,
    "tool_start": ToolStart,
    "permission": Permission,
    "hook": HookRan,
    "subagent": SubagentRan,
    "tool_result": ToolResult,
    "stopped": Stopped,
}

# The order of a run's events, for whoever reads or records them. They come in the order
# the loop does things, in its own thread: per request ``model_start``, the reply's
# ``text_delta`` events, then the turn's calls, then the next request; ``stopped`` last.
# A call's events run from its ``tool_start`` (then its ``before_tool`` hook events and
# its ``permission``) to its ``tool_result`` (after its ``subagent`` event, when it ran a
# child, and its ``after_tool`` hook events). Calls run one at a time by default. Given a
# ``runner`` (lesson 10), consecutive read-only calls of a turn form a *batch*: each call
# of the batch is judged first, in order (its ``tool_start``, hooks and permission), then
# the allowed ones run at once, then each is finished in order (its ``subagent``, hooks
# and ``tool_result``). A call with side effects is a batch of its own: it starts after
# every call asked before it ended, and ends before any call asked after it starts. Either
# way the k-th ``tool_result`` of a turn answers the k-th ``tool_start`` of that turn, and
# the results join the conversation in the order the model asked for them.


def tool_names(schemas: Iterable[dict]) -> list[str]:
    """The names of the tools described by ``schemas``, in order."""
    return [schema["function"]["name"] for schema in schemas]

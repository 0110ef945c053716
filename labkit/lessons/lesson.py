"""What the notebooks share: the model a lesson's parameters choose, one recorded run, and
where a run's time went.

In live mode a lesson meets the real world: no server, a wrong address, a model not
pulled or not served, a key missing, a model that cannot call tools or think.
``lesson_model`` asks the server first and ``run_lesson`` checks how the run ended, so
each of those stops the lesson at the first cell that talks to the model, with one
:class:`LessonError` whose text says what to do, rather than a later cell failing on a
run that never happened. The same holds for each provider: Ollama, any
OpenAI-compatible server, Anthropic, OpenAI's Responses API, Gemini.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..harness.loop import MAX_TURNS
from ..harness.prompt import REPAIR_TASK
from ..models.errors import MODEL_ERRORS
from ..models.providers import PROVIDERS, live_model
from ..models.replay import ReplayModel
from ..recording.attempt import run_attempt
from ..recording.files import load_recording

REPLAY_INSTEAD = (
    'To follow the lesson from its recording instead, set MODE = "replay" in the parameters cell.'
)


class LessonError(RuntimeError):
    """The lesson cannot go on (in live mode: the model is not usable); the text says what to do."""

    def _render_traceback_(self):
        """What Jupyter shows for it: the message alone, not a traceback through labkit."""
        return [f"{type(self).__name__}: {self}"]


def lesson_model(
    mode: str,
    *,
    recording=None,
    model: str | None = None,
    host: str | None = None,
    speed: float | None = None,
    provider: str = "ollama",
    base_url: str | None = None,
):
    """The ``chat`` a lesson runs: a replay of ``recording``, or a live model of ``provider``.

    ``provider``: ``"ollama"`` (at ``host``), ``"openai"`` (any OpenAI-compatible server,
    at ``base_url``), ``"anthropic"``, ``"openai-responses"`` (OpenAI's Responses API) or
    ``"gemini"``. ``recording`` None: the provider's recorded
    repair (``labkit.settings.PROVIDER_RECORDINGS``); ``model`` None: the provider's
    default (``labkit.settings.DEFAULT_MODELS``).
    In live mode it first asks the server whether the model is there (and, Ollama, can
    call tools and think); if not, it raises :class:`LessonError` saying what to do.
    """
    if provider not in PROVIDERS:
        raise ValueError(
            f"PROVIDER must be one of {', '.join(map(repr, PROVIDERS))}, not {provider!r}"
        )
    if mode == "replay":
        return ReplayModel(load_recording(recording or PROVIDERS[provider].recording), speed=speed)
    if mode != "live":
        raise ValueError(f"MODE must be 'replay' or 'live', not {mode!r}")
    try:
        chat = live_model(provider, model, host=host, base_url=base_url)
        chat.preflight()
    except (*MODEL_ERRORS, ValueError) as exc:
        raise LessonError(f"live mode cannot start: {exc} {REPLAY_INSTEAD}") from None
    return chat


@dataclass(frozen=True)
class LessonRun:
    """One attempt: its recording (requests, raw chunks, checks) and the loop's full events."""

    recording: dict
    events: list

    @property
    def stop(self) -> dict:
        return self.events[-1]

    @property
    def requests(self) -> list:
        """The message list of every request the harness sent, in order."""
        return [event["messages"] for event in self.events if event["type"] == "model_start"]


def time_spans(events) -> list:
    """Where a run's time went: ``(kind, start, end)`` for each model stream and each tool
    run, in order, from the events' clock times (pure: no clock of its own).

    A model span runs from ``model_start`` to the first event after the stream (a
    ``tool_start`` or ``stopped``); a tool span from ``tool_start`` to its ``tool_result``.
    """
    spans, opened = [], None
    for event in events:
        kind = event["type"]
        if kind == "model_start":
            opened = ("model", event["time"])
        elif kind in ("tool_start", "stopped") and opened and opened[0] == "model":
            spans.append(("model", opened[1], event["time"]))
            opened = None
        if kind == "tool_start":
            opened = ("tool", event["time"])
        elif kind == "tool_result" and opened and opened[0] == "tool":
            spans.append(("tool", opened[1], event["time"]))
            opened = None
    return spans


def time_totals(spans) -> dict:
    """Seconds spent per kind of span (``"model"``, ``"tool"``...)."""
    result = {}
    for kind, start, end in spans:
        result[kind] = result.get(kind, 0.0) + end - start
    return result


def run_lesson(
    chat,
    *,
    max_turns: int = MAX_TURNS,
    task: str = REPAIR_TASK,
    tools: str = "repo",
    gate=None,
    budget=None,
    hooks: dict | None = None,
    sandbox=None,
    sample: str = "sample_repo",
    retrieval: dict | None = None,
) -> LessonRun:
    """Run the repair once on a fresh copy of the sample, with checks before and after.

    ``tools``, ``gate``, ``budget``, ``hooks`` and ``sandbox`` set up the harness as
    ``run_attempt`` does (lesson 07 offers the shell behind a gate, lesson 08 a budget,
    lesson 11 the tools of an MCP server, ``tools="mcp"``, and hooks, lesson 12 a sandbox;
    lesson 13 the larger sample, ``sample="sample_project"``, the symbols tools,
    ``tools="symbols"``, and retrieval, ``retrieval={"retriever": "bm25", "k": 4}``).
    A run that ends in ``model_error`` (the server failed, or a replay did not match)
    raises :class:`LessonError` with the stop's detail: the cells after it study a run,
    and there is none to study.
    """
    recording, events = run_attempt(
        chat,
        provenance=_provenance(chat),
        task=task,
        max_turns=max_turns,
        tools=tools,
        gate=gate,
        budget=budget,
        hooks=hooks,
        sandbox=sandbox,
        sample=sample,
        retrieval=retrieval,
    )
    stop = events[-1]
    if stop["reason"] == "model_error":
        raise LessonError(
            f"the run stopped after {stop['turns']} model requests: "
            f"{stop['detail']} {REPLAY_INSTEAD}"
        )
    return LessonRun(recording, events)


def _provenance(chat) -> dict:
    """Who writes the chunks: a replayed recording's authors, or what the server says it is."""
    try:
        return chat.provenance()
    except RuntimeError as exc:  # the run itself will stop with model_error and say why
        return {"source": "unknown", "model": getattr(chat, "model", None), "problem": str(exc)}

"""One whole attempt on a disposable copy: check, run the loop, check again, keep the record.

``run_attempt`` is the one place a recording is built. While the loop runs, a
:class:`CapturingChat` stands between it and the model and keeps each request and
each raw chunk with its arrival time; when the model can say how each chunk was sent
(it has a ``chunks_with_lines`` method, as every model of ``labkit.models`` does), the
text is kept beside the chunk, exactly as sent: an NDJSON line, or a server-sent event.
A chunk is copied once for the recording, or not at all when it comes frozen (a replay's
do: see ``labkit.harness.frozen``). A model that speaks another wire format than
Ollama's gets a recording that names it. A run with more than the three repository
tools, a permission gate, a budget or hooks keeps what it ran with under ``"harness"``
(``harness_setup.py``), so a replay can do the same. A run through an MCP server keeps
its traffic, every JSON-RPC line each way, under ``"mcp"``.
"""

from __future__ import annotations

import copy
import time

from ..harness.contracts import tool_names
from ..harness.formats import format_of
from ..harness.frozen import FrozenDict
from ..harness.hooks import HookSet, load_hooks
from ..harness.loop import MAX_TURNS, agent_events
from ..harness.project import SAMPLES
from ..harness.prompt import REPAIR_TASK
from ..harness.retrieval import WorkspaceIndex, retrieval_hook
from ..harness.sample import run_checks, sample_copy, tests_sha256
from .contents import FORMAT, VERSION, compact_event
from .harness_setup import TOOLSETS, harness_setup, make_retriever, open_tools


def run_attempt(
    chat,
    *,
    provenance: dict,
    task: str = REPAIR_TASK,
    max_turns: int = MAX_TURNS,
    on_event=None,
    clock=time.monotonic,
    tools: str = "repo",
    gate=None,
    budget=None,
    hooks: dict | None = None,
    sandbox=None,
    sample: str = "sample_repo",
    retrieval: dict | None = None,
) -> tuple[dict, list]:
    """Run the loop once on a fresh copy of the sample.

    Returns ``(recording, events)``: the recording in the saved format, and the
    loop's full events (with times and message snapshots). ``on_event(event)`` is
    called as each event happens, for progress displays. ``clock`` gives the time in
    seconds for the chunks' arrival offsets: a scripted model passes its own, so that
    its planned times, not this machine's speed, end up in the recording.
    ``tools`` names the toolset offered (``"repo"``, ``"shell"`` or ``"mcp"``, the
    course's MCP server); ``gate`` and ``budget`` go to the loop as they are
    (``agent_events``); ``hooks`` is a hooks configuration (``{"hooks": [...]}``, see
    ``harness/hooks.py``), run in the copy; ``sandbox`` (lesson 12) is where the tools and
    both independent checks run their programs. ``sample`` names the folder copied
    (``"sample_project"``: lesson 13's larger sample); ``retrieval`` (lesson 13,
    ``{"retriever": "bm25", "k": 4}``) indexes the copy and injects the ``k`` chunks most
    like the task before each request, a hook after the configured ones.
    """
    if tools not in TOOLSETS:
        raise ValueError(f"tools is one of {sorted(TOOLSETS)}, not {tools!r}")
    capture = CapturingChat(chat, clock=clock)
    events = []
    tell = on_event or (lambda event: None)
    wire_format = format_of(chat).name
    # a configuration that will not do fails here
    setup = harness_setup(tools, gate, budget, hooks, sandbox, sample, retrieval)
    copied = SAMPLES[sample]
    with sample_copy(copied) as root:
        with open_tools(tools, root, wire_format, sandbox) as toolset:
            hash_before = tests_sha256(root, copied)
            checks_before = run_checks(root, sandbox=sandbox)
            tell({"type": "checks", "when": "before", "checks": checks_before})
            for event in agent_events(
                capture,
                toolset,
                task,
                max_turns=max_turns,
                gate=gate,
                budget=budget,
                hooks=_hooks(hooks, retrieval, root),
            ):
                events.append(event)
                tell(event)
            traffic = list(getattr(toolset, "traffic", ()))
        checks_after = run_checks(root, sandbox=sandbox)
        tell({"type": "checks", "when": "after", "checks": checks_after})
        hash_after = tests_sha256(root, copied)
    recording = {"format": FORMAT, "version": VERSION}
    if wire_format != "ollama":  # Ollama's recordings say nothing: all were Ollama's at first
        recording["wire_format"] = wire_format
    recording.update(
        {
            "provenance": provenance,
            "task": task,
            "max_turns": max_turns,
            "test_file_sha256": {"before": hash_before, "after": hash_after},
            "checks": {"before": checks_before.to_dict(), "after": checks_after.to_dict()},
            **({"harness": setup} if setup else {}),
            "turns": capture.turns,
            "events": [compact_event(event) for event in events],
            **({"mcp": {"traffic": traffic}} if tools == "mcp" else {}),
        }
    )
    return recording, events


def _hooks(hooks: dict | None, retrieval: dict | None, root) -> HookSet | None:
    """The run's hooks: the configured ones, then retrieval's (built on this copy)."""
    configured = load_hooks(hooks, root) if hooks is not None else None
    if retrieval is None:
        return configured
    index = WorkspaceIndex(root, make_retriever(retrieval["retriever"])).build()
    found = retrieval_hook(index, k=retrieval["k"])
    return HookSet([*(configured.hooks if configured else ()), found], root)


class CapturingChat:
    """Wraps a ``chat`` callable and keeps ``turns`` in the recording's shape."""

    def __init__(self, chat, clock=time.monotonic):
        self.chat = chat
        self.clock = clock
        self.turns = []
        self.wire_format = getattr(chat, "wire_format", None)  # the loop reads the chat's

    def __call__(self, messages, tool_schemas):
        turn = {
            "request": {"messages": copy.deepcopy(messages), "tools": tool_names(tool_schemas)},
            "chunks": [],
        }
        self.turns.append(turn)
        return self._stream(turn, messages, tool_schemas)

    def _stream(self, turn, messages, tool_schemas):
        start = self.clock()
        stream = None
        try:
            stream = with_lines(self.chat, messages, tool_schemas)
            for chunk, line in stream:
                entry = {"at": round(self.clock() - start, 6), "chunk": _kept(chunk)}
                if line is not None:
                    entry["line"] = line
                turn["chunks"].append(entry)
                yield chunk
        except Exception as exc:
            turn["error"] = str(exc) or type(exc).__name__  # as the loop reports it
            raise
        finally:
            getattr(stream, "close", lambda: None)()


def _kept(chunk):
    """The chunk as the recording keeps it: a frozen one as it is (nothing can change it),
    anything else copied, so that what the loop or the model does to it later is not kept."""
    return chunk if type(chunk) is FrozenDict else copy.deepcopy(chunk)


def with_lines(chat, messages, tool_schemas):
    """``(chunk, line or None)`` pairs from ``chat``: its own lines when it keeps them."""
    kept = getattr(chat, "chunks_with_lines", None)
    if callable(kept):
        return kept(messages, tool_schemas)
    return _no_lines(chat(messages, tool_schemas))


def _no_lines(stream):
    try:
        for chunk in stream:
            yield chunk, None
    finally:
        getattr(stream, "close", lambda: None)()

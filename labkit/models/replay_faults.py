"""Ways to break a replay server's reply on purpose, and the plan for one reply they give.

A lesson (and the safety tests) ask a replay server to misbehave as real servers do: drop
the chunk that ends a reply, close or stall mid-stream, send an error or something that is
not JSON, answer with an error status, answer late. :class:`Faults` says which, on which
turn; :func:`reply_plan` says what that means for one recorded turn. Every API's server
applies them the same way (``replay_handler.py``).

A fault fires as a real service fails: once (or ``times`` times in a row), on the first
request for its turn in each conversation. A reply refused or broken before its first byte
(an error status, a hang-up, a whole reply that never comes) uses up no turn, so the retry
an official SDK makes (``openai`` and ``anthropic`` retry such failures twice, by default)
gets the recorded reply, as it would from a service that failed once. A reply that has
begun (a stream cut, stalled or broken after its status line) uses up its turn: no SDK
retries it, and the loop sees the failure.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from ..harness.loop import positive_int


@dataclass(frozen=True)
class Faults:
    """Ways to break one reply on purpose. All are off by default.

    ``turn``: the recorded turn (1 = the first) they apply to. ``times``: how many requests
    for that turn, one after another, they break (each conversation anew; the next request
    gets the recorded reply). ``drop_done``: leave out
    the chunk that ends the reply (Ollama's ``done`` chunk, OpenAI's ``finish_reason``
    chunk, Anthropic's ``message_stop``). ``close_after``: close the connection after
    N chunks. ``error_after``: after N chunks send an error the way the API reports
    one mid-reply (with N = 0: an HTTP 500 instead). ``garbage_after``: after N chunks
    send something that is not JSON, then end the reply. ``stall_after``: after N
    chunks send nothing more, keeping the connection open. ``status``: answer with this
    HTTP status and the API's error body. ``delay``: wait this many seconds first.
    """

    turn: int = 1
    times: int = 1
    drop_done: bool = False
    close_after: int | None = None
    error_after: int | None = None
    garbage_after: int | None = None
    stall_after: int | None = None
    status: int | None = None
    delay: float = 0.0
    error: str = "injected fault: the model runner stopped"

    def __post_init__(self):
        positive_int(self.turn, "turn (turns count from 1)")
        positive_int(self.times, "times (how many requests in a row a fault breaks)")
        if not self.delay >= 0:
            raise ValueError(f"delay is in seconds, >= 0, got {self.delay!r}")
        cuts = [
            n
            for n in (self.close_after, self.error_after, self.garbage_after, self.stall_after)
            if n is not None
        ]
        if len(cuts) > 1:
            raise ValueError(
                "choose one of close_after, error_after, garbage_after and stall_after"
            )
        if any(isinstance(n, bool) or not isinstance(n, int) or n < 0 for n in cuts):
            raise ValueError(
                "close_after, error_after, garbage_after and stall_after count chunks: ints >= 0"
            )
        if self.status is not None and not 400 <= self.status <= 599:
            raise ValueError(f"status {self.status} is not an HTTP error status (400-599)")

    @classmethod
    def from_keywords(cls, keywords: dict) -> Faults:
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(keywords) - known)
        if unknown:
            raise TypeError(f"unknown fault {', '.join(unknown)}; the faults are {sorted(known)}")
        return cls(**keywords)


NO_FAULTS = Faults()


def reply_plan(turn: dict, faults: Faults, final) -> tuple[list, str, str | None]:
    """What to send for one recorded turn: ``(positions, ending, error)``.

    ``final(chunk)`` says whether a chunk is the one that ends a reply (what
    ``drop_done`` leaves out). ``positions`` index the turn's chunks to stream, in
    order; ``ending`` is ``"end"`` (finish the response), ``"error"`` (send an error,
    then finish), ``"garbage"`` (send what is not JSON, then finish), ``"close"`` (drop
    the connection) or ``"stall"`` (go quiet).
    """
    positions = [
        index
        for index, entry in enumerate(turn["chunks"])
        if not (faults.drop_done and final(entry["chunk"]))
    ]
    for ending, count in (
        ("close", faults.close_after),
        ("error", faults.error_after),
        ("garbage", faults.garbage_after),
        ("stall", faults.stall_after),
    ):
        if count is not None:
            return positions[:count], ending, faults.error if ending == "error" else None
    if "error" in turn:  # the recorded stream itself failed here
        return positions, "error", turn["error"]
    return positions, "end", None

"""Is streamed assembly linear? Time the loop consuming one long text reply.

For streams of 20,000 and 200,000 four-character fragments, prints the time of
``agent_events`` consuming the stream (one final text message, no tools) divided by
the time of merely iterating the same stream. The stream is a generator that builds
each chunk as it yields it, as a model adapter does when it parses the wire. The
ratio should stay flat (and below 5) as the stream grows ten times; a design that
appends each fragment to a growing string grows with the length instead.

Run: python bench/assembly.py
"""

import time

from labkit import agent_events

MODEL = "bench"


def stream(fragments: int):
    for _ in range(fragments):
        yield {
            "model": MODEL,
            "created_at": "2026-12-01T09:00:00Z",
            "message": {"role": "assistant", "content": "abcd"},
            "done": False,
        }
    yield {
        "model": MODEL,
        "created_at": "2026-12-01T09:00:00Z",
        "message": {"role": "assistant", "content": ""},
        "done": True,
        "done_reason": "stop",
    }


class NoTools:
    schemas = []

    def invoke(self, name, arguments):
        raise ValueError("no tools here")


def best_of(runs, work):
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return min(times)


def naive_assembly(fragments: int) -> None:
    """The design to avoid: append each fragment to a string held in a dict."""
    message = {"content": ""}
    for chunk in stream(fragments):
        message["content"] += chunk["message"]["content"]


def main() -> None:
    print(f"{'fragments':>10} {'iterate (ms)':>13} {'loop (ms)':>10} {'ratio':>6}")
    for fragments in (20_000, 200_000):
        iterate = best_of(5, lambda n=fragments: sum(1 for _ in stream(n)))
        events = []
        loop = best_of(
            5,
            lambda n=fragments, events=events: events.append(
                list(agent_events(lambda m, s: stream(n), NoTools(), "bench"))
            ),
        )
        stop = events[-1][-1]
        assert stop["reason"] == "assistant_finished"
        assert len(stop["messages"][-1]["content"]) == 4 * fragments
        print(f"{fragments:>10,} {iterate * 1e3:>13.1f} {loop * 1e3:>10.1f} {loop / iterate:>6.2f}")
    naive = best_of(1, lambda: naive_assembly(200_000))
    print(f"for comparison, string += in a dict, 200,000 fragments: {naive * 1e3:.0f} ms")


if __name__ == "__main__":
    main()

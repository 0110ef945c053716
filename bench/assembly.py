"""Is streamed assembly linear, and cheap? Time the loop consuming one long text reply.

For streams of 20,000 and 200,000 four-character fragments, in each wire format the
harness speaks, prints the time of ``agent_events`` consuming the stream (one final text
message, no tools) divided by the time of merely iterating the same stream. The stream is
a generator that builds each chunk as it yields it, as a model adapter does when it parses
the wire. The ratio should stay flat as the stream grows ten times (linear) and at most 5
(the loop's own work per fragment: checking the chunk, folding it in, one text_delta
event); a design that appends each fragment to a growing string grows with the length.

Run: python bench/assembly.py
"""

import time

from labkit import agent_events

MODEL = "bench"


def ollama_stream(fragments: int):
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


def openai_stream(fragments: int):
    def chunk(delta, finish=None):
        return {
            "id": "chatcmpl-bench",
            "object": "chat.completion.chunk",
            "created": 1796115600,
            "model": MODEL,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }

    yield chunk({"role": "assistant", "content": ""})
    for _ in range(fragments):
        yield chunk({"content": "abcd"})
    yield chunk({}, "stop")


def anthropic_stream(fragments: int):
    yield {"type": "message_start", "message": {"id": "msg_bench", "model": MODEL}}
    yield {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}
    for _ in range(fragments):
        yield {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "text_delta", "text": "abcd"},
        }
    yield {"type": "content_block_stop", "index": 0}
    yield {
        "type": "message_delta",
        "delta": {"stop_reason": "end_turn"},
        "usage": {"output_tokens": fragments},
    }
    yield {"type": "message_stop"}


STREAMS = {"ollama": ollama_stream, "openai": openai_stream, "anthropic": anthropic_stream}


class BenchChat:
    """A model that streams ``fragments`` text fragments in ``wire_format``."""

    def __init__(self, wire_format: str, fragments: int):
        self.wire_format, self.fragments = wire_format, fragments

    def __call__(self, messages, tool_schemas):
        return STREAMS[self.wire_format](self.fragments)


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
    for chunk in ollama_stream(fragments):
        message["content"] += chunk["message"]["content"]


def main() -> None:
    print(f"{'format':>10} {'fragments':>10} {'iterate (ms)':>13} {'loop (ms)':>10} {'ratio':>6}")
    for wire_format, make in STREAMS.items():
        for fragments in (20_000, 200_000):
            iterate = best_of(5, lambda n=fragments, make=make: sum(1 for _ in make(n)))
            chat, runs = BenchChat(wire_format, fragments), []
            loop = best_of(
                5,
                lambda chat=chat, runs=runs: runs.append(
                    list(agent_events(chat, NoTools(), "bench"))
                ),
            )
            stop = runs[-1][-1]
            assert stop["reason"] == "assistant_finished", stop
            assert len(runs[-1]) == fragments + 2  # model_start, one text_delta each, stopped
            print(
                f"{wire_format:>10} {fragments:>10,} {iterate * 1e3:>13.1f} {loop * 1e3:>10.1f} "
                f"{loop / iterate:>6.2f}"
            )
    naive = best_of(1, lambda: naive_assembly(200_000))
    print(f"for comparison, string += in a dict, 200,000 fragments: {naive * 1e3:.0f} ms")


if __name__ == "__main__":
    main()

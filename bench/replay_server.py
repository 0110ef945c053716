"""Is the replay server fast enough? Chunks per second, through the real SDK and in process.

For one 20,000-chunk text turn (Ollama-shaped chunks of four characters) it prints
chunks per second of ReplayModel in process, next to OllamaModel reading the same
turn through the real ollama SDK from the replay server over loopback (with the
server in this process, as in a notebook, and in a process of its own, as with
``python -m labkit serve``). Then it times each part of the SDK path alone, to
show where the time goes: the raw HTTP transfer of the lines (the server encodes
them once, when it starts), and the client's JSON parsing, pydantic validation and
labkit's own parse of the line it kept off the wire.

The server is not the bottleneck when serving and transfer take much less time
than the client's own parsing.

Run: python bench/replay_server.py
"""

import json
import multiprocessing
import time

import httpx
from ollama import ChatResponse

from labkit import OllamaModel, ReplayModel, load_recording, serve_recording
from labkit.models.go_json import ollama_line
from labkit.models.scripted import PlannedTurn, turn_chunks
from labkit.settings import DEFAULT_MODEL, RECORDINGS_DIR

FRAGMENTS = 20_000
MESSAGES = [{"role": "user", "content": "bench"}]


def long_turn() -> dict:
    """A valid recording (the bounded one's frame) whose one turn streams 20,000 chunks."""
    chunks = turn_chunks(PlannedTurn(content=" abc" * FRAGMENTS))[-FRAGMENTS - 1 :]
    frame = load_recording(RECORDINGS_DIR / "bounded.json")
    return {
        **frame,
        "turns": [
            {
                "request": {"messages": MESSAGES},
                "chunks": [{"at": at, "chunk": chunk} for at, chunk in chunks],
            }
        ],
    }


def best_of(runs, work):
    """(what ``work()`` returned, its fastest time in seconds)."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        result = work()
        times.append(time.perf_counter() - start)
    return result, min(times)


def count(items) -> int:
    return sum(1 for _ in items)


def raw_lines(url) -> int:
    body = {"model": DEFAULT_MODEL, "messages": MESSAGES, "stream": True}
    with httpx.stream("POST", f"{url}/api/chat", json=body, timeout=60) as response:
        return count(response.iter_lines())


def serve_in_child(recording, pipe) -> None:
    with serve_recording(recording, strict=False) as server:
        pipe.send(server.url)
        pipe.recv()  # serve until the parent says stop


def main() -> None:
    recording = long_turn()
    chunks = [entry["chunk"] for entry in recording["turns"][0]["chunks"]]
    lines = [ollama_line(chunk) for chunk in chunks]
    parsed = [json.loads(line) for line in lines]
    rows = [
        (
            "ReplayModel, in process",
            best_of(5, lambda: count(ReplayModel(recording, strict=False)(MESSAGES, []))),
        )
    ]

    with serve_recording(recording, strict=False) as server, OllamaModel(host=server.url) as model:
        rows.append(
            (
                "OllamaModel, SDK, server in this process",
                best_of(5, lambda: count(model(MESSAGES, []))),
            )
        )
        rows.append(
            ("  raw HTTP lines (serving + transfer)", best_of(5, lambda: raw_lines(server.url)))
        )

    parent, child = multiprocessing.Pipe()
    process = multiprocessing.Process(target=serve_in_child, args=(recording, child))
    process.start()
    try:
        with OllamaModel(host=parent.recv()) as model:
            rows.insert(
                2,
                (
                    "OllamaModel, SDK, server in its own process",
                    best_of(5, lambda: count(model(MESSAGES, []))),
                ),
            )
    finally:
        parent.send("stop")
        process.join()

    rows += [
        (
            "  server start: encoding the lines (once)",
            best_of(5, lambda: count(map(ollama_line, chunks))),
        ),
        ("  client: json.loads", best_of(5, lambda: count(map(json.loads, lines)))),
        (
            "  client: pydantic ChatResponse(**part)",
            best_of(5, lambda: count(ChatResponse(**part) for part in parsed)),
        ),
        (
            "  client: LineTap's copy, parsed again for the loop",
            best_of(5, lambda: count(map(json.loads, lines))),
        ),
    ]
    print(f"one turn of {len(chunks):,} chunks; each part below is timed alone\n")
    print(f"{'path':<46} {'ms':>6} {'chunks/s':>10}")
    for name, (counted, seconds) in rows:
        assert counted == len(chunks), (name, counted)
        print(f"{name:<46} {seconds * 1e3:>6.0f} {counted / seconds:>10,.0f}")


if __name__ == "__main__":
    main()

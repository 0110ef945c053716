"""Does the loop's own work per request stay below the cost of sending that request?

A run of N turns, each asking for one tool whose result is 10 KB of text, then a final
answer. The chat answers from prebuilt chunks and the tool returns a prebuilt result,
so nearly all the time measured is the loop's own: assembling, freezing, appending,
handing out the conversation. Prints, at 100 and 400 turns, the loop's time per request
beside the time to ``json.dumps`` that request (what any real chat must do at least),
and their ratio; the aim is a ratio of at most 1. A loop that copies the whole
conversation each turn grows with the square of the turns and misses it by far.

Run: python bench/loop_copies.py
"""

import json
import time

from labkit import agent_events

RESULT = {"path": "big.txt", "content": "x" * 10_000}
TOOL_TURN = [
    {"model": "bench", "message": {"role": "assistant", "content": "", "thinking": "look again"}},
    {
        "model": "bench",
        "message": {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"function": {"name": "read_file", "arguments": {"path": "big.txt"}}}],
        },
    },
    {
        "model": "bench",
        "message": {"role": "assistant", "content": ""},
        "done": True,
        "done_reason": "stop",
    },
]
FINAL_TURN = [
    {
        "model": "bench",
        "message": {"role": "assistant", "content": "done"},
        "done": True,
        "done_reason": "stop",
    }
]


class BigResults:
    schemas = [
        {
            "type": "function",
            "function": {
                "name": "read_file",
                "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
            },
        }
    ]

    def invoke(self, name, arguments):
        return RESULT


def run(turns: int):
    """One run of ``turns`` requests; returns (loop seconds, the requests it sent)."""
    requests = []

    def chat(messages, schemas):
        requests.append(messages)
        return iter(TOOL_TURN if len(requests) < turns else FINAL_TURN)

    start = time.perf_counter()
    events = list(agent_events(chat, BigResults(), "bench", max_turns=turns))
    seconds = time.perf_counter() - start
    assert events[-1]["reason"] == "assistant_finished" and len(requests) == turns
    return seconds, requests


def main() -> None:
    print(f"{'turns':>6} {'loop/request (ms)':>18} {'json.dumps/request (ms)':>24} {'ratio':>6}")
    for turns in (100, 400):
        loop, requests = min((run(turns) for _ in range(3)), key=lambda result: result[0])
        start = time.perf_counter()
        for messages in requests:
            json.dumps(messages)
        dumps = time.perf_counter() - start
        print(
            f"{turns:6d} {1000 * loop / turns:18.3f} {1000 * dumps / turns:24.3f} "
            f"{loop / dumps:6.2f}"
        )


if __name__ == "__main__":
    main()

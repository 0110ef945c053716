"""Does stepping stay instant on a long turn? Time the chunk stepper on 20,000 chunks.

Builds one turn of 20,000 chunks (2,000 of thinking, then text, then a tool call
and the final chunk), times building the prefix index once, then the time to
render steps 10, 10,000 and 19,999 (state plus HTML), and the same steps through
the widget (moving its slider). A step costs in proportion to what it shows, not
to its position: step 10 shows 40 characters, the later steps the 2,000-character
tails of thinking and text, so last/first is that difference in size (a few
times), while last/middle, equal in size, stays near 1. For comparison it prints
what re-folding chunks 1..k with ``assemble_turn`` would cost at each step.

Run: python bench/widgets.py
"""

import time

from assembly import best_of  # bench/assembly.py, beside this file

from labkit import assemble_turn
from labkit.lessons.render import chunk_step_html
from labkit.lessons.steps import TurnSteps

CHUNKS = 20_000
STEPS = (10, 10_000, 19_999)


def chunk(message: dict, done: bool = False) -> dict:
    return {
        "model": "bench",
        "created_at": "2026-12-01T09:00:00Z",
        "message": {"role": "assistant", "content": "", **message},
        "done": done,
    }


def long_turn() -> dict:
    chunks = [chunk({"thinking": "hmm "}) for _ in range(2_000)]
    chunks += [chunk({"content": "abcd"}) for _ in range(CHUNKS - len(chunks) - 2)]
    chunks.append(chunk({"tool_calls": [{"function": {"name": "run_tests", "arguments": {}}}]}))
    chunks.append({**chunk({}, done=True), "done_reason": "stop"})
    return {
        "request": {"messages": [], "tools": []},
        "chunks": [{"at": round(0.35 + 0.04 * i, 6), "chunk": c} for i, c in enumerate(chunks)],
    }


def main() -> None:
    turn = long_turn()
    build = best_of(3, lambda: TurnSteps(turn))
    print(f"turn of {CHUNKS:,} chunks: building the prefix index took {build * 1e3:.1f} ms")
    steps = TurnSteps(turn)
    rendered = {k: best_of(20, lambda k=k: chunk_step_html(steps.step(k))) for k in STEPS}

    from labkit import ChunkStepper  # ipywidgets loads here, not in the figures above

    stepper = ChunkStepper(turn)

    def move_to(k):
        stepper.slider.value = 1
        start = time.perf_counter()
        stepper.slider.value = k
        return time.perf_counter() - start

    through_widget = {k: min(move_to(k) for _ in range(20)) for k in STEPS}
    chunks = [entry["chunk"] for entry in turn["chunks"]]
    refold = {k: best_of(3, lambda k=k: assemble_turn(chunks[:k])) for k in STEPS}
    print(
        f"{'step':>7} {'chars shown':>12} {'render (ms)':>12} {'widget (ms)':>12} "
        f"{'re-fold (ms)':>13}"
    )
    for k in STEPS:
        step = steps.step(k)
        shown = len(step.content) + len(step.thinking)
        print(
            f"{k:>7,} {shown:>12,} {rendered[k] * 1e3:>12.3f} {through_widget[k] * 1e3:>12.3f} "
            f"{refold[k] * 1e3:>13.2f}"
        )
    first, middle, last = STEPS
    for label, times in (("render", rendered), ("widget", through_widget)):
        print(
            f"{label}: step {last:,} / step {first} = {times[last] / times[first]:.2f}, "
            f"step {last:,} / step {middle:,} = {times[last] / times[middle]:.2f}"
        )


if __name__ == "__main__":
    main()

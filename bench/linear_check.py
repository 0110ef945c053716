"""Does exercise 2a's time-growth check separate linear answers from super-linear ones?

For several draws of the check's own long streams (text, thinking, tool calls and
missing content mixed; labkit.grading.checks.TIMING), times each answer in a fresh
process, as the check does (CPU time read from outside the process), and prints its
growth from the small to the large size divided by the linear reference's growth in the
same draw. The check fails a ratio above MAX_GROWTH: right answers must stay well under
it on every draw, quadratic ones well over it.

Run: python bench/linear_check.py
"""

import random

from labkit.grading import checks
from labkit.grading.feedback import MAX_GROWTH
from labkit.grading.isolated import time_answer

ANSWERS = {
    "list and append": """
def assemble_content(chunks):
    parts = []
    for chunk in chunks:
        if chunk["message"].get("content"):
            parts.append(chunk["message"]["content"])
    return "".join(parts)
""",
    "+= on a local string": """
def assemble_content(chunks):
    text = ""
    for chunk in chunks:
        text += chunk["message"].get("content") or ""
    return text
""",
    "dict and + (quadratic)": """
def assemble_content(chunks):
    turn = {"content": ""}
    for chunk in chunks:
        turn["content"] = turn["content"] + (chunk["message"].get("content") or "")
    return turn["content"]
""",
    "quadratic in the thinking only": """
def assemble_content(chunks):
    parts, thinking = [], ""
    for chunk in chunks:
        if chunk["message"].get("content"):
            parts.append(chunk["message"]["content"])
        thinking = thinking + (chunk["message"].get("thinking") or "")
        kept = {"thinking": thinking}
    return "".join(parts)
""",
    "insert(0) on a reversed walk": """
def assemble_content(chunks):
    parts = []
    for chunk in reversed(chunks):
        if chunk["message"].get("content"):
            parts.insert(0, chunk["message"]["content"])
    return "".join(parts)
""",
}
DRAWS = 6


def main() -> None:
    small, large = checks.TIMING["sizes"]
    print(f"streams of {small:,} and {large:,} fragments, {checks.TIMING['repeats']} of each "
          f"size per draw; the check fails a growth above {MAX_GROWTH} x the reference's")
    ratios = {name: [] for name in ANSWERS}
    for draw_number in range(DRAWS):
        draw = random.Random(draw_number)
        inputs = {size: [[checks._random_stream(draw, done=True, length=size, text=(6, 12),
                                                weights=(10, 6, 1, 1, 1))]
                         for _ in range(checks.TIMING["repeats"])] for size in (small, large)}
        reference = time_answer(checks._LINEAR_REFERENCE, "assemble_content", inputs, timeout=120)
        linear = reference[large][0] / reference[small][0]
        for name, source in ANSWERS.items():
            timed = time_answer(source, "assemble_content", inputs, timeout=120)
            ratios[name].append(timed[large][0] / timed[small][0] / linear)
    for name, values in ratios.items():
        print(f"  {name:<32} growth / reference growth {min(values):5.2f} .. {max(values):5.2f}"
              f" over {DRAWS} draws")


if __name__ == "__main__":
    main()

"""Do the time-growth checks of exercises 2a and 6a separate linear answers from super-linear ones?

For several draws of each check's own long streams (2a: text, thinking, tool calls and
missing content mixed; 6a: one OpenAI call whose arguments come in that many fragments;
sizes from each check's TIMING), times each answer in a fresh
process, as the check does (CPU time read from outside the process), and prints its
growth from the small to the large size divided by the linear reference's growth in the
same draw. The check fails a ratio above MAX_GROWTH: right answers must stay well under
it on every draw, quadratic ones well over it.

Run: python bench/linear_check.py
"""

import random

from labkit.grading import checks, checks_providers
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
    turn = {"content": [], "thinking": ""}
    for chunk in chunks:
        message = chunk["message"]
        if message.get("content"):
            turn["content"].append(message["content"])
        if message.get("thinking"):
            turn["thinking"] = turn["thinking"] + message["thinking"]
    return "".join(turn["content"])
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
CALLS_ANSWERS = {
    "lists per index, joined at the end": """
import json
def assemble_openai_calls(chunks):
    calls, finish = {}, None
    for chunk in chunks:
        for choice in chunk["choices"]:
            for entry in choice["delta"].get("tool_calls") or []:
                call = calls.setdefault(entry["index"], {"parts": []})
                if "id" in entry:
                    call["id"], call["name"] = entry["id"], entry["function"]["name"]
                call["parts"].append(entry["function"].get("arguments") or "")
            finish = choice.get("finish_reason") or finish
    if finish not in ("tool_calls", "stop"):
        return None
    return [{"id": c["id"], "name": c["name"], "arguments": json.loads("".join(c["parts"]))}
            for _, c in sorted(calls.items())]
""",
}
CALLS_ANSWERS["a string per index, rebuilt with + (quadratic)"] = CALLS_ANSWERS[
    "lists per index, joined at the end"].replace('{"parts": []}', '{"parts": ""}').replace(
    'call["parts"].append(entry["function"].get("arguments") or "")',
    'call["parts"] = call["parts"] + (entry["function"].get("arguments") or "")')
DRAWS = 6


EXERCISES = [("2a assemble_content", "assemble_content", ANSWERS,
              (checks._LINEAR_REFERENCE, "assemble_content"), checks._long_stream, checks.TIMING),
             ("6a assemble_openai_calls", "assemble_openai_calls", CALLS_ANSWERS,
              (checks_providers._CALLS_REFERENCE, "_openai_calls"), checks_providers._long_stream,
              checks_providers.CALLS_TIMING)]


def main() -> None:
    print(f"the check fails a growth above {MAX_GROWTH} x the reference's")
    for title, function, answers, reference_source, stream, timing in EXERCISES:
        (small, large), repeats = timing["sizes"], timing["repeats"]
        print(f"{title}: streams of {small:,} and {large:,} fragments, {repeats} of each size "
              "per draw")
        ratios = {name: [] for name in answers}
        for draw_number in range(DRAWS):
            draw = random.Random(draw_number)
            inputs = {size: [[stream(draw, size)] for _ in range(repeats)]
                      for size in (small, large)}
            reference = time_answer(*reference_source, inputs, timeout=120)
            linear = reference[large][0] / reference[small][0]
            for name, source in answers.items():
                timed = time_answer(source, function, inputs, timeout=120)
                ratios[name].append(timed[large][0] / timed[small][0] / linear)
        report(ratios)


def report(ratios: dict) -> None:
    for name, values in ratios.items():
        print(f"  {name:<48} growth / reference growth {min(values):5.2f} .. {max(values):5.2f}"
              f" over {DRAWS} draws")


if __name__ == "__main__":
    main()

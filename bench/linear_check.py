"""Does exercise 2a's time-growth check separate linear answers from quadratic ones?

Runs the check's timing (labkit.exercises.TIMING, in a fresh process each time, as the
check does) ten times for each of four answers and prints the range of the growth it
measured, against the limit the check applies (MAX_GROWTH times the reference's growth,
at least the size ratio). The linear answers must stay well under it on every run, the
quadratic one well over it.

Run: python bench/linear_check.py
"""

from labkit.grading.checks import MAX_GROWTH, TIMING
from labkit.grading.isolated import run_answer

ANSWERS = {
    "join once (the reference)": """
def assemble_content(chunks):
    return "".join(chunk["message"].get("content") or "" for chunk in chunks)
""",
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
}
RUNS = 10


def main() -> None:
    small, large = TIMING["sizes"]
    print(f"streams of {small:,} and {large:,} fragments; the check fails a growth above "
          f"{MAX_GROWTH} x max(reference growth, {large // small}) = at least "
          f"{MAX_GROWTH * large / small:.0f}x")
    for name, source in ANSWERS.items():
        growths = []
        for _ in range(RUNS):
            times = run_answer(source, "assemble_content", [], timing=TIMING, timeout=120)
            growths.append(times[1] / times[0])
        print(f"  {name:<28} growth {min(growths):6.1f}x .. {max(growths):6.1f}x over {RUNS} runs")


if __name__ == "__main__":
    main()

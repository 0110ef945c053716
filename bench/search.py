"""The toolkit's grep and glob against `grep -r` on the same generated tree, in one run.

10,000 files of about 10 kB (about 100 MB) in 100 folders, a few of them holding the word
searched for. Each search runs once per round, in turn, for eleven rounds (the page cache
warm after the first), so that the searches compared meet the same moments of a shared
machine's load; printed are each search's best time and the median of its per-round
ratios to `grep -r -l`. The aim is grep at or below 1.5x `grep -r -l`. `find -name` is
shown beside glob as the program that does glob's job. The load average is printed first.

    python bench/search.py
"""

import os
import random
import shutil
import statistics
import string
import subprocess
import tempfile
import time
from pathlib import Path

from labkit.harness.toolkit import ReadTools

FILES, FOLDERS, SIZE, WORD = 10_000, 100, 10_000, "needle_in_haystack"
ROUNDS = 11


def tree(root: Path) -> None:
    draw = random.Random(9)
    line = "".join(draw.choices(string.ascii_letters + "  ", k=79)) + "\n"
    body = line * (SIZE // len(line))
    for n in range(FILES):
        folder = root / f"pkg{n % FOLDERS:03}"
        folder.mkdir(exist_ok=True)
        text = body + (f"x = '{WORD}'\n" if n % 997 == 0 else "")
        (folder / f"module{n:05}.py").write_text(text)


def timed(run) -> tuple[float, object]:
    start = time.perf_counter()
    value = run()
    return time.perf_counter() - start, value


def rounds(runs: dict, times: int = ROUNDS) -> dict[str, list[float]]:
    """Each run once per round, in turn, so that every one meets the same moments of a
    shared machine's load; the times per run, in round order."""
    times_of: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(times):
        for name, run in runs.items():
            times_of[name].append(timed(run)[0])
    return times_of


def command(root: Path, *words: str) -> list[str]:
    return subprocess.run(words, cwd=root, capture_output=True, text=True).stdout.split()


def main() -> None:
    print("load average (1, 5, 15 min):", ", ".join(f"{n:.2f}" for n in os.getloadavg()))
    root = Path(tempfile.mkdtemp(prefix="labkit-bench-search-"))
    try:
        tree(root)
        tools = ReadTools(root)
        found = command(root, "grep", "-r", "-l", WORD, ".")
        named = command(root, "find", ".", "-name", "*.py")
        result, listed = tools.grep(WORD), tools.glob("**/*.py")
        assert sorted(path.removeprefix("./") for path in found) == result["files"]
        assert len(named) == listed["count"] == FILES
        runs = {
            "grep -r -l": lambda: command(root, "grep", "-r", "-l", WORD, "."),
            "toolkit grep": lambda: tools.grep(WORD),
            "find -name '*.py'": lambda: command(root, "find", ".", "-name", "*.py"),
            "toolkit glob **/*.py": lambda: tools.glob("**/*.py"),
        }
        times = rounds(runs)
        megabytes = sum(p.stat().st_size for p in root.rglob("*.py")) / 1e6
        print(f"tree: {FILES:,} files, {megabytes:.0f} MB; {len(found)} files hold the word")
        print(f"{ROUNDS} rounds, each search once per round in turn; best time, and the median")
        print("of the per-round ratios to grep -r -l (the pairs met the same load):")
        for name, spent in times.items():
            reference = times["grep -r -l"]
            ratios = [mine / theirs for mine, theirs in zip(spent, reference)]
            print(
                f"  {name:21} best {min(spent) * 1000:6.0f} ms  ({min(spent) / min(reference):.2f}x"
                f" grep -r's best; median ratio {statistics.median(ratios):.2f}x)"
            )
    finally:
        shutil.rmtree(root)


if __name__ == "__main__":
    main()

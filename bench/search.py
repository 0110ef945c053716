"""The toolkit's grep and glob against `grep -r` on the same generated tree, in one run.

10,000 files of about 10 kB (about 100 MB) in 100 folders, a few of them holding the word
searched for; every search is run five times (the page cache warm after the first) and
the best time counts. Prints each time and the ratios; the aim is grep at or below 1.5x
`grep -r -l`. `find -name` is shown beside glob as the program that does glob's job.
Times on a shared machine wander: the load average is printed first, and the ratios of
one run are what to compare.

    python bench/search.py
"""

import os
import random
import shutil
import string
import subprocess
import tempfile
import time
from pathlib import Path

from labkit.harness.toolkit import ReadTools

FILES, FOLDERS, SIZE, WORD = 10_000, 100, 10_000, "needle_in_haystack"


def tree(root: Path) -> None:
    draw = random.Random(9)
    line = "".join(draw.choices(string.ascii_letters + "  ", k=79)) + "\n"
    body = line * (SIZE // len(line))
    for n in range(FILES):
        folder = root / f"pkg{n % FOLDERS:03}"
        folder.mkdir(exist_ok=True)
        text = body + (f"x = '{WORD}'\n" if n % 997 == 0 else "")
        (folder / f"module{n:05}.py").write_text(text)


def best(run, times: int = 5) -> tuple[float, object]:
    results = []
    for _ in range(times):
        start = time.perf_counter()
        value = run()
        results.append((time.perf_counter() - start, value))
    return min(results, key=lambda pair: pair[0])


def command(root: Path, *words: str) -> list[str]:
    return subprocess.run(words, cwd=root, capture_output=True, text=True).stdout.split()


def main() -> None:
    print("load average (1, 5, 15 min):", ", ".join(f"{n:.2f}" for n in os.getloadavg()))
    root = Path(tempfile.mkdtemp(prefix="labkit-bench-search-"))
    try:
        tree(root)
        tools = ReadTools(root)
        grep_r, found = best(lambda: command(root, "grep", "-r", "-l", WORD, "."))
        find, named = best(lambda: command(root, "find", ".", "-name", "*.py"))
        ours, result = best(lambda: tools.grep(WORD))
        glob_time, listed = best(lambda: tools.glob("**/*.py"))
        assert sorted(path.removeprefix("./") for path in found) == result["files"]
        assert len(named) == listed["count"] == FILES
        megabytes = sum(p.stat().st_size for p in root.rglob("*.py")) / 1e6
        print(f"tree: {FILES:,} files, {megabytes:.0f} MB; {len(found)} files hold the word")
        print(f"grep -r -l:           {grep_r * 1000:7.0f} ms")
        print(f"toolkit grep:         {ours * 1000:7.0f} ms  ({ours / grep_r:.2f}x grep -r)")
        print(f"find -name '*.py':    {find * 1000:7.0f} ms  ({find / grep_r:.2f}x grep -r)")
        print(
            f"toolkit glob **/*.py: {glob_time * 1000:7.0f} ms  ({glob_time / grep_r:.2f}x "
            f"grep -r, {glob_time / find:.2f}x find; {listed['count']:,} paths)"
        )
    finally:
        shutil.rmtree(root)


if __name__ == "__main__":
    main()

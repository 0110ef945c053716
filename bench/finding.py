"""Lesson 13's costs on the larger sample, in one run: building each retriever's index and
asking it, and a language server's references against `grep -rn` for the same symbol.

On a fresh copy of sample_project: BM25's index is built five times (the median kept) and
MiniLM's once (the model reads every chunk); each retriever answers the lesson's fourteen
questions (the median per question). Then ty starts (the time to its first answer), and
`references` for parse_date and `grep -rn parse_date .` run in turn, eleven rounds, so that
both meet the same moments of a shared machine's load; printed are the medians and the
median of the per-round ratios. The load average is printed first.

    python bench/finding.py
"""

import os
import statistics
import subprocess
import time

from labkit.extensions.embeddings import MiniLMRetriever
from labkit.harness.loop import call_tool
from labkit.harness.project import PROJECT
from labkit.harness.retrieval import BM25Retriever, WorkspaceIndex
from labkit.harness.sample import sample_copy
from labkit.harness.symbols import SymbolTools
from labkit.lessons.finding import QUESTIONS

ROUNDS = 11
SYMBOL = {"symbol": "parse_date"}


def timed(run) -> tuple[float, object]:
    start = time.perf_counter()
    value = run()
    return time.perf_counter() - start, value


def query_median(index: WorkspaceIndex) -> float:
    return statistics.median(timed(lambda q=q: index.search(q.text, 5))[0] for q in QUESTIONS)


def main() -> None:
    print(f"load average {os.getloadavg()[0]:.2f}; {os.cpu_count()} cores")
    with sample_copy(PROJECT) as root:
        builds = [timed(WorkspaceIndex(root, BM25Retriever()).build) for _ in range(5)]
        bm25_build, bm25 = statistics.median(t for t, _ in builds), builds[0][1]
        minilm_build, minilm = timed(WorkspaceIndex(root, MiniLMRetriever()).build)
        size = bm25.size
        print(
            f"index: {size['files']} files, {size['chunks']} chunks, {size['characters']:,} chars"
        )
        bm25_query, minilm_query = query_median(bm25), query_median(minilm)
        print(f"build   bm25 {bm25_build * 1e3:8.1f} ms   minilm {minilm_build * 1e3:8.0f} ms   "
              f"minilm/bm25 {minilm_build / bm25_build:8.0f}x")  # fmt: skip
        print(f"query   bm25 {bm25_query * 1e3:8.2f} ms   minilm {minilm_query * 1e3:8.1f} ms   "
              f"minilm/bm25 {minilm_query / bm25_query:8.0f}x")  # fmt: skip

        with SymbolTools(root) as kit:
            start, first = timed(lambda: call_tool(kit, "references", SYMBOL))
            print(f"ty: start and first references {start * 1e3:.0f} ms ({first['count']} places)")
            lsp, grep, ratios = [], [], []
            for _ in range(ROUNDS):
                a, _ = timed(lambda: call_tool(kit, "references", SYMBOL))
                b, _ = timed(
                    lambda: subprocess.run(
                        ["grep", "-rn", "parse_date", "."], cwd=root, capture_output=True
                    )
                )
                lsp.append(a), grep.append(b), ratios.append(b / a)
            print(f"references (warm) {statistics.median(lsp) * 1e3:6.2f} ms   "
                  f"grep -rn {statistics.median(grep) * 1e3:6.2f} ms   "
                  f"grep/references {statistics.median(ratios):5.2f}x")  # fmt: skip


if __name__ == "__main__":
    main()

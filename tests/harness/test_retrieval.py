"""The workspace index and the retrieval hook: built once, refreshed for changed files only,
the top K injected before each request as a labelled part."""

from pathlib import Path

from labkit.harness.contracts import Retriever
from labkit.harness.retrieval import (
    BM25Retriever,
    WorkspaceIndex,
    injected,
    query_of,
    retrieval_hook,
)


def workspace(tmp_path: Path) -> Path:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "dates.py").write_text(
        "def parse_date(text):\n    return text\n\n\ndef format_date(day):\n    return day\n"
    )
    (tmp_path / "pkg" / "money.py").write_text("def round_cents(amount):\n    return amount\n")
    (tmp_path / ".hidden.py").write_text("def parse_date():\n    pass\n")
    return tmp_path


def test_the_bm25_retriever_is_a_retriever():
    assert isinstance(BM25Retriever(), Retriever)


def test_the_index_holds_the_walked_files_chunks_and_finds_by_words(tmp_path):
    index = WorkspaceIndex(workspace(tmp_path), BM25Retriever()).build()
    assert index.size["files"] == 2 and index.size["chunks"] == 3
    hits = index.search("where is a date parsed", k=2)
    assert [h.chunk.label for h in hits] == ["pkg/dates.py:1-2 parse_date",
                                             "pkg/dates.py:5-6 format_date"]  # fmt: skip
    assert index.search("nothing matches zebra", k=3) == []


def test_refresh_rereads_only_the_files_that_changed(tmp_path):
    root = workspace(tmp_path)
    index = WorkspaceIndex(root, BM25Retriever()).build()
    assert index.refresh() == []
    (root / "pkg" / "money.py").write_text("def split_evenly(amount, parts):\n    return parts\n")
    (root / "pkg" / "new.py").write_text("def zebra():\n    pass\n")
    (root / "pkg" / "dates.py").unlink()
    assert index.refresh() == ["pkg/dates.py", "pkg/money.py", "pkg/new.py"]
    assert [c.name for c in index.chunks] == ["split_evenly", "zebra"]
    assert index.search("zebra")[0].chunk.path == "pkg/new.py"
    assert index.refreshes == [["pkg/dates.py", "pkg/money.py", "pkg/new.py"]]


def test_the_query_is_the_task_and_the_models_newest_words():
    messages = [{"role": "user", "content": "task"},
                {"role": "assistant", "content": "old"},
                {"role": "assistant", "content": "new words", "thinking": "why"}]  # fmt: skip
    assert query_of("fix it", messages) == "fix it\nwhy\nnew words"
    assert query_of("fix it", [{"role": "user", "content": "x"}]) == "fix it"


def test_the_hook_injects_the_best_chunks_before_each_request(tmp_path):
    root = workspace(tmp_path)
    index = WorkspaceIndex(root, BM25Retriever()).build()
    hook = retrieval_hook(index, k=1)
    assert tuple(hook.on) == ("run_start", "before_request")
    start = {"point": "run_start", "task": "round the cents"}
    assert hook.answer("run_start", start, root).context is None
    before = {"point": "before_request", "messages": []}
    context = hook.answer("before_request", before, root).context
    assert context == (
        "The 1 chunks of the workspace most like the task (bm25):\n\n"
        "--- pkg/money.py:1-2 round_cents\ndef round_cents(amount):\n    return amount"
    )
    (root / "pkg" / "money.py").write_text("x = 1\n")
    context = hook.answer("before_request", before, root).context
    assert context == "No chunk of the workspace matches the task (bm25)."
    assert injected([], "minilm") == "No chunk of the workspace matches the task (minilm)."

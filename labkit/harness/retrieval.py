"""Retrieval before the model asks (lesson 13): an index of the workspace in chunks, and a
hook that puts the chunks most like the task into each request.

This is what an editor's agent mode does when it indexes the workspace: the model starts
every turn with the pieces of code a retriever judged closest to what it is doing, without
asking for them. ``WorkspaceIndex`` cuts the files the workspace's walk lists into chunks
(``chunking.py``) and hands their texts (path, name and code) to a ``Retriever``
(``contracts.Retriever``: ``index(texts)``, ``scores(query)``): ``BM25Retriever`` here
(``bm25.py``: shared words, standard library), or the embedding model of
``labkit.extensions.embeddings`` (shared meaning, numpy).

The index is built once per workspace copy (``build``: its time and size are kept) and
kept up to date: ``refresh`` re-reads only the files whose bytes changed since (an
``edit``, a command's output), cuts them again and re-indexes. ``retrieval_hook`` is a
lesson-11 hook at ``before_request``: it refreshes the index, asks it for the ``k`` chunks
most like the query (the task, and the model's newest words), and returns them as its
``context``, which the loop sends as its own labelled part of that request only:
``[hook retrieval] ...``. Every request pays for those characters, asked for or not.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .bm25 import BM25, terms
from .chunking import Chunk, chunk_files
from .contracts import Retriever
from .hooks import PythonHook
from .workspace import Workspace

K = 4  # chunks injected before each request
HOOK_NAME = "retrieval"


class BM25Retriever:
    """Shared words: BM25 over the code-aware terms of each text."""

    name = "bm25"

    def __init__(self) -> None:
        self._index = BM25([])

    def index(self, texts: Sequence[str]) -> None:
        self._index = BM25([terms(text) for text in texts])

    def scores(self, query: str) -> list[float]:
        return self._index.scores(terms(query))


@dataclass(frozen=True)
class Hit:
    """One chunk a search found, and its score (higher is closer)."""

    chunk: Chunk
    score: float


def indexed_text(chunk: Chunk) -> str:
    """What a retriever reads of a chunk: where it is, its name, then its code."""
    return f"{chunk.path} {chunk.name}\n{chunk.text}"


@dataclass
class WorkspaceIndex:
    """The chunks of the workspace at ``root``, indexed by ``retriever``."""

    root: Path
    retriever: Retriever
    chunks: list[Chunk] = field(default_factory=list)
    build_seconds: float = 0.0
    refreshes: list[list[str]] = field(default_factory=list)  # the files each refresh re-read
    _digests: dict[str, str] = field(default_factory=dict)

    def build(self) -> WorkspaceIndex:
        """Cut every indexed file and index the chunks; keeps the time it took."""
        started = time.perf_counter()
        files = self._files()
        self._digests = {path: _digest(data) for path, data in files}
        self.chunks = chunk_files(files)
        self.retriever.index([indexed_text(chunk) for chunk in self.chunks])
        self.build_seconds = time.perf_counter() - started
        return self

    def refresh(self) -> list[str]:
        """Re-read the files that changed, appeared or went since the last build or refresh,
        and re-index; returns their paths (none: nothing was done)."""
        files = self._files()
        now = {path: _digest(data) for path, data in files}
        changed = sorted(
            path
            for path in set(now) | set(self._digests)
            if now.get(path) != self._digests.get(path)
        )
        if changed:
            kept = [chunk for chunk in self.chunks if chunk.path not in changed]
            fresh = chunk_files((path, data) for path, data in files if path in changed)
            self.chunks = sorted(kept + fresh, key=lambda chunk: (chunk.path, chunk.start))
            self._digests = now
            self.retriever.index([indexed_text(chunk) for chunk in self.chunks])
            self.refreshes.append(changed)
        return changed

    def search(self, query: str, k: int = K) -> list[Hit]:
        """The ``k`` chunks scoring highest for ``query`` (above zero), best first; equal
        scores in index order."""
        scores = self.retriever.scores(query)
        ranked = sorted(range(len(scores)), key=lambda i: (-scores[i], i))
        return [Hit(self.chunks[i], scores[i]) for i in ranked if scores[i] > 0][:k]

    @property
    def size(self) -> dict[str, int]:
        """What the index holds: files, chunks, and the characters of their texts."""
        return {
            "files": len(self._digests),
            "chunks": len(self.chunks),
            "characters": sum(len(indexed_text(chunk)) for chunk in self.chunks),
        }

    def _files(self) -> list[tuple[str, bytes]]:
        workspace = Workspace(self.root)
        found = []
        for entry in workspace.walk():
            try:
                data, _ = workspace.read(workspace.relative(entry.path), 2_000_000)
            except (OSError, ValueError):
                continue
            found.append((entry.path, data))
        return found


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def query_of(task: str, messages: Sequence[dict]) -> str:
    """What to search for before a request: the task, and the model's newest words (the
    text and thinking of the last assistant message, when it has text)."""
    for message in reversed(messages):
        if message.get("role") == "assistant":
            said = [message.get(key) for key in ("thinking", "content")]
            return "\n".join([task, *(part for part in said if isinstance(part, str) and part)])
    return task


def injected(hits: Sequence[Hit], retriever: str) -> str:
    """The chunks as the model reads them, each under its label, best first."""
    if not hits:
        return f"No chunk of the workspace matches the task ({retriever})."
    parts = [f"The {len(hits)} chunks of the workspace most like the task ({retriever}):"]
    parts += [f"--- {hit.chunk.label}\n{hit.chunk.text}" for hit in hits]
    return "\n\n".join(parts)


def retrieval_hook(index: WorkspaceIndex, k: int = K, name: str = HOOK_NAME) -> PythonHook:
    """A hook that injects the ``k`` best chunks before every request (``before_request``),
    refreshing the index first; at ``run_start`` it only keeps the task."""
    task = {"text": ""}

    def before(event: dict) -> dict | None:
        if event["point"] == "run_start":
            task["text"] = event.get("task", "")
            return None
        index.refresh()
        query = query_of(task["text"], event.get("messages", []))
        return {"context": injected(index.search(query, k), index.retriever.name)}

    return PythonHook(name, ("run_start", "before_request"), function=before)

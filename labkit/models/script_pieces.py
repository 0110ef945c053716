"""What every scripted stream shares, whatever its wire format: text cut into token-sized
pieces, ids shaped like the APIs' own, and when each piece arrives.

``scripted.py`` streams planned turns in Ollama's, OpenAI's and Anthropic's formats;
``responses_chunks.py`` and ``gemini_chunks.py`` in the Responses API's and Gemini's. All of
them cut text the same way and pace it the same way, so a run reads alike in every format.
"""

from __future__ import annotations

import hashlib
import re

FIRST_CHUNK_AT = 0.35  # seconds: reading the prompt before the first fragment
FRAGMENT_EVERY = 0.04  # seconds per fragment, about 25 tokens a second
BASE62 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"


def fragments(text: str) -> list:
    """Cut text into token-sized pieces: a few characters, with their leading space."""
    return re.findall(r"\s*\S{1,4}|\s+", text)


def scripted_id(prefix: str, seed: str, length: int = 24) -> str:
    """An id shaped like the APIs' own (``call_``, ``toolu_01``, ``msg_01``...), fixed per seed."""
    digest = hashlib.sha256(f"labkit scripted {seed}".encode()).digest()
    return prefix + "".join(BASE62[byte % len(BASE62)] for byte in digest[:length])


def timed(chunks: list) -> list:
    """Each chunk with its planned arrival, one fragment's time after the one before."""
    return [
        (round(FIRST_CHUNK_AT + index * FRAGMENT_EVERY, 6), item)
        for index, item in enumerate(chunks)
    ]

"""Token counts where no tokenizer ran: what a replay server reports when its recording holds none.

A model server counts a request's tokens with its model's tokenizer; a script and a replay
server have none. Where a recording holds the counts a server reported (Ollama's
``prompt_eval_count``, an OpenAI reply's ``usage``, Anthropic's ``message_start``), those
are reported; where it holds none (the scripted OpenAI stream asked for no usage), a
replay server reports an estimate, made the same way every time: one token per four
characters of the request as JSON (:func:`estimated_tokens`), and of the reply's text and
arguments (:func:`estimated_reply_tokens`). Roughly right for English text and code, and
never a count a model made.
"""

from __future__ import annotations

import json

CHARACTERS_PER_TOKEN = 4


def estimated_tokens(messages, tool_schemas) -> int:
    """A request's prompt tokens, estimated: one per four characters of it as JSON."""
    return len(json.dumps([messages, tool_schemas])) // CHARACTERS_PER_TOKEN


def estimated_reply_tokens(*texts: str) -> int:
    """A reply's output tokens, estimated from its text and arguments (at least 1)."""
    return max(1, sum(len(text) for text in texts) // CHARACTERS_PER_TOKEN)

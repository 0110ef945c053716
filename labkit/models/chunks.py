"""Ollama chat chunks and tool calls, written by hand.

One builder for everything that makes chunks without a server: the scripted model
(``scripted.py``), the exercises' cases and the tests. A chunk is what one line of
Ollama's ``/api/chat`` stream holds: ``model``, ``created_at``, the ``message`` so
far (``role``, ``content``, optional ``thinking`` and ``tool_calls``) and ``done``;
the final one adds ``done_reason`` and, from a real server, its counters.
"""

from __future__ import annotations

CREATED_AT = "2026-12-01T09:00:00Z"


def call(name: str, **arguments) -> dict:
    """A tool call as Ollama sends it: the name, and the arguments as a JSON object."""
    return {"function": {"name": name, "arguments": arguments}}


def chunk(
    content: str | None = "",
    *,
    thinking: str | None = None,
    tool_calls: list | None = None,
    done: bool = False,
    done_reason: str = "stop",
    model: str = "scripted",
    created_at: str = CREATED_AT,
    **extra,
) -> dict:
    """One chat chunk. ``content=None`` leaves ``content`` out of the message (a server may);
    ``done_reason`` is written on the final (``done``) chunk only; ``extra`` goes last."""
    message = {"role": "assistant"}
    if content is not None:
        message["content"] = content
    if thinking is not None:
        message["thinking"] = thinking
    if tool_calls is not None:
        message["tool_calls"] = tool_calls
    item = {"model": model, "created_at": created_at, "message": message, "done": done}
    if done:
        item["done_reason"] = done_reason
    item.update(extra)
    return item


# --- OpenAI's Chat Completions chunks -----------------------------------------------------

CREATED_UNIX = 1796115600  # 2026-12-01T09:00:00Z, as OpenAI's ``created`` (Unix seconds)


def openai_chunk(
    delta: dict | None = None,
    finish_reason: str | None = None,
    *,
    model: str = "scripted",
    chunk_id: str = "chatcmpl-scripted",
    created: int = CREATED_UNIX,
) -> dict:
    """One ``chat.completion.chunk``: one choice, its ``delta`` and ``finish_reason``."""
    return {
        "id": chunk_id,
        "object": "chat.completion.chunk",
        "created": created,
        "model": model,
        "choices": [
            {
                "index": 0,
                "delta": delta if delta is not None else {},
                "logprobs": None,
                "finish_reason": finish_reason,
            }
        ],
    }


def openai_call_start(index: int, call_id: str, name: str) -> dict:
    """The first ``delta.tool_calls`` entry of a call: its index, id and name, no arguments yet."""
    return {
        "index": index,
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": ""},
    }


def openai_arguments(index: int, fragment: str) -> dict:
    """A later entry of a call: one fragment of its arguments' JSON text."""
    return {"index": index, "function": {"arguments": fragment}}


def openai_chunks_of(completion: dict) -> list:
    """The chunks a whole ``chat.completion`` streams as: the role, the text in one piece, each
    call whole in one entry (its ``index``, ``id``, name and arguments), then the
    ``finish_reason``; with the completion's id, creation time and model."""
    same = {
        "model": completion.get("model", ""),
        "chunk_id": completion.get("id", "chatcmpl-replay"),
        "created": completion.get("created", 0),
    }
    choices = completion.get("choices") or [{}]
    choice = choices[0] if isinstance(choices[0], dict) else {}
    message = choice.get("message") if isinstance(choice.get("message"), dict) else {}
    deltas = [{"role": "assistant", "content": "", "refusal": None}]
    if message.get("content"):
        deltas.append({"content": message["content"]})
    for index, call_ in enumerate(message.get("tool_calls") or []):
        function = call_.get("function") or {}
        start = openai_call_start(index, call_.get("id"), function.get("name"))
        start["function"]["arguments"] = function.get("arguments") or ""
        deltas.append({"tool_calls": [start]})
    chunks = [openai_chunk(delta, **same) for delta in deltas]
    chunks.append(openai_chunk({}, choice.get("finish_reason"), **same))
    return chunks


# --- Anthropic's Messages stream events ---------------------------------------------------


def anthropic_start(
    *, model: str = "scripted", message_id: str = "msg_scripted", input_tokens: int = 600
) -> dict:
    """``message_start``: the message, still empty."""
    return {
        "type": "message_start",
        "message": {
            "id": message_id,
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": input_tokens, "output_tokens": 1},
        },
    }


def anthropic_block(index: int, block: dict) -> dict:
    """``content_block_start``: a ``text`` block, or a ``tool_use`` block with id and name."""
    return {"type": "content_block_start", "index": index, "content_block": block}


def anthropic_delta(
    index: int,
    *,
    text: str | None = None,
    partial_json: str | None = None,
    thinking: str | None = None,
    signature: str | None = None,
) -> dict:
    """``content_block_delta``: a piece of text, of a tool's input as JSON text, of a thinking
    block's reasoning, or its signature (give one)."""
    if partial_json is not None:
        delta = {"type": "input_json_delta", "partial_json": partial_json}
    elif thinking is not None:
        delta = {"type": "thinking_delta", "thinking": thinking}
    elif signature is not None:
        delta = {"type": "signature_delta", "signature": signature}
    else:
        delta = {"type": "text_delta", "text": text}
    return {"type": "content_block_delta", "index": index, "delta": delta}


def anthropic_stop(index: int) -> dict:
    return {"type": "content_block_stop", "index": index}


def anthropic_end(
    stop_reason: str, output_tokens: int = 1, input_tokens: int | None = None
) -> list:
    """``message_delta`` with the stop reason and the usage so far (cumulative: with
    ``input_tokens``, as the API's newer streams say it here too), then ``message_stop``."""
    usage = {"output_tokens": output_tokens}
    if input_tokens is not None:
        usage = {"input_tokens": input_tokens, **usage}
    return [
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop_reason, "stop_sequence": None},
            "usage": usage,
        },
        {"type": "message_stop"},
    ]

"""The repair as a learner writes it with an official SDK, no labkit model in between: the
documented loop of each API (send, append the reply, run the tools, send the results), in
each call style the SDKs offer. The tests point these at a replay server in strict mode, so
each request must be the recorded one as the API reads it.

The tools are the course's own (``RepoTools`` on a fresh copy of the sample) and each result
goes back as the harness sends it (``json.dumps``), so the conversation can be the recorded
one; everything else (the client, its retries, how replies are read and sent back) is the
SDK's, used as its documentation shows.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

MAX_REQUESTS = 8


@dataclass
class Run:
    """What a learner's loop saw: the replies' request ids and usage, the calls it ran."""

    request_ids: list = field(default_factory=list)
    usage: list = field(default_factory=list)
    calls: list = field(default_factory=list)
    final_text: str = ""


# --- OpenAI's Chat Completions ------------------------------------------------------------


def openai_repair(
    client, model: str, first: list, tools, style: str, requests=MAX_REQUESTS, **options
) -> Run:
    """The repair through ``client.chat.completions``: ``style`` is ``"whole"`` (``create``),
    ``"create_stream"`` (``create(stream=True)``, the chunks assembled by hand) or
    ``"stream_helper"`` (``.stream()`` and ``get_final_completion()``); at most ``requests``
    requests."""
    run, messages = Run(), list(first)
    for _ in range(requests):
        asked = dict(model=model, messages=messages, tools=tools.schemas, **options)
        if style == "whole":
            completion = client.chat.completions.create(**asked)
            message = completion.choices[0].message
            run.request_ids.append(completion._request_id)
            run.usage.append(completion.usage)
            messages.append(message)  # the documented way: the SDK sends it back as it came
            calls = [
                (c.id, c.function.name, c.function.arguments) for c in message.tool_calls or []
            ]
            text = message.content or ""
        elif style == "stream_helper":
            with client.chat.completions.stream(**asked) as stream:
                completion = stream.get_final_completion()
            run.request_ids.append(getattr(completion, "_request_id", None))  # it keeps none
            message = completion.choices[0].message
            run.usage.append(completion.usage)
            messages.append(message)
            calls = [
                (c.id, c.function.name, c.function.arguments) for c in message.tool_calls or []
            ]
            text = message.content or ""
        else:
            text, calls, usage, request_id = _openai_stream(client.chat.completions, asked)
            run.request_ids.append(request_id)
            run.usage.append(usage)
            message = {"role": "assistant", "content": text}
            if calls:
                message["tool_calls"] = [
                    {"id": i, "type": "function", "function": {"name": n, "arguments": a}}
                    for i, n, a in calls
                ]
            messages.append(message)
        run.final_text = text
        if not calls:
            return run
        for call_id, name, arguments in calls:
            result = tools.invoke(name, json.loads(arguments))
            run.calls.append(name)
            messages.append(
                {"role": "tool", "tool_call_id": call_id, "content": json.dumps(result)}
            )
    return run


def _openai_stream(completions, asked: dict):
    """``create(stream=True)``, each chunk read as the API reference shows: text pieces, and
    each call's pieces gathered by ``index``."""
    text, calls, usage = [], {}, None
    stream = completions.create(stream=True, **asked)
    for chunk in stream:
        usage = chunk.usage or usage
        for choice in chunk.choices:
            text.append(choice.delta.content or "")
            for piece in choice.delta.tool_calls or []:
                call = calls.setdefault(piece.index, {"id": None, "name": None, "arguments": []})
                call["id"] = piece.id or call["id"]
                if piece.function:
                    call["name"] = piece.function.name or call["name"]
                    call["arguments"].append(piece.function.arguments or "")
    request_id = stream.response.headers.get("x-request-id")
    gathered = [(c["id"], c["name"], "".join(c["arguments"])) for _, c in sorted(calls.items())]
    return "".join(text), gathered, usage, request_id


# --- Anthropic's Messages -----------------------------------------------------------------


def anthropic_tools(schemas: list) -> list:
    """The course's tools as the Messages API describes them."""
    return [
        {
            "name": tool["function"]["name"],
            "description": tool["function"]["description"],
            "input_schema": tool["function"]["parameters"],
        }
        for tool in schemas
    ]


def anthropic_repair(
    client, model: str, first: list, tools, style: str, requests=MAX_REQUESTS
) -> Run:
    """The repair through ``client.messages``: ``style`` is ``"whole"`` (``create``),
    ``"create_stream"`` (``create(stream=True)``, the events assembled by hand) or
    ``"stream_helper"`` (``.stream()`` and ``get_final_message()``); at most ``requests``
    requests. ``first``: the loop's first request (the system prompt, then the task)."""
    run = Run()
    system, messages = first[0]["content"], list(first[1:])
    for _ in range(requests):
        asked = dict(
            model=model,
            max_tokens=2048,
            system=system,
            messages=messages,
            tools=anthropic_tools(tools.schemas),
        )
        if style == "whole":
            message = client.messages.create(**asked)
            run.request_ids.append(message._request_id)
            content, usage = message.content, message.usage
        elif style == "stream_helper":
            with client.messages.stream(**asked) as stream:
                message = stream.get_final_message()
                run.request_ids.append(stream.response.headers.get("request-id"))
            content, usage = message.content, message.usage
        else:
            content, usage, request_id = _anthropic_stream(client.messages, asked)
            run.request_ids.append(request_id)
        run.usage.append(usage)
        messages.append({"role": "assistant", "content": content})  # thinking blocks too
        blocks = [b if isinstance(b, dict) else b.model_dump() for b in content]
        run.final_text = "".join(b.get("text", "") for b in blocks if b["type"] == "text")
        calls = [b for b in blocks if b["type"] == "tool_use"]
        if not calls:
            return run
        results = []
        for call in calls:
            result = tools.invoke(call["name"], call["input"])
            run.calls.append(call["name"])
            results.append(
                {"type": "tool_result", "tool_use_id": call["id"], "content": json.dumps(result)}
            )
        messages.append({"role": "user", "content": results})
    return run


def _anthropic_stream(messages_api, asked: dict):
    """``create(stream=True)``, each event read as the streaming reference shows: blocks
    opened, filled by their deltas, closed; usage from message_start and message_delta."""
    blocks, usage = {}, {}
    stream = messages_api.create(stream=True, **asked)
    for event in stream:
        if event.type == "message_start":
            usage.update(event.message.usage.model_dump(exclude_none=True))
        elif event.type == "content_block_start":
            blocks[event.index] = {**event.content_block.model_dump(exclude_none=True), "_json": []}
        elif event.type == "content_block_delta":
            block, delta = blocks[event.index], event.delta
            if delta.type == "text_delta":
                block["text"] += delta.text
            elif delta.type == "input_json_delta":
                block["_json"].append(delta.partial_json)
            elif delta.type == "thinking_delta":
                block["thinking"] += delta.thinking
            elif delta.type == "signature_delta":
                block["signature"] += delta.signature
        elif event.type == "message_delta":
            usage.update(event.usage.model_dump(exclude_none=True))
    request_id = stream.response.headers.get("request-id")
    content = []
    for _, block in sorted(blocks.items()):
        pieces = "".join(block.pop("_json"))
        if block["type"] == "tool_use" and pieces:
            block["input"] = json.loads(pieces)
        content.append(block)
    return content, usage, request_id

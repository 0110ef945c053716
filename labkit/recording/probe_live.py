"""Record probes against a live OpenAI-compatible server: ``python -m labkit.recording.probe_live``.

Each condition of ``probes.CONDITIONS`` is sent once per seed, with the sampling settings
below, as a whole (non-streamed) completion: llama-cpp-python's function-calling chat
format cannot stream tool calls. Each reply is kept as the server sent it, beside the
request, the seeds and what the server said about itself; so are the token probes (the
loop's first request with one tool at a time), which say what each schema costs in
prompt tokens there. ``make live-test`` runs it against Gemma 3 270M
(``tests/live/test_real_model.py``); by hand, against a server you started::

    python -m labkit.recording.probe_live --base-url http://127.0.0.1:PORT/v1 \\
        --model gemma-3-270m-q4_k_m --seeds 10 --about model_sha256=... --output probes.json
"""

from __future__ import annotations

import argparse
import time
from datetime import UTC, datetime

import httpx

from .probes import CONDITIONS, FORMAT, VERSION, offered, request, save_probes

#: Sampling as Gemma's makers suggest (temperature 1, top_p 0.95), so seeds can differ.
SETTINGS = {"temperature": 1.0, "top_p": 0.95, "max_tokens": 256, "stream": False}
SEARCH_REPLACE_TOKENS = 512  # room for a block and some prose


def ask(client: httpx.Client, model: str, body: dict, seed: int, max_tokens: int) -> dict:
    """One whole completion for ``body`` (messages and tools) with ``seed``."""
    asked = {"model": model, "messages": body["messages"], **SETTINGS, "seed": seed}
    asked["max_tokens"] = max_tokens
    if body["tools"]:
        asked["tools"] = body["tools"]
        asked["tool_choice"] = "auto"
    response = client.post("/chat/completions", json=asked)
    response.raise_for_status()
    return response.json()


def record(
    base_url: str,
    model: str,
    *,
    seeds: list[int],
    conditions: list[str],
    about: dict,
    progress=print,
) -> dict:
    """Every condition asked once per seed, and the token probes; the probe recording."""
    started = time.monotonic()
    with httpx.Client(base_url=base_url, timeout=600) as client:
        listed = client.get("/models").json()
        kept = {
            name: {"description": CONDITIONS[name][0], "request": request(name)}
            for name in conditions
        }
        samples = []
        for name in conditions:
            room = SEARCH_REPLACE_TOKENS if name == "search_replace" else SETTINGS["max_tokens"]
            for seed in seeds:
                reply = ask(client, model, kept[name]["request"], seed, room)
                samples.append({"condition": name, "seed": seed, "reply": [reply]})
            progress(f"{name}: {len(seeds)} replies ({time.monotonic() - started:.0f} s)")
        tokens = []
        for schema in offered(25):
            body = {"messages": request("no_tools")["messages"], "tools": [schema]}
            reply = ask(client, model, body, 0, 1)
            tokens.append(
                {
                    "tool": schema["function"]["name"],
                    "prompt_tokens": reply["usage"]["prompt_tokens"],
                }
            )
        progress(f"token probes: {len(tokens)} tools ({time.monotonic() - started:.0f} s)")
    return {
        "format": FORMAT,
        "version": VERSION,
        "wire_format": "openai",
        "provenance": {
            "source": "openai",
            "model": model,
            "note": "captured from a live server: the model wrote every reply",
            "server_reported": {"models": listed},
            "declared": about,
            "date": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "recorded_with": "python -m labkit.recording.probe_live",
            "settings": {**SETTINGS, "tool_choice": "auto (when tools are offered)"},
            "seeds": seeds,
        },
        "conditions": kept,
        "samples": samples,
        "token_probes": {
            "messages": "the loop's first request (no_tools), with one tool at a time",
            "max_tokens": 1,
            "seed": 0,
            "tools": tokens,
        },
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--seeds", type=int, default=10, help="seeds 1..N (default 10)")
    parser.add_argument("--condition", action="append", choices=list(CONDITIONS))
    parser.add_argument("--about", action="append", default=[], help="KEY=VALUE, kept as said")
    parser.add_argument("--output", required=True)
    options = parser.parse_args(argv)
    about = dict(item.split("=", 1) for item in options.about)
    recording = record(
        options.base_url,
        options.model,
        seeds=list(range(1, options.seeds + 1)),
        conditions=options.condition or list(CONDITIONS),
        about=about,
    )
    print(f"wrote {save_probes(recording, options.output)}")


if __name__ == "__main__":
    main()

"""Record probes against a live llama-cpp-python server: ``python -m labkit.recording.probe_live``.

Three measurements, each kept beside what was sent and what the server said about itself:

1. **The loop's request** (``samples``): each condition of ``probes.CONDITIONS`` sent as the
   loop sends it, once per seed, with the sampling settings below, as a whole (non-streamed)
   chat completion (llama-cpp-python's function-calling chat format cannot stream tool
   calls). Each reply is kept as the server sent it.
2. **The prompt the server builds** (``conditions[...]["server"]``): llama-cpp-python's own
   ``chatml-function-calling`` handler run on each request (``server_prompt.first_step``):
   the prompt text, the grammar of the first choice, the temperature it passes for that
   choice and whether the request's seed reaches it, and the prompt's tokens as the server
   counts them (``/extras/tokenize/count``, the tokenizer ``usage.prompt_tokens`` reports).
3. **The first choice, sampled** (``first_choice``): that handler makes the choice at
   temperature 0 and drops the request's seed, so ten seeds of (1) give one choice ten times.
   Here the same prompt and grammar are sent to ``/v1/completions``, which honours a
   temperature and a seed: the same step, at the request's temperature, once per seed.

And ``token_probes``: what each of the 25 tools' schemas adds to the prompt the server builds
(the prompt with all 25, less the prompt with the other 24), counted by the server.

``make live-test`` runs it against Gemma 3 270M (``tests/live/test_real_model.py``); by hand,
against a server you started (``--chat_format chatml-function-calling``)::

    python -m labkit.recording.probe_live --base-url http://127.0.0.1:PORT/v1 \\
        --model gemma-3-270m-q4_k_m --seeds 10 --about model_sha256=... --output probes.json
"""

from __future__ import annotations

import argparse
import time
from datetime import UTC, datetime

import httpx

from .probes import CONDITIONS, FORMAT, VERSION, offered, request, save_probes
from .server_prompt import CHAT_FORMAT, first_step

#: Sampling as Gemma's makers suggest (temperature 1, top_p 0.95), so seeds can differ.
SETTINGS = {"temperature": 1.0, "top_p": 0.95, "max_tokens": 256, "stream": False}
SEARCH_REPLACE_TOKENS = 512  # room for a block and some prose
CHOICE_TOKENS = 32  # "functions.<the longest name>" fits


def ask(client: httpx.Client, model: str, body: dict, seed: int, max_tokens: int) -> dict:
    """One whole chat completion for ``body`` (messages and tools) with ``seed``."""
    asked = {"model": model, "messages": body["messages"], **SETTINGS, "seed": seed}
    asked["max_tokens"] = max_tokens
    if body["tools"]:
        asked["tools"] = body["tools"]
        asked["tool_choice"] = "auto"
    response = client.post("/chat/completions", json=asked)
    response.raise_for_status()
    return response.json()


def count_tokens(client: httpx.Client, model: str, text: str) -> int:
    """The prompt tokens the server's tokenizer makes of ``text`` (as its usage counts)."""
    # llama-cpp-python serves its extras beside /v1, not under it
    address = str(client.base_url).rstrip("/").removesuffix("/v1") + "/extras/tokenize/count"
    response = client.post(address, json={"model": model, "input": text})
    response.raise_for_status()
    return response.json()["count"]


def sample_choice(client: httpx.Client, model: str, step, seed: int) -> dict:
    """The handler's first step (its prompt and grammar) sampled at the request's settings."""
    asked = {
        "model": model,
        "prompt": step.prompt,
        "grammar": step.grammar,
        "temperature": SETTINGS["temperature"],
        "top_p": SETTINGS["top_p"],
        "stop": [":"],
        "max_tokens": CHOICE_TOKENS,
        "seed": seed,
    }
    response = client.post("/completions", json=asked)
    response.raise_for_status()
    return response.json()


def server_side(client: httpx.Client, model: str, kept: dict, seed: int) -> dict:
    """What the server builds from each kept request: prompt, grammar, settings, tokens."""
    steps, described = {}, {}
    for name, condition in kept.items():
        step = first_step(condition["request"], temperature=SETTINGS["temperature"], seed=seed)
        steps[name] = step
        described[name] = {
            "chat_format": CHAT_FORMAT,
            "prompt": step.prompt,
            "grammar": step.grammar,
            "temperature": step.temperature,
            "passes_seed": step.passes_seed,
            "prompt_tokens": count_tokens(client, model, step.prompt),
        }
    return {"steps": steps, "described": described}


def token_probes(client: httpx.Client, model: str) -> list[dict]:
    """Each of the 25 tools: the prompt tokens of all 25, less those of the other 24."""
    messages = request("no_tools")["messages"]
    every = offered(25)

    def tokens(tools: list[dict]) -> int:
        step = first_step({"messages": messages, "tools": tools}, temperature=1.0, seed=0)
        return count_tokens(client, model, step.prompt)

    total = tokens(every)
    return [
        {
            "tool": schema["function"]["name"],
            "tokens": total - tokens([other for other in every if other is not schema]),
        }
        for schema in every
    ]


def record(
    base_url: str,
    model: str,
    *,
    seeds: list[int],
    conditions: list[str],
    about: dict,
    progress=print,
) -> dict:
    """Every condition asked once per seed, the server's prompts, the first choice
    sampled once per seed, and the token probes; the probe recording."""
    started = time.monotonic()
    with httpx.Client(base_url=base_url, timeout=600) as client:
        listed = client.get("/models").json()
        kept = {
            name: {"description": CONDITIONS[name][0], "request": request(name)}
            for name in conditions
        }
        server = server_side(client, model, kept, seeds[0])
        for name, described in server["described"].items():
            kept[name]["server"] = described
        choices = []
        for name in conditions:
            step = server["steps"][name]
            if step.grammar is None:
                continue
            for seed in seeds:
                reply = sample_choice(client, model, step, seed)
                choices.append({"condition": name, "seed": seed, "reply": reply})
            progress(f"{name}: {len(seeds)} first choices ({time.monotonic() - started:.0f} s)")
        tokens = token_probes(client, model)
        progress(f"token probes: {len(tokens)} tools ({time.monotonic() - started:.0f} s)")
        samples = []
        for name in conditions:
            room = SEARCH_REPLACE_TOKENS if name == "search_replace" else SETTINGS["max_tokens"]
            for seed in seeds:
                reply = ask(client, model, kept[name]["request"], seed, room)
                samples.append({"condition": name, "seed": seed, "reply": [reply]})
            progress(f"{name}: {len(seeds)} replies ({time.monotonic() - started:.0f} s)")
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
        "first_choice": {
            "how": (
                "the server's first step for each condition (its prompt and grammar, as "
                f"{CHAT_FORMAT} builds them) sent to /v1/completions, which honours the "
                "temperature and the seed"
            ),
            "settings": {
                "temperature": SETTINGS["temperature"],
                "top_p": SETTINGS["top_p"],
                "stop": [":"],
                "max_tokens": CHOICE_TOKENS,
            },
            "samples": choices,
        },
        "token_probes": {
            "how": (
                "prompt tokens (/extras/tokenize/count) of the loop's first request with "
                "all 25 tools, less those with the other 24, as the server builds the prompt"
            ),
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

"""The prompt llama-cpp-python builds from a chat request, read from its own chat format.

A request's ``messages`` and ``tools`` are not what a model reads: the server's chat format
renders them into one prompt text. To know what Gemma was really shown, ``first_step``
runs llama-cpp-python's own ``chatml-function-calling`` handler on the request with a
stand-in for the model that keeps the first completion the handler asks for (its prompt,
its grammar, its sampling settings) and stops it there. Nothing is re-implemented: the
text is the handler's, from the installed version.

That first completion is the one that chooses: with tools offered, the handler asks for
``functions.<name>:`` or ``message:`` under a grammar, and the keyword arguments it passes
say at which temperature, and whether the request's seed reaches the sampler.

Needs ``llama_cpp`` (installed by ``make live-test``), imported only when called.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

CHAT_FORMAT = "chatml-function-calling"


@dataclass(frozen=True)
class FirstStep:
    """The handler's first completion: what it would send to the model, and how."""

    prompt: str
    grammar: str | None  # the GBNF the choice is made under (None without tools)
    temperature: float  # the temperature the handler passes (the request asked another)
    passes_seed: bool  # whether the request's seed reaches the completion


class _Stopped(Exception):
    """Raised by the stand-in once it has the first completion's arguments."""


class _StandIn:
    """Takes the model's place in the handler: keeps the first ``create_completion`` call."""

    verbose = False

    def __init__(self) -> None:
        self.asked: dict[str, Any] = {}

    def create_completion(self, **asked: Any) -> None:
        self.asked = asked
        raise _Stopped


def first_step(request: dict, *, temperature: float, seed: int) -> FirstStep:
    """The first completion ``chatml-function-calling`` makes for ``request`` (``messages``
    and ``tools``, as the loop sends them with ``tool_choice`` "auto"), asked at
    ``temperature`` with ``seed``."""
    from llama_cpp.llama_chat_format import get_chat_completion_handler

    handler = get_chat_completion_handler(CHAT_FORMAT)
    stand_in = _StandIn()
    tools = request["tools"] or None
    try:
        handler(
            llama=stand_in,
            messages=request["messages"],
            tools=tools,
            tool_choice="auto" if tools else None,
            temperature=temperature,
            seed=seed,
        )
    except _Stopped:
        pass
    asked = stand_in.asked
    if not asked:
        raise RuntimeError(f"{CHAT_FORMAT} asked for no completion; has llama-cpp-python changed?")
    grammar = asked.get("grammar")
    return FirstStep(
        prompt=asked["prompt"],
        grammar=None if grammar is None else grammar._grammar,
        temperature=asked["temperature"],
        passes_seed="seed" in asked,
    )

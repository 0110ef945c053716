"""The two lesson widgets: thin ipywidgets shells around ``steps`` and ``render``.

``ChunkStepper(turn)`` steps through the raw chunks of one streamed turn;
``ConversationView(events)`` steps through a run's message list as it grows;
``MCPTrafficView(recording)`` steps through a run through an MCP server, the model's
replies beside the JSON-RPC lines they caused.
Each shows the HTML of its current step; where a notebook is shown without a
kernel, its saved output falls back to a static HTML view of the final state.
Every button says in words what it does, and again when the pointer rests on it.
"""

from __future__ import annotations

import threading
import time

import ipywidgets as widgets

from ..harness.loop import positive_int
from . import conversation_html, mcp_traffic, render
from .steps import TAIL, FragmentSteps, TurnSteps, conversation_story


class _Stepper(widgets.VBox):
    """A box with Previous/Next buttons and a slider over steps ``first..last``."""

    css_class = ""

    def __init__(self, first: int, last: int, *, label: str, controls=()):
        self.slider = widgets.IntSlider(
            value=first, min=first, max=last, description=label, continuous_update=True
        )
        self.prev_button = widgets.Button(
            description="Previous", icon="step-backward", tooltip="show the previous step"
        )
        self.next_button = widgets.Button(
            description="Next", icon="step-forward", tooltip="show the next step"
        )
        self.view = widgets.HTML()
        self.slider.add_class("labkit-slider")
        self.prev_button.add_class("labkit-prev")
        self.next_button.add_class("labkit-next")
        self.prev_button.on_click(lambda _: self._move(-1))
        self.next_button.on_click(lambda _: self._move(+1))
        self.slider.observe(lambda _: self._show(), names="value")
        bar = widgets.HBox([*controls, self.prev_button, self.next_button, self.slider])
        super().__init__([widgets.HTML(render.STYLE), bar, self.view])
        self.add_class(self.css_class)
        self._show()

    def _move(self, delta: int) -> None:
        self.slider.value = min(self.slider.max, max(self.slider.min, self.slider.value + delta))

    def _show(self) -> None:
        value = self.slider.value
        self.prev_button.disabled = value <= self.slider.min
        self.next_button.disabled = value >= self.slider.max
        self.view.value = self.step_html(value)

    def step_html(self, value: int) -> str:
        raise NotImplementedError

    def static_html(self) -> str:
        raise NotImplementedError

    def summary(self) -> str:
        raise NotImplementedError

    def _repr_mimebundle_(self, **kwargs):
        """The live widget, plus a static HTML view and a text summary of the final state."""
        bundle = super()._repr_mimebundle_(**kwargs) or {}
        bundle["text/plain"] = self.summary()
        bundle["text/html"] = self.static_html()
        return bundle


class ChunkStepper(_Stepper):
    """Step through one streamed turn, chunk by chunk.

    ``turn`` is ``recording["turns"][i]`` or a plain list of chunk dicts. Step k
    (1..N) shows chunk k as it arrived, the assistant message assembled from chunks
    1..k, and whether the turn may be dispatched yet. ``wire_format``: ``"openai"`` or
    ``"anthropic"`` for those APIs' streams (then each tool call's arguments show as the
    JSON text so far, with what ``json.loads`` makes of it); None or ``"ollama"`` for
    Ollama's. ``tail``: characters of assembled text shown (earlier ones are counted,
    not shown); ``interval``: milliseconds per step when playing.
    """

    css_class = "labkit-stepper"

    def __init__(
        self, turn, *, wire_format: str | None = None, tail: int = TAIL, interval: int = 150
    ):
        self.tail = positive_int(tail, "tail (the characters shown)")
        if wire_format in (None, "ollama"):
            self.steps = TurnSteps(turn)
            self.views = (render.chunk_step_html, render.turn_static_html, render.turn_summary)
        else:
            self.steps = FragmentSteps(turn, wire_format)
            self.views = (
                render.fragment_step_html,
                render.fragments_static_html,
                render.fragments_summary,
            )
        first, last = (1, len(self.steps)) if len(self.steps) else (0, 0)
        self.interval = interval
        self.play = widgets.ToggleButton(
            description="Play",
            icon="play",
            tooltip="show the chunks one after another, as they arrived; click again to pause",
        )
        self.play.add_class("labkit-play")
        self.play.observe(self._play_or_pause, names="value")
        super().__init__(first, last, label="chunk", controls=[self.play])

    def _play_or_pause(self, change) -> None:
        """Play: step on every ``interval`` ms from a worker thread (the kernel stays free),
        from the start if at the end; pause when clicked again or at the last chunk."""
        if not change["new"]:
            self.play.description, self.play.icon = "Play", "play"
            return
        self.play.description, self.play.icon = "Pause", "pause"
        if self.slider.value >= self.slider.max:
            self.slider.value = self.slider.min

        def run():
            while self.play.value and self.slider.value < self.slider.max:
                time.sleep(self.interval / 1000)
                if self.play.value:
                    self._move(+1)
            self.play.value = False

        threading.Thread(target=run, daemon=True, name="labkit-play").start()

    def step_html(self, value: int) -> str:
        return self.views[0](self.steps.step(value, tail=self.tail))

    def static_html(self) -> str:
        return self.views[1](self.steps, tail=self.tail)

    def summary(self) -> str:
        return self.views[2](self.steps)


class ConversationView(_Stepper):
    """Step through a run's message list as the model receives it, one message at a time.

    ``events`` are the full loop events of one run (from ``agent_events``, or the
    ``events`` returned by ``run_attempt``): their ``messages`` snapshots fix the list.
    """

    css_class = "labkit-conversation"

    def __init__(self, events):
        self.story = conversation_story(events)
        super().__init__(1, len(self.story), label="step")

    def step_html(self, value: int) -> str:
        return conversation_html.conversation_step_html(self.story, value - 1)

    def static_html(self) -> str:
        return conversation_html.conversation_static_html(self.story)

    def summary(self) -> str:
        return conversation_html.conversation_summary(self.story)


class MCPTrafficView(_Stepper):
    """Step through a recorded run through an MCP server (``mcp_traffic``): each model
    reply, then each JSON-RPC line its calls sent or got, two columns side by side.

    ``recording`` is a run's recording (``run.recording``, or ``load_recording``): the
    traffic is kept there, under ``"mcp"``."""

    css_class = "labkit-traffic"

    def __init__(self, recording: dict):
        self.steps = mcp_traffic.traffic_steps(recording)
        super().__init__(1, len(self.steps), label="step")

    def step_html(self, value: int) -> str:
        return mcp_traffic.traffic_step_html(self.steps, value - 1)

    def static_html(self) -> str:
        return mcp_traffic.traffic_static_html(self.steps)

    def summary(self) -> str:
        return mcp_traffic.traffic_summary(self.steps)

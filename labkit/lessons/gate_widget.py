"""The gate's "ask" in a notebook: the exact command, why the policy asks, Approve / Deny.

A click is a message to the kernel, and the kernel reads messages on the thread that
runs cells: a cell that simply blocks until the click never sees it. So the loop runs
in a worker thread. ``ApprovalPanel`` is the gate's ``decide`` hook: called from that
thread, it shows the question in the panel and waits for the click, while the kernel,
free, delivers it. Either the cell ends and the run goes on in the background
(``panel.start(chat, gate)``: what happens is written into the panel), or the cell
awaits the worker (``await in_worker(function)``; ipykernel 7.4 and later deliver
widget messages to a cell while it awaits, and hold the next cells back).

Only a notebook with a person in front of it can answer; scripts, replay and papermill
give their answers with ``labkit.harness.gate.Answers``. This module is imported only
by a lesson that asks, so the rest of labkit needs no kernel.
"""

from __future__ import annotations

import asyncio
import html
import threading

import ipywidgets as widgets

from ..harness.loop import agent_events
from ..harness.prompt import SHELL_TASK
from ..harness.sample import sample_copy
from ..harness.shell import ShellTools
from .trace import event_line

#: A question left unanswered this long is denied, so a forgotten notebook does not hang.
DEFAULT_WAIT = 600.0
IDLE = "<i>no question yet: nothing the model asked for needed a person</i>"


class ApprovalPanel(widgets.VBox):
    """Approve / Deny for the gate's questions, and a log of what followed.

    ``panel(command, verdict)`` is a ``decide`` hook (``Gate(policy, decide=panel)``):
    it shows ``command`` exactly as it would run, then waits for the first click (at
    most ``wait`` seconds; no click denies) and returns "allow" or "deny".
    """

    by = "person"

    def __init__(self, *, wait: float = DEFAULT_WAIT):
        self.wait = wait
        self.question = widgets.HTML(IDLE)
        self.approve = widgets.Button(
            description="Approve",
            button_style="success",
            icon="check",
            disabled=True,
            tooltip="let the command run now, with your permissions",
        )
        self.refuse = widgets.Button(
            description="Deny",
            button_style="danger",
            icon="times",
            disabled=True,
            tooltip="refuse the command: it does not run, and the model is told why",
        )
        self.status = widgets.HTML()
        self.trace = widgets.HTML()
        self.approve.add_class("labkit-approve")
        self.refuse.add_class("labkit-deny")
        self.trace.add_class("labkit-approval-log")
        self._lines, self._answer, self._clicked = [], None, threading.Event()
        self.approve.on_click(lambda _: self._choose("allow"))
        self.refuse.on_click(lambda _: self._choose("deny"))
        super().__init__(
            [self.question, widgets.HBox([self.approve, self.refuse]), self.status, self.trace]
        )
        self.add_class("labkit-approval")

    def __call__(self, command: str, verdict) -> str | None:
        if threading.current_thread() is threading.main_thread():
            raise RuntimeError(
                "ApprovalPanel would wait for a click that the kernel cannot "
                "read while this cell blocks: run the loop in a worker thread "
                "(panel.start(chat, gate), or await in_worker(...))"
            )
        self._answer = None
        self._clicked.clear()
        self.question.value = (
            f"<b>The model asks to run:</b><pre>{html.escape(command)}</pre>"
            f"<small>{html.escape(verdict.reason)}</small>"
        )
        self.status.value = "<i>waiting for your decision; the command has not run</i>"
        self.approve.disabled = self.refuse.disabled = False
        self._clicked.wait(self.wait)
        self.approve.disabled = self.refuse.disabled = True
        if self._answer is None:
            self.status.value = f"<b>no answer within {self.wait:g} s</b>: denied"
        return self._answer

    def _choose(self, choice: str) -> None:
        """The first click decides; a second one, or one with no question open, does nothing."""
        if self.approve.disabled:
            return
        self.approve.disabled = self.refuse.disabled = True
        self._answer = choice
        self.status.value = (
            "<b>approved</b>: it runs now, with your permissions"
            if choice == "allow"
            else "<b>denied</b>: it does not run; the model is told why"
        )
        self._clicked.set()

    def add(self, line: str) -> None:
        """Write one line into the panel's log."""
        self._lines.append(html.escape(line, quote=False))
        self.trace.value = "<pre>" + "\n".join(self._lines) + "</pre>"

    def start(self, chat, gate, *, task: str = SHELL_TASK) -> threading.Thread:
        """Run the loop with ``chat`` and ``gate`` (the shell tools, a fresh copy of the
        sample) in a worker thread, writing each step into the panel; returns the thread."""

        def run():
            try:
                with sample_copy() as root:
                    for event in agent_events(chat, ShellTools(root), task, gate=gate):
                        line = event_line(event, limit=600)
                        if line:
                            self.add(line)
            except Exception as exc:  # shown where the learner looks, not lost in a thread
                self.add(f"the run failed: {type(exc).__name__}: {exc}")

        worker = threading.Thread(target=run, daemon=True, name="labkit-approval")
        worker.start()
        return worker

    def _repr_mimebundle_(self, **kwargs):
        """The live panel, and where no widget can be drawn, a line saying what it is."""
        bundle = super()._repr_mimebundle_(**kwargs) or {}
        bundle["text/plain"] = "ApprovalPanel: Approve / Deny for the gate's questions"
        bundle["text/html"] = (
            "<p><i>Approve / Deny panel: run the notebook in JupyterLab to "
            "answer the gate's questions.</i></p>"
        )
        return bundle


async def in_worker(function, *args, **kwargs):
    """Run ``function(*args, **kwargs)`` in a worker thread while the cell awaits it, so the
    kernel can deliver clicks meanwhile; in a notebook: ``result = await in_worker(f, x)``."""
    return await asyncio.to_thread(function, *args, **kwargs)

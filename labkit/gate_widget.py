"""The gate's "ask" in a notebook: Approve / Deny buttons under the exact command, and a wait.

A cell that asks must stop until the click arrives, yet the click is a message the
kernel only reads between cells. ``jupyter_ui_poll`` solves that: while the cell waits
it lets the kernel handle widget messages, and holds back the next cells' execution
(Run All stays in order). Only a live notebook with a person in front of it can
answer; scripts, replay and papermill give their answers with ``labkit.gate.Answers``.
Imported only when a lesson asks for it, so the rest of labkit needs no kernel.
"""

from __future__ import annotations

import html
import time

import ipywidgets as widgets

#: A prompt left unanswered this long is denied, so a forgotten notebook does not hang.
DEFAULT_WAIT = 600.0


def prompt(command: str, verdict, on_answer) -> widgets.VBox:
    """The prompt: the command exactly as it would run, why the gate asks, two buttons.
    ``on_answer("allow" | "deny")`` is called once, on the first click."""
    approve = widgets.Button(description="Approve", button_style="success", icon="check")
    refuse = widgets.Button(description="Deny", button_style="danger", icon="times")
    status = widgets.HTML("<i>waiting for your decision; the command has not run</i>")
    shown = widgets.HTML(
        f"<b>The model asks to run:</b><pre>{html.escape(command)}</pre>"
        f"<small>{html.escape(verdict.reason)}</small>")

    def answer(choice):
        def clicked(_button):
            if approve.disabled:
                return
            approve.disabled = refuse.disabled = True
            status.value = ("<b>approved</b>: it runs with your permissions" if choice == "allow"
                            else "<b>denied</b>: the model is told it did not run")
            on_answer(choice)
        return clicked

    approve.on_click(answer("allow"))
    refuse.on_click(answer("deny"))
    return widgets.VBox([shown, widgets.HBox([approve, refuse]), status])


class NotebookPrompt:
    """A ``decide`` hook for ``labkit.gate.Gate``: shows ``prompt`` and waits for the click
    (at most ``wait`` seconds, then denies)."""

    by = "person"

    def __init__(self, *, wait: float = DEFAULT_WAIT, poll: float = 0.05):
        self.wait, self.poll = wait, poll

    def __call__(self, command, verdict):
        from IPython import get_ipython
        from IPython.display import display

        shell = get_ipython()
        if shell is None or getattr(shell, "kernel", None) is None:
            raise RuntimeError("NotebookPrompt needs a running Jupyter kernel; outside a "
                               "notebook, give the answers with labkit.gate.Answers")
        from jupyter_ui_poll import ui_events

        chosen = []
        display(prompt(command, verdict, chosen.append))
        deadline = time.monotonic() + self.wait
        with ui_events() as handle_events:
            while not chosen and time.monotonic() < deadline:
                handle_events(10)  # lets the kernel read up to 10 waiting messages (the click)
                time.sleep(self.poll)
        return chosen[0] if chosen else None

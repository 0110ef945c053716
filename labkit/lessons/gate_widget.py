"""The gate's "ask" in a notebook: Approve / Deny buttons under the exact command, and a wait.

A click is a message to the kernel, and the kernel reads messages on the thread that
runs cells: a cell that simply blocks until the click never sees it. ipykernel 7.4
and later hand widget messages to a cell while that cell *awaits*, and hold the next
cells back (Run All stays in order). So the lesson runs the loop in a worker thread
and awaits it, ``events = await in_worker(run)``; when the gate asks, the worker shows
the prompt and waits for the click, and the kernel, free meanwhile, delivers it.

(``jupyter_ui_poll``, the usual tool for this, drives ``kernel.do_one_iteration``,
which ipykernel 7.4 no longer has: with it the click is never read.)

Only a live notebook with a person in front of it can answer; scripts, replay and
papermill give their answers with ``labkit.harness.gate.Answers``. This module is imported
only by a lesson that asks, so the rest of labkit needs no kernel.
"""

from __future__ import annotations

import asyncio
import html
import threading

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
    """A ``decide`` hook for ``labkit.harness.gate.Gate``: shows ``prompt`` and waits for the click
    (at most ``wait`` seconds, then denies). Call it from ``in_worker``, not from the
    cell's own thread, where the click could never arrive."""

    by = "person"

    def __init__(self, *, wait: float = DEFAULT_WAIT):
        self.wait = wait

    def __call__(self, command, verdict):
        from IPython import get_ipython
        from IPython.display import display

        shell = get_ipython()
        if shell is None or getattr(shell, "kernel", None) is None:
            raise RuntimeError("NotebookPrompt needs a running Jupyter kernel; outside a "
                               "notebook, give the answers with labkit.harness.gate.Answers")
        import ipykernel
        if tuple(int(n) for n in ipykernel.__version__.split(".")[:2]) < (7, 4):
            raise RuntimeError(f"NotebookPrompt needs ipykernel 7.4 or later (this is "
                               f"{ipykernel.__version__}), which delivers clicks to an "
                               "awaiting cell: pip install 'ipykernel>=7.4'")
        if threading.current_thread() is threading.main_thread():
            raise RuntimeError("NotebookPrompt would wait for a click the kernel cannot read "
                               "while this cell blocks; run the loop with "
                               "`await labkit.lessons.gate_widget.in_worker(...)`")
        chosen, clicked = [], threading.Event()

        def on_answer(choice):
            chosen.append(choice)
            clicked.set()

        display(prompt(command, verdict, on_answer))
        clicked.wait(self.wait)
        return chosen[0] if chosen else None


async def in_worker(function, *args):
    """Run ``function(*args)`` in a worker thread while the cell awaits it, so the kernel
    can deliver clicks meanwhile; in a notebook: ``result = await in_worker(f, x)``."""
    return await asyncio.to_thread(function, *args)

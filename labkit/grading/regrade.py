"""Two nbgrader preprocessors that make autograding trustworthy, registered by the
``nbgrader_config.py`` that ``python -m labkit.grading course`` writes.

``ExecuteKillingHangs`` is nbgrader's ``Execute`` with three changes: when a cell runs
past its timeout and the kernel ignores the interrupt (an answer that blocks SIGINT),
or when the kernel dies in a cell (``os._exit``), the kernel is restarted instead of
the whole submission being dropped; the cell gets an error and the notebook goes on
(in a fresh kernel). And the graded test cells of the course's exercises are not run
in the kernel at all: their verdicts come from ``RegradeOutsideKernel`` alone, so running
their checks in the kernel too would only double the grading time.

Both run the learner's code in a sandbox (``sandbox``, on by default; see
:mod:`labkit.grading.sandboxes`): the kernel, and each answer's process. Off, the code runs
with the grading user's rights: only for a machine where the sandbox cannot start, on
purpose (``python -m labkit grade --unisolated`` says so in its report).

``RegradeOutsideKernel`` runs after it. The learner's code ran in that kernel and could
have patched anything there, so the outputs of the graded test cells are not trusted:
each is replaced by the verdict of the same check, run here, in nbgrader's own process,
on the answer cell's source as submitted (the answer itself runs in a fresh process, see
:mod:`labkit.grading.isolated`). A failed verdict adds an error output, which nbgrader scores 0;
a passed one leaves only the feedback text, which scores full marks.
"""

from __future__ import annotations

import asyncio
import json
import time
from queue import Empty

from jupyter_core.utils import ensure_async, run_sync
from nbclient.exceptions import DeadKernelError
from nbformat.v4 import new_output
from nbgrader.preprocessors import Execute, NbGraderPreprocessor
from traitlets import Bool, Integer

from ..settings import NOTEBOOK_TIMEOUT
from . import isolated
from .checks import grade
from .conventions import HIDDEN_BEGIN, exercises
from .kernel_manager import SandboxedKernelManager
from .sandboxes import answer_sandbox


class NotebookTimedOut(RuntimeError):
    """The notebook ran past its whole budget (``ExecuteKillingHangs.notebook_timeout``)."""


class ExecuteKillingHangs(Execute):
    """nbgrader's Execute, restarting a kernel that does not stop when interrupted.

    The restart waits until nbclient has finished with the cell. While the cell is
    still being judged, nbclient reads the kernel's IOPub socket in a task of its own;
    a second reader there (``wait_for_ready`` after a restart) can lose a message to it
    and then wait forever for one that never comes, which is how a whole autograde run
    once hung. So a timeout only notes that the kernel must go, and the cell, once
    finished, restarts it.
    """

    interrupt_grace = Integer(
        5, help="Seconds an interrupted kernel has to stop before it is restarted"
    ).tag(config=True)
    notebook_timeout = Integer(
        NOTEBOOK_TIMEOUT,
        help="Seconds the whole notebook may run; past them no cell is started and the "
        "submission fails (0: no limit)",
    ).tag(config=True)
    sandbox = Bool(True, help="Run the kernel in the grading sandbox").tag(config=True)
    max_output_bytes = Integer(
        1 << 20,
        help="Bytes of output one cell may add to the notebook; the rest is dropped, said once "
        "(nbgrader's LimitOutput counts lines only: one line, or an image, can be any size)",
    ).tag(config=True)
    _kernel_must_restart = False
    _notebook_started = None
    _output_bytes: dict = {}

    def create_kernel_manager(self):
        if self.sandbox:
            self.kernel_manager_class = SandboxedKernelManager
        self._notebook_started = None
        return super().create_kernel_manager()

    async def _async_handle_timeout(self, timeout, cell=None):
        self.log.error("A cell ran past its %i s timeout: interrupting the kernel", timeout)
        await ensure_async(self.km.interrupt_kernel())
        try:
            await ensure_async(self.kc.shell_channel.get_msg(timeout=self.interrupt_grace))
        except Empty:
            self.log.error(
                "The kernel ignored the interrupt: it will be restarted, and the "
                "cells after this one run in a fresh kernel"
            )
            self._kernel_must_restart = True
        return {"content": {**self.error_on_timeout, "status": "error"}}

    async def async_execute_cell(self, cell, cell_index, execution_count=None, store_history=True):
        """Run one cell; if its kernel hung or died, start a fresh one and go on."""
        if cell_index in self._regraded():
            cell.outputs = []  # RegradeOutsideKernel writes them
            return cell
        self._output_bytes = {cell_index: 0}
        if self._notebook_started is None:
            self._notebook_started = time.monotonic()
        elif self.notebook_timeout and (
            time.monotonic() - self._notebook_started > self.notebook_timeout
        ):
            raise NotebookTimedOut(
                f"the notebook ran past its {self.notebook_timeout} s budget: cell {cell_index} "
                "and those after it were not run"
            )
        try:
            return await super().async_execute_cell(
                cell, cell_index, execution_count, store_history
            )
        except DeadKernelError:
            self.log.error("The kernel died in cell %i: starting a fresh one", cell_index)
            cell.outputs.append(
                new_output(
                    "error",
                    ename="DeadKernelError",
                    evalue="the kernel died while running this cell",
                    traceback=["DeadKernelError: the kernel died while running this cell"],
                )
            )
            self._kernel_must_restart = True
            return cell
        finally:
            if self._kernel_must_restart:
                self._kernel_must_restart = False
                await self._fresh_kernel()

    def output(self, outs, msg, display_id, cell_index):
        """nbclient's handling of one output, within the cell's byte budget."""
        used = self._output_bytes.get(cell_index, 0)
        size = len(json.dumps(msg.get("content", {}), default=str))
        self._output_bytes[cell_index] = used + size
        if used + size <= self.max_output_bytes:
            return super().output(outs, msg, display_id, cell_index)
        if used <= self.max_output_bytes:  # the first output past the budget: say so, once
            outs.append(
                new_output(
                    "stream",
                    name="stderr",
                    text=f"[labkit: this cell's output went past {self.max_output_bytes:,} "
                    "bytes; the rest was dropped]\n",
                )
            )
        return None

    def _regraded(self) -> set:
        """The indexes of the test cells whose verdict RegradeOutsideKernel gives."""
        if getattr(self, "_regraded_in", None) is not self.nb:
            self._regraded_in = self.nb
            self._regraded_cells = {e.test_index for e in exercises(self.nb) if e.check}
        return self._regraded_cells

    async def _fresh_kernel(self) -> None:
        await asyncio.sleep(0)  # let the cancelled readers of the old kernel finish first
        await ensure_async(self.km.restart_kernel(now=True))
        await ensure_async(self.kc.wait_for_ready(timeout=120))

    execute_cell = run_sync(async_execute_cell)


class RegradeOutsideKernel(NbGraderPreprocessor):
    """Replace each graded test cell's outputs with the verdict of its check, run here."""

    answer_timeout = Integer(30, help="Seconds the answer may run for one check").tag(config=True)
    sandbox = Bool(True, help="Run each answer's process in the grading sandbox").tag(config=True)

    def preprocess(self, nb, resources):
        previous = isolated.TIMEOUT, isolated.SANDBOX
        isolated.TIMEOUT = self.answer_timeout
        isolated.SANDBOX = answer_sandbox() if self.sandbox else None
        try:
            for exercise in exercises(nb):
                self._regrade(nb, exercise)
        finally:
            isolated.TIMEOUT, isolated.SANDBOX = previous
        return nb, resources

    def _regrade(self, nb, exercise) -> None:
        cell, answer = nb.cells[exercise.test_index], nb.cells[exercise.answer_index]
        if exercise.check is None:
            return
        passed, text = grade(
            exercise.check, answer.source, exercise.answer_name, hidden=HIDDEN_BEGIN in cell.source
        )
        self.log.info(
            "%s: %s outside the kernel", exercise.test_id, "passed" if passed else "failed"
        )
        cell.outputs = [
            new_output(
                "stream", name="stdout", text="Graded outside the notebook's kernel:\n" + text
            )
        ]
        if not passed:
            cell.outputs.append(
                new_output(
                    "error",
                    ename="AssertionError",
                    evalue=text.strip().splitlines()[-1][:500],
                    traceback=[],
                )
            )

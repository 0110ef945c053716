"""A Jupyter kernel inside the grading sandbox: what ``ExecuteKillingHangs`` starts for each
notebook it runs (``c.ExecuteKillingHangs.sandbox``, on by default).

The kernel is jupyter_client's own, started through the sandbox's argument list
(:func:`labkit.grading.sandboxes.kernel_sandbox`), with three changes that a kernel without
a network and without the host's files needs:

- **Its sockets are Unix sockets** (ZeroMQ's ``ipc`` transport) in a folder of its own: the
  sandbox has no network, not even the host's loopback, and a file in a folder both sides
  see is how they talk. It also ends the race of TCP ports, where jupyter_client picks a free
  port, lets it go, and another kernel starting at the same moment takes it
  (``Address already in use``). A socket's path must stay under 108 bytes, so the folder is
  short: ``/tmp/lk-XXXXXXXX/``.
- **Its working folder is a copy** of the one nbgrader gives (the submission's own files):
  the kernel may write there, and nothing it writes reaches the grader's folders.
- **Interrupts are messages** (``interrupt_request``), not signals: a signal would reach
  bwrap's process outside, not the kernel inside (which has a session of its own).

Stopping the kernel kills bwrap's outer process; the kernel and everything it started
die with it (a PID namespace of their own), and the folder is removed.
"""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import tempfile
from pathlib import Path

from jupyter_client.manager import AsyncKernelManager

from .sandboxes import kernel_sandbox


class SandboxedKernelManager(AsyncKernelManager):
    """jupyter_client's kernel manager, its kernel started inside the grading sandbox."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.sandbox = kernel_sandbox()
        self.home = Path(tempfile.mkdtemp(prefix="lk-", dir="/tmp"))
        (self.home / "ipc").mkdir()
        self.work = self.home / "work"
        self.transport = "ipc"
        self.ip = str(self.home / "ipc" / "k")  # sockets k-1 ... k-5, under 108 bytes
        self.connection_file = str(self.home / "ipc" / "kernel.json")
        self._cap = contextlib.ExitStack()

    async def _async_launch_kernel(self, kernel_cmd, **kw) -> None:
        self.kernel_spec.interrupt_mode = "message"
        if not self.work.exists():
            given = kw.get("cwd")
            if given and Path(given).is_dir():
                shutil.copytree(given, self.work, symlinks=True)
            else:
                self.work.mkdir()
        argv = self._cap.enter_context(self.sandbox.wrapped(kernel_cmd, self.home, cwd=self.work))
        kw.update(cwd=str(self.work), env={}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        await super()._async_launch_kernel(argv, **kw)

    async def _async_cleanup_resources(self, restart: bool = False) -> None:
        await super()._async_cleanup_resources(restart=restart)
        self._cap.close()  # the sandbox's process cap, once its processes are gone
        if not restart:
            shutil.rmtree(self.home, ignore_errors=True)

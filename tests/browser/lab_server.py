"""The project's JupyterLab, started for the browser test and always stopped afterwards.

The server listens on a free loopback port without a token. Its settings, workspaces,
runtime files and IPython profile live in a private folder, so the test neither reads
nor changes the user's own Jupyter state; the kernel spec and the widget extension
are still found because they live in the environment (``sys.prefix``), which Jupyter
searches whatever these variables say. Every process the server starts inherits a
marker variable, so ``processes_left()`` can find any survivor (kernels run in their
own sessions, outside the server's process group) by reading ``/proc``.
"""

from __future__ import annotations

import http.cookiejar
import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

MARKER = "LABKIT_BROWSER_TEST"

#: Settings a fresh JupyterLab would otherwise ask about in a pop-up over the notebook.
_QUIET_SETTINGS = {
    "@jupyterlab/apputils-extension/notification": {"fetchNews": "false", "checkForUpdates": False},
}


class JupyterLab:
    """One JupyterLab server process serving ``root_dir``; use as a context manager."""

    def __init__(self, root_dir: Path, home: Path, run_id: str):
        self.root_dir, self.home, self.run_id = Path(root_dir), Path(home), run_id
        self.log_path = self.home / "jupyterlab.log"
        self.url = ""
        self._process = None
        self._opener = None
        self._xsrf = ""

    def environment(self) -> dict:
        """The server's environment: private Jupyter folders and the marker."""
        env = dict(os.environ)
        for variable, folder in (
            ("JUPYTER_CONFIG_DIR", "config"),
            ("JUPYTER_DATA_DIR", "data"),
            ("JUPYTER_RUNTIME_DIR", "runtime"),
            ("IPYTHONDIR", "ipython"),
            ("JUPYTERLAB_SETTINGS_DIR", "settings"),
            ("JUPYTERLAB_WORKSPACES_DIR", "workspaces"),
        ):
            env[variable] = str(self.home / folder)
            (self.home / folder).mkdir(parents=True, exist_ok=True)
        env[MARKER] = self.run_id
        return env

    def start(self, timeout: float = 120) -> JupyterLab:
        env = self.environment()
        for plugin, values in _QUIET_SETTINGS.items():
            path = Path(env["JUPYTERLAB_SETTINGS_DIR"], plugin + ".jupyterlab-settings")
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(values), encoding="utf-8")
        command = [
            sys.executable,
            "-m",
            "jupyterlab",
            "--no-browser",
            "--allow-root",
            "--ServerApp.ip=127.0.0.1",
            "--ServerApp.port=0",
            "--ServerApp.token=",
            "--ServerApp.password=",
            f"--ServerApp.root_dir={self.root_dir}",
        ]
        with open(self.log_path, "wb") as log:
            self._process = subprocess.Popen(
                command,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        runtime = Path(env["JUPYTER_RUNTIME_DIR"])
        deadline = time.monotonic() + timeout
        while True:
            if self._process.poll() is not None:
                raise RuntimeError(
                    f"JupyterLab exited with code {self._process.returncode}:\n" + self.log_tail()
                )
            info = runtime / f"jpserver-{self._process.pid}.json"
            if info.exists() and self._answers(info):
                return self
            if time.monotonic() > deadline:
                raise TimeoutError(
                    f"JupyterLab did not answer within {timeout:.0f} s:\n" + self.log_tail()
                )
            time.sleep(0.1)

    def _answers(self, info: Path) -> bool:
        """True once the server named in its info file serves pages (and gave an XSRF cookie)."""
        try:
            self.url = json.loads(info.read_text(encoding="utf-8"))["url"]
        except (ValueError, KeyError, OSError):
            return False  # being written
        jar = http.cookiejar.CookieJar()
        self._opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
        try:
            self._opener.open(self.url + "lab", timeout=5).read()
        except OSError:
            return False
        self._xsrf = next((cookie.value for cookie in jar if cookie.name == "_xsrf"), "")
        return True

    def api(self, method: str, path: str):
        """Call the server's REST API (``path`` like ``"api/sessions"``); return the JSON reply."""
        request = urllib.request.Request(
            self.url + path, method=method, headers={"X-XSRFToken": self._xsrf}
        )
        with self._opener.open(request, timeout=30) as reply:
            body = reply.read()
        return json.loads(body) if body else None

    def shut_down_kernels(self) -> None:
        """End every session and kernel through the API, as the Running panel would."""
        for session in self.api("GET", "api/sessions"):
            self.api("DELETE", f"api/sessions/{session['id']}")
        for kernel in self.api("GET", "api/kernels"):
            self.api("DELETE", f"api/kernels/{kernel['id']}")

    def stop(self) -> None:
        """Shut the kernels down, then stop the server's process group (forcibly if it lingers)."""
        if self._process is None:
            return
        try:
            if self._process.poll() is None and self.url:
                self.shut_down_kernels()
        except OSError:
            pass  # the server is not answering: the signals below still stop it
        finally:
            _end_group(self._process)

    def log_tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"

    def __enter__(self) -> JupyterLab:
        return self.start()

    def __exit__(self, *exc_info) -> None:
        self.stop()


def _end_group(process: subprocess.Popen, grace: float = 20) -> None:
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 10)):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            break
        try:
            process.wait(wait)
            break
        except subprocess.TimeoutExpired:
            continue


def processes_left(run_id: str, wait: float = 5.0) -> list[tuple[int, str]]:
    """Living processes (pid, command line) whose environment carries this run's marker,
    after giving ones that are already exiting up to ``wait`` seconds to go."""
    deadline = time.monotonic() + wait
    while True:
        found = _marked_processes(f"{MARKER}={run_id}".encode())
        if not found or time.monotonic() > deadline:
            return found
        time.sleep(0.1)


def _marked_processes(needle: bytes) -> list[tuple[int, str]]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if needle not in (entry / "environ").read_bytes().split(b"\0"):
                continue
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except (OSError, IndexError):
            continue  # gone meanwhile, or not ours to read
        if state not in ("Z", "X"):
            found.append((int(entry.name), command.strip()))
    return found


def kill_processes(pids) -> None:
    """Forcibly end processes this test started and found still running."""
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

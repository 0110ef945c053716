"""What a learner's browser does through a JupyterHub, done with the learner's API token: open
a lesson in a kernel (a session, as JupyterLab opens a notebook) and run code cells over the
kernel's websocket, the Jupyter messaging protocol, one cell after another."""

import asyncio
import json
import time
import uuid

import requests
from tornado.httpclient import HTTPRequest
from tornado.websocket import websocket_connect


class Learner:
    """One learner's view of the hub: ``/user/NAME/`` through the proxy, with their token."""

    def __init__(self, hub_url: str, name: str, token: str):
        self.name, self.hub_url = name, hub_url
        self.server = f"{hub_url}/user/{name}"
        self.headers = {"Authorization": f"token {token}"}

    def get(self, path: str) -> dict:
        answer = requests.get(f"{self.server}/{path}", headers=self.headers, timeout=30)
        answer.raise_for_status()
        return answer.json()

    def run_cells(self, notebook_path: str, cells: list[str]) -> list[dict]:
        """Open ``notebook_path`` in a new kernel (its folder the kernel's working directory)
        and run ``cells`` in order, stopping at the first that fails; return each cell's
        ``{"status", "stdout", "error"}``. The session is deleted, and its kernel with it."""
        session = requests.post(
            f"{self.server}/api/sessions",
            headers=self.headers,
            json={"path": notebook_path, "type": "notebook", "kernel": {"name": "python3"}},
            timeout=60,
        )
        session.raise_for_status()
        session = session.json()
        try:
            return asyncio.run(self._execute(session["kernel"]["id"], cells))
        finally:
            requests.delete(
                f"{self.server}/api/sessions/{session['id']}", headers=self.headers, timeout=30
            )

    async def _execute(self, kernel_id: str, cells: list[str]) -> list[dict]:
        url = self.server.replace("http", "ws", 1) + f"/api/kernels/{kernel_id}/channels"
        socket = await websocket_connect(HTTPRequest(url, headers=self.headers))
        session, results = uuid.uuid4().hex, []
        try:
            for code in cells:
                results.append(await asyncio.wait_for(self._one(socket, session, code), 120))
                if results[-1]["status"] != "ok":
                    break
        finally:
            socket.close()
        return results

    async def _one(self, socket, session: str, code: str) -> dict:
        msg_id = uuid.uuid4().hex
        header = {"msg_id": msg_id, "username": self.name, "session": session}
        header |= {"msg_type": "execute_request", "version": "5.3", "date": _now()}
        content = {"code": code, "silent": False, "store_history": True}
        content |= {"user_expressions": {}, "allow_stdin": False, "stop_on_error": True}
        message = {"header": header, "parent_header": {}, "metadata": {}, "content": content}
        await socket.write_message(json.dumps(message | {"channel": "shell"}))
        # The reply comes on the shell channel and the output on iopub: they may arrive in
        # either order, so a cell is done when both its reply and iopub's "idle" have come.
        stdout, error, status, idle = [], None, None, False
        while status is None or not idle:
            raw = await socket.read_message()
            if raw is None:
                return {"status": "the kernel's websocket closed", "stdout": "", "error": None}
            reply = json.loads(raw)
            if reply["parent_header"].get("msg_id") != msg_id:
                continue
            kind, content = reply["msg_type"], reply["content"]
            if kind == "stream" and content["name"] == "stdout":
                stdout.append(content["text"])
            elif kind == "error":
                error = f"{content['ename']}: {content['evalue']}"
            elif kind == "execute_reply":
                status = content["status"]
            elif kind == "status" and content["execution_state"] == "idle":
                idle = True
        return {"status": status, "stdout": "".join(stdout), "error": error}


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())

"""The course's MCP server: the workspace tools over stdio, built with the official SDK.

Run it in the folder it serves (the harness does, in the run's copy)::

    python -I -m labkit.extensions.mcp_server

``mcp`` 2.x, which follows the 2026-07-28 specification: no ``initialize`` handshake, a
client asks ``server/discover``, and every request carries its own ``_meta``. (The 2.x
series also renamed 1.x's ``FastMCP`` to ``MCPServer``.) Each tool is a typed Python
function: the SDK makes its ``inputSchema`` from the signature, its description from the
docstring and, from the ``TypedDict`` it returns, its ``outputSchema``; each result goes
back as ``structuredContent`` and as JSON text. A ``ToolError`` reaches the client as a
result with ``isError`` and its message.

The tools work in the folder the server started in, and nowhere else: a path is relative,
holds no ``..``, passes through no link and names a regular file of at most
``MAX_FILE_BYTES``. Unlike the harness's ``replace_text``, ``edit_file`` may edit any
such file, the tests included: a hook (lesson 11) is what keeps the tests as they are.
``workspace_server(root)`` gives the server object itself, for a client in the same
process (``mcp.Client(server)``) in tests.
"""

from __future__ import annotations

import stat
from pathlib import Path
from typing import TypedDict

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from ..harness.atomic import write_atomically
from ..harness.pytest_run import run_pytest

NAME, VERSION = "labkit-workspace", "0.1.0"
MAX_FILE_BYTES = 64_000
TEST_TIMEOUT = 30.0
MAX_TEST_OUTPUT = 2_000
#: What the model is told about each tool (the SDK would take a docstring as it is written).
DESCRIPTIONS = {
    "read_file": "Read one text file of the repository, given by its path relative to the "
    "repository's root (for example 'path_rules.py' or 'tests/test_path_rules.py').",
    "edit_file": "Replace one exact piece of text in a file of the repository. 'old' must "
    "occur exactly once in the file, copied character for character from read_file.",
    "run_tests": "Run the repository's tests with pytest; exit_code 0 means every test passed.",
}


class FileText(TypedDict):
    path: str
    content: str


class Edit(TypedDict):
    path: str
    replaced: int


class TestRun(TypedDict):
    exit_code: int
    timed_out: bool
    output: str


def workspace_server(root: str | Path) -> MCPServer:
    """The server, its three tools working in ``root``."""
    root = Path(root).resolve()
    server = MCPServer(
        NAME,
        version=VERSION,
        instructions="The tools of the repository being repaired: read, edit, test.",
    )

    @server.tool(description=DESCRIPTIONS["read_file"])
    def read_file(path: str) -> FileText:
        return {"path": path, "content": _read(root, path).decode("utf-8", errors="replace")}

    @server.tool(description=DESCRIPTIONS["edit_file"])
    def edit_file(path: str, old: str, new: str) -> Edit:
        data = _read(root, path)
        text = data.decode("utf-8", errors="replace")
        found = text.count(old) if old else 0
        if found != 1:
            where = "is empty" if not old else f"occurs {found} times" if found else "is not found"
            raise ToolError(f"'old' {where} in {path}; it must occur exactly once")
        mode = (root / path).stat().st_mode & 0o777
        write_atomically(root / path, text.replace(old, new, 1).encode("utf-8"), mode=mode)
        return {"path": path, "replaced": 1}

    @server.tool(description=DESCRIPTIONS["run_tests"])
    def run_tests() -> TestRun:
        run = run_pytest(root, timeout=TEST_TIMEOUT, tail_bytes=MAX_TEST_OUTPUT)
        return {"exit_code": run.exit_code, "timed_out": run.timed_out, "output": run.output}

    return server


def _read(root: Path, path: str) -> bytes:
    """The bytes of a regular file inside ``root``, reached through no link; else a
    ``ToolError`` the model reads."""
    parts = Path(path).parts
    if not parts or Path(path).is_absolute() or ".." in parts:
        raise ToolError(f"{path!r} is not a path inside the repository (relative, no '..')")
    place = root
    for part in parts:
        place = place / part
        try:
            info = place.lstat()
        except OSError:
            raise ToolError(f"{path} does not exist in the repository") from None
        if stat.S_ISLNK(info.st_mode):
            raise ToolError(f"{path} goes through a link, which these tools do not follow")
    if not stat.S_ISREG(info.st_mode):
        raise ToolError(f"{path} is not a regular file")
    if info.st_size > MAX_FILE_BYTES:
        raise ToolError(f"{path} is {info.st_size} bytes; these tools read {MAX_FILE_BYTES}")
    return place.read_bytes()


if __name__ == "__main__":
    workspace_server(Path.cwd()).run("stdio")

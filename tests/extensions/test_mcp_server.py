"""The course's MCP server, and second opinions from clients no one here wrote: the official
SDK's client (in this process, and over stdio as the harness runs the server) and the
official MCP inspector's command line (npm), each listing and calling the server; and the
harness's own client getting the same results."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters

from labkit.extensions.mcp_server import workspace_server
from labkit.harness.mcp_tools import MCPTools
from labkit.harness.sample import SOURCE_FILE, TEST_FILE, sample_copy
from labkit.lessons.faulty_mcp_server import faulty_server_command
from labkit.recording.harness_setup import MCP_SERVER

INSPECTOR = "@modelcontextprotocol/inspector@2.12.0"
INSPECTOR_CACHE = Path.home() / ".cache" / "labkit" / "mcp-inspector-2.12.0"
SERVER_ARGS = ["-I", "-m", "labkit.extensions.mcp_server"]


@pytest.fixture
def copy():
    with sample_copy() as root:
        yield root


def in_process(root, work):
    async def main():
        async with Client(workspace_server(root)) as client:
            return await work(client)

    return anyio.run(main)


def test_the_sdk_client_in_this_process_lists_and_calls_the_server(copy):
    async def work(client):
        tools = (await client.list_tools()).tools
        read = await client.call_tool("read_file", {"path": TEST_FILE})
        escape = await client.call_tool("read_file", {"path": "../outside.txt"})
        return tools, read, escape

    tools, read, escape = in_process(copy, work)
    assert [tool.name for tool in tools] == ["read_file", "edit_file", "run_tests"]
    assert all(tool.output_schema["type"] == "object" for tool in tools)
    assert read.structured_content == {"path": TEST_FILE, "content": (copy / TEST_FILE).read_text()}
    assert escape.is_error and "not a path inside the repository" in escape.content[0].text


def test_the_servers_tools_stay_in_the_folder_and_edit_exactly_once(copy):
    (copy / "link.py").symlink_to(copy / SOURCE_FILE)
    os.mkfifo(copy / "pipe")

    async def work(client):
        calls = [
            ("read_file", {"path": "/etc/hostname"}),
            ("read_file", {"path": "link.py"}),
            ("read_file", {"path": "pipe"}),
            ("read_file", {"path": "tests"}),
            ("edit_file", {"path": SOURCE_FILE, "old": "selected", "new": "x"}),
            ("edit_file", {"path": SOURCE_FILE, "old": "", "new": "x"}),
            ("edit_file", {"path": TEST_FILE, "old": "def test_", "new": "def test_"}),
        ]
        return [await client.call_tool(name, arguments) for name, arguments in calls]

    results = in_process(copy, work)
    words = [
        "not a path inside",
        "goes through a link",
        "not a regular file",
        "not a regular file",
        "occurs 3 times",
        "is empty",
        "occurs 4 times",
    ]
    for result, word in zip(results, words):
        assert result.is_error and word in result.content[0].text, (word, result.content)


def sdk_over_stdio(command, cwd, work):
    params = StdioServerParameters(command=command[0], args=command[1:], cwd=str(cwd))

    async def main():
        async with Client(params, read_timeout_seconds=30) as client:
            return await work(client)

    return anyio.run(main)


def test_the_sdk_client_over_stdio_gets_what_the_harness_gets(copy):
    async def work(client):
        listed = (await client.list_tools()).tools
        edit = await client.call_tool(
            "edit_file",
            {
                "path": SOURCE_FILE,
                "old": "path = PurePosixPath(name)",
                "new": "path = PurePosixPath(name)",
            },
        )
        return client.protocol_version, listed, edit

    version, listed, edit = sdk_over_stdio([sys.executable, *SERVER_ARGS], copy, work)
    assert version == "2026-07-28"
    with MCPTools(MCP_SERVER, cwd=copy) as tools:
        ours = tools.invoke(
            "edit_file",
            {
                "path": SOURCE_FILE,
                "old": "path = PurePosixPath(name)",
                "new": "path = PurePosixPath(name)",
            },
        )
        assert [tool.input_schema for tool in listed] == [
            t["inputSchema"] for t in tools.tools.values()
        ]
    assert ours == edit.structured_content == {"path": SOURCE_FILE, "replaced": 1}


def test_garbage_on_stdout_the_sdk_client_reads_past_and_the_harness_stops_at(tmp_path):
    async def work(client):
        return await client.call_tool("run_tests", {})

    result = sdk_over_stdio(faulty_server_command("garbage"), tmp_path, work)
    assert result.structured_content == {"exit_code": 0, "output": "4 passed"}  # it read on
    with MCPTools(faulty_server_command("garbage"), cwd=tmp_path) as tools:
        with pytest.raises(Exception, match="not a JSON-RPC message"):
            tools.invoke("run_tests", {})


# --- the MCP inspector's command line (Node) --------------------------------------------------


@pytest.fixture(scope="module")
def inspector():
    """The inspector's CLI, installed once into a cache this test reuses (112 MB, ~15 s)."""
    if not (shutil.which("node") and shutil.which("npm")):
        message = (
            "node and npm are needed to run the MCP inspector (npm install "
            f"{INSPECTOR}); install Node.js 20 or newer"
        )
        if os.environ.get("CI", "").lower() in ("true", "1", "yes"):
            pytest.fail(f"CI: {message}", pytrace=False)
        pytest.skip(message)
    binary = INSPECTOR_CACHE / "node_modules" / ".bin" / "mcp-inspector"
    if not binary.exists():
        INSPECTOR_CACHE.mkdir(parents=True, exist_ok=True)
        done = subprocess.run(
            [
                "npm",
                "install",
                "--no-audit",
                "--no-fund",
                "--prefix",
                str(INSPECTOR_CACHE),
                INSPECTOR,
            ],
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert done.returncode == 0 and binary.exists(), done.stderr[-3000:]
    return binary


def inspect(binary, cwd, *method):
    done = subprocess.run(
        [str(binary), "--cli", "--protocol-era", "modern", "-q", "--format", "json",
         sys.executable, *SERVER_ARGS, *method],
        cwd=cwd,
        env={**os.environ, "MCP_CATALOG_PATH": str(cwd.parent / "catalog.json")},
        capture_output=True,
        text=True,
        timeout=120,
    )  # fmt: skip
    return done.returncode, done.stdout, done.stderr


def test_the_official_inspector_lists_and_calls_the_server(inspector, copy):
    code, out, err = inspect(inspector, copy, "--method", "tools/list")
    assert code == 0, err
    assert [tool["name"] for tool in json.loads(out)["result"]["tools"]] == [
        "read_file",
        "edit_file",
        "run_tests",
    ]
    code, out, err = inspect(
        inspector,
        copy,
        "--method",
        "tools/call",
        "--tool-name",
        "read_file",
        "--tool-arg",
        f"path={SOURCE_FILE}",
    )
    assert code == 0, err
    result = json.loads(out)["result"]
    assert result["structuredContent"]["content"] == (copy / SOURCE_FILE).read_text()

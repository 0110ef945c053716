"""The harness's MCP side: the stdio client (the protocol as sent, each failure it meets, the
server ended with everything it started) and MCPTools (schemas in, calls out, results back).
Run against the hand-written server that fails on purpose, which starts in milliseconds;
the course's SDK server is tested in tests/extensions."""

import json
import time

import pytest
from conftest import process_alive

from labkit.harness.contracts import ToolsFailed
from labkit.harness.formats import FORMATS
from labkit.harness.mcp_client import (
    CLIENT_INFO,
    PROTOCOL_VERSION,
    MCPClosed,
    MCPConnection,
    MCPTimeout,
)
from labkit.harness.mcp_tools import MCPTools, result_of, tool_problem, tool_schema_of
from labkit.lessons.faulty_mcp_server import faulty_server_command


def messages(traffic, direction="c2s"):
    return [json.loads(entry["line"]) for entry in traffic if entry["dir"] == direction]


def test_every_request_carries_its_meta_and_the_traffic_keeps_each_line(tmp_path):
    with MCPConnection(faulty_server_command("lies"), cwd=tmp_path) as connection:
        assert connection.server["supportedVersions"] == [PROTOCOL_VERSION]
        tools = connection.list_tools()
        assert [tool["name"] for tool in tools] == ["read_file", "run_tests"]
    sent = messages(connection.traffic)
    assert [m["method"] for m in sent] == ["server/discover", "tools/list"]
    assert [m["id"] for m in sent] == [1, 2]
    for message in sent:
        assert message["params"]["_meta"] == {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": CLIENT_INFO,
        }
    assert [entry["dir"] for entry in connection.traffic] == ["c2s", "s2c", "c2s", "s2c"]


def test_a_call_with_no_answer_is_cancelled_and_the_server_stays_usable(tmp_path):
    (tmp_path / "a.txt").write_text("hello")
    with MCPConnection(faulty_server_command("hangs"), cwd=tmp_path, timeout=0.3) as connection:
        with pytest.raises(MCPTimeout, match="did not answer tools/call within 0.3 s"):
            connection.call_tool("run_tests", {})
        result = connection.call_tool("read_file", {"path": "a.txt"})
    assert result["structuredContent"] == {"path": "a.txt", "content": "hello"}
    cancelled = [m for m in messages(connection.traffic) if "id" not in m]
    assert cancelled == [
        {
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": 2, "reason": "no response within 0.3 s"},
        }
    ]


def test_a_server_that_exits_breaks_the_connection_for_every_later_call(tmp_path):
    with MCPConnection(faulty_server_command("exits"), cwd=tmp_path) as connection:
        with pytest.raises(MCPClosed, match=r"exited \(exit code 3; its last words on stderr"):
            connection.call_tool("run_tests", {})
        started = time.monotonic()
        with pytest.raises(MCPClosed, match="exit code 3"):
            connection.call_tool("read_file", {"path": "x"})
        assert time.monotonic() - started < 1  # at once, not at a timeout


def test_garbage_on_stdout_is_kept_and_breaks_the_connection(tmp_path):
    with MCPConnection(faulty_server_command("garbage"), cwd=tmp_path) as connection:
        with pytest.raises(MCPClosed, match="not a JSON-RPC message on stdout"):
            connection.call_tool("run_tests", {})
    assert {"dir": "junk", "line": "collecting tests... 4 items"} in connection.traffic


@pytest.mark.parametrize(
    "fault, error, words",
    [("banner", MCPClosed, "not a JSON-RPC message"), ("mute", MCPTimeout, "server/discover")],
)
def test_a_server_that_cannot_start_its_conversation_fails_at_once_and_is_ended(
    fault, error, words, tmp_path, monkeypatch
):
    made = []
    monkeypatch.setattr(MCPConnection, "close", _recording_close(made))
    with pytest.raises(error, match=words):
        MCPConnection(faulty_server_command(fault), cwd=tmp_path, start_timeout=0.5)
    [connection] = made
    assert not process_alive(connection.process.pid, wait=0)


def _recording_close(made):
    original = MCPConnection.close

    def close(self):
        made.append(self)
        original(self)

    return close


def test_a_line_over_the_limit_breaks_the_connection(tmp_path, monkeypatch):
    monkeypatch.setattr("labkit.harness.mcp_client.MAX_LINE", 300)
    with MCPConnection(faulty_server_command("lies"), cwd=tmp_path) as connection:
        with pytest.raises(MCPClosed, match="a line over 300 bytes"):
            connection.list_tools()  # its reply is about 1,000 bytes


def test_the_server_and_what_it_started_do_not_outlive_the_connection(tmp_path):
    connection = MCPConnection(faulty_server_command("forks"), cwd=tmp_path)
    child = int((tmp_path / "child.pid").read_text())
    assert process_alive(child, wait=0)
    connection.close()
    assert not process_alive(connection.process.pid, wait=0)
    assert not process_alive(child, wait=1)  # a daemon in its own session: the reaper's


def test_a_server_that_ignores_its_stdin_closing_and_sigterm_is_still_ended(tmp_path):
    connection = MCPConnection(faulty_server_command("stubborn"), cwd=tmp_path)
    started = time.monotonic()
    connection.close()
    assert time.monotonic() - started < 10
    assert not process_alive(connection.process.pid, wait=0)


# --- MCPTools ---------------------------------------------------------------------------------

TOOL = {
    "name": "read_file",
    "description": "Read a file.",
    "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}},
    "outputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]},
}


def test_each_wire_format_declares_the_tool_its_own_way():
    assert tool_schema_of(TOOL, FORMATS["ollama"]) == {
        "type": "function",
        "function": {
            "name": "read_file",
            "description": "Read a file.",
            "parameters": TOOL["inputSchema"],
        },
    }
    assert tool_schema_of(TOOL, FORMATS["openai"]) == tool_schema_of(TOOL, FORMATS["ollama"])
    assert tool_schema_of(TOOL, FORMATS["anthropic"]) == {
        "name": "read_file",
        "description": "Read a file.",
        "input_schema": TOOL["inputSchema"],
    }
    bare = {"name": "ping", "title": "Ping it", "inputSchema": {"type": "object"}}
    assert tool_schema_of(bare, FORMATS["anthropic"]) == {
        "name": "ping",
        "description": "Ping it",
        "input_schema": {"type": "object", "properties": {}},
    }
    assert bare["inputSchema"] == {"type": "object"}  # the server's tool is left as it was


@pytest.mark.parametrize(
    "tool, format_name, words",
    [
        ({**TOOL, "name": "files.read"}, "openai", "not a valid OpenAI tool name"),
        ({**TOOL, "name": "files.read"}, "anthropic", "not a valid Anthropic tool name"),
        ({**TOOL, "name": "x" * 65}, "openai", "not a valid OpenAI tool name"),
        ({**TOOL, "inputSchema": {"type": "string"}}, "ollama", "its inputSchema is not"),
        ({**TOOL, "outputSchema": {"type": "thing"}}, "ollama", "its outputSchema is not"),
        ({**TOOL, "description": 3}, "ollama", "its description is not text"),
        ({"description": "no name"}, "ollama", "not an object with a name"),
    ],
)
def test_a_tool_that_cannot_be_offered_says_why(tool, format_name, words):
    assert words in tool_problem(tool, FORMATS[format_name])


def test_a_dotted_name_is_fine_for_ollama():
    assert tool_problem({**TOOL, "name": "files.read"}, FORMATS["ollama"]) is None


@pytest.mark.parametrize(
    "reply, expected",
    [
        ({"content": [], "structuredContent": {"n": 1}}, {"n": 1}),
        ({"content": [{"type": "text", "text": "no"}], "isError": True}, ValueError("no")),
        ({"content": [{"type": "text", "text": "x"}]}, ValueError("sent no structuredContent")),
        ({"content": [], "structuredContent": {"n": "1"}}, ValueError("'1' is not of type")),
        ({"content": "text"}, ValueError("no list of content blocks")),
    ],
)
def test_results_become_the_loops_results_or_errors_the_model_reads(reply, expected):
    if isinstance(expected, ValueError):
        with pytest.raises(ValueError, match=str(expected)):
            result_of(TOOL, reply)
    else:
        assert result_of(TOOL, reply) == expected


def test_without_an_output_schema_the_text_is_the_result_and_other_blocks_are_named():
    tool = {key: value for key, value in TOOL.items() if key != "outputSchema"}
    reply = {
        "content": [
            {"type": "text", "text": "line 1"},
            {"type": "image", "data": "iVBOR...", "mimeType": "image/png"},
        ]
    }
    assert result_of(tool, reply) == {"content": "line 1\n[image: image/png]"}
    assert result_of(tool, {"content": [], "structuredContent": [1, 2]}) == {"result": [1, 2]}


def test_mcp_tools_refuse_a_broken_tool_check_arguments_and_end_on_a_dead_server(tmp_path):
    with MCPTools(faulty_server_command("bad_schema"), cwd=tmp_path) as tools:
        assert list(tools.tools) == ["read_file", "run_tests"]
        assert "count_lines" in tools.refused
        with pytest.raises(ValueError, match=r"unknown tool 'count_lines' \(it was refused"):
            tools.invoke("count_lines", {"path": "a"})
        sent = len(tools.traffic)
        with pytest.raises(TypeError, match="do not fit its inputSchema"):
            tools.invoke("read_file", {"path": 3})
        assert len(tools.traffic) == sent  # refused before anything was sent
    with MCPTools(faulty_server_command("exits"), cwd=tmp_path) as tools:
        with pytest.raises(ToolsFailed, match="cannot be used any more"):
            tools.invoke("run_tests", {})


def test_the_gate_and_hooks_stand_before_an_mcp_tool_as_before_a_local_one(tmp_path):
    from labkit.harness import agent_events
    from labkit.harness.gate import Gate, Policy
    from labkit.models.chunks import call
    from labkit.models.scripted import PlannedTurn, ScriptedChat

    plan = [
        PlannedTurn(tool_calls=[call("run_tests"), call("read_file", path="a.txt")]),
        PlannedTurn(content="done"),
    ]
    gate = Gate(Policy(tools={"read_file": "allow"}, default="deny"))
    with MCPTools(faulty_server_command("lies"), cwd=tmp_path) as tools:
        events = list(agent_events(ScriptedChat(plan), tools, "task", gate=gate))
        sent = [
            m["params"]["name"] for m in messages(tools.traffic) if m.get("method") == "tools/call"
        ]
    assert sent == ["read_file"]  # run_tests was denied by the gate: nothing went to the server
    denied = [e for e in events if e["type"] == "permission" and e["decision"] == "deny"]
    assert [e["name"] for e in denied] == ["run_tests"]

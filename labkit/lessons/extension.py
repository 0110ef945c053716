"""What lesson 11 runs beside the harness: a server's traffic in short lines, whether a
server's processes are gone, and one scripted run through a server that fails on purpose.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass

from ..harness.loop import agent_events
from ..harness.mcp_client import MCPError
from ..harness.mcp_tools import MCPTools
from ..harness.sample import sample_copy
from ..models.chunks import call
from ..models.scripted import PlannedTurn, ScriptedChat
from .faulty_mcp_server import faulty_server_command

#: The scripted model of the failure runs: run the tests, read a file, then finish.
FAULT_PLAN = [
    PlannedTurn(thinking="I run the tests first.", tool_calls=[call("run_tests")]),
    PlannedTurn(thinking="Now the module.", tool_calls=[call("read_file", path="path_rules.py")]),
    PlannedTurn(content="That is what the tools told me."),
]


def traffic_line(entry: dict, limit: int = 110) -> str:
    """One line of MCP traffic for print: its direction and the start of the line."""
    arrow = {"c2s": "->", "s2c": "<-", "junk": "<- (not JSON-RPC)"}[entry["dir"]]
    line = entry["line"]
    more = f"... ({len(line):,} characters)" if len(line) > limit else ""
    return f"{arrow} {line[:limit]}{more}"


def server_gone(tools: MCPTools) -> bool:
    """True when no process is left in the server's process group (the reaper's sweep and
    the group's kill have ended them all)."""
    try:
        os.killpg(tools.connection.process.pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:  # a process of another user took the number: not ours
        return True
    return False


@dataclass(frozen=True)
class FaultRun:
    """One scripted run through the failing server: what was refused, the events, and
    whether the server's processes were gone after."""

    fault: str
    refused: dict
    events: list
    gone: bool

    def lines(self, limit: int = 200) -> list[str]:
        """The run in a few lines: refused tools, each call's outcome, the stop (each cut
        to ``limit`` characters)."""
        shown = [f"refused at listing: {name}: {why}" for name, why in self.refused.items()]
        for event in self.events:
            if event["type"] == "tool_result":
                result = event["result"]
                outcome = f"error: {result['error']}" if "error" in result else json.dumps(result)
                shown.append(f"turn {event['turn']} {event['name']}: {outcome[:limit]}")
        stop = self.events[-1]
        shown.append(f"stopped: {stop['reason']}: {stop['detail'][:limit]}")
        return shown


def fault_run(fault: str, *, timeout: float) -> FaultRun:
    """Run ``FAULT_PLAN`` through the server failing as ``fault`` says, with calls that
    may take ``timeout`` seconds, on a fresh copy."""
    with sample_copy() as root:
        try:
            tools = MCPTools(faulty_server_command(fault), cwd=root, timeout=timeout)
        except MCPError as exc:  # the server broke before it could list its tools
            return FaultRun(fault, {"(the server)": str(exc)}, [], True)  # closed by MCPTools
        with tools:
            events = list(agent_events(ScriptedChat(FAULT_PLAN), tools, "Run the tests."))
        return FaultRun(fault, dict(tools.refused), events, server_gone(tools))

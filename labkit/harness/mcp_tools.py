"""Tools from an MCP server, as the loop takes any tools: ``schemas`` and ``invoke``.

The loop does not change for tools that live in another process; only where a tool's
schema comes from and where its call goes. ``MCPTools`` starts the server
(``mcp_client.MCPConnection``), lists its tools once, and:

- turns each MCP tool (``name``, ``description``, ``inputSchema``) into the schema the
  loop offers (``tool_schema_of``: the same conversion each wire format's
  ``tool_schema`` makes for its API). A tool it cannot offer is left out and said why in
  ``refused``: an ``inputSchema`` or ``outputSchema`` that is not a usable JSON Schema
  (``json_schema.schema_problem``: the SDK does not check these), a name the run's API
  refuses (a dot is fine for MCP, not for OpenAI or Anthropic), or a name listed twice.
  A call to a refused tool is a tool error that says why.
- sends each call as ``tools/call``, after checking the arguments against the tool's
  ``inputSchema`` (a call that does not fit never reaches the server: a tool error);
- turns the result into the loop's result dict (``result_of``): ``isError`` becomes
  ``{"error": text}``; ``structuredContent``, checked against the ``outputSchema`` when
  the tool has one (a result that breaks it is a tool error), is the result (an object as
  it is, anything else as ``{"result": ...}``); without it, the text blocks joined are
  ``{"content": ...}`` (other blocks are named, not sent: ``[image: image/png]``).

What can go wrong with the server, and how each ends (the lesson runs each):
a call with no answer within ``timeout``: a tool error (``TimeoutError``) the model
reads, the request cancelled, the server still usable; the server exiting, or breaking
the protocol (garbage on stdout): ``ToolsFailed``, which ends the run as
``tools_failed``; an error response: a tool error.
"""

from __future__ import annotations

import copy
import os
from typing import Any

from .contracts import ToolsFailed, WireFormat
from .formats import FORMATS, OLLAMA
from .json_schema import schema_problem, value_problem
from .mcp_client import (
    CALL_TIMEOUT,
    START_TIMEOUT,
    MCPClosed,
    MCPConnection,
    MCPError,
    MCPTimeout,
)
from .toolset import shown


def tool_schema_of(mcp_tool: dict, wire: WireFormat) -> dict:
    """One MCP tool as ``wire``'s API declares a tool: its name (``ValueError`` when that
    API refuses it), its description (else its title, else ""), and its ``inputSchema``
    as the parameters, copied, with ``"properties": {}`` added when it has none (OpenAI
    refuses an object schema without them)."""
    parameters = copy.deepcopy(mcp_tool["inputSchema"])
    parameters.setdefault("properties", {})
    description = mcp_tool.get("description") or mcp_tool.get("title") or ""
    return wire.tool_schema(mcp_tool["name"], description, parameters)


def tool_problem(mcp_tool: Any, wire: WireFormat) -> str | None:
    """Why an MCP tool cannot be offered through ``wire``, or None."""
    if not isinstance(mcp_tool, dict) or not isinstance(mcp_tool.get("name"), str):
        return "it is not an object with a name"
    description = mcp_tool.get("description")
    if description is not None and not isinstance(description, str):
        return "its description is not text"
    problem = wire.tool_name_problem(mcp_tool["name"])
    if problem:
        return problem
    for key, at_top in (("inputSchema", True), ("outputSchema", False)):
        if key in mcp_tool or at_top:
            problem = schema_problem(mcp_tool.get(key), object_at_top=at_top)
            if problem:
                return f"its {key} is not a usable JSON Schema: {problem}"
    return None


class MCPTools:
    """The tools of one MCP server, started with ``command`` in ``cwd`` (the run's copy).

    ``wire_format``: the API the run's model speaks, whose rules for names apply.
    ``timeout``: seconds a call may take before it is cancelled; ``start_timeout``: seconds
    the server has to answer ``server/discover``. Close it (``with``):
    that ends the server and everything it started.
    """

    def __init__(
        self,
        command: list[str],
        *,
        cwd: str | os.PathLike[str],
        wire_format: str = "ollama",
        timeout: float = CALL_TIMEOUT,
        start_timeout: float = START_TIMEOUT,
    ) -> None:
        self.connection = MCPConnection(
            command, cwd=cwd, timeout=timeout, start_timeout=start_timeout
        )
        try:
            listed = self.connection.list_tools()
        except MCPError:
            self.connection.close()
            raise
        wire = FORMATS[wire_format]
        self.tools: dict[str, dict] = {}
        self.refused: dict[str, str] = {}
        for number, mcp_tool in enumerate(listed, start=1):
            name = mcp_tool.get("name") if isinstance(mcp_tool, dict) else None
            label = name if isinstance(name, str) else f"tool {number}"
            problem = tool_problem(mcp_tool, wire)
            if problem is None and name in self.tools:
                problem = "it is listed twice"
            if problem:
                self.refused[label] = problem
            else:
                self.tools[name] = mcp_tool
        self.schemas = [tool_schema_of(tool, OLLAMA) for tool in self.tools.values()]

    @property
    def traffic(self) -> list[dict[str, str]]:
        """Every JSON-RPC line each way so far (``mcp_client``)."""
        return self.connection.traffic

    def invoke(self, name: str, arguments: dict) -> dict:
        tool = self.tools.get(name) if isinstance(name, str) else None
        if tool is None:
            why = f" (it was refused: {self.refused[name]})" if name in self.refused else ""
            raise ValueError(
                f"unknown tool {shown(name)}{why}; the tools are: {', '.join(self.tools)}"
            )
        problem = value_problem(arguments, tool["inputSchema"])
        if problem:
            raise TypeError(f"the arguments for {name} do not fit its inputSchema: {problem}")
        try:
            reply = self.connection.call_tool(name, arguments)
        except MCPTimeout as exc:
            raise TimeoutError(str(exc)) from None
        except MCPClosed as exc:
            raise ToolsFailed(f"the MCP server cannot be used any more: {exc}") from None
        except MCPError as exc:
            raise ValueError(f"the MCP server refused the call: {exc}") from None
        return result_of(tool, reply)

    def close(self) -> None:
        self.connection.close()

    def __enter__(self) -> MCPTools:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def result_of(tool: dict, reply: dict) -> dict:
    """The loop's result for one ``tools/call`` result (rules in the module's docstring);
    a result the model must read as an error raises ``ValueError`` with its text."""
    blocks = reply.get("content", [])
    if not isinstance(blocks, list) or not all(isinstance(b, dict) for b in blocks):
        raise ValueError(f"the server's result for {tool['name']} has no list of content blocks")
    text = "\n".join(_block_text(block) for block in blocks)
    if reply.get("isError") is True:
        raise ValueError(text or f"{tool['name']} failed and gave no text")
    structured = reply.get("structuredContent")
    if "outputSchema" in tool:
        if structured is None:
            raise ValueError(
                f"{tool['name']} promised a result that fits its outputSchema but sent no "
                "structuredContent"
            )
        problem = value_problem(structured, tool["outputSchema"])
        if problem:
            raise ValueError(
                f"the result of {tool['name']} does not fit its outputSchema ({problem}); "
                "it was not used"
            )
    if structured is not None:
        return structured if isinstance(structured, dict) else {"result": structured}
    return {"content": text}


def _block_text(block: dict) -> str:
    """A content block as the model reads it: text as it is, anything else named."""
    if block.get("type") == "text":
        return str(block.get("text", ""))
    kind = block.get("mimeType") or block.get("uri") or "no type given"
    return f"[{block.get('type', 'block')}: {kind}]"

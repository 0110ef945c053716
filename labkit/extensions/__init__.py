"""What the course builds with third-party libraries beside the harness (which uses the
standard library only): ``mcp_server.py``, the course's MCP server, written with the
official ``mcp`` SDK. Each module imports its library itself, so importing labkit never
loads one.
"""

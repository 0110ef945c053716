"""What a tool call costs when it goes to another process: through the course's MCP server
over stdio, and through a command hook, each against the same call made locally.

One ``read_file`` of the sample's module, the same arguments each time, measured in one
run on one machine:

- local: ``RepoTools.invoke`` in this process;
- MCP: ``MCPTools.invoke`` to the course's SDK server (``labkit.extensions.mcp_server``),
  started once: a JSON-RPC line each way, the server's own validation, our checks of the
  arguments and of the result against its ``outputSchema``;
- hook: the local call behind one ``before_tool`` command hook, the lesson's
  ``protect_tests`` (a process per call: the interpreter, the reaper, labkit's import);
- hook, bare: the same behind a hook that is a standard-library file run with ``-I -S``
  (the least a Python command hook costs).

Prints the median time per call of each and its ratio to the local call, and the one-off
cost of starting the server (to its ``server/discover`` answer), as a ratio too. Timings
vary from machine to machine; the ratios, taken in one run, say what the extension costs.

Run: python bench/extension_calls.py
"""

import statistics
import sys
import tempfile
import time
from pathlib import Path

from labkit import RepoTools, sample_copy
from labkit.harness.hooks import CommandHook, HookSet
from labkit.harness.mcp_tools import MCPTools
from labkit.lessons.hook_programs import hook_command
from labkit.recording.harness_setup import MCP_SERVER

CALLS = {"local": 400, "MCP": 200, "hook": 15, "hook, bare": 30}
ARGUMENTS = {"path": "path_rules.py"}
BARE_HOOK = "import json, sys\njson.load(sys.stdin)\n"


def median_seconds(call, times: int) -> float:
    samples = []
    for _ in range(times):
        start = time.perf_counter()
        call()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def behind(hooks: HookSet, tools: RepoTools):
    """The local call as the loop makes it behind a before_tool hook."""

    def call():
        event = {"turn": 1, "tool": "read_file", "arguments": ARGUMENTS}
        [decision] = hooks.run("before_tool", event)
        assert decision.decision == "allow", decision
        tools.invoke("read_file", ARGUMENTS)

    return call


def main() -> None:
    with sample_copy() as root, tempfile.TemporaryDirectory() as folder:
        local = RepoTools(root)
        bare = Path(folder) / "bare_hook.py"
        bare.write_text(BARE_HOOK)
        hook = CommandHook("protect", ["before_tool"], command=hook_command("protect_tests"))
        bare_hook = CommandHook(
            "bare", ["before_tool"], command=[sys.executable, "-I", "-S", str(bare)]
        )
        start = time.perf_counter()
        with MCPTools(MCP_SERVER, cwd=root) as mcp:
            started = time.perf_counter() - start
            assert (
                mcp.invoke("read_file", ARGUMENTS)["content"]
                == local.invoke("read_file", ARGUMENTS)["content"]
            )
            seconds = {
                "local": median_seconds(
                    lambda: local.invoke("read_file", ARGUMENTS), CALLS["local"]
                ),
                "MCP": median_seconds(lambda: mcp.invoke("read_file", ARGUMENTS), CALLS["MCP"]),
                "hook": median_seconds(behind(HookSet([hook], root), local), CALLS["hook"]),
                "hook, bare": median_seconds(
                    behind(HookSet([bare_hook], root), local), CALLS["hook, bare"]
                ),
            }
    base = seconds["local"]
    print("read_file of path_rules.py, median time per call (one run, this machine):")
    for name, value in seconds.items():
        print(f"  {name:11} {value * 1000:9.3f} ms  {value / base:8.0f}x the local call")
    print(f"  starting the MCP server: {started:.2f} s, {started / seconds['MCP']:.0f} MCP calls")


if __name__ == "__main__":
    main()

"""What lesson 12's sandbox adds to a call: a sandboxed ``run_tests`` (and a bare
``python -c pass`` through ``run_command``) against the same call without it, measured in one
run, the two kinds of call interleaved so that the machine's other load falls on both alike.

Prints, for each call, the median wall time without and with the sandbox (workspace-write,
default limits), the ratio, and the milliseconds added; and the CPU seconds the sandboxed
call's processes used against the plain one's (children's time, less sensitive to load).

Run: python bench/sandbox.py [--runs 15]
"""

import argparse
import os
import statistics
import time

from labkit import sample_copy
from labkit.harness.sandbox import Sandbox
from labkit.harness.shell import ShellTools


def children_cpu() -> float:
    times = os.times()
    return times.children_user + times.children_system


def measure(runs: int) -> None:
    box = Sandbox("workspace-write")
    box.check()
    calls = {
        "run_tests": ("run_tests", {}),
        "python -c pass": ("run_command", {"command": ["python", "-c", "pass"]}),
    }
    with sample_copy() as copy:
        toolsets = {"plain": ShellTools(copy), "sandboxed": ShellTools(copy, sandbox=box)}
        for label, (name, arguments) in calls.items():
            wall = {kind: [] for kind in toolsets}
            cpu = dict.fromkeys(toolsets, 0.0)
            for _ in range(runs):
                for kind, tools in toolsets.items():
                    start, before = time.perf_counter(), children_cpu()
                    tools.invoke(name, arguments)
                    wall[kind].append(time.perf_counter() - start)
                    cpu[kind] += children_cpu() - before
            plain, boxed = (statistics.median(wall[k]) for k in ("plain", "sandboxed"))
            print(
                f"{label:15} plain {plain * 1000:7.1f} ms | sandboxed {boxed * 1000:7.1f} ms | "
                f"x{boxed / plain:.2f} (+{(boxed - plain) * 1000:.0f} ms) | CPU per call "
                f"{cpu['plain'] / runs * 1000:.0f} -> {cpu['sandboxed'] / runs * 1000:.0f} ms"
            )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    measure(parser.parse_args().runs)

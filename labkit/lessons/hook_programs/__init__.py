"""Lesson 11's hook programs: each a module run as a command hook (``harness/hooks.py``)
with ``python -I -m labkit.lessons.hook_programs.NAME``, its event as JSON on stdin.

- ``log_calls``: appends each event it gets, with the time, to a log file (``log_calls LOG``);
- ``protect_tests``: says no (exit 2) to an edit of a test file;
- ``check_tests``: at the stop, runs the independent check and says no while it fails;
- ``gate_policy``: lesson 07's permission gate as a ``before_tool`` hook (``gate_policy
  POLICY_JSON``): allow passes, deny says no, and ask says no too, as a hook has no one
  to ask.

``hook_command(name, *arguments)`` is the command that runs one.
"""

from __future__ import annotations

PROGRAMS = ("log_calls", "protect_tests", "check_tests", "gate_policy")


def hook_command(name: str, *arguments: str) -> list[str]:
    """The command that runs the hook program ``name`` (isolated: ``-I`` keeps the folder
    it runs in, the model's copy, off its import path)."""
    if name not in PROGRAMS:
        raise ValueError(f"a hook program is one of {PROGRAMS}, not {name!r}")
    return ["python", "-I", "-m", f"{__name__}.{name}", *arguments]

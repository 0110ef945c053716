"""What the lessons use beside the harness: their runs, their failure cases and their widgets.

- ``lesson.py``: the model a lesson's parameters choose (a replay, or live Ollama) and
  one recorded run of it, with where its time went;
- ``failures.py``: the runs of lesson 05 that do not end in a clean repair;
- ``steps.py`` and ``render.py``: pure functions that turn a recorded turn or a run's
  events into steps and HTML (the budget table of lesson 08 too); ``widgets.py`` and
  ``gate_widget.py``: the ipywidgets over them (loaded only when used), the second being
  the Approve / Deny panel of lesson 07; ``trace.py``: a run's events as lines of text;
- ``mcp_traffic.py``: a recorded MCP run's replies beside its JSON-RPC lines (lesson 11),
  ``extension.py``, ``faulty_mcp_server.py`` and ``hook_programs/``: lesson 11's runs, a
  server that fails on purpose, and the hook programs it configures.
"""

"""A language server that misbehaves (never answers, exits, breaks the protocol, floods or
points outside the workspace) ends a symbols call in a tool error or a small, confined
result, within its time, and leaves no process behind."""

import sys
import time
from pathlib import Path

import pytest

from labkit.harness import lsp_client
from labkit.harness.loop import call_tool
from labkit.harness.symbols import SymbolTools

SERVER = Path(__file__).with_name("hostile_lsp_server.py")
ASK = {"symbol": "between", "path": "ledger/models.py", "line": 1}
FAILURES = {
    "no_answer": "could not start",
    "exit_at_start": "could not start",
    "garbage_at_start": "could not start",
    "huge_frame": "broke the protocol",
    "deep_json": "broke the protocol",
    "wrong_ids": "try again, or use grep",
    "crash_on_request": "the next symbols call starts it again",
    "silent_after_start": "try again, or use grep",
}


@pytest.fixture(autouse=True)
def short_grace(monkeypatch):
    """A server that does not answer shutdown is stopped after 0.3 s, not 2: the same path."""
    monkeypatch.setattr(lsp_client, "CLOSE_GRACE", 0.3)


def kit_for(mode, root, timeout=0.5):
    """Tools over the hostile server; its failures are waited for ``timeout`` seconds."""
    (root / "ledger").mkdir(exist_ok=True)
    (root / "ledger" / "models.py").write_text("def between():\n    pass\n")
    command = [sys.executable, "-I", str(SERVER), mode, str(root)]
    return SymbolTools(root, server=command, timeout=timeout, start_timeout=timeout)


@pytest.mark.parametrize("mode", sorted(FAILURES))
def test_a_misbehaving_server_is_a_tool_error_in_bounded_time(mode, tmp_path, safety_tally):
    kit = kit_for(mode, tmp_path)
    started = time.monotonic()
    result = call_tool(kit, "references", ASK)
    process = kit.connection.process if kit.connection is not None else None
    kit.close()
    assert FAILURES[mode] in result["error"], result
    assert time.monotonic() - started < 15
    assert process is None or process.poll() is not None
    safety_tally["hostile language servers"] += 1


def test_hostile_locations_are_capped_and_nothing_outside_is_shown(tmp_path, safety_tally):
    # an answer of 5,000 locations comes whole: on a loaded machine it takes longer than 0.5 s
    with kit_for("hostile_locations", tmp_path, timeout=10) as kit:
        result = call_tool(kit, "references", ASK)
    assert result["count"] == 5000 and len(result["references"]) == 20
    # 6 locations outside (a "junk" string and a None are not locations: skipped, not counted)
    assert result["more"] == "and 4980 more" and result["outside"] == 6
    assert all(place["path"] == "ledger/models.py" for place in result["references"])
    assert "/etc" not in str(result) and str(tmp_path) not in str(result)
    safety_tally["hostile language servers"] += 1

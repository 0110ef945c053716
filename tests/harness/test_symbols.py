"""The symbols tools over a real language server (ty): exact references across files, a
change on disk seen by the next question, and every failure a tool error, never a hang."""

import pytest

from labkit.harness.loop import call_tool
from labkit.harness.lsp_client import LspConnection, LspTimeout, encode, read_message
from labkit.harness.project import PROJECT
from labkit.harness.sample import sample_copy
from labkit.harness.symbols import SymbolTools, find_language_server


@pytest.fixture(scope="module")
def kit():
    with sample_copy(PROJECT) as root, SymbolTools(root) as tools:
        yield tools


def test_ty_is_installed_beside_this_python():
    assert find_language_server()[1] == "server"


def test_references_find_every_caller_of_the_method_and_no_namesake(kit):
    where = {"symbol": "between", "path": "ledger/models.py", "line": 98}
    found = call_tool(kit, "references", where)
    assert found == {
        "symbol": "between",
        "count": 3,
        "references": [
            {"path": "ledger/budget.py", "line": 51,
             "text": "days = ledger.between(first, last + dt.timedelta(days=1))"},
            {"path": "ledger/models.py", "line": 98,
             "text": "def between(self, start: dt.date, end: dt.date) -> list[Transaction]:"},
            {"path": "ledger/reports.py", "line": 25,
             "text": "transactions = ledger.between(first, last)"},
        ],
    }  # fmt: skip


def test_definition_by_name_hover_and_diagnostics(kit):
    found = call_tool(kit, "definition", {"symbol": "parse_date"})
    assert found["definitions"] == [
        {"path": "ledger/dates.py", "line": 22, "text": "def parse_date(text: str) -> dt.date:"}
    ]
    hover = call_tool(kit, "hover", {"symbol": "between", "path": "ledger/models.py", "line": 98})
    assert "-> list[Transaction]" in hover["hover"] and "both days included" in hover["hover"]
    assert call_tool(kit, "diagnostics", {"path": "ledger/budget.py"})["count"] == 0
    assert "error" in call_tool(kit, "references", {"symbol": "no_such_name_anywhere"})


def test_a_file_written_on_disk_is_seen_by_the_next_question(kit):
    (kit.root / "ledger" / "extra.py").write_text(
        "from .dates import parse_date\n\nDAY = parse_date('2024-01-01')\nBAD = undefined_name\n"
    )
    found = call_tool(kit, "references", {"symbol": "parse_date"})
    assert ("ledger/extra.py", 3) in [(p["path"], p["line"]) for p in found["references"]]
    diagnostics = call_tool(kit, "diagnostics", {"path": "ledger/extra.py"})
    assert [d["line"] for d in diagnostics["diagnostics"]] == [4]
    assert "undefined_name" in diagnostics["diagnostics"][0]["message"]


def test_a_missing_server_is_a_tool_error_naming_the_install(tmp_path):
    kit = SymbolTools(tmp_path, server=["/nonexistent/ty", "server"])
    assert "pip install ty==1.0.0" in call_tool(kit, "definition", {"symbol": "x"})["error"]


def test_a_request_past_its_time_raises_and_a_frame_round_trips(tmp_path):
    import io

    assert read_message(io.BytesIO(encode({"id": 1, "result": "é"}))) == {"id": 1, "result": "é"}
    assert read_message(io.BytesIO(b"")) is None
    with LspConnection(find_language_server(), root=tmp_path) as connection:
        with pytest.raises(LspTimeout):
            connection.request("workspace/symbol", {"query": "x"}, timeout=0.000001)
        assert connection.request("shutdown") is None


def test_a_decorated_definition_found_by_name_points_at_its_name(kit):
    found = call_tool(kit, "definition", {"symbol": "Money"})
    assert found["definitions"] == [{"path": "ledger/money.py", "line": 16, "text": "class Money:"}]
    references = call_tool(kit, "references", {"symbol": "from_row"})
    assert [(p["path"], p["line"]) for p in references["references"]] == [
        ("ledger/models.py", 38), ("ledger/storage.py", 50),
    ]  # fmt: skip

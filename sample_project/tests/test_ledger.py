import datetime as dt
from pathlib import Path

import pytest

from ledger.budget import check_budget, parse_budget
from ledger.importers import detect_importer, import_text
from ledger.models import Account, Ledger, LedgerError, Transaction
from ledger.money import Money
from ledger.reports import monthly_summary
from ledger.rules import apply_rules, parse_rules
from ledger.storage import load_csv, load_json, save_csv, save_json

EXPORT = "Buchungstag;Empfaenger;Verwendungszweck;Betrag\n01.03.2024;Supermarkt Nord;Einkauf;-45,20\n02.03.2024;Arbeitgeber GmbH;Gehalt;2.500,00\n15.03.2024;Supermarkt Nord;Einkauf;-380,00\n01.04.2024;Supermarkt Nord;Einkauf;-12,00\n"


@pytest.fixture
def ledger():
    book = Ledger()
    book.open_account(Account("giro"))
    for t in import_text(EXPORT, "giro"):
        book.add(t)
    return book


def test_import_detects_the_bank():
    assert detect_importer(EXPORT).name == "semicolon"


def test_duplicates_are_skipped(ledger):
    again = import_text(EXPORT, "giro")
    assert [ledger.add(t) for t in again] == [False, False, False, False]


def test_unknown_account_is_refused(ledger):
    with pytest.raises(LedgerError):
        ledger.add(Transaction(dt.date(2024, 3, 1), "cash", Money(-100), "kiosk"))


def test_rules_then_budget(ledger):
    changed = apply_rules(ledger, parse_rules("payee ~ supermarkt => groceries\npayee ~ arbeitgeber => salary"))
    assert changed == 4
    over = check_budget(ledger, parse_budget("groceries: 400.00"), "2024-03")
    assert [o.excess.cents for o in over] == [2520]


def test_monthly_summary(ledger):
    summary = monthly_summary(ledger, 2024, 3)
    assert summary["net"] == Money(250000 - 4520 - 38000)


def test_csv_and_json_round_trip(ledger, tmp_path: Path):
    save_csv(ledger, tmp_path / "l.csv")
    save_json(ledger, tmp_path / "l.json")
    assert load_csv(tmp_path / "l.csv").transactions == ledger.transactions
    assert load_json(tmp_path / "l.json").transactions == ledger.transactions

import datetime as dt

import pytest

from ledger.models import Account, Ledger, Transaction
from ledger.money import Money
from ledger.reports import balance_sheet, largest_expenses, monthly_summary, render_month


@pytest.fixture
def ledger():
    book = Ledger()
    book.open_account(Account("giro"))
    for day, cents, payee, category in [
        (dt.date(2024, 2, 10), -500, "Bakery", "food"),
        (dt.date(2024, 2, 29), -1500, "Bakery", "food"),
        (dt.date(2024, 3, 1), 250000, "Employer", "salary"),
        (dt.date(2024, 3, 12), -4520, "Supermarket", "food"),
        (dt.date(2024, 3, 31), -9900, "Landlord", "rent"),
        (dt.date(2024, 4, 1), -700, "Bakery", "food"),
    ]:
        book.add(Transaction(day, "giro", Money(cents), payee, category=category))
    return book


def test_a_month_includes_its_first_and_last_day(ledger):
    summary = monthly_summary(ledger, 2024, 3)
    assert summary["count"] == 3
    assert summary["spending"] == Money(-4520 - 9900)


def test_render_month_lists_every_category(ledger):
    text = render_month(monthly_summary(ledger, 2024, 2))
    assert text.startswith("2024-02: income 0.00 EUR, spending")
    assert "food" in text


def test_balance_sheet_on_a_day(ledger):
    sheet = balance_sheet(ledger, dt.date(2024, 3, 12))
    assert sheet.splitlines()[0] == "Balances on 12 March 2024"
    assert "2,434.80 EUR" in sheet


def test_largest_expenses_come_first(ledger):
    assert [t.payee for t in largest_expenses(ledger, 2)] == ["Landlord", "Supermarket"]

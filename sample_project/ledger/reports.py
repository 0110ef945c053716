"""Reports: monthly summaries, category totals and account balances as text tables."""

from __future__ import annotations

import datetime as dt
from collections import defaultdict

from .dates import format_date, month_range, months_between, parse_date
from .models import Ledger, Transaction
from .money import Money, total


def category_totals(transactions: list[Transaction], currency: str = "EUR") -> dict[str, Money]:
    """The sum of each category's transactions, largest spending first."""
    grouped: dict[str, list[Money]] = defaultdict(list)
    for t in transactions:
        grouped[t.category].append(t.amount)
    totals = {category: total(amounts, currency) for category, amounts in grouped.items()}
    return dict(sorted(totals.items(), key=lambda item: item[1].cents))


def monthly_summary(ledger: Ledger, year: int, month: int) -> dict[str, object]:
    """Income, spending and the net of one month, with totals per category."""
    first, last = month_range(year, month)
    transactions = ledger.between(first, last)
    income = total([t.amount for t in transactions if not t.is_expense()])
    spending = total([t.amount for t in transactions if t.is_expense()])
    return {
        "month": f"{year}-{month:02d}",
        "income": income,
        "spending": spending,
        "net": income + spending,
        "categories": category_totals(transactions),
        "count": len(transactions),
    }


def summary_between(ledger: Ledger, start: str, end: str) -> list[dict[str, object]]:
    """A monthly_summary for each month from start to end (dates as text)."""
    first, last = parse_date(start), parse_date(end)
    return [monthly_summary(ledger, y, m) for y, m in months_between(first, last)]


def format_table(rows: list[list[str]], headers: list[str]) -> str:
    """A plain-text table with columns padded to their widest cell."""
    widths = [len(h) for h in headers]
    for row in rows:
        widths = [max(w, len(cell)) for w, cell in zip(widths, row)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(headers, widths))]
    lines.append("  ".join("-" * w for w in widths))
    for row in rows:
        lines.append("  ".join(cell.rjust(w) if i else cell.ljust(w) for i, (cell, w) in enumerate(zip(row, widths))))
    return "\n".join(lines)


def balance_sheet(ledger: Ledger, on: dt.date) -> str:
    """Every account's balance at the end of a day, as a table."""
    rows = [
        [account.label(), str(ledger.balance(name, on))]
        for name, account in sorted(ledger.accounts.items())
    ]
    return f"Balances on {format_date(on, 'long')}\n" + format_table(rows, ["account", "balance"])


def largest_expenses(ledger: Ledger, count: int = 5) -> list[Transaction]:
    """The biggest single expenses, biggest first."""
    expenses = [t for t in ledger.transactions if t.is_expense()]
    return sorted(expenses, key=lambda t: t.amount.cents)[:count]


def render_month(summary: dict[str, object]) -> str:
    """One month's summary as text."""
    categories = summary["categories"]
    assert isinstance(categories, dict)
    rows = [[name, str(amount)] for name, amount in categories.items()]
    head = (
        f"{summary['month']}: income {summary['income']}, spending {summary['spending']}, "
        f"net {summary['net']} ({summary['count']} transactions)"
    )
    return head + "\n" + format_table(rows, ["category", "total"])

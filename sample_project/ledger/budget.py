"""Monthly budgets per category and the warnings when spending goes over them."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from .dates import month_range, parse_date, parse_month
from .models import Ledger
from .money import Money, parse_amount, total


@dataclass(frozen=True)
class BudgetLine:
    category: str
    limit: Money


@dataclass(frozen=True)
class Overspend:
    """A category whose spending in a month went past its budget line."""

    category: str
    month: str
    limit: Money
    spent: Money

    @property
    def excess(self) -> Money:
        return self.spent - self.limit

    def message(self) -> str:
        return f"{self.month}: {self.category} over budget by {self.excess} (spent {self.spent} of {self.limit})"


def parse_budget(text: str) -> list[BudgetLine]:
    """Lines such as 'groceries: 400.00' give a monthly limit per category."""
    lines = []
    for raw in text.splitlines():
        raw = raw.strip()
        if not raw or raw.startswith("#"):
            continue
        category, _, amount = raw.partition(":")
        lines.append(BudgetLine(category.strip(), parse_amount(amount)))
    return lines


def spent_in(ledger: Ledger, category: str, year: int, month: int) -> Money:
    """What was spent on a category in a month, as a positive amount."""
    first, last = month_range(year, month)
    days = ledger.between(first, last + dt.timedelta(days=1))
    amounts = [t.amount for t in days if t.category == category and t.is_expense()]
    return -total(amounts)


def check_budget(ledger: Ledger, budget: list[BudgetLine], month: str) -> list[Overspend]:
    """Every budget line that the month's spending went past."""
    year, number = parse_month(month)
    found = []
    for line in budget:
        spent = spent_in(ledger, line.category, year, number)
        if spent > line.limit:
            found.append(Overspend(line.category, month, line.limit, spent))
    return found


def budget_since(ledger: Ledger, budget: list[BudgetLine], since: str) -> list[Overspend]:
    """Overspending in every month from `since` to the last transaction."""
    start = parse_date(since)
    if not ledger.transactions:
        return []
    end = ledger.transactions[-1].day
    found = []
    year, month = start.year, start.month
    while (year, month) <= (end.year, end.month):
        found.extend(check_budget(ledger, budget, f"{year}-{month:02d}"))
        month += 1
        if month == 13:
            year, month = year + 1, 1
    return found


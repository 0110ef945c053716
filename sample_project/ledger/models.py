"""Accounts, transactions and the ledger that holds them."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from .dates import parse_date
from .money import Money, parse_amount, total


@dataclass
class Account:
    """A bank account, a card or a cash wallet."""

    name: str
    kind: str = "bank"
    currency: str = "EUR"
    opening_balance: Money = field(default_factory=lambda: Money(0))

    def label(self) -> str:
        return f"{self.name} ({self.kind})"


@dataclass
class Transaction:
    """One movement of money on one account."""

    day: dt.date
    account: str
    amount: Money
    payee: str
    memo: str = ""
    category: str = "uncategorised"
    tags: set[str] = field(default_factory=set)

    @classmethod
    def from_row(cls, row: dict[str, str]) -> "Transaction":
        """Build a transaction from a CSV row with date, account, amount, payee columns."""
        return cls(
            day=parse_date(row["date"]),
            account=row["account"],
            amount=parse_amount(row["amount"], row.get("currency", "EUR")),
            payee=row["payee"].strip(),
            memo=row.get("memo", "").strip(),
            category=row.get("category", "uncategorised") or "uncategorised",
        )

    def is_expense(self) -> bool:
        return self.amount.is_negative()

    def key(self) -> tuple:
        """What makes two transactions the same one (for de-duplication)."""
        return (self.day, self.account, self.amount.cents, self.payee.lower())


class LedgerError(Exception):
    """A transaction that does not fit the ledger (unknown account, wrong currency)."""


@dataclass
class Ledger:
    """All accounts and their transactions, kept in date order."""

    accounts: dict[str, Account] = field(default_factory=dict)
    transactions: list[Transaction] = field(default_factory=list)

    def open_account(self, account: Account) -> None:
        if account.name in self.accounts:
            raise LedgerError(f"account {account.name!r} already exists")
        self.accounts[account.name] = account

    def add(self, transaction: Transaction) -> bool:
        """Add a transaction; return False if the same one is already there."""
        account = self.accounts.get(transaction.account)
        if account is None:
            raise LedgerError(f"unknown account {transaction.account!r}: open it first")
        if transaction.amount.currency != account.currency:
            raise LedgerError(
                f"{transaction.amount.currency} transaction on {account.currency} account"
            )
        if any(t.key() == transaction.key() for t in self.transactions):
            return False
        self.transactions.append(transaction)
        self.transactions.sort(key=lambda t: (t.day, t.account, t.payee))
        return True

    def balance(self, account_name: str, on: dt.date | None = None) -> Money:
        """The balance of an account at the end of a day (today's if none is given)."""
        account = self.accounts[account_name]
        amounts = [
            t.amount
            for t in self.transactions
            if t.account == account_name and (on is None or t.day <= on)
        ]
        return account.opening_balance + total(amounts, account.currency)

    def between(self, start: dt.date, end: dt.date) -> list[Transaction]:
        """Transactions from start to end, both days included."""
        return [t for t in self.transactions if start <= t.day < end]

    def by_category(self, category: str) -> list[Transaction]:
        return [t for t in self.transactions if t.category == category]

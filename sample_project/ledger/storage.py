"""Reading and writing a ledger as CSV and JSON files."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from .dates import format_date, parse_date
from .models import Account, Ledger, Transaction
from .money import Money

COLUMNS = ["date", "account", "amount", "currency", "payee", "memo", "category"]


class StorageError(Exception):
    """A ledger file that cannot be read back."""


def save_csv(ledger: Ledger, path: Path) -> int:
    """Write every transaction to a CSV file; return how many rows were written."""
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=COLUMNS)
        writer.writeheader()
        for t in ledger.transactions:
            writer.writerow(
                {
                    "date": format_date(t.day),
                    "account": t.account,
                    "amount": f"{t.amount.cents / 100:.2f}",
                    "currency": t.amount.currency,
                    "payee": t.payee,
                    "memo": t.memo,
                    "category": t.category,
                }
            )
    return len(ledger.transactions)


def load_csv(path: Path, ledger: Ledger | None = None) -> Ledger:
    """Read transactions from a CSV file, opening accounts that are not yet known."""
    ledger = ledger or Ledger()
    with path.open(newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        missing = set(COLUMNS[:3]) - set(reader.fieldnames or [])
        if missing:
            raise StorageError(f"{path}: missing columns {sorted(missing)}")
        for number, row in enumerate(reader, start=2):
            try:
                transaction = Transaction.from_row(row)
            except ValueError as error:
                raise StorageError(f"{path}:{number}: {error}") from None
            if transaction.account not in ledger.accounts:
                ledger.open_account(
                    Account(transaction.account, currency=transaction.amount.currency)
                )
            ledger.add(transaction)
    return ledger


def save_json(ledger: Ledger, path: Path) -> None:
    """Write accounts and transactions to one JSON document."""
    document = {
        "accounts": [
            {
                "name": a.name,
                "kind": a.kind,
                "currency": a.currency,
                "opening_balance": a.opening_balance.cents,
            }
            for a in ledger.accounts.values()
        ],
        "transactions": [
            {
                "date": format_date(t.day),
                "account": t.account,
                "cents": t.amount.cents,
                "currency": t.amount.currency,
                "payee": t.payee,
                "memo": t.memo,
                "category": t.category,
                "tags": sorted(t.tags),
            }
            for t in ledger.transactions
        ],
    }
    path.write_text(json.dumps(document, indent=2), encoding="utf-8")


def load_json(path: Path) -> Ledger:
    """Read a ledger written by save_json."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise StorageError(f"{path}: not JSON ({error})") from None
    ledger = Ledger()
    for a in document.get("accounts", []):
        ledger.open_account(
            Account(a["name"], a["kind"], a["currency"], Money(a["opening_balance"], a["currency"]))
        )
    for t in document.get("transactions", []):
        ledger.add(
            Transaction(
                day=parse_date(t["date"]),
                account=t["account"],
                amount=Money(t["cents"], t["currency"]),
                payee=t["payee"],
                memo=t.get("memo", ""),
                category=t.get("category", "uncategorised"),
                tags=set(t.get("tags", [])),
            )
        )
    return ledger

"""Importers for bank statement exports, each bank with its own columns and date style."""

from __future__ import annotations

import csv
import io
from typing import Iterator, Protocol

from .dates import next_business_day, parse_date
from .models import Transaction
from .money import parse_amount


class Importer(Protocol):
    """Turns the text of one export file into transactions for one account."""

    name: str

    def rows(self, text: str, account: str) -> Iterator[Transaction]: ...


class ImportError_(ValueError):
    """An export that does not look like the bank's format."""


class SemicolonBank:
    """German-style exports: 'Buchungstag;Empfaenger;Verwendungszweck;Betrag' with 31.03.2024 dates."""

    name = "semicolon"

    def rows(self, text: str, account: str) -> Iterator[Transaction]:
        reader = csv.DictReader(io.StringIO(text), delimiter=";")
        for row in reader:
            if "Buchungstag" not in row:
                raise ImportError_("no Buchungstag column: not a semicolon-bank export")
            yield Transaction(
                day=parse_date(row["Buchungstag"]),
                account=account,
                amount=parse_amount(row["Betrag"]),
                payee=row["Empfaenger"].strip(),
                memo=row.get("Verwendungszweck", "").strip(),
            )


class CardStatement:
    """Credit card exports: 'Date,Description,Debit,Credit'; weekend purchases book on Monday."""

    name = "card"

    def rows(self, text: str, account: str) -> Iterator[Transaction]:
        reader = csv.DictReader(io.StringIO(text))
        for row in reader:
            debit, credit = row.get("Debit", "").strip(), row.get("Credit", "").strip()
            if debit and credit:
                raise ImportError_(f"row with both debit and credit: {row}")
            amount = -parse_amount(debit) if debit else parse_amount(credit or "0")
            yield Transaction(
                day=next_business_day(parse_date(row["Date"])),
                account=account,
                amount=amount,
                payee=row["Description"].strip(),
            )


class CompactBank:
    """Fixed-width exports: 8-digit date, 40-character payee, signed amount."""

    name = "compact"

    def rows(self, text: str, account: str) -> Iterator[Transaction]:
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            if len(line) < 50:
                raise ImportError_(f"line {number} is too short for a compact-bank record")
            yield Transaction(
                day=parse_date(line[:8]),
                account=account,
                amount=parse_amount(line[48:].strip()),
                payee=line[8:48].strip(),
            )


IMPORTERS: dict[str, Importer] = {i.name: i for i in (SemicolonBank(), CardStatement(), CompactBank())}


def detect_importer(text: str) -> Importer:
    """Guess the bank from the first line of an export."""
    first = text.splitlines()[0] if text.strip() else ""
    if first.startswith("Buchungstag;"):
        return IMPORTERS["semicolon"]
    if first.startswith("Date,Description"):
        return IMPORTERS["card"]
    if first[:8].isdigit():
        return IMPORTERS["compact"]
    raise ImportError_("unknown export format: first line is " + repr(first[:40]))


def import_text(text: str, account: str) -> list[Transaction]:
    """All transactions in an export, the importer chosen by detect_importer."""
    importer = detect_importer(text)
    if importer.name == "compact":
        return list(importer.rows(text, account))
    return list(importer.rows(text, account))

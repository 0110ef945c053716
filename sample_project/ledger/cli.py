"""The `ledger` command: import, categorise, report and check budgets."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .budget import check_budget, parse_budget
from .dates import parse_date
from .importers import import_text
from .reports import balance_sheet, monthly_summary, render_month
from .rules import apply_rules, load_rules
from .storage import load_csv, save_csv


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ledger", description=__doc__)
    parser.add_argument("--file", type=Path, default=Path("ledger.csv"))
    commands = parser.add_subparsers(dest="command", required=True)

    imp = commands.add_parser("import", help="add a bank export to the ledger")
    imp.add_argument("export", type=Path)
    imp.add_argument("--account", required=True)

    cat = commands.add_parser("categorise", help="apply a rules file")
    cat.add_argument("rules", type=Path)
    cat.add_argument("--overwrite", action="store_true")

    rep = commands.add_parser("report", help="a month's summary")
    rep.add_argument("month", help="2024-03")

    bal = commands.add_parser("balance", help="balances on a day")
    bal.add_argument("day", help="2024-03-31")

    bud = commands.add_parser("budget", help="check a month against a budget file")
    bud.add_argument("budget", type=Path)
    bud.add_argument("month")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    ledger = load_csv(args.file) if args.file.exists() else None
    if args.command == "import":
        from .models import Ledger, Account

        ledger = ledger or Ledger()
        if args.account not in ledger.accounts:
            ledger.open_account(Account(args.account))
        added = sum(ledger.add(t) for t in import_text(args.export.read_text(), args.account))
        save_csv(ledger, args.file)
        print(f"imported {added} new transactions")
        return 0
    if ledger is None:
        print(f"no ledger at {args.file}: import something first", file=sys.stderr)
        return 1
    if args.command == "categorise":
        changed = apply_rules(ledger, load_rules(args.rules), args.overwrite)
        save_csv(ledger, args.file)
        print(f"categorised {changed} transactions")
    elif args.command == "report":
        year, month = (int(x) for x in args.month.split("-"))
        print(render_month(monthly_summary(ledger, year, month)))
    elif args.command == "balance":
        print(balance_sheet(ledger, parse_date(args.day)))
    elif args.command == "budget":
        for over in check_budget(ledger, parse_budget(args.budget.read_text()), args.month):
            print(over.message())
    return 0

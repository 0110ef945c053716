"""ledger: a small personal-finance ledger, the larger sample of lesson 13."""

from .dates import format_date, parse_date
from .models import Account, Ledger, Transaction
from .money import Money, parse_amount

__all__ = ["parse_date", "format_date", "Money", "parse_amount", "Account", "Transaction", "Ledger"]

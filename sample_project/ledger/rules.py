"""Categorisation rules: a payee pattern decides a transaction's category."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from .models import Ledger, Transaction


@dataclass(frozen=True)
class Rule:
    """If the payee (or memo) matches the pattern, the transaction gets the category."""

    pattern: str
    category: str
    field: str = "payee"
    min_cents: int | None = None
    max_cents: int | None = None

    def matches(self, transaction: Transaction) -> bool:
        text = transaction.payee if self.field == "payee" else transaction.memo
        if not re.search(self.pattern, text, flags=re.IGNORECASE):
            return False
        cents = abs(transaction.amount.cents)
        if self.min_cents is not None and cents < self.min_cents:
            return False
        if self.max_cents is not None and cents > self.max_cents:
            return False
        return True


class RuleError(ValueError):
    """A rules file line that is not a rule."""


def parse_rules(text: str) -> list[Rule]:
    """Parse lines such as 'payee ~ (?i)supermarket => groceries' (blank lines and # comments skipped)."""
    rules = []
    for number, line in enumerate(text.splitlines(), start=1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        match = re.match(r"^(payee|memo)\s*~\s*(.+?)\s*=>\s*(\w[\w-]*)$", line)
        if not match:
            raise RuleError(f"line {number}: expected 'payee ~ PATTERN => category'")
        field, pattern, category = match.groups()
        try:
            re.compile(pattern)
        except re.error as error:
            raise RuleError(f"line {number}: bad pattern: {error}") from None
        rules.append(Rule(pattern, category, field))
    return rules


def load_rules(path: Path) -> list[Rule]:
    return parse_rules(path.read_text(encoding="utf-8"))


def categorise(transaction: Transaction, rules: list[Rule]) -> str:
    """The category of the first rule that matches, else the transaction's own."""
    for rule in rules:
        if rule.matches(transaction):
            return rule.category
    return transaction.category


def apply_rules(ledger: Ledger, rules: list[Rule], overwrite: bool = False) -> int:
    """Categorise every transaction in place; return how many changed."""
    changed = 0
    for transaction in ledger.transactions:
        if transaction.category != "uncategorised" and not overwrite:
            continue
        category = categorise(transaction, rules)
        if category != transaction.category:
            transaction.category = category
            changed += 1
    return changed


def suggest_rules(ledger: Ledger, minimum: int = 3) -> list[Rule]:
    """Payees seen at least `minimum` times with one category become rule suggestions."""
    seen: dict[str, dict[str, int]] = {}
    for t in ledger.transactions:
        if t.category == "uncategorised":
            continue
        seen.setdefault(t.payee.lower(), {}).setdefault(t.category, 0)
        seen[t.payee.lower()][t.category] += 1
    suggestions = []
    for payee, categories in sorted(seen.items()):
        if len(categories) == 1:
            (category, count), = categories.items()
            if count >= minimum:
                suggestions.append(Rule(re.escape(payee), category))
    return suggestions

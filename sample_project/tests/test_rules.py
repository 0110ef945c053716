import datetime as dt

from ledger.models import Ledger, Account, Transaction
from ledger.money import Money
from ledger.rules import Rule, categorise, parse_rules, suggest_rules


def test_the_first_matching_rule_wins():
    rules = parse_rules("payee ~ shop => shopping\npayee ~ book => books  # never reached for Bookshop")
    t = Transaction(dt.date(2024, 3, 1), "giro", Money(-100), "Bookshop")
    assert categorise(t, rules) == "shopping"


def test_amount_limits_narrow_a_rule():
    rule = Rule("shop", "big", min_cents=1000)
    assert not rule.matches(Transaction(dt.date(2024, 3, 1), "giro", Money(-100), "Shop"))


def test_rules_are_suggested_from_past_categories():
    book = Ledger()
    book.open_account(Account("giro"))
    for day in (1, 2, 3):
        book.add(Transaction(dt.date(2024, 3, day), "giro", Money(-100), "Cafe", category="coffee"))
    assert suggest_rules(book) == [Rule("cafe", "coffee")]

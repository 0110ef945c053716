import pytest

from ledger.money import AmountError, Money, parse_amount, round_cents, split_evenly, total


@pytest.mark.parametrize(
    "text, cents",
    [("12.34", 1234), ("1,234.56", 123456), ("1.234,56", 123456), ("-12", -1200), ("+3.50", 350), ("€ 7,00", 700)],
)
def test_parse_amount(text, cents):
    assert parse_amount(text).cents == cents


def test_parse_amount_rejects_words():
    with pytest.raises(AmountError):
        parse_amount("twelve")


def test_round_half_away_from_zero():
    assert (round_cents(2.5), round_cents(-2.5)) == (3, -3)


def test_split_evenly_adds_up():
    parts = split_evenly(Money(1000), 3)
    assert [p.cents for p in parts] == [334, 333, 333]
    assert total(parts) == Money(1000)


def test_mixing_currencies_fails():
    with pytest.raises(ValueError):
        Money(1, "EUR") + Money(1, "USD")

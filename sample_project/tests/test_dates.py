import datetime as dt

import pytest

from ledger.dates import DateError, format_date, month_range, months_between, next_business_day, parse_date, parse_month


@pytest.mark.parametrize("text", ["2024-03-31", "31.03.2024", "31/03/2024", "20240331", " 2024-03-31 "])
def test_parse_date_accepts_every_format(text):
    assert parse_date(text) == dt.date(2024, 3, 31)


def test_parse_date_rejects_nonsense():
    with pytest.raises(DateError):
        parse_date("yesterday")
    with pytest.raises(DateError):
        parse_date("2024-02-30")


def test_format_date_long():
    assert format_date(dt.date(2024, 3, 5), "long") == "5 March 2024"


def test_month_range_december():
    assert month_range(2023, 12) == (dt.date(2023, 12, 1), dt.date(2023, 12, 31))


def test_months_between_crosses_a_year():
    assert months_between(dt.date(2023, 11, 5), dt.date(2024, 1, 2)) == [(2023, 11), (2023, 12), (2024, 1)]


def test_parse_month_words():
    assert parse_month("March 2024") == (2024, 3)


def test_weekend_transfer_books_on_monday():
    assert next_business_day(dt.date(2024, 3, 30)) == dt.date(2024, 4, 1)

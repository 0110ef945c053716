"""Dates as they appear in bank statements, budgets and reports."""

from __future__ import annotations

import datetime as dt
import re

ISO = re.compile(r"^(\d{4})-(\d{2})-(\d{2})$")
EUROPEAN = re.compile(r"^(\d{1,2})[./](\d{1,2})[./](\d{4})$")
COMPACT = re.compile(r"^(\d{4})(\d{2})(\d{2})$")

MONTH_NAMES = [
    "january", "february", "march", "april", "may", "june",
    "july", "august", "september", "october", "november", "december",
]


class DateError(ValueError):
    """A date string that none of the known formats accepts."""


def parse_date(text: str) -> dt.date:
    """Parse a date written as 2024-03-31, 31.03.2024, 31/03/2024 or 20240331."""
    text = text.strip()
    for pattern, order in ((ISO, "ymd"), (EUROPEAN, "dmy"), (COMPACT, "ymd")):
        match = pattern.match(text)
        if match:
            parts = dict(zip(order, (int(g) for g in match.groups())))
            try:
                return dt.date(parts["y"], parts["m"], parts["d"])
            except ValueError as error:
                raise DateError(f"{text!r}: {error}") from None
    raise DateError(f"{text!r} is not a date (try 2024-03-31)")


def format_date(day: dt.date, style: str = "iso") -> str:
    """Write a date back out, in ISO form or the long form used by reports."""
    if style == "iso":
        return day.isoformat()
    if style == "long":
        return f"{day.day} {MONTH_NAMES[day.month - 1].capitalize()} {day.year}"
    raise ValueError(f"unknown date style {style!r}")


def month_range(year: int, month: int) -> tuple[dt.date, dt.date]:
    """The first and last day of a month."""
    first = dt.date(year, month, 1)
    if month == 12:
        last = dt.date(year, 12, 31)
    else:
        last = dt.date(year, month + 1, 1) - dt.timedelta(days=1)
    return first, last


def months_between(start: dt.date, end: dt.date) -> list[tuple[int, int]]:
    """Every (year, month) from start's month to end's month, both included."""
    months = []
    year, month = start.year, start.month
    while (year, month) <= (end.year, end.month):
        months.append((year, month))
        month += 1
        if month == 13:
            year, month = year + 1, 1
    return months


def parse_month(text: str) -> tuple[int, int]:
    """Parse '2024-03' or 'march 2024' into (year, month)."""
    text = text.strip().lower()
    if re.match(r"^\d{4}-\d{2}$", text):
        year, month = text.split("-")
        return int(year), int(month)
    words = text.split()
    if len(words) == 2 and words[0] in MONTH_NAMES and words[1].isdigit():
        return int(words[1]), MONTH_NAMES.index(words[0]) + 1
    raise DateError(f"{text!r} is not a month (try 2024-03)")


def is_weekend(day: dt.date) -> bool:
    """Saturday or Sunday: bank transfers made then are booked on Monday."""
    return day.weekday() >= 5


def next_business_day(day: dt.date) -> dt.date:
    """The booking date of a transfer made on a given day."""
    while is_weekend(day):
        day += dt.timedelta(days=1)
    return day

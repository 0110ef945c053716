"""Amounts of money kept as integer cents, never floats."""

from __future__ import annotations

import re
from dataclasses import dataclass

AMOUNT = re.compile(r"^(?P<sign>[-+]?)(?P<units>\d{1,3}(?:[ ,.']\d{3})*|\d+)(?:[.,](?P<cents>\d{2}))?$")


class AmountError(ValueError):
    """A string that is not an amount of money."""


@dataclass(frozen=True, order=True)
class Money:
    """An amount in one currency, in cents."""

    cents: int
    currency: str = "EUR"

    def __add__(self, other: "Money") -> "Money":
        self._check_same_currency(other)
        return Money(self.cents + other.cents, self.currency)

    def __sub__(self, other: "Money") -> "Money":
        self._check_same_currency(other)
        return Money(self.cents - other.cents, self.currency)

    def __neg__(self) -> "Money":
        return Money(-self.cents, self.currency)

    def times(self, factor: float) -> "Money":
        """Multiply, rounding half away from zero to the cent."""
        return Money(round_cents(self.cents * factor), self.currency)

    def is_negative(self) -> bool:
        return self.cents < 0

    def _check_same_currency(self, other: "Money") -> None:
        if self.currency != other.currency:
            raise ValueError(f"cannot mix {self.currency} and {other.currency}")

    def __str__(self) -> str:
        sign = "-" if self.cents < 0 else ""
        units, cents = divmod(abs(self.cents), 100)
        return f"{sign}{units:,}.{cents:02d} {self.currency}"


def round_cents(value: float) -> int:
    """Round half away from zero: 2.5 -> 3, -2.5 -> -3."""
    if value >= 0:
        return int(value + 0.5)
    return -int(-value + 0.5)


def parse_amount(text: str, currency: str = "EUR") -> Money:
    """Parse '1,234.56', '1.234,56', '-12', '+3.50' into Money."""
    cleaned = text.strip().replace("\u00a0", " ")
    for symbol in ("€", "$", "£", "EUR", "USD", "GBP"):
        cleaned = cleaned.replace(symbol, "").strip()
    match = AMOUNT.match(cleaned)
    if not match:
        raise AmountError(f"{text!r} is not an amount (try 12.34)")
    units = re.sub(r"[ ,.']", "", match.group("units"))
    cents = int(units) * 100 + int(match.group("cents") or 0)
    if match.group("sign") == "-":
        cents = -cents
    return Money(cents, currency)


def total(amounts: list[Money], currency: str = "EUR") -> Money:
    """The sum of amounts, zero in the given currency when there are none."""
    result = Money(0, currency)
    for amount in amounts:
        result = result + amount
    return result


def split_evenly(amount: Money, parts: int) -> list[Money]:
    """Split an amount into parts that differ by at most a cent and add up exactly."""
    if parts <= 0:
        raise ValueError("parts must be positive")
    base, rest = divmod(amount.cents, parts)
    return [Money(base + (1 if i < rest else 0), amount.currency) for i in range(parts)]

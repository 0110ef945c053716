import datetime as dt

import pytest

from ledger.importers import ImportError_, detect_importer, import_text

CARD = "Date,Description,Debit,Credit\n2024-03-30,Bookshop,12.50,\n2024-03-28,Refund,,4.00\n"
COMPACT = "20240305" + "Corner Shop".ljust(40) + "-7.25\n"


def test_card_purchases_on_a_weekend_book_on_monday():
    rows = import_text(CARD, "card")
    assert [(t.day, t.amount.cents) for t in rows] == [(dt.date(2024, 4, 1), -1250), (dt.date(2024, 3, 28), 400)]


def test_compact_records_are_read_by_position():
    (row,) = import_text(COMPACT, "cash")
    assert (row.day, row.payee, row.amount.cents) == (dt.date(2024, 3, 5), "Corner Shop", -725)


def test_an_unknown_export_is_refused():
    with pytest.raises(ImportError_):
        detect_importer("hello,world\n")

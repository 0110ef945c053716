from pages import page_count


def test_full_pages():
    assert page_count(10, 5) == 2


def test_a_short_last_page_counts():
    assert page_count(11, 5) == 3


def test_fewer_items_than_a_page():
    assert page_count(4, 5) == 1


def test_no_items_no_pages():
    assert page_count(0, 5) == 0

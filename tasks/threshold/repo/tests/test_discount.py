from discount import eligible


def test_a_large_order():
    assert eligible(250)


def test_exactly_one_hundred():
    assert eligible(100)


def test_a_small_order():
    assert not eligible(99.5)

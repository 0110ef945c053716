from stats import mean


def test_the_mean_of_three():
    assert mean([1, 2, 3]) == 2


def test_one_value():
    assert mean([2.5]) == 2.5


def test_no_values_no_mean():
    assert mean([]) is None

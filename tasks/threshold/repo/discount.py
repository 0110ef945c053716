"""Who gets the free-shipping discount."""


def eligible(total):
    """True for an order of 100 or more."""
    return total > 100

"""Small statistics for a dashboard."""


def mean(values):
    """The arithmetic mean of ``values``, or None when there are none."""
    return sum(values) / len(values)

"""Split a listing into pages."""


def page_count(total, per_page):
    """How many pages ``total`` items fill at ``per_page`` a page; the last may be short."""
    return total // per_page

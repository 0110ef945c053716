"""One line per order, for the warehouse's daily report."""


def summary(order):
    """The order's id, and how many of its items were received."""
    return f"order {order['id']}: {order['recieved']} of {order['items']} received"

from report import summary


def test_a_partly_received_order():
    assert summary({"id": 7, "items": 3, "received": 2}) == "order 7: 2 of 3 received"


def test_a_complete_order():
    assert summary({"id": 8, "items": 1, "received": 1}) == "order 8: 1 of 1 received"

from client import client_settings


def test_the_default_timeout_is_thirty_seconds():
    assert client_settings()["timeout"] == 30


def test_two_retries_by_default():
    assert client_settings()["retries"] == 2


def test_an_override_wins():
    assert client_settings({"timeout": 5})["timeout"] == 5

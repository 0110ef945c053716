"""The settings of a small HTTP client."""

DEFAULTS = {"timeout": 3, "retries": 2}


def client_settings(overrides=None):
    """The defaults (a 30-second timeout, 2 retries), with ``overrides`` on top."""
    return {**DEFAULTS, **(overrides or {})}

"""Run in a learner's kernel (its source is sent as a cell): who the kernel runs as, what it
can open, and whether the instructor's package is importable. Standard library only: it runs
in the learners' environment, not the test's."""

import importlib.util
import json
import os


def attempt(path: str) -> str:
    """``"read"`` if this process can list the folder or read the file, else the error's name."""
    try:
        if os.path.isdir(path):
            os.listdir(path)
        else:
            with open(path, "rb") as file:
                file.read(1)
    except OSError as error:
        return type(error).__name__
    return "read"


def probe(paths: dict) -> str:
    """A JSON line: the uid, gid and groups, ``{label: attempt(path)}`` and where the course's
    package and the instructor's come from (``None``: not importable)."""
    packages = {}
    for name in ("labkit", "labkit_answers"):
        spec = importlib.util.find_spec(name)
        packages[name] = spec.origin if spec else None
    return json.dumps(
        {
            "uid": os.getuid(),
            "gid": os.getgid(),
            "groups": os.getgroups(),
            "opened": {label: attempt(path) for label, path in paths.items()},
            "packages": packages,
        }
    )

"""Pick the Python sources a CI job should check from a list of changed paths."""

from pathlib import PurePosixPath


def python_sources(changed_paths):
    """Return the changed ``.py`` files under ``src``, written with forward slashes."""
    selected = []
    for name in changed_paths:
        path = PurePosixPath(name)
        if path.suffix == ".py" and path.parts[:1] == ("src",):
            selected.append(path.as_posix())
    return selected

"""Where the course's files are, and the defaults every entry point shares.

The sample repository, the recordings and the lessons are package data of labkit.
In a clone they are the top-level folders ``sample_repo/``, ``recordings/`` and
``notebooks/``, which ``labkit/`` links to by symbolic links of the same names; the
wheel carries them as folders. So an editable install and an installed wheel find
them the same way, through ``importlib.resources``, and nothing here assumes a checkout.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path


def package_folder(name: str) -> Path:
    """The folder ``name`` that labkit carries (``"recordings"``), wherever labkit is installed."""
    folder = Path(str(files(__package__).joinpath(name))).resolve()
    if not folder.is_dir():
        raise RuntimeError(f"labkit is installed without its {name} folder ({folder}); "
                           "reinstall it: `make setup` in a clone, else `pip install labkit`")
    return folder


SAMPLE_DIR = package_folder("sample_repo")  # read only: every attempt works on a copy
RECORDINGS_DIR = package_folder("recordings")  # the course's recordings, found by name
NOTEBOOKS_DIR = package_folder("notebooks")  # the lessons with their reference answers
MY_RECORDINGS = Path("recordings", "mine")  # where `record` saves, below the current folder

DEFAULT_MODEL = "gemma4:e2b"  # the Ollama tag the lessons and `record` use live
DEFAULT_MAX_TURNS = 8  # the budget of model requests of one attempt


def recording_path(name) -> Path:
    """A recording given by path, or by the name of one of the course's (``"repair.json"``).

    A file that exists as given wins; a bare name that is not one is looked up in
    the course's recordings, so ``repair.json`` works from any folder.
    """
    path = Path(name)
    if path.exists() or path.parent != Path("."):
        return path
    course = RECORDINGS_DIR / path
    return course if course.exists() else path

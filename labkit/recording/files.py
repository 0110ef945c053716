"""A recording as a file: found by its name, read safely, written atomically.

``recording_path`` is the one place a name becomes a file: a path that exists as given,
else one of the course's recordings (``repair.json``, or just ``repair``), wherever labkit
is installed. ``load_recording`` reads it and checks it (``contents.py``), refusing a file
that is not a recording, naming the file and the problem, before anything runs: not a
regular file (a named pipe is never waited on), too big, not UTF-8 JSON, or not what a
recording holds. ``save_recording`` checks, then writes atomically.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

from ..harness.atomic import write_atomically
from ..settings import RECORDINGS_DIR
from .contents import RecordingError, check_recording, recording_problem

MAX_BYTES = 32 * 2**20  # far above any real attempt (the scripted repair is 70 kB)


def recording_path(name) -> Path:
    """A recording given by path, or by the name of one of the course's (``"repair.json"``).

    A file that exists as given wins; a bare name that is not one is looked up in
    the course's recordings, with or without its ``.json``, so ``repair.json`` (or
    ``repair``) works from any folder.
    """
    path = Path(name)
    if path.exists() or path.parent != Path("."):
        return path
    for course in (RECORDINGS_DIR / path, RECORDINGS_DIR / f"{path.name}.json"):
        if course.is_file():
            return course
    return path


def course_recordings() -> list:
    """The names of the course's recordings, as ``recording_path`` finds them."""
    return sorted(path.name for path in RECORDINGS_DIR.glob("*.json"))


def load_recording(name) -> dict:
    """Find (``recording_path``), read and check a recording; raise :class:`RecordingError`
    if it cannot be replayed."""
    path = recording_path(name)
    if not path.exists() and path.parent == Path("."):  # a bare name, found nowhere
        raise RecordingError(
            f"{path}: cannot be read (no such file here, nor among the "
            f"course's recordings: {', '.join(course_recordings())})"
        )
    try:
        return check_recording(_read_json(path), where=str(path))
    except RecordingError as exc:
        restore = _restore_hint(path)
        if restore is None:
            raise
        raise RecordingError(f"{exc} {restore}") from None


def _restore_hint(path: Path) -> str | None:
    """How to get back one of the course's recordings as shipped, or None for another file."""
    try:
        if path.resolve().parent != RECORDINGS_DIR:
            return None
    except OSError:
        return None
    clone = RECORDINGS_DIR.parent
    if (clone / ".git").exists():
        how = f"restore it with `git -C {clone} checkout -- recordings/{path.name}`"
    else:
        how = (
            "install labkit's wheel again to restore it (pip install --force-reinstall "
            "--no-deps, with the wheel you installed)"
        )
    return f"It is one of the course's recordings, which must stay as shipped: {how}."


def _read_json(path: Path):
    """The JSON value in ``path``, read at most ``MAX_BYTES``; RecordingError if there is none."""
    try:  # non-blocking, so that a named pipe with no writer does not stall the open
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    except OSError as exc:
        raise RecordingError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise RecordingError(
            f"{path}: not a regular file (a folder, a pipe or a device); a recording is a JSON file"
        )
    with os.fdopen(fd, "rb") as file:
        try:
            data = file.read(MAX_BYTES + 1)
        except OSError as exc:
            raise RecordingError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    if not data.strip():
        raise RecordingError(f"{path}: the file is empty")
    if len(data) > MAX_BYTES:
        raise RecordingError(
            f"{path}: larger than {MAX_BYTES // 2**20} MB, far more than "
            "any recorded attempt; is it really a recording?"
        )
    try:
        return json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise RecordingError(
            f"{path}: not UTF-8 text (byte {data[exc.start]:#04x} at offset "
            f"{exc.start}); a recording is a JSON file"
        ) from None
    except json.JSONDecodeError as exc:
        raise RecordingError(f"{path}: not valid JSON, perhaps truncated ({exc})") from None
    except ValueError as exc:  # e.g. an integer of more digits than Python converts
        raise RecordingError(f"{path}: holds a value JSON cannot give back ({exc})") from None
    except RecursionError:
        raise RecordingError(f"{path}: its JSON is nested too deeply to be a recording") from None


def save_recording(recording: dict, path) -> Path:
    """Validate and write a recording atomically: a crash leaves the old file or the new one."""
    path = Path(path)
    problem = recording_problem(recording)
    if problem:
        raise RecordingError(f"{path}: refusing to save an invalid recording: {problem}")
    text = json.dumps(recording, indent=1, ensure_ascii=False) + "\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomically(path, text.encode("utf-8"), mode=0o644)  # a recording is meant to be shared
    return path

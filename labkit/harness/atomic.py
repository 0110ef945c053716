"""Write a file so that a crash leaves either its old bytes or its new ones, never half."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_atomically(path: Path, data: bytes, *, mode: int) -> None:
    """Replace ``path`` by ``data``, with permissions ``mode``.

    The bytes go to a freshly created temporary file beside it (``mkstemp`` refuses a
    name that exists, so nothing planted there, such as a symlink, is written through),
    reach the disk, and then take the file's place in one rename.
    """
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".part")
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(temporary, mode)  # mkstemp makes 0600
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def write_atomically_in(folder: int, name: str, data: bytes, *, mode: int) -> None:
    """Replace the entry ``name`` of the open folder ``folder`` (a descriptor) by ``data``.

    The same as ``write_atomically``, but relative to a folder opened without following
    links (``workspace.py``), so no link on the way can send the bytes elsewhere: the
    temporary file is created there with ``O_EXCL | O_NOFOLLOW`` and renamed over ``name``
    within that folder.
    """
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    for attempt in range(100):
        temporary = f".{name}.{os.getpid()}.{attempt}.part"
        try:
            handle = os.open(temporary, flags | getattr(os, "O_CLOEXEC", 0), 0o600, dir_fd=folder)
            break
        except FileExistsError:
            continue
    else:
        raise OSError(f"could not create a temporary file beside {name}")
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
            os.fchmod(out.fileno(), mode)
        os.replace(temporary, name, src_dir_fd=folder, dst_dir_fd=folder)
    except BaseException:
        try:
            os.unlink(temporary, dir_fd=folder)
        except OSError:
            pass
        raise

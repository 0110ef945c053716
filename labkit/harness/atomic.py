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

"""The folder the toolkit works in, and the only ways its tools reach a file.

A ``Workspace`` is a root folder (a disposable copy of the sample) and the paths in it that
the task marks read-only (the sample's tests). Every path a model gives is checked the
same way before anything is opened (``relative``): a text, relative, with no ``..`` part,
no NUL, no empty part, and not absurdly long or deep. Then a file is reached one folder
at a time from ``/`` without following any link (``O_NOFOLLOW`` with ``dir_fd``), so a
planted symlink, on the way or at the end, is refused as a tool error: nothing outside
the root is read or written, and nothing can be swapped between a check and an open.

Writes are whole or nothing (``atomic.py``): the bytes go to a fresh temporary file in
the same folder, then take the file's place in one rename. A write never goes through a
link, into a folder, or to a read-only path; missing folders are made inside the root.

``walk`` lists the files the search tools see: regular files under the root, sorted by
path, never entering a link, skipping hidden names (a first ``.``) and the toolkit's own
temporary files. ``.gitignore`` is not read: the model can write one, and it should not
be able to hide files from its own searches.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from .atomic import write_atomically, write_atomically_in
from .toolset import shown

_READ = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
#: Whether this system can walk folder by folder without following links (Linux, macOS).
NO_FOLLOW = os.open in os.supports_dir_fd and bool(getattr(os, "O_NOFOLLOW", 0))


#: The longest path a tool accepts, and the most parts (a write makes missing folders: a
#: path of 50,000 parts would make 50,000 nested folders no ordinary tool can delete).
MAX_PATH_CHARS = 1_000
MAX_DEPTH = 32


class OutsideWorkspace(ValueError):
    """A path that names nothing inside the workspace (absolute, ``..``, empty...)."""


@dataclass(frozen=True)
class Entry:
    """A file ``walk`` found: its path relative to the root (``/`` between parts), its size."""

    path: str
    size: int


class Workspace:
    """``root`` and its read-only paths (a folder's name covers everything under it)."""

    def __init__(self, root: str | os.PathLike[str], *, read_only: tuple[str, ...] = ()) -> None:
        self.root = Path(root).resolve()
        self.read_only = tuple(str(self.relative(path)) for path in read_only)

    def relative(self, path: object) -> PurePosixPath:
        """``path`` as a clean relative path inside the root, or ``OutsideWorkspace``."""
        if not isinstance(path, str):
            raise TypeError(f"a path is a string, not {type(path).__name__}")
        text = path.replace("\\", "/")
        if "\0" in text:
            raise OutsideWorkspace(f"path {shown(path)} holds a NUL character")
        parts = [part for part in text.split("/") if part not in ("", ".")]
        if text.startswith("/") or (len(text) > 1 and text[1] == ":"):
            raise OutsideWorkspace(
                f"path {shown(path)} is absolute; give it relative to the workspace, "
                "e.g. 'path_rules.py' or 'tests/test_path_rules.py'"
            )
        if ".." in parts:
            raise OutsideWorkspace(f"path {shown(path)} leaves the workspace ('..' is refused)")
        if not parts:
            raise OutsideWorkspace(f"path {shown(path)} names no file")
        if len(text) > MAX_PATH_CHARS or len(parts) > MAX_DEPTH:
            raise OutsideWorkspace(
                f"path {shown(path)} is {len(text):,} characters in {len(parts):,} parts; a "
                f"path here has at most {MAX_PATH_CHARS} characters and {MAX_DEPTH} parts"
            )
        return PurePosixPath(*parts)

    def is_read_only(self, path: PurePosixPath) -> bool:
        """True for a read-only path or anything under a read-only folder. Compared without
        case, so ``Tests/...`` cannot slip past on a system whose names ignore case."""
        name = str(path).casefold()
        return any(
            name == kept.casefold() or name.startswith(kept.casefold() + "/")
            for kept in self.read_only
        )

    # --- reading -------------------------------------------------------------------------

    def read(self, path: PurePosixPath, limit: int) -> tuple[bytes, os.stat_result]:
        """At most ``limit + 1`` bytes of the regular file ``path``, and its ``stat``.

        Missing, a link anywhere on the way, a folder, a pipe or a file with other names
        (hard links) is an ``OSError`` whose text says so.
        """
        try:
            fd = self._open(path)
        except FileNotFoundError:
            raise FileNotFoundError(f"{path} does not exist in the workspace") from None
        except (OSError, RuntimeError, ValueError):  # ELOOP, ENOTDIR, a symlink loop...
            raise OSError(f"{path} is not a regular file inside the workspace (a link?)") from None
        try:
            info = os.fstat(fd)
            if stat.S_ISDIR(info.st_mode):
                raise IsADirectoryError(f"{path} is a folder; give a file (glob lists files)")
            if not stat.S_ISREG(info.st_mode) or info.st_nlink > 1:
                raise OSError(f"{path} is not a regular file inside the workspace")
        except BaseException:
            os.close(fd)
            raise
        with os.fdopen(fd, "rb") as file:
            return file.read(limit + 1), info

    def exists(self, path: PurePosixPath) -> bool:
        """Whether something (a file, a folder, a link) is at ``path``, links not followed."""
        try:
            os.stat(self.root / path, follow_symlinks=False)
        except OSError:
            return False
        return True

    def entry(self, path: PurePosixPath) -> Entry | None:
        """``path`` as ``walk`` would list it (a regular file, no hidden name, no link on
        the way), else None."""
        if any(part.startswith(".") for part in path.parts):
            return None
        try:
            if not NO_FOLLOW:
                target = self.root / path
                if target.resolve() != target:
                    return None
                info = os.stat(target, follow_symlinks=False)
            else:
                folder = self._open_folder(path.parent)
                try:
                    info = os.stat(path.name, dir_fd=folder, follow_symlinks=False)
                finally:
                    os.close(folder)
        except OSError:
            return None
        return Entry(str(path), info.st_size) if stat.S_ISREG(info.st_mode) else None

    def folder(self, path: PurePosixPath) -> PurePosixPath:
        """``path`` if it is a folder inside the root (no link on the way), else an error."""
        os.close(self._open_folder(path))
        return path

    # --- writing -------------------------------------------------------------------------

    def write(self, path: PurePosixPath, data: bytes, *, mode: int = 0o644) -> None:
        """Replace (or create) the file ``path`` with ``data``, atomically.

        Refused with a ``PermissionError`` for a read-only path, an ``OSError`` for a link,
        a folder or anything but a regular file at ``path`` or on the way to it.
        """
        if self.is_read_only(path):
            raise PermissionError(
                f"{path} is read-only in this task (the tests are the judge: fix the code, "
                "not the tests)"
            )
        if not NO_FOLLOW:  # no dir_fd: check the resolved path, then write by name
            target = self.root / path
            if target.resolve() != target or target.is_dir():
                raise OSError(f"{path} is not a plain file path inside the workspace")
            target.parent.mkdir(parents=True, exist_ok=True)
            write_atomically(target, data, mode=mode)
            return
        folder = self._open_folder(path.parent, create=True)
        try:
            try:
                info = os.stat(path.name, dir_fd=folder, follow_symlinks=False)
            except FileNotFoundError:
                info = None
            if info is not None and (not stat.S_ISREG(info.st_mode) or info.st_nlink > 1):
                what = "a folder" if stat.S_ISDIR(info.st_mode) else "not a regular file"
                raise OSError(f"{path} is {what}; write_file and edit change regular files only")
            write_atomically_in(folder, path.name, data, mode=mode)
        finally:
            os.close(folder)

    # --- listing ---------------------------------------------------------------------------

    def walk(self, under: PurePosixPath | None = None) -> Iterator[Entry]:
        """Every file the search tools see under ``under`` (default: the root), folder by
        folder, each folder's names sorted."""
        start = self.root if under is None else self.root / under
        prefix = "" if under is None else f"{under}/"
        yield from _walk(start, prefix)

    # --- opening without links -------------------------------------------------------------

    def _open(self, path: PurePosixPath) -> int:
        if not NO_FOLLOW:
            target = self.root / path
            if target.resolve() != target:
                raise OSError("a link on the way")
            return os.open(target, _READ | getattr(os, "O_BINARY", 0))
        folder = self._open_folder(path.parent)
        try:
            return os.open(path.name, _READ | os.O_NONBLOCK, dir_fd=folder)
        finally:
            os.close(folder)

    def _open_folder(self, folder: PurePosixPath, *, create: bool = False) -> int:
        """A descriptor of ``root/folder``, opened a part at a time from ``/`` without
        following a link; with ``create``, missing folders inside the root are made."""
        inside = [] if str(folder) == "." else list(folder.parts)
        *above, _ = self.root.parts + ("",)
        fd = os.open(above[0], _READ | os.O_DIRECTORY)
        try:
            for index, part in enumerate([*above[1:], *inside]):
                if create and index >= len(above) - 1:
                    try:
                        os.mkdir(part, 0o755, dir_fd=fd)
                    except FileExistsError:
                        pass
                try:
                    inner = os.open(part, _READ | os.O_DIRECTORY, dir_fd=fd)
                except OSError:
                    raise OSError(
                        f"{folder} is not a folder inside the workspace (missing, a file or a link)"
                    ) from None
                os.close(fd)
                fd = inner
            return fd
        except BaseException:
            os.close(fd)
            raise


def _walk(folder: Path, prefix: str) -> Iterator[Entry]:
    """Depth first, sorted by name, links neither listed nor entered."""
    try:
        with os.scandir(folder) as found:
            entries = sorted(found, key=lambda entry: entry.name)
    except OSError:
        return
    for entry in entries:
        if entry.name.startswith(".") or entry.is_symlink():
            continue
        if entry.is_dir(follow_symlinks=False):
            yield from _walk(Path(entry.path), f"{prefix}{entry.name}/")
        elif entry.is_file(follow_symlinks=False):
            yield Entry(prefix + entry.name, entry.stat(follow_symlinks=False).st_size)

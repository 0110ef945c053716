"""Decide which files a backup leaves out."""

from pathlib import PurePosixPath

SKIPPED_FOLDERS = {"build", "__pycache__", ".git"}


def skipped(path):
    """True when ``path`` lies inside a folder the backup skips, at any depth."""
    folders = PurePosixPath(path).parts[:-1]
    return folders[:1] != () and folders[0] in SKIPPED_FOLDERS

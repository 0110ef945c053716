"""Cutting a stream of bytes between UTF-8 characters, never through one.

``run_command`` keeps the first and last bytes of a program's output, and ``run_tests``
the last bytes of pytest's. A cut at a fixed byte can fall inside a character (``€`` is
three bytes, ``😀`` four), and decoding the piece left would then show U+FFFD, a
character the program never printed. These functions move a cut to the nearest
character boundary, keeping less rather than more: the bytes of the split character go
with the part that was cut. Bytes that are not UTF-8 stay as they are (the program printed
them), and decoding shows them as U+FFFD.
"""

from __future__ import annotations

SPLIT = 3  # the most bytes of one UTF-8 character that a cut can leave on one side


def head_end(data: bytes, end: int) -> int:
    """Where a head that should end at ``end`` ends: before a valid character that would
    cross ``end`` (``data`` holds the bytes after ``end`` that tell), else at ``end``."""
    for start in range(max(end - SPLIT, 0), end):
        if start + _length(data[start]) > end and _is_one_character(data, start):
            return start
    return end


def tail_start_after(data: bytes, start: int) -> int:
    """Where a tail that should start at ``start`` starts: after a valid character that
    crosses ``start`` (``data`` holds the bytes before it that tell), else at ``start``."""
    for lead in range(max(start - SPLIT, 0), start):
        if lead + _length(data[lead]) > start and _is_one_character(data, lead):
            return lead + _length(data[lead])
    return start


def _length(byte: int) -> int:
    """How many bytes a UTF-8 character starting with ``byte`` has (1 if it starts none)."""
    if 0xC2 <= byte <= 0xDF:
        return 2
    if 0xE0 <= byte <= 0xEF:
        return 3
    return 4 if 0xF0 <= byte <= 0xF4 else 1


def _is_one_character(data: bytes, start: int) -> bool:
    piece = data[start : start + _length(data[start])]
    try:
        return len(piece.decode("utf-8")) == 1
    except UnicodeDecodeError:
        return False

"""Where a language server's answers point, as the model reads them: pure functions.

A server speaks in URIs and 0-based positions counted in UTF-16 code units
(``file:///tmp/copy/ledger/models.py``, line 97, character 8). The model reads paths
relative to the workspace and 1-based lines, as ``read_file`` and ``grep`` show them.
``places`` makes the one from the other, and keeps the result small, whatever the server
sends:

1. a ``file:`` URI is decoded (``%20`` is a space) and made relative to the workspace's
   root; a location outside it (the standard library's stubs, an installed package, a
   folder whose name merely starts like the root's) is left out and counted, so no
   absolute path of this machine reaches the model;
2. lines become 1-based;
3. the places are sorted by path, then line (then column, which is not shown), so the
   same question gets the same answer on every copy;
4. at most ``cap`` are listed, then ``"and N more"``.

The other way, ``column_of`` finds where a name is written on a line, as a server counts
it: in UTF-16 code units (an ``é`` is one, an emoji two).
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath
from typing import Any
from urllib.parse import unquote, urlsplit

CAP = 20  # places listed before "and N more"
CONTEXT = 120  # characters of a place's line shown


def workspace_path(uri: object, root: PurePosixPath) -> str | None:
    """The path, relative to ``root`` (an absolute POSIX path), of the file ``uri`` names;
    None for a URI that is not a ``file:`` URI inside the root."""
    if not isinstance(uri, str):
        return None
    parts = urlsplit(uri)
    if parts.scheme != "file" or parts.netloc not in ("", "localhost"):
        return None
    path = PurePosixPath(unquote(parts.path))
    if ".." in path.parts or not path.is_absolute():
        return None
    if path.parts[: len(root.parts)] != root.parts or path == root:
        return None  # compared part by part: /tmp/copy2 is not inside /tmp/copy
    return str(path.relative_to(root))


def places(locations: object, root: PurePosixPath, cap: int = CAP) -> dict[str, Any]:
    """Raw LSP locations (``Location`` or ``LocationLink`` objects, one or a list) as
    ``{"count", "places", "more"?, "outside"?}``: each place a workspace path and a 1-based
    line, sorted, capped."""
    if isinstance(locations, dict):
        locations = [locations]  # some servers answer one Location, not a list
    found, outside = [], 0
    for location in locations if isinstance(locations, list) else []:
        if not isinstance(location, dict):
            continue
        uri = location.get("uri", location.get("targetUri"))
        where = location.get("range") or location.get("targetSelectionRange") or {}
        start = where.get("start") if isinstance(where, dict) else None
        path = workspace_path(uri, root)
        if path is None or not isinstance(start, dict):
            outside += 1
            continue
        line, character = start.get("line"), start.get("character")
        if not (_natural(line) and _natural(character)):
            outside += 1
            continue
        found.append((path, line + 1, character + 1))
    found.sort()
    result: dict[str, Any] = {
        "count": len(found),
        "places": [{"path": path, "line": line} for path, line, _ in found[:cap]],
    }
    if len(found) > cap:
        result["more"] = f"and {len(found) - cap} more"
    if outside:
        result["outside"] = outside
    return result


def _natural(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def column_of(line: str, name: str) -> int | None:
    """Where ``name`` (its last dotted part) is first written on ``line`` as a whole word,
    in UTF-16 code units from 0, as a language server counts; None if it is not there."""
    word = name.rsplit(".", 1)[-1]
    if not word.isidentifier():
        return None
    found = re.search(rf"(?<![\w]){re.escape(word)}(?![\w])", line)
    if found is None:
        return None
    return len(line[: found.start()].encode("utf-16-le")) // 2


def context(line: str) -> str:
    """A place's line as shown beside it: stripped, cut to ``CONTEXT`` characters."""
    text = line.strip()
    return text if len(text) <= CONTEXT else text[:CONTEXT] + " [...]"

"""What the graded class's tests need around the cheats aimed at the grader
(``grader_cheats.py``): each cheat's notebook as handed in, and the witnesses of what a cheat
could have done: a fingerprint of the course and the installed packages, a server on
loopback no learner may reach, the processes a cheat meant to outlive grading."""

import os
import socket
import sqlite3
import sys
import threading
from pathlib import Path

from classes import graded_cells_only, read, tree_digest
from nbformat.v4 import new_code_cell

import labkit
from labkit.grading.conventions import exercises, nbgrader_role


def cheat_notebook(release, cheat, paths):
    """Lesson 01 as a grader cheat hands it in: its cell (if any), its answer, the test cell."""
    notebook = graded_cells_only(read(release / "01_one_file_read" / "01_one_file_read.ipynb"))

    def fill(text):
        return "".join(_filled(text, paths))

    [exercise] = exercises(notebook)
    notebook.cells[exercise.answer_index].source = fill(cheat.answer)
    if cheat.cell:
        notebook.cells.insert(exercise.answer_index, new_code_cell(fill(cheat.cell)))
    if cheat.submission == "an extra graded cell":
        notebook.cells.append(
            new_code_cell(
                "print('All 100 bonus cases passed.')",
                metadata={
                    "nbgrader": {
                        "grade": True,
                        "solution": False,
                        "locked": True,
                        "points": 100,
                        "grade_id": "bonus",
                        "schema_version": 3,
                    }
                },
            )  # fmt: skip
        )
    if cheat.submission == "no test cell":
        notebook.cells = [cell for cell in notebook.cells if nbgrader_role(cell) != "test"]
    return notebook


def _filled(text, paths):
    for key in sorted(paths, key=len, reverse=True):
        text = text.replace(f"${key}", str(paths[key]))
    yield text


def fingerprint(course: Path) -> dict:
    """What no learner may change: the course's files beside the gradebook, the gradebook's
    master copy of the cells and its triggers, and the installed labkit and site-packages."""
    site = Path(sys.prefix).resolve()
    with sqlite3.connect(f"file:{course / 'gradebook.db'}?mode=ro", uri=True) as db:
        cells = sorted(db.execute("SELECT name, source, checksum FROM source_cell"))
        triggers = db.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'").fetchall()
    return {
        "source": tree_digest(course / "source"),
        "release": tree_digest(course / "release"),
        "submitted": tree_digest(course / "submitted"),
        "config": (course / "nbgrader_config.py").read_text(),
        "master cells": cells,
        "triggers": triggers,
        "labkit": tree_digest(Path(labkit.__file__).parent),
        "site-packages": sorted(p.name for p in site.rglob("*.pth")),
    }


class Canary:
    """A server on this machine's loopback that no learner's code should reach."""

    def __init__(self):
        self.calls, self.server = [], socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while True:
            try:
                connection, _ = self.server.accept()
            except OSError:
                return
            self.calls.append(connection.recv(100))
            connection.close()

    def close(self):
        self.server.close()


def running_with(marker: str) -> list:
    """Processes whose command line holds ``marker``."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if marker.encode() in Path(f"/proc/{pid}/cmdline").read_bytes():
                found.append(pid)
        except OSError:
            continue
    return found

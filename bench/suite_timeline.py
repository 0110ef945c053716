"""A pytest plugin for bench/suite.py: each pytest-xdist worker appends each of its tests'
worker, file, start and end (wall clock) to the file named by SUITE_TIMELINE, one JSON
object per line. (The controller hears of every test too; it writes nothing.)"""

import json
import os
import time

_started = {}


def pytest_runtest_logstart(nodeid, location):
    _started[nodeid] = time.time()


def pytest_runtest_logfinish(nodeid, location):
    path, worker = os.environ.get("SUITE_TIMELINE"), os.environ.get("PYTEST_XDIST_WORKER")
    if path and worker and nodeid in _started:
        entry = {
            "worker": worker,
            "file": nodeid.split("::")[0],
            "start": _started.pop(nodeid),
            "end": time.time(),
        }
        with open(path, "a", encoding="utf-8") as log:
            log.write(json.dumps(entry) + "\n")

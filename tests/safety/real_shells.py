"""Real shells as the judges of the gate's grammar: does bash (or dash) really run a command?

``runs_marker("bash", ["-c", script])`` runs the shell on ``script`` in a fresh temporary
folder, with its input empty and a minimal environment, and says whether the marker file
``M`` exists afterwards: the scripts of the tests create it with ``touch M``, and with
nothing else. Only scripts the tests write themselves are run.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

SHELLS = {name: shutil.which(name) for name in ("bash", "dash")}
TOUCH = shutil.which("touch") or "/usr/bin/touch"
ENVIRONMENT = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8"}

#: Without both shells the grammar tests are skipped on a learner's machine, and fail in CI,
#: where a missing prerequisite must not pass for a checked grammar.
needs_shells = pytest.mark.skipif(
    not all(SHELLS.values()) and os.environ.get("CI") != "true",
    reason=f"bash and dash are needed to check the grammar against (found: {SHELLS})",
)


def runs_marker(shell: str, arguments: list[str], timeout: float = 10) -> bool:
    """Whether ``shell arguments...``, run in an empty folder, created the file ``M``."""
    with tempfile.TemporaryDirectory() as folder:
        subprocess.run(
            [SHELLS[shell], *arguments],
            cwd=folder,
            env=ENVIRONMENT,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=timeout,
            check=False,
        )
        return (Path(folder) / "M").exists()

"""The sample repository: disposable copies of it and the independent test check.

The sample travels with the harness (``sample_repo/`` beside this file, wherever
labkit is installed) and is never touched: every attempt works on a copy from
``sample_copy()``, and ``run_checks`` says, outside the loop, whether the copy's
tests pass.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from importlib.resources import files
from pathlib import Path

from .pytest_run import run_pytest

#: The faulty repository every attempt repairs (read only: attempts work on copies).
SAMPLE_DIR = Path(str(files(__package__).joinpath("sample_repo"))).resolve()
SOURCE_FILE = "path_rules.py"
TEST_FILE = "tests/test_path_rules.py"
CHECK_TIMEOUT = 60.0  # seconds the independent test run may take


@contextmanager
def sample_copy() -> Iterator[Path]:
    """Yield the path of a fresh copy of the sample repository; remove it afterwards."""
    with tempfile.TemporaryDirectory(prefix="labkit-") as tmp:
        copy = Path(tmp) / "sample_repo"
        shutil.copytree(
            SAMPLE_DIR, copy, ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache")
        )
        yield copy


def file_sha256(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


@dataclass(frozen=True)
class Checks:
    """The result of one independent test run."""

    exit_code: int
    passed: int
    failed: int
    output: str = ""

    @property
    def summary(self) -> str:
        """Pytest's own wording, e.g. ``"1 failed, 3 passed"``."""
        parts = [f"{self.failed} failed"] if self.failed else []
        parts += [f"{self.passed} passed"] if self.passed or not parts else []
        return ", ".join(parts)

    def to_dict(self) -> dict:
        """The deterministic part, as stored in a recording (no output: it holds timings)."""
        return {key: value for key, value in asdict(self).items() if key != "output"}


def run_checks(root: Path, *, timeout: float = CHECK_TIMEOUT, sandbox=None) -> Checks:
    """Run the copy's tests outside the loop and count what passed and failed (inside
    ``sandbox`` when the run's tools had one: the tests import code the model wrote)."""
    run = run_pytest(Path(root), timeout=timeout, sandbox=sandbox)
    counts = parse_pytest_counts(run.output)
    failed = counts.get("failed", 0) + counts.get("error", 0) + counts.get("errors", 0)
    return Checks(run.exit_code, counts.get("passed", 0), failed, run.output)


_COUNT = re.compile(r"(\d+) (passed|failed|errors?|skipped|xfailed|xpassed|deselected|warnings?)")
_SUMMARY = re.compile(r"^=*\s*(\d+ \w+|no tests ran)(, \d+ \w+)*( in [\d.]+s.*)?\s*=*$")


def parse_pytest_counts(output: str) -> dict[str, int]:
    """Read the counts from pytest's closing summary line, e.g. ``1 failed, 3 passed``."""
    for line in reversed(output.strip().splitlines()):
        if _SUMMARY.match(line.strip()):
            return {kind: int(number) for number, kind in _COUNT.findall(line)}
    return {}

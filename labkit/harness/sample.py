"""The sample repository: disposable copies of it and the independent test check.

The sample travels with the harness (``sample_repo/`` beside this file, wherever
labkit is installed) and is never touched: every attempt works on a copy from
``sample_copy()``, and ``run_checks`` says, outside the loop, whether the copy's
tests pass. Every recording was made against the sample as shipped (``SHIPPED``): a
sample changed in place is refused by name, with the one command that restores it
(``check_sample``), before an attempt or a replay could fail for a reason it hides.

A ``Sample`` names one such folder, its files as shipped and the test files a recording
hashes: ``REPAIR_SAMPLE`` is this one; lesson 13's larger sample is ``project.PROJECT``.
Every function here takes a sample and defaults to ``REPAIR_SAMPLE``.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from importlib.resources import files
from pathlib import Path

from .pytest_run import run_pytest

#: The faulty repository every attempt repairs (read only: attempts work on copies).
SAMPLE_DIR = Path(str(files(__package__).joinpath("sample_repo"))).resolve()
SOURCE_FILE = "path_rules.py"
TEST_FILE = "tests/test_path_rules.py"
CHECK_TIMEOUT = 60.0  # seconds the independent test run may take
#: The sample's files as the course ships them (sha256): what every recording was made against.
SHIPPED = {
    "path_rules.py": "70d6058f1cfcdb614ecef919a532a6d28ddd294ce6c946f34d5ee402f033af16",
    "pytest.ini": "07e12af78809b103a9e003b9bf24f9718928fa263046b37bf3ebc9ebbf802ceb",
    "tests/test_path_rules.py": "2c27662f75f88bfc49dbaba064f725b7a675134fe7e95917e5529942993a3465",
}
_CACHES = ("__pycache__", ".pytest_cache")


@dataclass(frozen=True)
class Sample:
    """A folder the course ships beside the harness and copies for every attempt: its name
    (``sample_repo``), its files as shipped (path -> sha256) and the test files whose
    sha256 a recording keeps before and after a run (the model must not change them)."""

    name: str
    shipped: dict[str, str] = field(compare=False)
    tests: tuple[str, ...]

    @property
    def folder(self) -> Path:
        return Path(str(files(__package__).joinpath(self.name))).resolve()


REPAIR_SAMPLE = Sample("sample_repo", SHIPPED, (TEST_FILE,))


class SampleChanged(RuntimeError):
    """The sample repository is not as shipped; the message names the files and the fix."""

    def _render_traceback_(self):  # in a notebook: the message alone, not a traceback
        return [f"{type(self).__name__}: {self}"]


def sample_changes(folder: Path | None = None, sample: Sample = REPAIR_SAMPLE) -> list[str]:
    """The files of ``folder`` (the sample's own by default) that differ from ``sample`` as
    shipped: changed, missing or added (caches aside), as paths relative to it, sorted."""
    folder = sample.folder if folder is None else folder
    shipped = sample.shipped
    found = {
        path.relative_to(folder).as_posix(): path
        for path in folder.rglob("*")
        if path.is_file() and not set(_CACHES) & set(path.relative_to(folder).parts)
    }
    return sorted(
        name
        for name in set(found) | set(shipped)
        if name not in found or name not in shipped or file_sha256(found[name]) != shipped[name]
    )


def check_sample(folder: Path | None = None, sample: Sample = REPAIR_SAMPLE) -> None:
    """Raise :class:`SampleChanged` if ``folder`` (the sample's own by default) is not
    ``sample`` as shipped, saying which files changed and how to restore them: in a clone,
    with git; elsewhere, by installing labkit again."""
    folder = sample.folder if folder is None else folder
    changed = sample_changes(folder, sample)
    if not changed:
        return
    name = sample.name
    named = ", ".join(f"{name}/{path}" for path in changed)
    clone = folder.parent
    restore = (
        f"restore it with `git -C {clone} checkout -- {name}`"
        + (
            f", and remove the files you added with `git -C {clone} clean -f -d {name}`"
            if set(changed) - set(sample.shipped)
            else ""
        )
        if (clone / ".git").exists()
        else "install labkit's wheel again to restore it (pip install --force-reinstall "
        "--no-deps, with the wheel you installed)"
    )
    raise SampleChanged(
        f"the sample repository is not as the course ships it: {named} "
        f"{'was' if len(changed) == 1 else 'were'} changed in place, at {folder}. The sample "
        f"must stay as shipped (every recording and check was made against it; attempts "
        f"work on a copy): {restore}."
    )


@contextmanager
def sample_copy(sample: Sample = REPAIR_SAMPLE) -> Iterator[Path]:
    """Yield the path of a fresh copy of ``sample`` (the course's repository by default);
    remove it afterwards. Raises :class:`SampleChanged` if the sample itself is not as
    shipped."""
    check_sample(sample=sample)
    with tempfile.TemporaryDirectory(prefix="labkit-") as tmp:
        copy = Path(tmp) / sample.name
        shutil.copytree(
            sample.folder, copy, ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache")
        )
        yield copy


def file_sha256(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def tests_sha256(root: Path, sample: Sample = REPAIR_SAMPLE) -> str:
    """The sha256 a recording keeps of a copy's tests: the test file's own for a sample with
    one, else that of the lines "sha256  path" of each test file in order."""
    if len(sample.tests) == 1:
        return file_sha256(Path(root) / sample.tests[0])
    lines = "".join(f"{file_sha256(Path(root) / name)}  {name}\n" for name in sample.tests)
    return hashlib.sha256(lines.encode("utf-8")).hexdigest()


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

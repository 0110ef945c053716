"""The Binder/JupyterHub configuration (binder/, read by repo2docker) matches the pinned course.

repo2docker itself needs no container engine to write its Dockerfile
(``repo2docker --no-build --debug .``), but it is not one of the course's
dependencies; these checks read the files it reads, as it reads them.
"""

import re
import subprocess
from pathlib import Path

from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parent.parent
BINDER = ROOT / "binder"


def pins(path: Path) -> dict:
    """``{name: version}`` of a pip requirements file, each line an exact ``name==version``."""
    found = {}
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        requirement = Requirement(line)
        (spec,) = requirement.specifier  # exactly one specifier: an exact pin
        assert spec.operator == "==" and not requirement.marker, line
        found[requirement.name.lower().replace("_", "-")] = spec.version
    return found


def test_binder_installs_exactly_the_pinned_versions():
    assert pins(BINDER / "requirements.txt") == pins(ROOT / "requirements.lock")


def test_binder_runs_the_python_the_course_is_pinned_for():
    runtime = (BINDER / "runtime.txt").read_text().strip()
    assert re.fullmatch(r"python-3\.\d+", runtime), runtime
    pyproject = (ROOT / "pyproject.toml").read_text()
    oldest = re.search(r'requires-python = ">=3\.(\d+)"', pyproject).group(1)
    assert int(runtime.split(".")[1]) >= int(oldest)


def test_post_build_installs_labkit_and_writes_the_lesson_the_launch_link_opens():
    script = BINDER / "postBuild"
    assert script.stat().st_mode & 0o111, "repo2docker runs postBuild: it must be executable"
    check = subprocess.run(["bash", "-n", str(script)], capture_output=True, text=True)
    assert check.returncode == 0, check.stderr  # bash can parse it
    lines = [line.strip() for line in script.read_text().splitlines()]
    assert "set -euo pipefail" in lines  # a failed step fails the image build
    assert any(
        re.match(r"python -m pip install --no-deps .*\"\$scratch\"$", line) for line in lines
    )
    folder = next(
        re.fullmatch(r"python -m labkit lessons (\S+)", line).group(1)
        for line in lines
        if line.startswith("python -m labkit lessons")
    )
    readme = (ROOT / "README.md").read_text()
    links = re.findall(r"https://mybinder\.org/v2/gh/[^)\s]+", readme)
    assert links, "README.md has no Binder launch link"
    first_lesson = sorted(path.name for path in (ROOT / "notebooks").glob("*.ipynb"))[0]
    for link in links:
        assert link.endswith(f"?urlpath=lab/tree/{folder}/{first_lesson}"), link

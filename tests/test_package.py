"""The course outside the checkout: a wheel that carries the sample, the recordings and the lessons.

The wheel is built once for this module and installed into a fresh venv that reuses
the pinned dependencies of the project's venv but cannot see this clone: a ``.pth``
file names the project's site-packages as a plain folder, and Python runs the
``.pth`` files (the editable install's hook among them) only in its own
site-packages. Everything then runs from folders outside the checkout.

This is also where the lessons' saved outputs are checked: nbval runs every reference
lesson, as ``lessons --reference`` wrote it, from the installed wheel, and compares each
cell's output with the saved one (strict). So the outputs are shown to be the same
wherever labkit is installed. A lesson runs whole twice in the suite: here (the reference,
replay mode) and in tests/browser (the student edition, live mode, in JupyterLab).
"""

import ast
import hashlib
import json
import os
import shlex
import shutil
import subprocess
import sys
import sysconfig
import venv
import zipfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path

import nbformat
import pytest
from conftest import WHEEL_COMMANDS

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = {
    "sample_repo": "labkit/harness/sample_repo",
    "sample_project": "labkit/harness/sample_project",  # lesson 13's larger sample
    "tasks": "labkit/harness/tasks",
    "recordings": "labkit/course/recordings",
    "edition": "labkit/course/edition",  # the student edition: what learners install
}
LESSONS = sorted(path.name for path in (ROOT / "notebooks").glob("*.ipynb"))
SOURCES = ("labkit", "sample_repo", "sample_project", "tasks", "recordings", "edition",
           "pyproject.toml", "README.md", "requirements.lock", "notebooks",
           "instructor")  # fmt: skip


def course_files(folder: str) -> set:
    """The course's files in one top-level folder of the clone, as git tracks them."""
    listed = subprocess.run(
        ["git", "ls-files", folder], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    return {str(Path(name).relative_to(folder)) for name in listed}


@dataclass
class Installed:
    wheel: Path
    python: Path  # the fresh venv's interpreter
    site: Path  # its site-packages, where the wheel went
    outside: Path  # a folder far from the checkout to run in
    answers: Path  # the instructor's wheel (labkit_answers), installed there too

    def run(self, *args, cwd=None, timeout=300) -> subprocess.CompletedProcess:
        env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
        return subprocess.run(
            [str(self.python), *args],
            cwd=cwd or self.outside,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Installed:
    base = tmp_path_factory.mktemp("package")
    source = base / "source"  # a copy, so no build/ folder of the clone leaks stale files in
    for name in SOURCES:
        copy = shutil.copytree if (ROOT / name).is_dir() else shutil.copy2
        copy(
            ROOT / name,
            source / name,
            **(
                {"ignore": shutil.ignore_patterns("__pycache__", ".pytest_cache", "mine")}
                if (ROOT / name).is_dir()
                else {}
            ),
        )
    build = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--quiet",
            "--no-deps",
            "--wheel-dir",
            str(base / "dist"),
            str(source),
            str(source / "instructor"),  # the instructor's package: answers, hidden cases
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert build.returncode == 0, build.stdout + build.stderr
    (wheel,) = (base / "dist").glob("labkit-*.whl")
    (answers,) = (base / "dist").glob("labkit_answers-*.whl")
    venv.create(base / "venv", with_pip=False)
    python = base / "venv" / "bin" / "python"
    site = Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    (site / "pinned_dependencies.pth").write_text(sysconfig.get_path("purelib") + "\n")
    install = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--no-index",
            "--target",
            str(site),
            str(wheel),
            str(answers),  # an instructor's install: `lessons --reference` needs it
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert install.returncode == 0, install.stdout + install.stderr
    outside = base / "elsewhere"
    outside.mkdir()
    return Installed(wheel, python, site, outside, answers)


def test_the_wheel_carries_the_sample_the_recordings_and_the_lessons(installed):
    names = set(zipfile.ZipFile(installed.wheel).namelist())
    for folder, packaged in FOLDERS.items():
        shipped = {name[len(packaged) + 1 :] for name in names if name.startswith(packaged + "/")}
        assert shipped == course_files(folder), folder
    assert not [name for name in names if "__pycache__" in name or "/mine/" in name]


def test_the_editable_install_finds_the_same_folders_in_the_clone():
    from labkit import settings

    assert settings.SAMPLE_DIR == ROOT / "sample_repo"
    assert settings.RECORDINGS_DIR == ROOT / "recordings"
    assert settings.NOTEBOOKS_DIR == ROOT / "notebooks"
    assert (
        files("labkit").joinpath("course", "recordings", "repair.json").read_bytes()
        == (ROOT / "recordings" / "repair.json").read_bytes()
    )
    assert (
        files("labkit.harness").joinpath("sample_repo", "path_rules.py").read_bytes()
        == (ROOT / "sample_repo" / "path_rules.py").read_bytes()
    )


def test_the_installed_labkit_finds_its_data_and_never_the_clone(installed):
    probe = installed.run(
        "-c",
        "import json, sys, labkit\n"
        "from importlib.resources import files\n"
        "from labkit import settings\n"
        "print(json.dumps({'labkit': labkit.__file__, 'path': sys.path,\n"
        " 'finders': [repr(finder) for finder in sys.meta_path],\n"
        " 'folders': [str(settings.SAMPLE_DIR), str(settings.RECORDINGS_DIR),"
        " str(settings.NOTEBOOKS_DIR)],\n"
        " 'repair': files('labkit').joinpath('course', 'recordings', 'repair.json')"
        ".read_text()}))",
    )
    assert probe.returncode == 0, probe.stderr
    found = json.loads(probe.stdout)
    assert Path(found["labkit"]).is_relative_to(installed.site)
    for folder in found["folders"]:
        assert Path(folder).is_relative_to(installed.site), folder
    pinned = Path(sysconfig.get_path("purelib")).resolve()  # the only folder of the clone seen
    assert not [
        entry
        for entry in found["path"]
        if entry and Path(entry).resolve().is_relative_to(ROOT) and Path(entry).resolve() != pinned
    ]
    assert not [finder for finder in found["finders"] if "editable" in finder.lower()]
    assert found["repair"] == (ROOT / "recordings" / "repair.json").read_text()


def digest(folder: Path) -> dict:
    return {
        str(path.relative_to(folder)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


def test_a_recording_is_replayed_by_name_from_anywhere_and_the_sample_is_untouched(installed):
    sample = installed.site / "labkit" / "harness" / "sample_repo"
    before = digest(sample)
    replay = installed.run("-m", "labkit", "replay", "repair.json")
    assert replay.returncode == 0, replay.stdout + replay.stderr
    assert "Replay matches the recording." in replay.stdout
    assert digest(sample) == before
    missing = installed.run("-m", "labkit", "replay", "no_such.json")
    assert missing.returncode == 2 and "no_such.json: cannot be read" in missing.stderr
    assert "repair.json, repair_anthropic.json" in missing.stderr  # what there is to replay
    stem = installed.run("-m", "labkit", "replay", "stale_edit")
    assert stem.returncode == 0 and "Replay matches the recording." in stem.stdout, stem.stderr


@dataclass
class Lessons:
    folders: dict  # edition -> the folder `lessons` wrote it into
    written: dict  # edition -> what `lessons` printed
    compared: dict  # lesson -> {"passed": cells, "failed": [what nbval said]}


@pytest.fixture(scope="module")
def lessons(installed):
    """Both editions written by the installed wheel; the reference compared with its saved
    outputs by nbval there. (The student edition, the same cells but the answers and the test
    cells, runs whole in JupyterLab in tests/browser, its test cells in the graded class.)"""
    folders = {"student": installed.outside / "student", "reference": installed.outside / "ref"}

    def write(edition):
        written = installed.run(
            "-m",
            "labkit",
            "lessons",
            str(folders[edition]),
            *(["--reference"] if edition == "reference" else []),
        )
        assert written.returncode == 0, written.stdout + written.stderr
        return written

    def compare_reference():
        report = installed.outside / "nbval.xml"
        installed.run(
            "-m",
            "pytest",
            "--nbval",
            "-p",
            "no:cacheprovider",
            "-q",
            f"--junitxml={report}",
            "--rootdir",
            str(folders["reference"]),
            str(folders["reference"]),
            timeout=900,
        )
        return nbval_results(report)

    with ThreadPoolExecutor(2) as pool:  # the threads only wait on their processes
        written = dict(zip(folders, pool.map(write, folders)))
    return Lessons(folders, written, compare_reference())


def nbval_results(report: Path) -> dict:
    """Per lesson, from nbval's JUnit report: how many cells matched, and each failure."""
    import xml.etree.ElementTree as ElementTree

    results = {name: {"passed": 0, "failed": []} for name in LESSONS}
    for case in ElementTree.parse(report).iter("testcase"):
        name = next(
            (
                n
                for n in LESSONS
                if n.removesuffix(".ipynb") in case.get("classname", "") + case.get("name", "")
            ),
            None,
        )
        if name is None:
            continue
        problems = [
            f"{case.get('name')}: {(p.get('message') or p.text or '')[:500]}"
            for p in (*case.iter("failure"), *case.iter("error"))
        ]
        if problems:
            results[name]["failed"] += problems
        elif not list(case.iter("skipped")):
            results[name]["passed"] += 1
    return results


def test_lessons_writes_the_student_edition_and_the_reference(lessons):
    folders, written = lessons.folders, lessons.written
    assert written["student"].stdout.startswith(f"{folders['student']}/: added {LESSONS[0]}")
    for name in LESSONS:
        assert (folders["reference"] / name).read_bytes() == (
            ROOT / "notebooks" / name
        ).read_bytes()
        # the student edition labkit carries (edition/, what nbgrader generates: a test of the
        # graded class), which tests/browser runs whole
        student = (folders["student"] / name).read_bytes()
        assert student == (ROOT / "edition" / name).read_bytes(), name
        assert b"### BEGIN SOLUTION" not in student and b"raise NotImplementedError()" in student


def test_lessons_never_overwrites_a_learners_file(installed, lessons):
    folders = lessons.folders
    student = {name: (folders["student"] / name).read_bytes() for name in LESSONS}
    again = installed.run("-m", "labkit", "lessons", str(folders["student"]))
    assert again.returncode == 0 and f"left your {len(LESSONS)} lesson(s) there" in again.stdout
    assert {name: (folders["student"] / name).read_bytes() for name in LESSONS} == student
    mine = installed.outside / "mine"
    mine.mkdir()
    (mine / LESSONS[2]).write_text("my own work\n")
    partly = installed.run("-m", "labkit", "lessons", "--reference", str(mine))
    assert partly.returncode == 0, partly.stderr
    assert "left your 1 lesson(s) there" in partly.stdout
    assert (mine / LESSONS[2]).read_text() == "my own work\n"
    assert sorted(path.name for path in mine.iterdir()) == LESSONS


@pytest.mark.parametrize("name", LESSONS)
def test_each_reference_lesson_runs_from_the_wheel_and_shows_its_saved_outputs(lessons, name):
    compared = lessons.compared[name]
    assert compared["failed"] == [], "\n".join(compared["failed"])
    code = [
        c
        for c in nbformat.read(ROOT / "notebooks" / name, as_version=4).cells
        if c.cell_type == "code"
    ]
    assert compared["passed"] == len(code), compared  # every cell ran and matched


def test_a_recording_is_found_by_path_first_then_by_the_courses_name(tmp_path, monkeypatch):
    from labkit.recording import recording_path
    from labkit.settings import RECORDINGS_DIR

    monkeypatch.chdir(tmp_path)
    assert recording_path("repair.json") == ROOT / "recordings" / "repair.json"
    assert RECORDINGS_DIR == ROOT / "recordings"
    (tmp_path / "repair.json").write_text("{}")  # a file of the learner's, named as given, wins
    assert recording_path("repair.json") == Path("repair.json")
    assert recording_path("sub/repair.json") == Path("sub/repair.json")  # a path stays a path
    assert recording_path("no_such.json") == Path("no_such.json")  # so the error names it
    (tmp_path / "repair.json").unlink()
    assert recording_path("repair") == ROOT / "recordings" / "repair.json"  # .json may be left out
    assert recording_path("repair.j") == Path("repair.j")


def test_a_name_found_nowhere_is_an_error_that_lists_the_courses_recordings(tmp_path, monkeypatch):
    from labkit import RecordingError, load_recording

    monkeypatch.chdir(tmp_path)
    with pytest.raises(RecordingError) as raised:
        load_recording("repiar.json")
    message = str(raised.value)
    assert message.startswith("repiar.json: cannot be read (no such file here")
    assert all(name in message for name in ("repair.json", "repair_openai.json", "stale_edit.json"))
    with pytest.raises(RecordingError, match=r"^sub/repair.json: cannot be read \(No such file"):
        load_recording("sub/repair.json")  # a path is not looked up among the course's


def test_lessons_says_where_the_answers_are_without_them_or_given_a_file(
    tmp_path, monkeypatch, capsys
):
    from labkit.cli import main
    from labkit.grading import edition

    monkeypatch.setattr(edition, "NOTEBOOKS_DIR", None)  # a learner's install: no answers
    assert main(["lessons", "--reference", str(tmp_path / "lessons")]) == 1
    assert "pip wheel --no-deps -w dist instructor/" in capsys.readouterr().err
    assert not (tmp_path / "lessons").exists()
    assert main(["lessons", str(tmp_path / "lessons")]) == 0  # the student edition: no nbgrader
    (tmp_path / "a_file").write_text("mine")
    assert main(["lessons", "--reference", str(tmp_path / "a_file")]) == 1
    assert "it is a file, not a folder" in capsys.readouterr().err
    assert (tmp_path / "a_file").read_text() == "mine"


def solutions(path: Path) -> list:
    """The reference answers of a lesson: ``(cell, body)`` for each answer cell, its whole
    source without the markers and the text between them."""
    found = []
    for cell in nbformat.read(path, as_version=4).cells:
        if cell.cell_type != "code" or "### BEGIN SOLUTION" not in cell.source:
            continue
        lines = cell.source.splitlines()
        whole = "\n".join(line for line in lines if "### " not in line)
        body = cell.source.split("### BEGIN SOLUTION", 1)[1].split("### END SOLUTION", 1)[0]
        found.append((whole, body.strip()))
    return found


def test_the_student_package_holds_no_reference_answer_and_no_hidden_case(installed, tmp_path):
    """What a workshop's learners install, labkit's wheel alone, installed and read file by
    file: no reference answer of any lesson, no hidden test case, no instructor's package."""
    import labkit_answers.hidden

    target = tmp_path / "site"
    install = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index",
         "--target", str(target), str(installed.wheel)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert install.returncode == 0, install.stdout + install.stderr
    assert not (target / "labkit_answers").exists()
    texts = {
        str(path.relative_to(target)): path.read_bytes().decode("utf-8", "replace")
        for path in target.rglob("*")
        if path.is_file() and path.suffix != ".pyc"
    }
    answers = [answer for name in LESSONS for answer in solutions(ROOT / "notebooks" / name)]
    assert len(answers) >= len(LESSONS)
    for whole, body in answers:  # labkit's own modules do what the lessons teach, in one line
        assert not [where for where, text in texts.items() if whole in text], whole
        assert not [w for w, text in texts.items() if body in text and not w.endswith(".py")], body
    tree = ast.parse(Path(labkit_answers.hidden.__file__).read_text())

    def text(node):
        return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else ""

    cases = [  # each hidden case as the instructor wrote it: (its name, what it teaches)
        (text(case.elts[0]), text(case.elts[-1]))
        for case in ast.walk(tree)
        if isinstance(case, ast.Tuple) and len(case.elts) >= 3
        and text(case.elts[0]) and text(case.elts[-1])
    ]  # fmt: skip
    assert len(cases) >= 40
    for name, why in cases:  # a visible case may share either, never both
        assert not [where for where, found in texts.items() if name in found and why in found]
    for name in LESSONS:
        edition = texts[f"labkit/course/edition/{name}"]
        assert "BEGIN HIDDEN TESTS" not in edition and "BEGIN SOLUTION" not in edition, name


def test_the_messages_commands_work_from_a_wheel_installs_lessons_folder(installed, lessons):
    """Where a learner without a clone works: the folder ``lessons`` wrote. The replay the
    live-mode messages suggest finds the course's recording by its name there, and the
    pins come from the wheel itself, equal to the clone's requirements.lock."""
    folder = lessons.folders["student"]
    replay = installed.run("-m", "labkit", "replay", "repair", cwd=folder)
    assert replay.returncode == 0 and "Replay matches the recording." in replay.stdout
    pins = installed.run("-m", "labkit", "constraints", cwd=folder)
    assert pins.returncode == 0 and pins.stdout == (ROOT / "requirements.lock").read_text()


def test_the_pip_commands_suggested_install_what_they_say(installed, tmp_path):
    """Each pip command of the README and the messages (``WHEEL_COMMANDS``), run where it is
    meant to run, against the wheel built here: pip resolves it, offline (``--dry-run
    --no-index``: every pinned package is in this environment already), so a file it names
    is there, its options are pip's and the pins agree with what it installs. The wheel is
    built with ``pip wheel --no-deps`` by the ``installed`` fixture."""
    (tmp_path / "dist").mkdir()
    shutil.copy2(installed.wheel, tmp_path / "dist" / installed.wheel.name)
    shutil.copy2(installed.wheel, tmp_path / installed.wheel.name)
    shutil.copy2(ROOT / "requirements.lock", tmp_path / "requirements.lock")
    pins = installed.run("-m", "labkit", "constraints", cwd=tmp_path)
    (tmp_path / "pins.txt").write_text(pins.stdout)
    assert installed.wheel.name == "labkit-0.1.0-py3-none-any.whl"  # the name they give
    for command in WHEEL_COMMANDS:
        if command.startswith("pip wheel"):
            continue  # what the installed fixture ran to build the wheel
        words = shlex.split(command)[2:]
        dry = subprocess.run(
            [sys.executable, "-m", "pip", "install", "--dry-run", "--no-index", "--quiet", *words],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert dry.returncode == 0, (command, dry.stdout + dry.stderr)

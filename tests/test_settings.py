"""One place for each default: the course's settings, and the harness's own limits beside them."""

import re
from pathlib import Path

import nbformat
from conftest import PROJECT_DIR

import labkit
from labkit import settings
from labkit.harness import loop, sample, tools

LABKIT = Path(settings.__file__).parent
NOTEBOOKS = sorted(settings.NOTEBOOKS_DIR.glob("*.ipynb"))
#: The test suite and the benchmarks: they read the course's facts from labkit too.
OTHER_CODE = [PROJECT_DIR / "tests", PROJECT_DIR / "bench"]


def sources():
    """Every labkit module, the code cells of every lesson, every test and benchmark, as
    (name, text)."""
    found = [(str(path.relative_to(LABKIT)), path.read_text()) for path in LABKIT.rglob("*.py")]
    for path in NOTEBOOKS:
        cells = nbformat.read(path, as_version=4).cells
        found.append((path.name, "\n".join(c.source for c in cells if c.cell_type == "code")))
    for folder in OTHER_CODE:
        found += [
            (str(path.relative_to(PROJECT_DIR)), path.read_text())
            for path in folder.rglob("*.py")
            if path != Path(__file__)  # its patterns name what they look for
        ]
    return found


def test_the_model_tags_are_written_in_settings_only():
    for tag in settings.DEFAULT_MODELS.values():
        holders = [name for name, text in sources() if tag in text]
        assert holders == ["settings.py"], tag


def test_the_turn_budget_is_written_once_in_the_loop():
    budget = re.compile(
        r"max_turns\s*(:\s*int\s*)?=\s*8\b|\"max_turns\": 8\b|MAX_TURNS\s*=\s*\d|max-turns\D+8\b"
    )
    holders = [name for name, text in sources() if budget.search(text)]
    assert holders == ["harness/loop.py"]
    assert labkit.MAX_TURNS is loop.MAX_TURNS == 8
    assert not hasattr(settings, "DEFAULT_MAX_TURNS")  # no second name for it


def test_the_settings_name_the_harness_limits_without_repeating_them():
    assert settings.TEST_TIMEOUT is tools.TEST_TIMEOUT
    assert settings.CHECK_TIMEOUT is sample.CHECK_TIMEOUT
    assert settings.SAMPLE_DIR == sample.SAMPLE_DIR


def test_every_lesson_takes_its_model_from_the_settings():
    for path in NOTEBOOKS:
        cell = next(
            c
            for c in nbformat.read(path, as_version=4).cells
            if "parameters" in c.metadata.get("tags", [])
        )
        assert "MODEL = DEFAULT_MODEL" in cell.source, path.name
        values = {}
        exec(cell.source, {}, values)
        assert values["MODEL"] == settings.DEFAULT_MODEL


def test_the_folders_are_found_in_the_package_data():
    assert (settings.SAMPLE_DIR / "path_rules.py").is_file()
    assert (settings.RECORDINGS_DIR / "repair.json").is_file()
    assert (settings.NOTEBOOKS_DIR / "01_one_file_read.ipynb").is_file()
    assert (settings.EDITION_DIR / "01_one_file_read.ipynb").is_file()
    assert labkit.recording_path("repair.json") == settings.RECORDINGS_DIR / "repair.json"

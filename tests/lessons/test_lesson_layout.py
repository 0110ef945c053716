"""How every lesson is laid out, so that Run All shows it whole and its parameters mean what
they say. Each lesson is read as a notebook; nothing is run here."""

import re

import nbformat
import pytest
from conftest import PROJECT_DIR, parameters_of

from labkit import PROVIDER_PARAMETERS
from labkit.grading.conventions import nbgrader_role
from labkit.models.providers import PROVIDERS

NOTEBOOKS = sorted((PROJECT_DIR / "notebooks").glob("[0-9][0-9]_*.ipynb"))  # every lesson


def cells_of(notebook):
    return nbformat.read(notebook, as_version=4).cells


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda path: path.stem)
def test_no_demonstration_comes_after_the_first_test_cell(notebook):
    """Run All stops at the first test cell until its exercise is answered (an nbgrader test
    cell must fail on an unanswered stub), so whatever comes after it is unseen by a learner
    who runs all. The rule: after a lesson's first test cell, every code cell is an exercise's
    answer cell or test cell. Whatever an exercise needs (the calls it asks about, the policy
    it restates) is above its first exercise or written in the exercise's own text."""
    cells = cells_of(notebook)
    roles = [nbgrader_role(cell) for cell in cells]
    first = roles.index("test")
    after = [
        f"cell {index}: {cells[index].source.splitlines()[0][:70]!r}"
        for index in range(first, len(cells))
        if cells[index].cell_type == "code" and roles[index] not in ("answer", "test")
    ]
    assert after == [], f"{notebook.stem}: demonstrations after the first test cell"


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda path: path.stem)
def test_each_lesson_says_at_its_top_what_run_all_does(notebook):
    top = cells_of(notebook)[0]
    words = " ".join(top.source.split())  # where a markdown line breaks does not matter
    assert top.cell_type == "markdown" and "**Run All**" in words, notebook.stem
    assert "stops at the first exercise's test cell" in words


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda path: path.stem)
def test_a_lesson_with_a_live_mode_takes_the_providers_parameters_and_checks_them(notebook):
    """Every lesson that has a live mode (it makes its model with ``lesson_model``) takes
    lesson 06's parameters and passes them on, and the cell after its parameters cell calls
    ``check_parameters``, so that a parameter it does not take is an error."""
    cells = cells_of(notebook)
    assert any("lesson_model(" in cell.source for cell in cells)
    assert set(PROVIDER_PARAMETERS) <= set(parameters_of(notebook))
    index = next(i for i, c in enumerate(cells) if "parameters" in c.metadata.get("tags", []))
    following = next(c for c in cells[index + 1 :] if c.cell_type == "code")
    assert "check_parameters(globals()" in following.source
    made = "".join(cell.source for cell in cells if "lesson_model(" in cell.source)
    for argument in ("provider=PROVIDER", "model=MODEL", "host=OLLAMA_HOST", "base_url=BASE_URL"):
        assert argument in made, argument


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda path: path.stem)
def test_each_lesson_names_every_provider_its_provider_parameter_takes(notebook):
    """``PROVIDER`` takes any of the course's providers in every lesson: its parameters cell
    says which, so that a learner reading lesson 01 knows that Gemini works there too."""
    cell = next(c for c in cells_of(notebook) if "parameters" in c.metadata.get("tags", []))
    missing = [name for name in PROVIDERS if f'"{name}"' not in cell.source]
    assert missing == [], f"{notebook.stem}'s parameters cell does not name {missing}"


#: Nouns the lessons count; "1" before their plural is a slip ("1 old results", "1 cases").
COUNTED = (
    "results|cases|messages|calls|requests|characters|chunks|lines|steps|turns|bytes|"
    "predictions|fragments|tests|commands|times|errors|questions"
)


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda path: path.stem)
def test_no_saved_output_counts_one_of_anything_in_the_plural(notebook):
    slip = re.compile(rf"\b1 (?:[a-z_]+ )?(?:{COUNTED})\b")
    found = [
        match.group(0)
        for cell in cells_of(notebook)
        for output in cell.get("outputs", [])
        for text in (
            "".join(output.get("text", "")),
            "".join(output.get("data", {}).get("text/plain", "")),
            "".join(output.get("data", {}).get("text/html", "")),
        )
        for match in slip.finditer(text)
    ]
    assert found == []

import hashlib
import shutil
import subprocess

import pytest

from labkit import run_checks, sample_copy
from labkit.harness import sample
from labkit.harness.sample import (
    SAMPLE_DIR,
    SHIPPED,
    TEST_FILE,
    Checks,
    SampleChanged,
    check_sample,
    file_sha256,
    parse_pytest_counts,
    sample_changes,
)


def test_the_sample_starts_with_one_failure_and_three_passes():
    with sample_copy() as root:
        checks = run_checks(root)
    assert (checks.exit_code, checks.failed, checks.passed) == (1, 1, 3)
    assert checks.summary == "1 failed, 3 passed"


def test_copies_are_fresh_and_removed_afterwards():
    with sample_copy() as root:
        (root / "path_rules.py").write_text("broken")
        assert root != SAMPLE_DIR
    assert not root.exists()
    with sample_copy() as again:
        assert file_sha256(again / TEST_FILE) == file_sha256(SAMPLE_DIR / TEST_FILE)
        assert "broken" not in (again / "path_rules.py").read_text()


def test_a_syntax_error_counts_as_a_failure():
    with sample_copy() as root:
        (root / "path_rules.py").write_text("def python_sources(:\n")
        checks = run_checks(root)
    assert checks.exit_code != 0 and checks.failed >= 1 and checks.passed == 0


def test_pytest_summary_lines_are_parsed():
    assert parse_pytest_counts("..F.\n1 failed, 3 passed in 0.02s\n") == {"failed": 1, "passed": 3}
    assert parse_pytest_counts("== 4 passed, 1 warning in 61.2s (0:01:01) ==") == {
        "passed": 4,
        "warning": 1,
    }
    assert parse_pytest_counts("no summary here") == {}
    assert Checks(0, 4, 0).summary == "4 passed" and Checks(2, 0, 0).summary == "0 passed"


# --- The sample as shipped --------------------------------------------------------------

CLONE = SAMPLE_DIR.parent


def git(*args, cwd):
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True)


def test_the_shipped_digests_are_the_files_git_holds():
    listed = git("ls-files", "sample_repo", cwd=CLONE).stdout.split()
    held = {
        name.removeprefix("sample_repo/"): hashlib.sha256(
            subprocess.run(
                ["git", "show", f"HEAD:{name}"], cwd=CLONE, capture_output=True, check=True
            ).stdout
        ).hexdigest()
        for name in listed
    }
    assert held == SHIPPED
    assert sample_changes() == []


@pytest.fixture
def clone_with_a_sample(tmp_path):
    """A git clone in miniature: the sample committed, as a learner's clone holds it."""
    shutil.copytree(
        SAMPLE_DIR,
        tmp_path / "sample_repo",
        ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache"),
    )
    git("init", "-q", cwd=tmp_path)
    git("add", "sample_repo", cwd=tmp_path)
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "sample", cwd=tmp_path)
    return tmp_path


def test_a_sample_edited_in_a_clone_is_named_with_the_command_that_restores_it(
    clone_with_a_sample, tmp_path_factory
):
    folder = clone_with_a_sample / "sample_repo"
    (folder / "path_rules.py").write_text("# my own fix\n")
    (folder / "notes.txt").write_text("mine\n")
    with pytest.raises(SampleChanged) as refused:
        check_sample(folder)
    message = str(refused.value)
    assert "sample_repo/notes.txt, sample_repo/path_rules.py were changed in place" in message
    assert "The sample must stay as shipped" in message
    commands = [part.split("`")[0] for part in message.split("`git ")[1:]]
    assert commands == [
        f"-C {clone_with_a_sample} checkout -- sample_repo",
        f"-C {clone_with_a_sample} clean -f -d sample_repo",
    ]
    elsewhere = tmp_path_factory.mktemp("student")  # the commands work from any folder
    for command in commands:
        subprocess.run(["git", *command.split()], cwd=elsewhere, check=True, capture_output=True)
    check_sample(folder)  # restored


def test_a_sample_changed_outside_a_clone_says_to_install_labkit_again(tmp_path):
    folder = tmp_path / "site-packages" / "labkit" / "harness" / "sample_repo"
    shutil.copytree(
        SAMPLE_DIR, folder, ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache")
    )
    (folder / "pytest.ini").unlink()
    with pytest.raises(
        SampleChanged, match="sample_repo/pytest.ini was changed in place"
    ) as refused:
        check_sample(folder)
    assert "install labkit's wheel again" in str(refused.value) and "git" not in str(refused.value)


def test_an_attempt_and_a_recording_refuse_a_changed_sample_by_its_name(monkeypatch):
    from labkit import load_recording

    monkeypatch.setitem(sample.SHIPPED, "path_rules.py", "0" * 64)  # as if it had been edited
    with pytest.raises(SampleChanged, match="sample_repo/path_rules.py was changed"):
        load_recording("repair.json")  # not "recorded against a different sample"
    with pytest.raises(SampleChanged, match="sample_repo/path_rules.py was changed"):
        with sample_copy():
            pass


def test_lesson_13s_project_is_shipped_whole_and_fails_one_test_on_a_copy():
    from labkit.harness.project import PROJECT, SAMPLES

    assert set(SAMPLES) == {"sample_repo", "sample_project"}
    check_sample(sample=PROJECT)  # its files are as shipped
    with sample_copy(PROJECT) as root:
        assert run_checks(root).summary == "1 failed, 36 passed"
        (root / "ledger" / "models.py").write_text("broken")
        assert sample_changes(sample=PROJECT) == []  # the copy, not the shipped folder

from labkit import run_checks, sample_copy
from labkit.harness.sample import SAMPLE_DIR, TEST_FILE, Checks, file_sha256, parse_pytest_counts


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

"""Lesson 13's larger sample, ``sample_project/``: a small personal-finance ledger (ten
modules, seven test files, about a thousand lines), written for the course.

It is shipped and copied like ``sample_repo/`` (``sample.Sample``): the folder beside this
file is never changed, every attempt works on ``sample_copy(PROJECT)``. Its one fault is
in ``Ledger.between`` (``ledger/models.py``): its docstring says both days are included,
but it leaves out the last one. So a month's summary misses its last day (one test fails,
in ``tests/test_reports.py``), while one caller, ``spent_in`` in ``ledger/budget.py``,
asks for a day more to work around it. Repairing ``between`` alone breaks the budget's
test; the repair needs every caller of the method, which is what lesson 13 compares
ways of finding.

``SAMPLES`` names both samples, as a recording keeps the one it ran on.
"""

from __future__ import annotations

from .sample import REPAIR_SAMPLE, Sample

#: The project's files as the course ships them (sha256): what its recordings were made against.
PROJECT_SHIPPED = {
    "ledger/__init__.py": "78fe5c22254fa152b7082610a15af5ae084fc5ea39cf2e07c0893c38307b0e07",
    "ledger/budget.py": "2f9d9b0fa0fcdfa1c18c29fd3302735c53d58bb89c59a00df4e4a886decd6845",
    "ledger/cli.py": "97dcb21a013b19c8e5f239185fdf1e70d19e5daefe895c5ca1a54f77d54cc9a7",
    "ledger/dates.py": "30b564c3eead8c6fc5d4f4e472f1e88e52fff785f903c52839636bfda3523c6e",
    "ledger/importers.py": "7b32fa3f1be1f83261221eeec2d81c7f29270b926d5a7b8d0c417d4125bd9545",
    "ledger/models.py": "7d682bc353a3024ee81ce4a666d73e51be935da18959149064a5327ed72e5f51",
    "ledger/money.py": "bdb8f50f16531faa5c59e42771a7dab9f2d7445f4898ff9e7ca6468ef47c3a92",
    "ledger/reports.py": "1dcea9eeac888bf96261348a175304063ca0615682f56142f81e09ff493d5c0f",
    "ledger/rules.py": "0d820f265597a71c706f1e8cd1b1f2953ed15141ea87abd608fb3b4653e0293e",
    "ledger/storage.py": "e96c1185953fd73a7bd00f8d525a8dd09283f478095bce40c795861f97810348",
    "pytest.ini": "07e12af78809b103a9e003b9bf24f9718928fa263046b37bf3ebc9ebbf802ceb",
    "tests/__init__.py": "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "tests/test_dates.py": "17fda991deb1e6acf41a9b9d5868e894e116689aef43ed8cee8324381d331811",
    "tests/test_importers.py": "11165d67277c6f654ec63fd6ab7176f4c60baaefbacdfcb311a7dfa3bcf41394",
    "tests/test_ledger.py": "ae5d9dfe97934e9d74005d4913c27f3a176c5e6e504160a0496b0b09ce65ce78",
    "tests/test_money.py": "bc5611f32ddd9a3328ee43ab960cc2b2a39db96473ed0118ecd1c08eb8dd01b0",
    "tests/test_reports.py": "3685fc48a0809aa0a0067ba4fb33f8a9c9491bea349928b591bd6fa55056dec4",
    "tests/test_rules.py": "054985770be88ae63c69ab12c0d4e0e4e8a489df7573dc9a573d2bfdae386065",
}
#: The project's test files, in the order their digest is taken (``sample.tests_sha256``).
PROJECT_TESTS = tuple(sorted(name for name in PROJECT_SHIPPED if name.startswith("tests/test_")))
PROJECT = Sample("sample_project", PROJECT_SHIPPED, PROJECT_TESTS)
#: The samples a run may work on, by the name a recording keeps.
SAMPLES = {sample.name: sample for sample in (REPAIR_SAMPLE, PROJECT)}

#: Lesson 13's task: the same repair, found three ways (grep, symbols, retrieval).
PROJECT_TASK = (
    "In the ledger package, a month's summary leaves out the transactions of the month's last "
    "day, and a test fails. Repair the package so that every test passes; the tests are "
    "read-only. Your tools: read_file (offset and limit read part of a file), edit (one exact "
    "piece of a file), write_file, glob, grep and run_command: run the tests with "
    "python -m pytest -q."
)
SYMBOLS_NOTE = (
    " You also have a language server's answers: definition, references (every use of a "
    "name, by meaning), hover and diagnostics."
)

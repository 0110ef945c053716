from ignore_rules import skipped


def test_a_top_level_folder_is_skipped():
    assert skipped("build/app.o")


def test_a_nested_folder_is_skipped():
    assert skipped("src/__pycache__/app.cpython-311.pyc")


def test_sources_are_kept():
    assert not skipped("src/app.py")


def test_a_file_named_like_a_folder_is_kept():
    assert not skipped("docs/build")

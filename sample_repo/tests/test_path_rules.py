from path_rules import python_sources


def test_selects_only_python_files_under_src():
    changed = ["src/app.py", "docs/setup.md", "tests/test_app.py"]
    assert python_sources(changed) == ["src/app.py"]


def test_nested_modules_keep_their_path():
    assert python_sources(["src/api/routes.py"]) == ["src/api/routes.py"]


def test_backslash_names_are_accepted_and_normalised():
    assert python_sources(["src\\api\\routes.py"]) == ["src/api/routes.py"]


def test_empty_list_selects_nothing():
    assert python_sources([]) == []

"""A ``before_tool`` hook: no edit of a test file. The tests say what "repaired" means; a
model told so in its prompt may still edit them (a prompt is a request, not a rule), so
the harness enforces it here, whatever the model was told and whichever tool it uses.

Exit 2 (no) with the reason on stderr when the call's ``path`` is a test file; exit 0,
silent, otherwise.
"""

import json
import sys
from pathlib import PurePosixPath


def is_test_file(path: str) -> bool:
    parts = PurePosixPath(path.replace("\\", "/")).parts
    return bool(parts) and (
        "tests" in parts[:-1] or parts[-1].startswith("test_") or parts[-1] == "conftest.py"
    )


def main() -> None:
    event = json.load(sys.stdin)
    path = event.get("arguments", {}).get("path")
    if isinstance(path, str) and is_test_file(path):
        print(
            f"{path} is a test file, and the tests are not to be edited: they say what "
            "'repaired' means. Change the code under test instead.",
            file=sys.stderr,
        )
        sys.exit(2)


if __name__ == "__main__":
    main()

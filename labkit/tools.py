"""The three tools the model may ask for, confined to one copy of the sample repository.

The model names a tool and gives JSON arguments; ``RepoTools.invoke`` is the only
way in. It refuses unknown names and malformed arguments with ``ValueError`` or
``TypeError`` (the loop turns those into ``{"error": ...}`` results the model can
read), and no argument can reach a file other than the two it allows.
"""

from __future__ import annotations

from pathlib import Path

from .atomic import write_atomically
from .pytest_run import run_pytest
from .sample import SOURCE_FILE, TEST_FILE

READABLE = (SOURCE_FILE, TEST_FILE)
MAX_FILE_BYTES = 64_000  # larger than the sample will ever honestly be
MAX_TEST_OUTPUT = 2_000  # characters of pytest output the model sees

SCHEMAS = [
    {
        "type": "function",
        "function": {
            "name": "read_file",
            "description": (
                "Read one file of the repository and return its text. Only two paths are "
                f"allowed: '{SOURCE_FILE}' and '{TEST_FILE}'. Read a file before you edit it."
            ),
            "parameters": {
                "type": "object",
                "properties": {
                    "path": {"type": "string", "enum": list(READABLE),
                             "description": "The file to read, relative to the repository root."},
                },
                "required": ["path"],
                "additionalProperties": False,
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "replace_text",
            "description": (
                f"Edit {SOURCE_FILE} by replacing one exact piece of its text. 'old' must appear "
                "exactly once in the file, copied character for character (spaces included) from "
                "your last read_file; if it is not found, read the file again. Never edit the tests."
            ),
            "parameters": {
                "type": "object",
                "properties": {
                    "old": {"type": "string", "description": "The exact text to replace."},
                    "new": {"type": "string", "description": "The text to put in its place."},
                },
                "required": ["old", "new"],
                "additionalProperties": False,
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "run_tests",
            "description": (
                "Run the repository's test suite with pytest and return its exit_code (0 means "
                "every test passed) and the end of its output. Takes no arguments."
            ),
            "parameters": {"type": "object", "properties": {}, "additionalProperties": False},
        },
    },
]


class RepoTools:
    """The model's tools, working inside ``root`` (a disposable copy of the sample)."""

    schemas = SCHEMAS

    def __init__(self, root, *, test_timeout: float = 30.0):
        self.root = Path(root).resolve()
        self.test_timeout = test_timeout
        self._handlers = {"read_file": self.read_file, "replace_text": self.replace_text,
                          "run_tests": self.run_tests}

    def invoke(self, name, arguments):
        """Run the tool called ``name`` with a dict of ``arguments`` and return its result."""
        handler = self._handlers.get(name) if isinstance(name, str) else None
        if handler is None:
            raise ValueError(f"unknown tool {name!r}; the tools are: {', '.join(self._handlers)}")
        if not isinstance(arguments, dict):
            raise TypeError(f"arguments for {name} must be a JSON object, "
                            f"not {type(arguments).__name__}")
        _check_arguments(name, arguments)
        return handler(**arguments)

    def read_file(self, path):
        file = self._confined(path, allowed=READABLE)
        data = file.read_bytes()
        text = data[:MAX_FILE_BYTES].decode("utf-8", errors="replace")
        if len(data) > MAX_FILE_BYTES:
            text += f"\n[labkit: file cut at {MAX_FILE_BYTES} of {len(data)} bytes]"
        return {"path": path, "content": text}

    def replace_text(self, old, new):
        if not old:
            raise ValueError("'old' is empty; copy the exact lines to replace from read_file")
        if len(new) > MAX_FILE_BYTES:
            raise ValueError(f"'new' is {len(new)} characters; an edit may be at most "
                             f"{MAX_FILE_BYTES}")
        file = self._confined(SOURCE_FILE, allowed=(SOURCE_FILE,))
        text = file.read_text(encoding="utf-8")
        found = text.count(old)
        if found != 1:
            where = "does not occur" if found == 0 else f"occurs {found} times"
            raise ValueError(f"'old' {where} in {SOURCE_FILE}; it must occur exactly once. "
                             "Read the file again and copy the exact text, with more "
                             "surrounding lines if needed.")
        # atomic, through a fresh temporary file; an edit keeps the file's permissions
        write_atomically(file, text.replace(old, new, 1).encode("utf-8"),
                         mode=file.stat().st_mode & 0o777)
        return {"path": SOURCE_FILE, "replaced": 1}

    def run_tests(self):
        run = run_pytest(self.root, timeout=self.test_timeout, tail_bytes=MAX_TEST_OUTPUT)
        return {"exit_code": run.exit_code, "timed_out": run.timed_out, "output": run.output}

    def _confined(self, path, *, allowed) -> Path:
        """Resolve an allowed relative path, refusing anything that leads out of the copy."""
        if path not in allowed:
            raise ValueError(f"path {str(path)[:200]!r} is not allowed; use one of: "
                             f"{', '.join(allowed)}")
        file = self.root / path
        if file.resolve() != file or not file.is_file() or file.stat().st_nlink > 1:
            raise OSError(f"{path} is not a regular file inside the repository copy "
                          "(it is missing, or a link)")
        return file


def _check_arguments(name: str, arguments: dict) -> None:
    parameters = next(s["function"]["parameters"] for s in SCHEMAS if s["function"]["name"] == name)
    expected = set(parameters["properties"])
    extra = set(arguments) - expected
    missing = set(parameters.get("required", [])) - set(arguments)
    if extra or missing:
        problems = [f"unexpected {sorted(extra)}" if extra else "",
                    f"missing {sorted(missing)}" if missing else ""]
        raise TypeError(f"{name} takes {sorted(expected) or 'no arguments'}: "
                        + "; ".join(p for p in problems if p))
    for key, value in arguments.items():
        if not isinstance(value, str):
            raise TypeError(f"{name}: '{key}' must be a string, not {type(value).__name__}")

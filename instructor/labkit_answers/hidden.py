"""The hidden test cases: what each check adds when a test cell's hidden part calls it with
``hidden=True`` (nbgrader takes those lines out of the student edition).

They live here, outside the package learners install, so a learner cannot read them (the
visible cases and the cases drawn at random stay in ``labkit.grading.checks``). ``HIDDEN``
maps a check's name to a function returning the extra cases, each in the shape of that
check's own list; a check passes what its cases are built from (``read_source``...) as
keyword arguments. ``labkit.grading.checks.common.hidden_cases`` is the one caller.
"""

from __future__ import annotations

from labkit.grading.checks import (
    lesson02_streamed_turn as lesson02,
)
from labkit.grading.checks import (
    lesson06_results as lesson06_results,
)
from labkit.grading.checks import (
    lesson06_streams as streams,
)
from labkit.grading.checks import (
    lesson08_context_budget as lesson08,
)
from labkit.grading.checks import (
    lesson09_toolkit as lesson09,
)
from labkit.grading.checks import (
    lesson10_ground_state as lesson10,
)
from labkit.grading.checks import (
    lesson11_extension as lesson11,
)
from labkit.grading.checks import (
    lesson12_sandbox as lesson12,
)
from labkit.grading.checks import (
    lesson13_finding_code as lesson13,
)
from labkit.grading.checks import (
    lesson14_streams as lesson14s,
)
from labkit.grading.checks import (
    lesson14_your_loop as lesson14,
)


def _tool_message() -> list:
    return [("an empty result", "run_tests", {}, "an empty dict is the JSON text '{}'")]


def _assemble_content() -> list:
    return [("one fragment", [lesson02._chunk("x", done=True)], "")]


def _may_dispatch() -> list:
    return [
        (
            "a length cut with text only",
            [lesson02._chunk("The answer is"), lesson02._chunk(done=True, done_reason="length")],
            "done_reason 'length' means the reply was cut, whatever it holds",
        )
    ]


def _append_results(read_source) -> list:
    return [
        (
            "the same call twice",
            [read_source, read_source],
            "each call runs, even when two are alike",
        )
    ]


def _repair_verdict(same_hash) -> list:
    last = "0" if same_hash[-1] != "0" else "1"
    return [
        (
            "interrupted after 4 passed (exit code 2)",
            (2, 4, 0, "4 passed in 0.03s\n!!! KeyboardInterrupt !!!"),
            same_hash,
            same_hash,
            "only exit code 0 is a finished, passing run",
        ),
        (
            "hashes that differ only in their last character",
            (0, 4, 0, "4 passed in 0.03s"),
            same_hash,
            same_hash[:-1] + last,
            "compare the whole hashes: any difference means the file changed",
        ),
    ]


def _assemble_calls(read, mixed) -> list:
    return [
        ("the first entry carries arguments too", "chat", streams.eager_start(), ""),
        ("a call whose start arrives before a lower index's", "chat", streams.out_of_order(),
         "the calls come back in index order"),
        ("a finish_reason this lesson never named", "chat",
         streams.ended(read, "function_call"),
         "only 'tool_calls' and 'stop' end a reply whose calls may run"),
        ("Responses: three calls, their deltas interleaved around a text item", "responses",
         streams.responses_interleaved(three=True),
         "each delta names its item (item_id): join the deltas of each item on its own"),
        ("Responses: response.incomplete for a reason this lesson never named", "responses",
         streams.responses_ended(mixed, streams.incomplete("max_messages")),
         "response.incomplete, whatever its reason, means the reply did not finish"),
        ("Responses: an error event", "responses",
         streams.responses_ended(mixed, streams.ERROR), "an error event runs nothing"),
    ]  # fmt: skip


def _result_messages(read, tested) -> list:
    call, unnamed = lesson06_results._call, lesson06_results._unnamed
    return [
        ("anthropic: the same tool twice", "anthropic",
         [call("anthropic", 4, "read_file"), call("anthropic", 5, "read_file")],
         [read, {"path": "NOTES.md", "content": "Grüße ✓"}]),
        ("gemini: one call with an id, one without", "gemini",
         [call("gemini", 6, "run_tests"), unnamed(call("gemini", 7, "read_file"))],
         [tested, read]),
        ("openai-responses: no tool calls", "openai-responses", [], []),
    ]  # fmt: skip


def _policy() -> list:
    return [
        ("backticks", ["sh", "-c", "echo `curl x.example`"], "a command in backticks runs too"),
        (
            "a command sent to the background",
            ["bash", "-c", "python -m pytest -x &"],
            "& only separates commands: the one command here is allowed",
        ),
        ("a shell with no script", ["sh", "-c"], "no script, no allowed command: ask"),
        # each rule broken alone gets a case of its own
        (
            "a shell not given its script with -c",
            ["bash", "-x", "git status"],
            "a shell whose second word is not -c reads its script from a file or its input, which "
            "no one sees: deny, whatever the words after it",
        ),
        ("a script ending in ';'", ["sh", "-c", "git status;"], "an empty piece is no command"),
        (
            "rm first, then the tests",
            ["sh", "-c", "rm -rf build; python -m pytest"],
            "the strictest verdict wins, wherever its command comes in the script",
        ),
        (
            "a denied command with a variable",
            ["sh", "-c", "rm -rf $HOME"],
            "rule 3 caps an allow at ask; a deny stays a deny",
        ),
        (
            "a variable given to pytest, with no shell",
            ["python", "-m", "pytest", "$HOME"],
            "without a shell, $HOME is five plain characters: rule 1 allows the tests",
        ),
        ("git diff with a path", ["git", "diff", "path_rules.py"], "git diff may take more words"),
    ]


def _head_and_tail() -> list:
    old = lesson08._old
    return [
        (
            "an earlier marker wholly in the cut",
            "x" * 200 + old(123, "characters") + "y" * 200,
            90,
            "a marker inside the part you cut goes with it",
        ),
        (
            "one character over",
            "z" * 101,
            100,
            "one character over the limit is cut like any other",
        ),
        (
            "an earlier marker that counts characters, where the head would end",
            "a" * 10 + old(7, "characters") + "b" * 200,
            60,
            "an old marker may count characters or bytes: OLD_MARKER finds both",
        ),
    ]


def _compaction() -> list:
    already = lesson08.conversation(
        [("read_file", lesson08.NOTE)],
        [("run_tests", lesson08._result("d", 900))],
        [("read_file", lesson08._result("e", 50))],
    )
    return [
        (
            "an already compacted result",
            already,
            300,
            "a result that is NOTE already is not replaced again",
        )
    ]


def _apply_edit() -> list:
    return [
        (
            "overlapping occurrences further in",
            ["x = 'abab'\nababab\n", "abab", "z"],
            "'abab' occurs at 0 and at 2 of 'ababab': overlapping occurrences count",
        ),
        (
            "overlapping occurrences, replace_all",
            ["xaaax", "aa", "b", True],
            "overlapping occurrences make replace_all ambiguous too: raise NotUnique",
        ),
        (
            "CRLF elsewhere untouched",
            ["a\r\nb\r\nc\r\n", "b", "B"],
            "only the replaced text changes: keep every other line ending as it was",
        ),
        ("unicode", ["café — 😀\n", "😀", "ok"], "strings are characters, whatever their bytes"),
        ("LF text, CRLF in old", ["a\nb\n", "a\r\nb", "c\r\nd"], "an LF text gets LF newlines"),
    ]


def _parse_search_replace() -> list:
    return [
        (
            "several blocks for several files",
            lesson09.block("a.py", "1\n", "2\n")
            + "\n"
            + lesson09.block("b/c.py", "x\n", "y\nz\n")
            + lesson09.block("a.py", "", "3\n"),
            "each block takes the path just above it",
        ),
        (
            "no trailing newline",
            lesson09.FIX.rstrip("\n"),
            "the last line needs no newline of its own",
        ),
        (
            "a ======= line inside the replaced text, twice, with CRLF",
            lesson09.block("notes.md", "A\n", "=======\nB\n=======\n").replace("\n", "\r\n"),
            "only >>>>>>> REPLACE ends the REPLACE part",
        ),
        (
            "a new SEARCH inside a block",
            f"f.py\n{lesson09.SEARCH}\na\n{lesson09.DIVIDER}\nb\n{lesson09.SEARCH}\n",
            "a new SEARCH before REPLACE: the block is not closed",
        ),
    ]


def _system_prompt() -> list:
    return [
        (
            "a four-byte character at the cut",
            [lesson10.PARTS, lesson10.project("ok \U0001f600 done"), 5],
            "'\U0001f600' takes bytes 4 to 7: a cut at 5 keeps 3 bytes",
        ),
        (
            "an absolute link",
            [lesson10.PARTS, lesson10.project("x", links_to="/etc/passwd"), 100],
            "an absolute target is outside the workspace",
        ),
        (
            "a link that climbs out through a folder",
            [lesson10.PARTS, lesson10.project("x", links_to="docs/../../outside.md"), 100],
            "docs/../../outside.md is ../outside.md: outside",
        ),
        (
            "an empty file",
            [lesson10.PARTS, lesson10.project(""), 100],
            "an empty file adds no part",
        ),
        (
            "a file exactly at the cap",
            [lesson10.PARTS, lesson10.project("12345"), 5],
            "5 bytes fit a cap of 5: no marker",
        ),
        (
            "only the base",
            [{"base": lesson10.BASE}, lesson10.project("\u20ac" * 4, "CLAUDE.md"), 7],
            "three-byte characters: 7 bytes keep two of them; the heading names CLAUDE.md",
        ),
    ]


def _subagent_result() -> list:
    return [
        (
            "a malformed last turn",
            [
                [
                    lesson10.started(1),
                    lesson10.text(1, "Found it in b.py."),
                    *lesson10.called(1, "grep", {"count": 1}),
                    lesson10.started(2),
                    lesson10.text(2, "{broken"),
                    lesson10.stopped("malformed_model_turn", 2, 1, "a chunk broke the format"),
                ]
            ],
            "a malformed turn is broken too: the answer is the turn before's",
        ),  # fmt: skip
        (
            "an empty response",
            [
                [
                    lesson10.started(1),
                    lesson10.stopped("empty_response", 1, 0, "no text and no tool calls"),
                ]
            ],
            "its reply ended, empty: answer '', with the detail",
        ),
        (
            "an incomplete last turn",
            [
                [
                    lesson10.started(1),
                    lesson10.text(1, "one"),
                    *lesson10.called(1, "glob", {"files": []}),
                    lesson10.started(2),
                    lesson10.text(2, "two"),
                    lesson10.stopped("incomplete_model_turn", 2, 1, "the stream ended early"),
                ]
            ],
            "an incomplete turn did not end: the answer is the turn before's",
        ),  # fmt: skip
    ]


def _ordered_results() -> list:
    return [
        ("no calls", [[], []], "nothing asked, nothing returned"),
        (
            "every call failed or late",
            [lesson10.asked("a", "b", "c"), lesson10.ended((2, {"error": "boom"}))],
            "every call asked gets a result",
        ),
    ]


def _mcp_to_tool_schema() -> list:
    nested = lesson11.NESTED
    return [
        ("nested objects", nested, "openai",
         "a nested object schema goes through as it is, its own 'required' included"),
        ("nested objects, Anthropic", nested, "anthropic",
         "the whole inputSchema is the input_schema; annotations and _meta are not sent"),
        ("neither description nor title", {"name": "ping", "inputSchema": {"type": "object",
         "properties": {}}}, "anthropic", "no description and no title: an empty description"),
        ("an empty description, a title", {"name": "ping", "description": "", "title": "Ping",
         "inputSchema": {"type": "object", "properties": {}}}, "openai",
         "an empty description is no description: use the title"),
        ("a name of 65 characters", {"name": "t" * 65, "description": "Long.",
         "inputSchema": {"type": "object", "properties": {}}}, "anthropic",
         "Anthropic takes at most 64 characters: raise ValueError"),
        ("a name that starts with a digit, for Gemini", {"name": "2fast", "description": "Go.",
         "inputSchema": {"type": "object", "properties": {}}}, "gemini",
         "Gemini wants a letter or _ first: raise ValueError"),
        ("nested objects, Gemini", nested, "gemini",
         "the whole inputSchema is the parametersJsonSchema"),
    ]  # fmt: skip


def _hook_decision() -> list:
    output = lesson11._output
    return [
        ("killed by a signal", output("stop"), -9, "a negative exit code is a crash too"),
        ("null", output("before_tool", "null"), 0, "null is JSON, but not an object: not_json"),
        ("a key the point does not take", output("before_request", '{"arguments": {}}'), 0,
         "before_request may give context only: a bad_reply"),
        ("a context that is a number", output("run_start", '{"context": 42}'), 0,
         "context is text: a bad_reply"),
    ]  # fmt: skip


def _layers() -> list:
    act, pytest = lesson12.act, lesson12.PYTEST
    return [
        (
            "git status with more words",
            act(["git", "status", "--short"], "read the workspace"),
            "workspace-write",
            "git status followed by anything is on the gate's list",
        ),
        (
            "a bash -c wrapper, no sandbox",
            act(["bash", "-c", "cat ~/.ssh/id_rsa"], "read a key in your home"),
            "none",
            "the wrapper is bash, which the gate does not allow",
        ),
        ("the tests fill /tmp, read-only", act(pytest, "fill /tmp"), "read-only", ""),
        (
            "the tests write through a hard link, read-only",
            act(pytest, "write through a hard link in the workspace"),
            "read-only",
            "",
        ),
        (
            "catalog is not cat",
            act(["catalog"], "read the workspace"),
            "workspace-write",
            "compare whole words",
        ),
    ]


# --- Lesson 13 ---


def _rank_chunks() -> list:
    return [
        (
            "a term in every chunk",
            ["self"],
            [["self", "a1"], ["self"], ["self", "self", "b1"]],
            3,
            "Lucene's idf is never negative: a term in every chunk still counts a little",
        ),
        (
            "empty chunks count in the average length",
            ["date"],
            [[], [], ["date"], ["date", "date", "date", "b1"]],
            3,
            "the average length is over every chunk, the empty ones too (N counts them as well)",
        ),
        ("every chunk empty", ["date"], [[], [], []], 3, "no chunk holds the term: return []"),
        ("no chunks", ["date"], [], 3, ""),
        ("an empty query", [], [["date"], ["cents"]], 3, "no term, no score above zero"),
        (
            "unicode terms",
            ["café", "naïve", "日付"],
            [["cafe", "naive"], ["café", "日付"], ["naïve"], ["日付", "日付", "x1"]],
            4,
            "compare terms exactly as given",
        ),
        ("k is 0", ["date"], [["date"]], 0, "return at most k indices"),
    ]


def _references_to_result() -> list:
    at, references = lesson13.at, lesson13.REFERENCES
    return [
        (
            "a space and an accent in a path",
            [at("ledger/my notes.py", 2), at("ledger/café.py", 0)],
            5,
            "a URI is percent-encoded: %20 is a space, %C3%A9 an é",
        ),
        (
            "two uses on one line",
            [at("a.py", 5, 30), at("a.py", 5, 2), at("a.py", 1)],
            5,
            "each location is a place, even two on the same line",
        ),
        ("a cap of 0", references, 0, "nothing listed, everything counted in 'more'"),
        (
            "only outside",
            [
                at("x.py", 1, root="/usr/lib"),
                {"uri": "untitled:1", "range": references[0]["range"]},
            ],
            5,
            "'count' counts the places in the workspace only",
        ),
        (
            "lines 9 and 10 of one file",
            [at("a.py", 9), at("a.py", 8)],
            5,
            "sort lines as numbers: 9 before 10",
        ),
        (
            "the workspace root itself",
            [at("", 0), at("../etc/passwd", 0), at("a.py", 0)],
            5,
            "only a file inside the workspace is a place",
        ),
    ]


def _my_loop() -> list:
    """Exercise 14a's hidden cases: ``(label, script, hint)``, as a right loop plays them."""
    three = [
        lesson14s.call("read_file", path="path_rules.py"),
        lesson14s.call("grep", pattern="x"),
        lesson14s.call("read_file", path="tests/test_path_rules.py"),
    ]
    tests = {"path": "tests/test_path_rules.py", "content": "def test(): pass\n"}
    calls_read = lesson14s._reply(lesson14s.chunk(tool_calls=[lesson14s.READ]), lesson14s._done())
    finished = lesson14s._reply(lesson14s.chunk("Done."), lesson14s._done())
    text_arguments = {"function": {"name": "read_file", "arguments": '{"path": "p'}}
    cut_off = {
        "chunks": [
            lesson14s.chunk("Let me "),
            lesson14s.chunk("read"),
            lesson14s.chunk(tool_calls=[lesson14s.READ]),
            lesson14s._done(),
        ],
        "failure": {"after": 2, "raise": "RuntimeError", "args": ["connection reset"]},
    }
    return [
        (
            "three calls in one reply",
            lesson14s.reference_script(
                [lesson14s._reply(lesson14s.chunk(tool_calls=three), lesson14s._done()), finished],
                [
                    lesson14s._result(lesson14s.SOURCE),
                    lesson14s._raise("ValueError", lesson14s.UNKNOWN),
                    lesson14s._result(tests),
                ],
            ),
            "run the calls one after another, in order, one result message each",
        ),
        (
            "arguments that are not an object",
            lesson14s.reference_script(
                [lesson14s._reply(lesson14s.chunk(tool_calls=[text_arguments]), lesson14s._done())],
                [],
            ),
            "a call whose arguments are not a JSON object makes the turn malformed",
        ),
        (
            "an empty reply after a call",
            lesson14s.reference_script(
                [calls_read, lesson14s._reply(lesson14s._done())],
                [lesson14s._result(lesson14s.SOURCE)],
            ),
            "",
        ),
        (
            "a budget of one request",
            lesson14s.reference_script(
                [
                    lesson14s._reply(
                        lesson14s.chunk(tool_calls=[lesson14s.READ, lesson14s.READ]),
                        lesson14s._done(),
                    )
                ],
                [lesson14s._result(lesson14s.SOURCE), lesson14s._result(lesson14s.SOURCE)],
                max_turns=1,
            ),
            "the last turn's tools still run and their results are appended; then stop",
        ),
        (
            "the server fails in the middle of a reply",
            lesson14s.reference_script([cut_off], []),
            "reading the next chunk raised: that is a model_error too",
        ),
        (
            "a tool that raises OSError",
            lesson14s.reference_script(
                [calls_read, finished], [lesson14s._raise("OSError", 5, "Input/output error")]
            ),
            "OSError is a tool error: {'error': str(exc)}, and the loop goes on",
        ),
        (
            "a budget of 0 requests",
            lesson14s.reference_script([], [], max_turns=0),
            "max_turns must be a positive int: 0, -1, True or '3' is a ValueError",
        ),
        (
            "a chunk after the final one",
            lesson14s.reference_script(
                [
                    lesson14s._reply(
                        lesson14s.chunk("Done."), lesson14s._done(), lesson14s.chunk(" More.")
                    )
                ],
                [],
            ),
            "nothing may come after the final chunk: the reply is malformed",
        ),
    ]


def _resolved_rate() -> list:
    return [
        (
            "exit code 0 but a test failed",
            [lesson14._row("a", "assistant_finished", (0, 3, 1))],
            "",
        ),
        (
            "no test ran",
            [lesson14._row("a", "assistant_finished", (5, 0, 0), text=lesson14.CLAIM)],
            "",
        ),
    ]


#: Every check's hidden cases, by the check's name (lesson 05's predictions have none).
HIDDEN = {
    "check_tool_message": _tool_message,
    "check_assemble_content": _assemble_content,
    "check_may_dispatch": _may_dispatch,
    "check_append_results": _append_results,
    "check_repair_verdict": _repair_verdict,
    "check_bounded_prediction": list,
    "check_stop_predictions": list,
    "check_assemble_calls": _assemble_calls,
    "check_result_messages": _result_messages,
    "check_policy": _policy,
    "check_gate_stops": list,
    "check_head_and_tail": _head_and_tail,
    "check_compaction": _compaction,
    "check_apply_edit": _apply_edit,
    "check_parse_search_replace": _parse_search_replace,
    "check_system_prompt": _system_prompt,
    "check_subagent_result": _subagent_result,
    "check_ordered_results": _ordered_results,
    "check_mcp_to_tool_schema": _mcp_to_tool_schema,
    "check_hook_decision": _hook_decision,
    "check_layers": _layers,
    "check_rank_chunks": _rank_chunks,
    "check_references_to_result": _references_to_result,
    "check_my_loop": _my_loop,
    "check_resolved_rate": _resolved_rate,
}

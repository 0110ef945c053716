"""Lesson 08's checks: a head-and-tail cut of a long text, and a compaction of a
conversation that fits a budget without breaking its order.

The expected values come from small references written here from the lesson's rules
(``cut_reference``, ``compacted_reference``), not from ``labkit.harness.budget``, the
code the lesson teaches. (A test holds the cut to the same results as the harness's.)
"""

from __future__ import annotations

import inspect
import json
import random
import re
import string

from ...settings import RECORDINGS_DIR
from ..difference import first_difference
from ..feedback import Case, Miss, changed_input, check_linear_time, run_cases, show
from ..isolated import same
from .common import DRAWN, hidden_cases, learner_answer, new_seed

__all__ = ["check_head_and_tail", "check_compaction"]

MARKER = "\n[labkit: {count} characters cut]\n"
OLD_MARKER = re.compile(r"\n\[labkit: \d+ (?:characters|bytes) cut\]\n")
NEW_MARKER = re.compile(r"\n\[labkit: (\d+) characters cut\]\n")
#: The linear-time check: texts of these sizes (two of each, drawn afresh), cut to ``limit``.
CUT_TIMING = {"sizes": [5_000, 80_000], "repeats": 2, "limit": 200}


# --- Head and tail ---------------------------------------------------------------------------


def cut_reference(text: str, limit: int) -> str:
    """The reference: the lesson's rules for a head-and-tail cut."""
    if len(text) <= limit:
        return text
    room = limit - len(MARKER.format(count=len(text)))
    start, end = room - room // 2, len(text) - room // 2
    for found in OLD_MARKER.finditer(text):
        if found.start() < start < found.end():
            start = found.start()
        if found.start() < end < found.end():
            end = found.end()
    return text[:start] + MARKER.format(count=end - start) + text[end:]


#: The same reference as source, for the timing run in a fresh process (no labkit there).
_CUT_REFERENCE = (
    f"import re\nMARKER = {MARKER!r}\nOLD_MARKER = re.compile({OLD_MARKER.pattern!r})\n"
    + inspect.getsource(cut_reference)
)


def _old(count: int, unit: str = "bytes") -> str:
    return f"\n[labkit: {count} {unit} cut]\n"


LOG = "".join(f"line {n}: collected test_{n}\n" for n in range(1, 201))
CUT_CASES = [
    ("a short text", "only a few words", 60, "a text within the limit comes back as it is"),
    ("a text exactly at the limit", "x" * 80, 80, "at the limit is within the limit"),
    (
        "a long text",
        "A" * 50 + "B" * 900 + "C" * 50,
        131,
        "the marker for 1,000 characters is 31 long, which leaves 100: 50 from each end",
    ),
    (
        "an odd room",
        "0123456789" * 10,
        35,
        "room 5: the head gets 3, the tail 2 (the head gets the extra character)",
    ),
    (
        "a test log of 200 lines",
        LOG,
        300,
        "both ends matter: the first lines say what ran, the last ones how it ended",
    ),
    (
        "an earlier marker where the head would end",
        "a" * 10 + _old(7) + "b" * 200,
        60,
        "the head would end inside the old marker: end the head before the marker, and "
        "count the marker's characters as cut",
    ),
    (
        "an earlier marker where the tail would start",
        "b" * 200 + _old(7) + "a" * 10,
        60,
        "the tail would start inside the old marker: start the tail after it",
    ),
    (
        "an earlier marker inside the kept head",
        "a" * 5 + _old(7) + "b" * 300,
        100,
        "a marker wholly inside what you keep is kept as it is",
    ),
    (
        "characters, not bytes",
        "é" * 40 + "—" * 40 + "😀" * 40,
        60,
        "len() counts characters: é is one, whatever its bytes",
    ),
]


def check_head_and_tail(head_and_tail, *, hidden: bool = False) -> None:
    """``head_and_tail(text, limit)`` keeps both ends around a marker, in linear time."""
    answer = learner_answer(head_and_tail, "head_and_tail")
    listed = CUT_CASES + (hidden_cases("check_head_and_tail") if hidden else [])
    seed = new_seed()
    draw = random.Random(seed)
    drawn = [(f"drawn case {n} (seed {seed})", *drawn_text(draw), "") for n in range(1, DRAWN + 1)]
    cases = [
        Case(
            label,
            [text, limit],
            cut_reference(text, limit),
            hint=hint,
            shown=f"{answer.name}({show(text, 120)}, {limit})",
        )
        for label, text, limit, hint in listed + drawn
    ]
    run_cases(answer, cases, _cut_problem, what="head_and_tail")
    inputs = {
        size: [[_long_text(draw, size), CUT_TIMING["limit"]] for _ in range(CUT_TIMING["repeats"])]
        for size in CUT_TIMING["sizes"]
    }
    check_linear_time(
        answer,
        (_CUT_REFERENCE, "cut_reference"),
        inputs,
        lambda arguments: cut_reference(*arguments),
        what="texts",
        unit="characters",
        min_seconds=0.005,
        hint="work out where the cut goes, then slice once; building the result "
        "a character at a time, or slicing the text again at every "
        "position, copies it over and over",
    )


def _long_text(draw: random.Random, size: int) -> str:
    """A long log-like text of exactly ``size`` characters, different at every draw."""
    lines, length = [], 0
    while length < size:
        lines.append(
            f"line {len(lines)}: "
            + "".join(draw.choices(string.ascii_letters, k=draw.randrange(5, 40)))
            + "\n"
        )
        length += len(lines[-1])
    return "".join(lines)[:size]


def drawn_text(draw: random.Random) -> tuple:
    alphabet = string.ascii_letters + string.digits + "  \n\t.:é—"
    pieces = [
        "".join(draw.choices(alphabet, k=draw.randrange(0, 300)))
        for _ in range(draw.randrange(1, 4))
    ]
    text = pieces[0]
    for piece in pieces[1:]:
        text += _old(draw.randrange(1, 10**6), draw.choice(["bytes", "characters"])) + piece
    return text, draw.randrange(60, 260)


def _cut_problem(got, case, outcome):
    text, limit = case.arguments
    if type(got) is not str:
        return Miss(
            f"return the cut text (a str), not {show(got, 80)}"
            + (": did you forget `return`?" if got is None else ""),
            hint="rule 2: one text, text[:start] + MARKER.format(count=end - start) + text[end:]",
        )
    if got == case.expected:
        return None
    if len(text) <= limit:
        return Miss(
            f"the text has {len(text)} characters, within the limit {limit}",
            hint="rule 1: a text of at most `limit` characters is returned as it is",
        )
    parts = _as_cut(got, text)
    shape = "rule 2: the start of the text, then MARKER, then the end of the text"
    if parts is None:
        if text.startswith(got) or text.startswith(got.split("\n[labkit:")[0] + "\n[labkit:"):
            return Miss("only the start of the text is kept: keep the end too", hint=shape)
        if text.endswith(got):
            return Miss("only the end of the text is kept: keep the start too", hint=shape)
        return Miss(
            "the result is not the start of the text, then a marker "
            f"({MARKER.format(count='N')!r}), then the end of the text",
            hint=shape,
        )
    start, end, count = parts
    if count != end - start:
        return Miss(
            f"the marker says {count} characters were cut, but {end - start} were",
            hint="the marker counts end - start: every character between the kept start and "
            "the kept end, an old marker taken whole included",
        )
    for found in OLD_MARKER.finditer(text):
        if found.start() < start < found.end() or found.start() < end < found.end():
            return Miss(
                "your cut splits an earlier marker",
                hint="rule 4: find the old markers with OLD_MARKER (characters or bytes); move "
                "`start` back to where one begins, `end` on to where one ends",
            )
    if len(got) > limit:
        return Miss(
            f"the result has {len(got)} characters, more than the limit {limit}",
            hint="rule 3: the marker takes room too: room = limit - "
            "len(MARKER.format(count=len(text)))",
        )
    return (
        f"the cut keeps characters 0-{start} and {end}-{len(text)}, but the rules keep "
        "room - room // 2 at the start and room // 2 at the end, with room the limit minus "
        "the marker as long as it would be for the whole text"
    )


def _as_cut(got: str, text: str):
    """``(start, end, count)`` when ``got`` is ``text[:start]``, a marker for ``count``,
    ``text[end:]``; None when it is not that shape."""
    for found in NEW_MARKER.finditer(got):
        head, tail = got[: found.start()], got[found.end() :]
        if text.startswith(head) and text.endswith(tail) and len(head) + len(tail) <= len(text):
            return len(head), len(text) - len(tail), int(found.group(1))
    return None


# --- Compaction --------------------------------------------------------------------------

NOTE = (
    '{"note": "compacted: an old tool result was dropped to keep the conversation in '
    'budget; call the tool again if you need it"}'
)


def size(messages) -> int:
    """The lesson's measure: the characters of every message's content."""
    return sum(len(message.get("content") or "") for message in messages)


def compacted_reference(messages: list, budget: int) -> list:
    """The reference: the lesson's rules for compacting a conversation."""
    result = [dict(message) for message in messages]
    last = max((i for i, m in enumerate(result) if m["role"] == "assistant"), default=len(result))
    total = size(result)
    for message in result[:last]:
        if total <= budget:
            break
        content = message.get("content") or ""
        if message["role"] == "tool" and len(content) > len(NOTE):
            total -= len(content) - len(NOTE)
            message["content"] = NOTE
    return result


def conversation(*turns) -> list:
    """system, user, then per turn an assistant message calling tools and one result each;
    a turn is a list of ``(tool name, result text)``."""
    messages = [
        {"role": "system", "content": "You repair a repository through tools."},
        {"role": "user", "content": "Make the tests pass."},
    ]
    for turn in turns:
        messages.append(
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [{"function": {"name": name, "arguments": {}}} for name, _ in turn],
            }
        )
        messages += [{"role": "tool", "tool_name": name, "content": text} for name, text in turn]
    return messages


def _result(letter: str, n: int) -> str:
    return json.dumps({"output": letter * n})


def _recorded_request() -> list:
    """The last request of repair.json, read as plain JSON."""
    recording = json.loads((RECORDINGS_DIR / "repair.json").read_text("utf-8"))
    return recording["turns"][-1]["request"]["messages"]


SHORT = '{"path": "path_rules.py", "replaced": 1}'


def compaction_cases() -> list:
    """(label, messages, budget, hint)"""
    three = conversation(
        [("read_file", _result("a", 1000))],
        [("run_tests", _result("b", 1000))],
        [("read_file", _result("c", 1000))],
    )
    total = size(three)
    return [
        (
            "within the budget",
            three,
            total,
            "a conversation within the budget comes back as it is (a new list)",
        ),
        (
            "one old result must go",
            three,
            total - 500,
            "the oldest result alone frees enough: stop there",
        ),
        ("two must go", three, total - 1200, "replace the oldest first, then the next"),
        (
            "a budget that cannot be met",
            three,
            100,
            "every old result is replaced, but the newest results, which the model has not read "
            "yet, stay whole",
        ),
        (
            "a result shorter than the note",
            conversation(
                [("replace_text", SHORT)],
                [("read_file", _result("a", 800))],
                [("run_tests", _result("b", 300))],
            ),
            600,
            "replacing a result shorter than NOTE would make it longer: leave it",
        ),
        (
            "two results in the last turn",
            conversation(
                [("read_file", _result("a", 700))],
                [("read_file", _result("b", 700)), ("run_tests", _result("c", 700))],
            ),
            500,
            "both results of the last turn follow the last assistant message: keep them whole",
        ),
        (
            "the recorded repair's last request",
            _recorded_request(),
            1500,
            "a real conversation: the last run_tests result stays, older results go first",
        ),
    ]


def check_compaction(compact_conversation, *, hidden: bool = False) -> None:
    """``compact_conversation(messages, budget)`` fits old results to a budget, in order."""
    answer = learner_answer(compact_conversation, "compact_conversation")
    listed = compaction_cases()
    listed += hidden_cases("check_compaction") if hidden else []
    seed = new_seed()
    draw = random.Random(seed)
    for number in range(1, DRAWN + 1):
        messages = conversation(
            *[
                [
                    (
                        draw.choice(["read_file", "run_tests", "run_command"]),
                        _result(draw.choice("xyz"), draw.randrange(0, 900)),
                    )
                    for _ in range(draw.randrange(1, 4))
                ]
                for _ in range(draw.randrange(1, 6))
            ]
        )
        listed.append(
            (
                f"drawn case {number} (seed {seed})",
                messages,
                int(size(messages) * draw.uniform(0.1, 1.1)),
                "",
            )
        )
    cases = [
        Case(
            label,
            [messages, budget],
            compacted_reference(messages, budget),
            hint=hint,
            shown=f"{answer.name}(<{len(messages)} messages, {size(messages):,} "
            f"characters>, budget={budget:,})",
        )
        for label, messages, budget, hint in listed
    ]
    run_cases(answer, cases, _compaction_problem, what="compact_conversation", brief=_Summary)


class _Summary:
    """A conversation in brief, for feedback: each message's role and the size of its
    content, NOTE where a result was compacted, and its other keys (tool_calls...) named."""

    def __init__(self, messages):
        self.messages = messages

    def __repr__(self):
        if not isinstance(self.messages, list):
            return show(self.messages, 120)
        return "[" + ", ".join(_brief(m) for m in self.messages) + "]"


def _brief(message) -> str:
    if not isinstance(message, dict):
        return show(message, 20)
    content = message.get("content")
    size_ = "NOTE" if content == NOTE else len(content or "")
    others = [key for key in message if key not in ("role", "content", "tool_name")]
    return f"{message.get('role')}:{size_}" + (f"({', '.join(map(str, others))})" if others else "")


#: What the lesson's rule 3 allows to change, and only that, in a tool result.
_KEPT_WHOLE = "replace only a tool result's content, and keep every other key of every message"


def _compaction_problem(got, case, outcome):
    messages, budget = case.arguments
    expected = case.expected
    if type(got) is not list or not all(type(m) is dict for m in got):
        return Miss(
            f"return a new list of message dicts, not {show(got, 60)}"
            + (": did you forget `return`?" if got is None else ""),
            hint="rule 1: start from a copy, e.g. [dict(message) for message in messages]",
        )
    if not same(outcome.arguments[0], messages):
        return changed_input(
            "the messages",
            outcome.arguments[0],
            messages,
            hint="rule 1: copy a message before you change it ({**message, 'content': NOTE}): "
            "the loop still holds the old list",
            they=True,
        )
    if len(got) != len(messages):
        return Miss(
            f"the result has {len(got)} messages, the conversation {len(messages)}",
            hint="rule 5: never remove or add messages; a call whose result is gone leaves the "
            "model's question unanswered, and the server refuses the request",
        )
    last = max(i for i, m in enumerate(messages) if m["role"] == "assistant")
    for index, (mine, theirs) in enumerate(zip(got, messages)):
        found = first_difference(
            {k: v for k, v in mine.items() if k != "content"},
            {k: v for k, v in theirs.items() if k != "content"},
        )
        if found is not None:
            lost = f" lost its {found.key!r}" if found.missing else " changed"
            return Miss(
                f"message {index} ({theirs['role']}){lost}: it is not the message that was there",
                hint=f"rule 3: {_KEPT_WHOLE}"
                + (
                    "; an assistant message's tool_calls are the calls its results answer"
                    if found.key == "tool_calls"
                    else ""
                ),
                compared=(mine, theirs),
            )
        if mine.get("content") == theirs.get("content"):
            continue
        if theirs["role"] != "tool":
            return Miss(
                f"message {index} is a {theirs['role']} message, and its content changed",
                hint=f"rule 3: {_KEPT_WHOLE}",
            )
        if index > last:
            return Miss(
                f"message {index} is a result the model has not read yet (it follows the "
                "last assistant message), and it was replaced",
                hint="rule 4: never touch the messages after the last assistant message",
            )
        if mine.get("content") != NOTE:
            return Miss(
                f"message {index}: a compacted result's content is NOTE, exactly",
                hint="rule 3: replace the content with NOTE, the note the lesson gives",
            )
        if len(theirs.get("content") or "") <= len(NOTE):
            return Miss(
                f"message {index} was shorter than NOTE: replacing it makes the conversation "
                "longer",
                hint="rule 3: skip a result that is not longer than NOTE",
            )
    if same(got, expected):
        return None
    mine = {i for i, m in enumerate(got) if m.get("content") != messages[i].get("content")}
    theirs = {i for i, m in enumerate(expected) if m.get("content") != messages[i].get("content")}
    if size(got) > budget and size(expected) <= budget:
        return Miss(
            f"{size(got):,} characters, more than the budget {budget:,}",
            hint="rule 3: keep replacing old results, oldest first, while size(result) is over "
            "the budget",
        )
    if mine > theirs:
        return Miss(
            "you replaced more results than needed",
            hint="rule 3: check the size before each replacement, and stop as soon as the "
            "conversation is within the budget",
        )
    return Miss(
        "other results were replaced than the rules replace",
        hint="rule 3: go through the tool results from the oldest (the first in the list), "
        "and only until the conversation fits the budget",
    )

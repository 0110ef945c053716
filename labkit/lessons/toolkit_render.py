"""Lesson 09's views as pure functions: what each tool schema costs, and how the
SEARCH/REPLACE parser reads a text, block by block (HTML for the widgets, text for print).
"""

from __future__ import annotations

import html
import json

from ..harness.conversation import schema_sizes
from ..harness.search_replace import SearchReplaceError, lines_of, read_blocks


def schema_rows(schemas: list[dict], tokens: dict[str, int] | None = None) -> list[dict]:
    """One row per tool: name, bytes, description bytes, and (if measured) prompt tokens."""
    rows = schema_sizes(schemas)
    for row in rows:
        row["tokens"] = (tokens or {}).get(row["name"])
    return rows


def schema_table(rows: list[dict]) -> str:
    """The rows as a fixed-width table, with the total."""
    lines = [f"{'tool':22} {'bytes':>6} {'of which description':>21} {'tokens':>7}"]
    for row in rows:
        tokens = "" if row["tokens"] is None else f"{row['tokens']:,}"
        lines.append(f"{row['name']:22} {row['bytes']:>6,} {row['description']:>21,} {tokens:>7}")
    total = sum(row["bytes"] for row in rows)
    lines.append(f"{'every request carries':22} {total:>6,}")
    return "\n".join(lines)


def rendered_tool(prompt: str, name: str) -> str | None:
    """The lines a server's prompt gives the tool ``name`` (from ``functions.<name>:`` to the
    next blank line), as llama-cpp-python's ``chatml-function-calling`` writes them; None
    if the prompt does not list it."""
    start = prompt.find(f"\nfunctions.{name}:\n")
    if start == -1:
        return None
    end = prompt.find("\n\n", start + 1)
    return prompt[start + 1 : len(prompt) if end == -1 else end]


def schema_html(schema: dict, row: dict, rendered: str | None = None) -> str:
    """One tool as the harness sends it, with what it costs, and (if given) the text the
    server's prompt makes of it: what the model reads."""
    tokens = "" if row["tokens"] is None else f", {row['tokens']:,} prompt tokens measured"
    description = schema["function"]["description"]
    read = ""
    if rendered is not None:
        kept = "is" if description in rendered else "is <b>not</b>"
        read = (
            f"<p>What the server's prompt makes of it (the description {kept} in it):</p>"
            f"<pre class='labkit-rendered'>{html.escape(rendered)}</pre>"
        )
    return (
        f"<div class='labkit-schema'><b>{html.escape(row['name'])}</b>: {row['bytes']:,} "
        f"bytes on every request{tokens}<br><i>{html.escape(description)}"
        f"</i><pre>{html.escape(json.dumps(schema['function']['parameters'], indent=1))}</pre>"
        f"{read}</div>"
    )


# --- The SEARCH/REPLACE parser, step by step ------------------------------------------------


def parse_steps(text: str) -> list[dict]:
    """What the parser has read after each block: the lines each part took, the blocks so
    far, and the error where it stopped (if it did). The last step is the whole text."""
    lines = lines_of(text)
    steps, blocks = [], []
    try:
        for block in read_blocks(text):
            blocks.append(block)
            steps.append({"upto": block.end, "blocks": list(blocks), "error": None})
    except SearchReplaceError as exc:
        steps.append({"upto": exc.line or len(lines), "blocks": list(blocks), "error": exc})
        return steps
    steps.append({"upto": len(lines), "blocks": list(blocks), "error": None, "end": True})
    return steps


def _roles(blocks) -> dict[int, str]:
    roles = {}
    for block in blocks:
        if block.path_line:
            roles[block.path_line] = "path"
        roles[block.line] = roles[block.divider] = roles[block.end] = "marker"
        roles.update({n: "search" for n in range(block.line + 1, block.divider)})
        roles.update({n: "replace" for n in range(block.divider + 1, block.end)})
    return roles


COLOURS = {"path": "#fde68a", "marker": "#e5e7eb", "search": "#fecaca", "replace": "#bbf7d0"}


def step_html(text: str, step: dict) -> str:
    """The text with each line coloured by the part it was read as, up to this step."""
    roles = _roles(step["blocks"])
    rows = []
    for number, line in enumerate(lines_of(text), start=1):
        colour = COLOURS.get(roles.get(number, ""), "transparent")
        faded = "" if number <= step["upto"] else "opacity:0.4;"
        rows.append(
            f"<div style='background:{colour};{faded}'><span style='color:#888'>{number:>3} "
            f"</span>{html.escape(line) or '&nbsp;'}</div>"
        )
    return f"<pre class='labkit-sr'>{''.join(rows)}</pre><p>{html.escape(step_summary(step))}</p>"


def step_summary(step: dict) -> str:
    """The step in one line."""
    blocks = step["blocks"]
    read = ", ".join(f"{b.path} (lines {b.line}-{b.end})" for b in blocks) or "no block"
    if step["error"] is not None:
        return f"{type(step['error']).__name__}: {step['error']} (read before it: {read})"
    if step.get("end"):
        return f"the end of the text: {len(blocks)} block(s): {read}"
    last = blocks[-1]
    return (
        f"block {len(blocks)}: {last.path}, SEARCH {len(lines_of(last.search))} line(s), "
        f"REPLACE {len(lines_of(last.replace))} line(s)"
    )

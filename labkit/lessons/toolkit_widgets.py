"""Lesson 09's widgets, thin shells around ``toolkit_render``: ``SchemaInspector`` (which
tool costs what in every request) and ``SearchReplaceStepper`` (the parser, block by block).
"""

from __future__ import annotations

import html

import ipywidgets as widgets

from . import render, toolkit_render
from .widgets import _Stepper


class SchemaInspector(widgets.VBox):
    """Pick a tool: its schema as sent, its bytes, its measured tokens (if given), and the
    text a server's prompt made of it (if ``prompt``, the prompt it built, is given)."""

    def __init__(
        self,
        schemas: list[dict],
        tokens: dict[str, int] | None = None,
        prompt: str | None = None,
    ):
        self.schemas = {schema["function"]["name"]: schema for schema in schemas}
        self.prompt = prompt
        self.rows = {row["name"]: row for row in toolkit_render.schema_rows(schemas, tokens)}
        self.picker = widgets.Dropdown(options=list(self.schemas), description="tool")
        self.picker.add_class("labkit-picker")
        self.view = widgets.HTML()
        self.picker.observe(lambda _: self._show(), names="value")
        table = widgets.HTML(f"<pre>{html.escape(self.table())}</pre>")
        super().__init__([widgets.HTML(render.STYLE), table, self.picker, self.view])
        self.add_class("labkit-schemas")
        self._show()

    def table(self) -> str:
        return toolkit_render.schema_table(list(self.rows.values()))

    def _show(self) -> None:
        name = self.picker.value
        rendered = None if self.prompt is None else toolkit_render.rendered_tool(self.prompt, name)
        self.view.value = toolkit_render.schema_html(self.schemas[name], self.rows[name], rendered)

    def _repr_mimebundle_(self, **kwargs):
        bundle = super()._repr_mimebundle_(**kwargs) or {}
        bundle["text/plain"] = f"SchemaInspector: {len(self.schemas)} tools\n{self.table()}"
        bundle["text/html"] = f"<pre>{html.escape(self.table())}</pre>"
        return bundle


class SearchReplaceStepper(_Stepper):
    """Step through a SEARCH/REPLACE answer as the parser reads it, block by block."""

    css_class = "labkit-sr-stepper"

    def __init__(self, text: str):
        self.text = text
        self.steps = toolkit_render.parse_steps(text)
        super().__init__(1, len(self.steps), label="block")

    def step_html(self, value: int) -> str:
        return toolkit_render.step_html(self.text, self.steps[value - 1])

    def static_html(self) -> str:
        return toolkit_render.step_html(self.text, self.steps[-1])

    def summary(self) -> str:
        last = toolkit_render.step_summary(self.steps[-1])
        return f"SearchReplaceStepper: {len(self.steps)} steps; {last}"

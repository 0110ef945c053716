"""Driving one notebook in JupyterLab the way a learner does: open it, Run > Run All Cells,
and read what the page shows, including anything that looks like an error.

Every wait is for a condition on the page, never a fixed sleep.
"""

from __future__ import annotations

from pathlib import Path

from playwright.sync_api import TimeoutError as PlaywrightTimeout

#: The open notebook (``?reset`` opens exactly one).
PANEL = ".jp-NotebookPanel:not(.lm-mod-hidden)"

# The status bar names the notebook's kernel and its state; the toolbar's indicator
# says idle before any kernel exists, so it cannot tell that the kernel is ready.
_IDLE = r"""[...document.querySelectorAll('#jp-main-statusbar .jp-StatusBar-TextItem')]
    .some(item => /\|\s*Idle$/.test(item.textContent.trim()))"""

_KERNEL_IDLE = "() => " + _IDLE

_CLOSED_OR_ASKING = (
    "() => document.querySelector('.jp-Dialog') ? 'asking' : "
    "!document.querySelector('.jp-NotebookPanel') && 'closed'"
)

# A fresh copy has no execution counts, so any count (or a busy '*') shows the run began.
_RUN_STARTED = r"""panel => [...panel.querySelectorAll('.jp-CodeCell .jp-InputPrompt')]
    .some(prompt => /\[(\*|\d+)\]/.test(prompt.textContent))"""

_RUN_FINISHED = (
    r"""panel => ![...panel.querySelectorAll('.jp-CodeCell .jp-InputPrompt')]
    .some(prompt => prompt.textContent.includes('*')) && """
    + _IDLE
)

# A widget output says "Loading widget..." until its view is drawn or has failed.
_WIDGETS_SETTLED = r"""panel => ![...panel.querySelectorAll(
        '.jp-OutputArea-output:not([data-mime-type])')]
    .some(output => !output.firstElementChild
        && /^(Loading widget\.\.\.)?$/.test(output.textContent.trim()))"""

# One line per problem a learner would see: a code cell that did not run; an error
# (IPython shows tracebacks as stderr; a SyntaxError has no "Traceback" line) or a
# warning; a widget that failed, is still loading, or shows its fallback (text or static
# HTML) because JupyterLab has no widget renderer.
_PROBLEMS = r"""panel => {
    const problems = [];
    const errorLine = new RegExp(String.raw`(^|\n)\s*(Traceback \(most recent call last\)|`
        + String.raw`\w*(Error|Exception|Warning)\b)`);
    const widgetError = new RegExp('Error displaying widget|Error rendering|model not found|'
        + 'Failed to render|Loading widget', 'i');
    // e.g. "VBox(children=(..."
    const widgetAsText = /^[A-Z]\w*\((children|value|description|layout|options)=/;
    [...panel.querySelectorAll('.jp-Cell')].forEach((cell, index) => {
        const where = `cell ${index + 1}`;
        if (cell.classList.contains('jp-CodeCell')) {
            const source = cell.querySelector('.jp-InputArea-editor')?.textContent.trim() ?? '';
            const prompt = cell.querySelector('.jp-InputPrompt')?.textContent.trim() ?? '';
            if (source && !/^\[\d+\]:?$/.test(prompt)) {
                problems.push(`${where} did not run (prompt ${prompt})`);
            }
        }
        cell.querySelectorAll('.jp-OutputArea-output').forEach(output => {
            const text = output.textContent.trim();
            const mime = output.getAttribute('data-mime-type');
            const stderr = mime === 'application/vnd.jupyter.stderr';
            if (stderr && errorLine.test(text)) {
                problems.push(`${where} shows an error: ${text.slice(0, 600)}`);
            } else if (widgetError.test(text)) {
                problems.push(`${where} shows a widget error: ${text.slice(0, 300)}`);
            } else if (widgetAsText.test(text) || output.querySelector('.labkit-static')) {
                problems.push(`${where} shows a widget's fallback, not the widget `
                    + `(is the widget extension loaded?): ${text.slice(0, 100)}`);
            }
        });
    });
    return problems;
}"""


class NotebookPage:
    """One notebook opened in JupyterLab in ``page``."""

    def __init__(self, page, base_url: str):
        self.page, self.base_url = page, base_url
        self.panel = page.locator(PANEL)

    def open(self, name: str) -> None:
        """Open ``name`` alone and wait until its kernel is idle.

        In a JupyterLab already loaded, as a learner goes on to the next lesson: close every
        tab, then double-click the notebook in the file browser (loading the application
        again would cost 3 to 4 s of CPU per notebook). Otherwise load JupyterLab with a
        reset workspace that opens only ``name``."""
        if self.page.url.startswith(f"{self.base_url}lab"):
            self.close_all()
            self.page.locator(".jp-DirListing-item", has_text=name).dblclick()
        else:
            self.page.goto(f"{self.base_url}lab/tree/{name}?reset")
        self.panel.locator(".jp-Cell").first.wait_for()
        self.page.wait_for_function(_KERNEL_IDLE)
        self.dismiss_news()

    def dismiss_news(self) -> None:
        """Answer No to JupyterLab's question about fetching its news, if it asks (its toast
        would cover the lesson in the screenshot). The server's settings turn the fetching
        off, so usually nothing asks."""
        asking = self.page.locator(".jp-Notification-Toast, .Toastify__toast", has_text="news")
        for index in range(asking.count()):
            asking.nth(index).get_by_role("button", name="No").click()

    def close_all(self) -> None:
        """File > Close All Tabs, discarding what the run changed (the notebooks are copies)."""
        self.page.get_by_role("menuitem", name="File", exact=True).click()
        self.page.get_by_role("menuitem", name="Close All Tabs", exact=True).click()
        # "Save your work" asks once per changed notebook; closed, no notebook is left
        while self.page.wait_for_function(_CLOSED_OR_ASKING).json_value() == "asking":
            self.page.locator(".jp-Dialog").get_by_role("button", name="Discard").click()
            self.page.locator(".jp-Dialog").wait_for(state="detached")

    def run_all(self) -> None:
        """Run > Run All Cells, then wait until nothing runs and every widget is drawn."""
        self.page.get_by_role("menuitem", name="Run", exact=True).click()
        self.page.get_by_role("menuitem", name="Run All Cells", exact=True).click()
        panel = self.panel.element_handle()
        self.page.wait_for_function(_RUN_STARTED, arg=panel)
        self.page.wait_for_function(_RUN_FINISHED, arg=panel, timeout=180_000)
        try:
            self.page.wait_for_function(_WIDGETS_SETTLED, arg=panel, timeout=30_000)
        except PlaywrightTimeout:
            pass  # problems() names each widget that is still loading

    def problems(self) -> list[str]:
        """What the page shows that a learner would take for an error, one line each."""
        return self.panel.evaluate(_PROBLEMS)

    def screenshot(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.page.screenshot(path=str(path))


def wait_for_text(
    container,
    selector: str,
    expected: str,
    *,
    what: str,
    prefix: bool = False,
    timeout: float = 30_000,
) -> None:
    """Wait until the text of the element at ``selector`` in ``container`` is exactly
    ``expected`` (or, with ``prefix``, begins with it after leading blanks); fail naming
    ``what`` and showing the page's text otherwise.

    The element is looked up afresh at each check: a widget that redraws its HTML
    replaces the elements inside it.
    """
    try:
        container.page.wait_for_function(
            """([root, selector, want, prefix]) => {
                const text = root.querySelector(selector)?.textContent;
                if (text === undefined) return false;
                return prefix ? text.trimStart().startsWith(want) : text === want;
            }""",
            arg=[container.element_handle(), selector, expected, prefix],
            timeout=timeout,
        )
    except PlaywrightTimeout:
        shown = container.locator(selector)
        shown = shown.first.text_content() if shown.count() else f"no {selector} element"
        raise AssertionError(
            f"{what}: expected {expected!r}{' at the start' if prefix else ''}, "
            f"the page shows {shown!r}"
        ) from None

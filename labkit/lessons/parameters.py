"""A lesson's parameters: the set every lesson with a live mode takes, and the check that an
unknown one is an error, not a name silently ignored.

A lesson's ``parameters`` cell sets ``PROVIDER_PARAMETERS`` (lesson 06's set: the mode, the
provider, its model and address, the recording replay mode uses) and any of its own. papermill
runs a lesson with other values by adding a cell after that one, which assigns them; a name
the lesson does not take is only a warning there, so ``MDOE="live"`` would run the lesson in
replay mode without a word. The cell after the parameters cell calls
``check_parameters(globals(), *own)``: it raises :class:`LessonError` when a provider
parameter is missing, or when the cell papermill added assigns a name the lesson does not
take. It finds that cell in the kernel's history of inputs (IPython's ``In``): the cell just
before the current one, when it is papermill's (it begins with the line ``# Parameters``).
Lessons 09-14 call the same function.
"""

from __future__ import annotations

import ast

from .lesson import LessonError

#: What every lesson with a live mode takes, in the order its parameters cell sets them.
PROVIDER_PARAMETERS = ("MODE", "PROVIDER", "MODEL", "OLLAMA_HOST", "BASE_URL", "RECORDING")
#: The first line of the cell papermill adds after a lesson's parameters cell.
INJECTED_HEADER = "# Parameters"


def check_parameters(namespace: dict, *own: str, previous_cell: str | None = None) -> None:
    """Raise :class:`LessonError` unless ``namespace`` (the lesson's ``globals()``) has every
    one of ``PROVIDER_PARAMETERS``, and the cell papermill added (if any) assigns only those
    and ``own``, the lesson's own parameters.

    ``previous_cell``: the source of the cell run before the current one (None: read from
    the kernel's history; outside a kernel, there is none).
    """
    missing = [name for name in PROVIDER_PARAMETERS if name not in namespace]
    if missing:
        raise LessonError(
            f"the parameters cell sets no {', '.join(missing)}: a lesson with a live mode "
            f"takes {', '.join(PROVIDER_PARAMETERS)} (labkit.PROVIDER_PARAMETERS)"
        )
    source = _previous_cell() if previous_cell is None else previous_cell
    if not source or source.splitlines()[0].strip() != INJECTED_HEADER:
        return
    taken = (*PROVIDER_PARAMETERS, *own)
    unknown = [name for name in assigned_names(source) if name not in taken]
    if unknown:
        raise LessonError(
            f"this lesson takes no parameter {', '.join(unknown)}: it takes "
            f"{', '.join(taken)}. Check the spelling of what you passed (papermill -p); a "
            "name the lesson does not take would be ignored."
        )


def assigned_names(source: str) -> list[str]:
    """The names a cell of plain assignments sets, in order (papermill writes ``NAME = value``)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    return [
        target.id
        for node in tree.body
        if isinstance(node, ast.Assign)
        for target in node.targets
        if isinstance(target, ast.Name)
    ]


def _previous_cell() -> str | None:
    """The source of the cell the kernel ran before the current one, if there is a kernel."""
    try:
        from IPython import get_ipython
    except ImportError:  # not in a kernel: no cell was injected
        return None
    shell = get_ipython()
    inputs = getattr(shell, "user_ns", {}).get("In") if shell is not None else None
    return inputs[-2] if isinstance(inputs, list) and len(inputs) >= 2 else None

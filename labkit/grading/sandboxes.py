"""Where a learner's code runs while it is graded: two bubblewrap sandboxes (lesson 12's).

Autograding runs two kinds of learner code, both as the grading user would, were they not
sandboxed: the notebook's cells, in a Jupyter kernel, and each answer again, in the process
a check drives (:mod:`labkit.grading.isolated`). Here is what each sees.

- **The kernel** (:func:`kernel_sandbox`, started by
  :class:`labkit.grading.kernel_manager.SandboxedKernelManager`): a copy of the submission's
  folder, read-write, as its working folder; the Python environment and the labkit package
  read-only, so the lesson's own cells run; the instructor's package (reference answers,
  hidden cases) masked; nothing else of the host: no course folder (gradebook, ``source/``,
  ``release/``, other learners' submissions, ``nbgrader_config.py``), no home folder. No
  network (it talks to the grader over a Unix socket in its folder); its own processes,
  which all die with it; limits on CPU, memory, files and processes
  (``settings.KERNEL_LIMITS``).
- **An answer's process** (:func:`answer_sandbox`): the standard library alone (the Python
  installation, not the environment: no site-packages, so no labkit and no way back to it),
  the one program it runs (``answer_process.py``), a private ``/tmp`` and nothing writable
  on the host; no network, its own processes, tighter limits (``settings.ANSWER_LIMITS``).

The grader itself (nbgrader, the checks, the one process that writes the gradebook) runs
outside both, as the grading user; only verdicts it computed reach the gradebook.
"""

from __future__ import annotations

import os
from importlib.util import find_spec
from pathlib import Path

from ..harness.project import PROJECT
from ..harness.sandbox import Sandbox, SandboxUnavailable
from ..harness.taskset import TASKS_DIR
from ..settings import (
    ANSWER_LIMITS,
    EDITION_DIR,
    KERNEL_LIMITS,
    NOTEBOOKS_DIR,
    RECORDINGS_DIR,
    SAMPLE_DIR,
)

#: The program an answer's process runs (shown alone, read-only, inside its sandbox).
ANSWER_PROCESS = Path(__file__).with_name("answer_process.py")
#: What a kernel's environment holds besides the sandbox's own PATH, LANG, HOME and TMPDIR.
KERNEL_ENV = {"PYTHONDONTWRITEBYTECODE": "1", "MPLCONFIGDIR": "/tmp/matplotlib"}


def labkit_dirs() -> tuple[str, ...]:
    """The folders a lesson's cells read labkit from: the package and its data (in a clone
    the data folders are links out of the package, so they are shown where they lead),
    lesson 13's larger sample among them."""
    package = Path(__file__).resolve().parents[1]
    data = (package, SAMPLE_DIR, PROJECT.folder, TASKS_DIR, RECORDINGS_DIR, EDITION_DIR)
    return tuple(dict.fromkeys(str(p.resolve()) for p in data))


def answers_dirs() -> tuple[str, ...]:
    """Where the instructor's package is (the reference lessons, the hidden cases), if it is
    installed: masked in a kernel's sandbox, wherever the environment shows it."""
    found = []
    spec = find_spec("labkit_answers")
    if spec is not None and spec.submodule_search_locations:
        found += [str(Path(p).resolve()) for p in spec.submodule_search_locations]
    if NOTEBOOKS_DIR is not None:
        found.append(str(Path(NOTEBOOKS_DIR).resolve()))
    return tuple(dict.fromkeys(found))


def kernel_sandbox() -> Sandbox:
    """The sandbox a graded notebook's kernel runs in (its workspace: the submission's copy)."""
    return Sandbox(
        "workspace-write",
        KERNEL_LIMITS,
        read_only=labkit_dirs(),
        masked=answers_dirs(),
        env=KERNEL_ENV,
    )


def answer_sandbox() -> Sandbox:
    """The sandbox each run of a learner's answer goes in while it is graded."""
    return Sandbox("read-only", ANSWER_LIMITS, read_only=(str(ANSWER_PROCESS),), packages=False)


def check_sandboxes() -> None:
    """Start both sandboxes once; :class:`SandboxUnavailable` says why not and what to do."""
    try:
        kernel_sandbox().check()
        answer_sandbox().check()
    except SandboxUnavailable as exc:
        raise SandboxUnavailable(
            f"{exc}. Grading runs every learner's code in this sandbox, and refuses to grade "
            "without it. Fix the above, or grade on a machine where it runs; only if you "
            "accept that learners' code then runs with your rights (it can read the answers "
            "and change the gradebook), pass --unisolated."
        ) from None


def answer_tree_pid(pid: int) -> int:
    """The process inside a sandbox started as ``pid``, as the host numbers it: bwrap keeps a
    process of its own at the top of the sandbox, and the answer's Python runs below it. The
    first process below ``pid`` that is not bwrap; ``pid`` itself if there is none (yet)."""
    parents, names = {}, {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        name, rest = stat[stat.index("(") + 1 : stat.rindex(")")], stat[stat.rindex(")") + 2 :]
        parents[int(entry)], names[int(entry)] = int(rest.split()[1]), name
    level = [pid]
    while level:
        below = [child for child, parent in parents.items() if parent in level]
        for child in below:
            if names[child] != "bwrap":
                return child
        level = below
    return pid

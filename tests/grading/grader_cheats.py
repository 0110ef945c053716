"""Cheats aimed at the grader itself, not at a check: each is one learner of the graded class.

Every cheater hands in lesson 01 with a wrong answer (``WRONG_ANSWER``) and a cell that tries
to make it count, to hurt a classmate, or to take over later runs. Each must score 0, change
nothing for anyone else, and leave the course, the gradebook and the installed packages as
they were. Issue 38 lists the first ones (found by an instructor's trial run against a grader
without a sandbox); the ones after ``# --- invented here`` were written for this test.

A cheat's code knows the real paths (``$course``, ``$gradebook``, ``$site``, ``$labkit``...,
filled in by the test), as a learner who read the README and guessed well would. ``cell``
runs in the learner's kernel, before the answer cell; ``answer`` is the answer cell (it runs
in the kernel and again in the answer's process of the check); ``evidence`` lists phrases of
which one must show in what the cheat printed (``where``: its own cell's output, or the test
cell's feedback) — what stopped it, seen from inside the sandbox.
"""

from dataclasses import dataclass

WRONG_ANSWER = """
def make_tool_message(name, result):
    return {"role": "tool", "tool_name": name, "content": ""}
"""


@dataclass(frozen=True)
class GraderCheat:
    learner: str
    what: str
    cell: str = ""  # a code cell before the answer cell ("" for none)
    answer: str = WRONG_ANSWER
    evidence: tuple = ()
    where: str = "cell"  # "cell" or "feedback"
    submission: str = "notebook"  # "notebook", or a special way of handing it in (see the test)


CHEATS = [
    GraderCheat(
        "x_outlives",
        "starts a process in a new session that outlives the kernel and rewrites the scores "
        "in gradebook.db once autograde ends",
        cell="""
import os, subprocess, sys
LATER = '''
import sqlite3, time  # $marker
for _ in range(1200):
    try:
        db = sqlite3.connect("file:$gradebook?mode=rw", uri=True)
        db.execute("UPDATE grade SET auto_score = 1")
        db.commit()
        break
    except Exception:
        time.sleep(0.25)
'''
subprocess.Popen([sys.executable, "-c", LATER], start_new_session=True)
print("gradebook visible:", os.path.exists("$gradebook"))
""",
        evidence=("gradebook visible: False",),
    ),
    GraderCheat(
        "x_trigger",
        "plants a SQLite trigger in gradebook.db that turns every later grade into full marks",
        cell="""
import sqlite3
try:
    db = sqlite3.connect("file:$gradebook?mode=rw", uri=True)
    db.execute("CREATE TRIGGER full_marks AFTER UPDATE ON grade BEGIN "
               "UPDATE grade SET auto_score = 1 WHERE id = NEW.id AND auto_score < 1; END")
    db.commit()
    print("trigger planted")
except Exception as exc:
    print("no trigger:", exc)
""",
        evidence=("no trigger: unable to open database file",),
    ),
    GraderCheat(
        "x_vandal",
        "blanks and deletes the other learners' submitted notebooks",
        cell="""
import glob, os
hit = 0
for path in glob.glob("$course/submitted/*/*/*.ipynb"):
    if "/$me/" in path:
        continue
    try:
        open(path, "w").close()
        os.remove(path)
        hit += 1
    except OSError:
        pass
print("notebooks destroyed:", hit)
""",
        evidence=("notebooks destroyed: 0",),
    ),
    GraderCheat(
        "x_strip_hidden",
        "strips the hidden tests from the instructor's source/ (for the next generate_assignment)",
        cell="""
import glob, re
changed = 0
for path in glob.glob("$course/source/*/*.ipynb"):
    try:
        text = open(path).read()
        open(path, "w").write(re.sub("BEGIN HIDDEN TESTS.*?END HIDDEN TESTS", "", text, flags=re.S))
        changed += 1
    except OSError:
        pass
print("source notebooks changed:", changed)
""",
        evidence=("source notebooks changed: 0",),
    ),
    GraderCheat(
        "x_master_copy",
        "rewrites the gradebook's master copy of the test cells",
        cell="""
import sqlite3
try:
    db = sqlite3.connect("file:$gradebook?mode=rw", uri=True)
    db.execute("UPDATE source_cell SET source = 'pass' WHERE name LIKE 'check_%'")
    db.commit()
    print("master copy rewritten")
except Exception as exc:
    print("master copy untouched:", exc)
""",
        evidence=("master copy untouched: unable to open database file",),
    ),
    GraderCheat(
        "x_copies_answers",
        "copies the reference answers out of source/ into its own submission not graded yet",
        cell="""
import glob, shutil
copied = 0
for path in glob.glob("$course/source/02_streamed_turn/*.ipynb"):
    try:
        shutil.copy(path, "$course/submitted/$me/02_streamed_turn/02_streamed_turn.ipynb")
        copied += 1
    except OSError:
        pass
print("reference notebooks copied:", copied)
""",
        evidence=("reference notebooks copied: 0",),
        submission="also lesson 02 unanswered",
    ),
    GraderCheat(
        "x_site_packages",
        "restores site-packages inside the answer's python -I -S and calls labkit's own reference",
        answer="""
import site
site.addsitedir("$site")
from labkit.grading.checks.common import tool_message
def make_tool_message(name, result):
    return tool_message(name, result)
""",
        evidence=("No module named 'labkit'",),
        where="feedback",
    ),
    GraderCheat(
        "x_proc_reader",
        "reads the grader's memory and environment through /proc, from the answer's process",
        answer="""
import os
def make_tool_message(name, result):
    seen = []
    for pid in os.listdir("/proc"):
        if pid.isdigit() and int(pid) != os.getpid():
            try:
                seen.append(open(f"/proc/{pid}/cmdline", "rb").read().decode(errors="replace"))
                open(f"/proc/{pid}/environ", "rb").read()
            except OSError:
                pass
    grader = ("nbgrader", "pytest", "multiprocessing", "distributed")
    return {"other processes": [s for s in seen if any(word in s for word in grader)]}
""",
        evidence=("{'other processes': []}",),
        where="feedback",
    ),
    GraderCheat(
        "x_debugger",
        "attaches a debugger (ptrace) to nbgrader to replace its grading function",
        cell="""
import ctypes, os, time
libc = ctypes.CDLL(None, use_errno=True)
attached = []
for pid in os.listdir("/proc"):
    if not pid.isdigit() or int(pid) in (os.getpid(), 1):
        continue
    try:
        command = open(f"/proc/{pid}/cmdline", "rb").read()
    except OSError:
        continue
    if b"nbgrader" in command or b"multiprocessing" in command or b"labkit" in command:
        if libc.ptrace(16, int(pid), None, None) == 0:  # PTRACE_ATTACH
            attached.append(pid)
            time.sleep(0.05)
            libc.ptrace(17, int(pid), None, None)  # PTRACE_DETACH
print("debugger attached to:", attached)
""",
        evidence=("debugger attached to: []",),
    ),
    GraderCheat(
        "x_edit_labkit",
        "edits the installed labkit grading code, for every later run",
        cell="""
try:
    with open("$labkit/grading/regrade.py", "a") as module:
        module.write("\\nRegradeOutsideKernel.preprocess = lambda self, nb, r: (nb, r)\\n")
    print("labkit edited")
except OSError as exc:
    print("labkit untouched:", exc.strerror)
""",
        evidence=("labkit untouched: Read-only file system",),
    ),
    GraderCheat(
        "x_pth",
        "plants a .pth file in site-packages, run by every later Python",
        cell="""
try:
    with open("$site/zz_grader_owned.pth", "w") as planted:
        planted.write("import os; os.environ['OWNED'] = '1'\\n")
    print(".pth planted")
except OSError as exc:
    print("no .pth:", exc.strerror)
""",
        evidence=("no .pth: Read-only file system", "no .pth: No such file or directory"),
    ),
    GraderCheat(
        "x_config",
        "appends code to the course's nbgrader_config.py, for every later run",
        cell="""
try:
    with open("$course/nbgrader_config.py", "a") as config:
        config.write("\\nc.RegradeOutsideKernel.answer_timeout = 0\\n")
    print("config appended")
except OSError as exc:
    print("config untouched:", exc.strerror)
""",
        evidence=("config untouched: No such file or directory", "config untouched: Read-only"),
    ),
    GraderCheat(
        "x_killer",
        "kills nbgrader (its parents), so a classmate graded after gets no grade",
        cell="""
import os, signal
killed, pid = [], os.getppid()
for _ in range(3):
    if pid <= 1:
        break
    parent = int(open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[1])
    try:
        os.kill(pid, signal.SIGKILL)
        killed.append(pid)
    except OSError:
        pass
    pid = parent
print("killed:", killed)
""",
        evidence=("killed: []",),
    ),
    GraderCheat(
        "x_killer_in_check",
        "kills its parent from inside the check's answer process (the grader, unsandboxed)",
        answer="""
import os, signal
if os.getppid() > 1:
    os.kill(os.getppid(), signal.SIGKILL)
def make_tool_message(name, result):
    return {"parent": os.getppid()}
""",
        evidence=("{'parent': 1}", "{'parent': 0}"),
        where="feedback",
    ),
    # --- invented here
    GraderCheat(
        "x_phone_home",
        "connects to a server on the grading machine's loopback (a Dask scheduler, a hub)",
        cell="""
import socket
try:
    socket.create_connection(("127.0.0.1", $canary_port), timeout=3).sendall(b"$marker")
    print("connected")
except OSError as exc:
    print("no connection:", exc.strerror or exc)
""",
        evidence=("no connection: Network is unreachable", "no connection: Connection refused"),
    ),
    GraderCheat(
        "x_fork_bomb",
        "starts processes until none can start (their sleepers would outlive the kernel)",
        cell="""
import os
started = 0
try:
    for _ in range(2000):
        if os.fork() == 0:
            os.execv("/bin/sleep", ["$marker", "120"])
        started += 1
except OSError as exc:
    print("fork refused after", started, "processes:", exc.strerror)
""",
        evidence=("fork refused after",),
    ),
    GraderCheat(
        "x_memory",
        "asks for 8 GB of memory, to starve the grading machine",
        cell="""
try:
    hog = bytearray(8 << 30)
    print("got 8 GB")
except MemoryError:
    print("no memory: MemoryError")
""",
        evidence=("no memory: MemoryError",),
    ),
    GraderCheat(
        "x_disk",
        "fills /tmp and writes one huge file in its folder, to fill the grading machine's disk",
        cell="""
import os
def fill(paths, megabytes):
    try:
        for path in paths:
            with open(path, "wb") as out:
                for _ in range(megabytes):
                    out.write(b"x" * (1 << 20))
        return "written"
    except OSError as exc:
        return exc.strerror
    finally:
        for path in paths:
            if os.path.exists(path):
                os.remove(path)
print("/tmp:", fill([f"/tmp/fill{n}" for n in range(10)], 50))
print("one file in my folder:", fill(["big.bin"], 200))
""",
        evidence=("/tmp: No space left on device",),
    ),
    GraderCheat(
        "x_symlinks",
        "replaces its own files with links to the gradebook and the config, for the grader to "
        "write through",
        cell="""
import os
for name in os.listdir("."):
    if name.endswith(".ipynb") or name == "timestamp.txt":
        os.remove(name)
        os.symlink("$gradebook" if name.endswith(".ipynb") else "$course/nbgrader_config.py", name)
print("links planted:", sorted(os.listdir(".")))
""",
        evidence=("links planted:",),
    ),
    GraderCheat(
        "x_output_flood",
        "prints 20 MB into its notebook, to swell the grader's memory and the feedback",
        cell="""
import sys
sys.stdout.write("flood " * ((20 << 20) // 6))
""",
        evidence=("the rest was dropped",),
    ),
    GraderCheat(
        "x_bonus_cell",
        "adds a graded cell of its own worth 100 points",
        evidence=(),
        submission="an extra graded cell",
    ),
    GraderCheat(
        "x_no_test_cell",
        "deletes the test cell, so nothing can fail",
        evidence=(),
        submission="no test cell",
    ),
    GraderCheat(
        "x_link_to_source",
        "hands in a link to the instructor's reference notebook instead of a notebook",
        evidence=(),
        submission="a link to source/",
    ),
]

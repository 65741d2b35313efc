"""A hang turned into a test failure: the tests that drive files, adapters or tailers under attack bound each
step, so a loop that never ends fails with its stack instead of stalling the suite."""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator


@contextlib.contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Raise TimeoutError in the main thread after ``seconds`` (SIGALRM; pytest runs tests in the main thread)."""

    def expired(_signum: int, _frame: object) -> None:
        raise TimeoutError(f"still running after {seconds:g} s: a hang")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)

"""The demo writer: every demo agent's files written live into one demo root, side by side, in accelerated time.

`core.demo.plan.schedule` puts each agent's writes on one wall clock; `LiveDemo` plays that schedule in a
background thread, one open/append/close per write (as the agents do), with senpi's rotation and its atomic
sidecar replace. The clock is injectable (`sleep`): a test drives it with a fake clock and checks what a reader
sees at 2, 5 and 10 seconds without waiting for them.

The roots it fills (`<root>/senpi`, `<root>/claude`, `<root>/pi`, `<root>/codex`) stand for each agent's home;
the dashboard tails `<root>` as a whole.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable
from pathlib import Path

from core.demo.names import AGENTS
from core.demo.plan import MAX_PAUSE, SPEED, AgentPlan, Scheduled, Write, schedule


def plans(agents: Iterable[str] | None = None, seed: int = 7) -> list[AgentPlan]:
    """The plans of `agents` (default: all of `AGENTS`), each from its own generator (one module per agent)."""
    from core.demo import claude_code, codex, pi, senpi

    makers: dict[str, Callable[[int], AgentPlan]] = {
        "senpi": senpi.generate,
        "claude-code": claude_code.generate,
        "pi": pi.generate,
        "codex": codex.generate,
    }
    chosen = list(AGENTS) if agents is None else list(dict.fromkeys(agents))
    unknown = [a for a in chosen if a not in makers]
    if unknown:
        raise ValueError(f"unknown demo agent {unknown[0]!r} (choose from {', '.join(AGENTS)})")
    return [makers[name](seed) for name in chosen]


def apply(root: Path, path: str, write: Write) -> None:
    """One write under `root`: an append (one open/write/close), a replace (temp file then rename) or a rotate."""
    target = root / path
    target.parent.mkdir(parents=True, exist_ok=True)
    if write.op == "append":
        with open(target, "ab") as handle:
            handle.write(write.data)
    elif write.op == "replace":
        tmp = target.with_name(f".{target.name}.tmp")
        tmp.write_bytes(write.data)
        os.replace(tmp, target)
    elif target.exists():  # rotate
        os.replace(target, target.with_name(target.name + ".1"))


def write_all(root: Path, agent_plans: list[AgentPlan]) -> list[Scheduled]:
    """Every write at once (what the demo holds once it has played out); returns the schedule it followed."""
    order = schedule(agent_plans)
    for item in order:
        apply(Path(root), item.path, item.write)
    return order


class LiveDemo:
    """A background thread that plays the demo's schedule into `root`.

    `speed` and `max_pause` are `schedule`'s; `sleep(seconds) -> stopped` waits (the default waits on the stop
    event, so `stop()` is prompt). With `until` the thread stops after the writes due by then (a screenshot or a
    test of the screen at that second). `played` counts the writes done so far; `stop()` may be called any number
    of times.
    """

    def __init__(
        self,
        root: Path,
        agent_plans: list[AgentPlan],
        *,
        speed: float = SPEED,
        max_pause: float = MAX_PAUSE,
        sleep: Callable[[float], bool] | None = None,
        until: float | None = None,
    ) -> None:
        self.root = Path(root)
        self.schedule = schedule(agent_plans, speed, max_pause)
        self.plans = agent_plans
        self.error: BaseException | None = None
        self.played = 0
        self.until = until
        self._stop = threading.Event()
        self._done = threading.Event()
        self._sleep = sleep or self._stop.wait
        self._thread: threading.Thread | None = None

    @property
    def done(self) -> bool:
        return self._done.is_set()

    def homes(self) -> list[str]:
        """Each agent's home under the root (`senpi`, `claude`, `pi`, `codex`), in play order."""
        return [plan.home for plan in self.plans]

    def files(self) -> list[str]:
        """Every file the demo writes, relative to the root, agent by agent."""
        return [f for plan in self.plans for f in plan.files()]

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="demo-writer", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join()

    def wait(self, timeout: float | None = None) -> bool:
        self._done.wait(timeout)
        return self.done

    def play_until(self, wall: float) -> None:
        """Play, in this thread and without sleeping, every write scheduled before `wall` seconds."""
        while self.played < len(self.schedule) and self.schedule[self.played].wall <= wall:
            item = self.schedule[self.played]
            apply(self.root, item.path, item.write)
            self.played += 1
        if self.played == len(self.schedule):
            self._done.set()

    def _run(self) -> None:
        try:
            now = 0.0
            while self.played < len(self.schedule):
                due = self.schedule[self.played].wall
                if self.until is not None and due > self.until:
                    return
                if due > now:
                    if self._sleep(due - now) or self._stop.is_set():
                        return
                    now = due
                self.play_until(now)
            self._done.set()
        except BaseException as exc:  # reported through .error: the thread must not die silently
            self.error = exc

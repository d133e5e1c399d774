"""The observer of a run (record/kernel_view.py) looks from its own thread, so a look that takes
long (a process with tens of thousands of mappings) never delays the loop that enforces the run's
time limit and disk budget (issue 39). Looks come every 0.25 s, faster in the first moments."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Protocol

FIRST_S, EVERY_S = 0.01, 0.25  # the first look's delay, doubling up to the steady period
LAST_LOOK_S = 60.0  # how long the run's end waits for a look in progress


class Observer(Protocol):
    """Watches a run from outside it (record/kernel_view.py): told the started process's pid,
    then the run's process tree (root first) at every sample, then that the run ended."""

    def started(self, pid: int) -> None: ...

    def sample(self, pids: list[int]) -> None: ...

    def finished(self) -> None: ...


class ObserverLoop:
    """Shows `observer` the process tree below `root` (from `tree(root)`) until `stop`."""

    def __init__(self, observer: Observer, root: int, tree: Callable[[int], list[int]]) -> None:
        self.observer, self.root, self.tree = observer, root, tree
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="gpu2tpu-observer", daemon=True)

    def start(self) -> None:
        self.observer.started(self.root)
        self._thread.start()

    def _loop(self) -> None:
        interval = FIRST_S
        while not self._stop.wait(interval):
            try:
                pids = [self.root, *self.tree(self.root)]
            except (OSError, ValueError):  # /proc changed under the walk: look at the root alone
                pids = [self.root]
            self.observer.sample(pids)  # an observer records its own errors (KernelView.sample)
            interval = min(EVERY_S, interval * 2)

    def stop(self) -> None:
        """After the run ended: the look in progress completes, then the observer is told. A look
        that does not end within LAST_LOOK_S is left behind (its observer is never told, so its
        view has no end time) rather than holding the harness."""
        self._stop.set()
        self._thread.join(LAST_LOOK_S)
        if not self._thread.is_alive():
            self.observer.finished()

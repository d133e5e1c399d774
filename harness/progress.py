"""How far a long command is and about how long it has left: `validate` per task, `evaluate` per
evaluation, `tasks fetch` per source.

The estimate is the mean time of the items finished so far times the items left (with several
workers the elapsed time already counts them side by side). Each command extends the line it
prints per finished item: `[k/N] <what it printed>; 12 min elapsed, about 30 min left`."""

from __future__ import annotations

import time
from collections.abc import Callable


class Progress:
    """Counts finished items out of `total` and estimates the time left from their pace."""

    def __init__(self, total: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.total = total
        self.finished = 0
        self._clock = clock
        self.started = clock()

    def start(self) -> Progress:
        """Start (again) from now with nothing finished: call it where the items' work begins."""
        self.started = self._clock()
        self.finished = 0
        return self

    def done(self, k: int | None = None) -> None:
        """`k` items are finished now (default: one more than before)."""
        self.finished = self.finished + 1 if k is None else k

    def elapsed(self) -> float:
        return self._clock() - self.started

    def left(self) -> float | None:
        """Seconds left at the pace so far; None before any item finished (no pace yet)."""
        if self.finished <= 0:
            return None
        return self.elapsed() / self.finished * max(0, self.total - self.finished)

    def line(self, what: str = "") -> str:
        """`[k/N] what; E elapsed, about L left` (no estimate before the first item or after the last)."""
        timing = f"{duration(self.elapsed())} elapsed"
        left = self.left()
        if left is not None and self.finished < self.total:
            timing += f", about {duration(left)} left"
        head = f"[{self.finished}/{self.total}]"
        return f"{head} {what}; {timing}" if what else f"{head} {timing}"


def duration(seconds: float) -> str:
    """45 s, 12 min, 2 h 05 min."""
    if seconds < 59.5:
        return f"{max(0.0, seconds):.0f} s"
    minutes = round(seconds / 60)
    if minutes < 60:
        return f"{minutes} min"
    return f"{minutes // 60} h {minutes % 60:02d} min"

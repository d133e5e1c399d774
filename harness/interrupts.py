"""Ctrl-C in `gpu2tpu evaluate` (and `demo`, `validate`, which grade through it).

The first SIGINT starts nothing new: queued evaluations (and reference builds) are cancelled at
once, the running ones end cleanly and are written, summary.json is refreshed, and `Interrupted`
is raised with what finished; a rerun of the same command resumes (finished evaluations are
reused by their cache key). A second SIGINT ends everything now: every process below this one is
killed (the sandboxed runs are in sessions of their own, out of reach of the terminal's signal)
and the process exits 130 without writing the half-run evaluations, which a rerun grades again.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, wait
from types import FrameType
from typing import Any, NoReturn, TypeVar

from gpu2tpu.sandbox import descendants  # the one /proc walk of a process tree

T = TypeVar("T")
EXIT_INTERRUPTED = 130
HARD_STOP = ("\ngpu2tpu: stopped now: the running evaluations were ended and are not graded; "
             "run the same command again to grade them (finished ones are reused)\n")


class Interrupted(KeyboardInterrupt):
    """The first Ctrl-C stopped the work: `summary` is what finished (this invocation's part of
    summary.json, already written), `not_started` how many evaluations never ran."""

    def __init__(self, summary: dict[str, Any], not_started: int) -> None:
        super().__init__(f"interrupted: {len(summary.get('evaluations', []))} evaluation(s) graded, "
                         f"{not_started} not started; run the same command again to resume")
        self.summary = summary
        self.not_started = not_started


class Stopper:
    """While entered (in the main thread; elsewhere it never fires): the first SIGINT sets
    `requested`, the second ends everything now (`hard_stop`)."""

    def __init__(self, log: Callable[[str], None]) -> None:
        self.log = log
        self.requested = False
        self._previous: Any = None

    def __enter__(self) -> Stopper:
        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGINT, self._on_sigint)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._previous is not None:
            signal.signal(signal.SIGINT, self._previous)
            self._previous = None

    def _on_sigint(self, signum: int, frame: FrameType | None) -> None:
        if self.requested:
            hard_stop()
        self.requested = True  # noticed by `completed` within a quarter second

    def completed(self, futures: dict[Future, T], what: str) -> Iterator[tuple[T, Future]]:
        """Each future with its key as it completes; after the first Ctrl-C the queued ones are
        cancelled (not yielded) and the running ones waited for. `what`: "evaluation", ..."""
        pending = set(futures)
        announced = False
        while pending:
            done, pending = wait(pending, timeout=0.25, return_when=FIRST_COMPLETED)
            for fut in done:
                if not fut.cancelled():
                    yield futures[fut], fut
            if self.requested and not announced:
                announced = True
                cancelled = {f for f in pending if f.cancel()}
                pending -= cancelled
                self.log(f"interrupted: no new {what} starts ({len(cancelled)} cancelled); waiting for "
                         f"the {len(pending)} running to finish (Ctrl-C again stops them now)")


def hard_stop() -> NoReturn:
    """End every process below this one and exit 130 at once (from the signal handler: no locks,
    no buffered writes; the threads that waited for the killed runs never write their reports)."""
    try:
        os.write(sys.stderr.fileno(), HARD_STOP.encode())
    except (OSError, ValueError):
        pass
    for pid in descendants(os.getpid()):
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    os._exit(EXIT_INTERRUPTED)

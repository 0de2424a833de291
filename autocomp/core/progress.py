"""Progress for long commands: a tqdm bar on a terminal, otherwise a line every ~10 s (a log
file or a batch job's output is never silent for long), logged at INFO on the
"autocomp.progress" logger (core/log.py: the CLI shows it on standard error).
$AUTOCOMP_PROGRESS_EVERY sets the interval in seconds (tests use small ones).

A line comes on time even when the work between two updates is long (a model loading, a
chunk of a generative model's answers): a heartbeat thread logs the latest line, marked
"still working", whenever nothing was logged for an interval. `busy(desc)` does the same
around one long call that has nothing to count."""

from __future__ import annotations

import contextlib
import inspect
import logging
import os
import sys
import threading
import time
import weakref
from collections.abc import Callable, Iterator

EVERY = 10.0
BEAT_MIN = 0.2  # below this interval (tests' 0: a line per update) no heartbeat runs
log = logging.getLogger("autocomp.progress")


def every() -> float:
    value = os.environ.get("AUTOCOMP_PROGRESS_EVERY", "").strip()
    try:
        return max(float(value), 0.0) if value else EVERY
    except ValueError:
        return EVERY


class Heartbeat:
    """Logs `line(still)` every `interval` seconds from a daemon thread until `stop()`;
    `still` is true when no `touch()` (work done) came since the last line. `running` is
    false (and nothing runs) when the interval is under BEAT_MIN or None, or when progress
    lines are not shown: the caller then logs for itself."""

    def __init__(self, line: Callable[[bool], str], interval: float | None):
        # a bound method is held weakly: an owner dropped without close() (an exception
        # that skipped it) stops its beat instead of logging for ever
        self.line = weakref.WeakMethod(line) if inspect.ismethod(line) else (lambda: line)
        self.interval = interval
        self.worked = False
        self.stopped = threading.Event()
        self.thread = None
        if interval is not None and interval >= BEAT_MIN and log.isEnabledFor(logging.INFO):
            self.thread = threading.Thread(target=self._run, name="autocomp-heartbeat",
                                           daemon=True)
            self.thread.start()

    @property
    def running(self) -> bool:
        return self.thread is not None

    def touch(self) -> None:
        self.worked = True

    def _run(self) -> None:
        while not self.stopped.wait(self.interval):
            still, self.worked = not self.worked, False
            line = self.line()
            if line is None:  # its owner is gone
                return
            with contextlib.suppress(Exception):  # a progress line never breaks the work
                log.info(line(still))
            del line

    def stop(self) -> None:
        self.stopped.set()
        if self.thread is not None and self.thread is not threading.current_thread():
            self.thread.join(timeout=1.0)


class Progress:
    """`update(n, extra)` as work is done. Lines look like "... compass build: 1,234 of
    5,000 images (25%), <extra>, 31 s"; with `unit=None` (nothing counted) "... loading
    X, 31 s"."""

    def __init__(self, desc: str, total: int | None = None, unit: str | None = "item"):
        self.desc, self.total, self.unit, self.done = desc, total, unit, 0
        self.interval = every()
        self.start = self.last = time.monotonic()
        self.extra = ""
        self.bar = None
        self.beat = None
        if sys.stderr.isatty() and log.isEnabledFor(logging.INFO) and unit is not None:
            from tqdm import tqdm

            self.bar = tqdm(total=total, desc=desc, unit=unit, leave=False)
        else:  # the beat logs every interval; below its floor, update() logs
            self.beat = Heartbeat(self._beat_line, self.interval)

    def update(self, n: int = 1, extra: str = "") -> None:
        self.done += n
        self.extra = extra
        if self.bar is not None:
            self.bar.update(n)
            return
        self.beat.touch()
        now = time.monotonic()
        if not self.beat.running and now - self.last >= self.interval:
            self.last = now
            log.info(self.line(extra))

    def _beat_line(self, still: bool) -> str:
        return self.line(self.extra, still)

    def line(self, extra: str = "", still: bool = False) -> str:
        seconds = time.monotonic() - self.start
        if self.unit is None:
            return f"... {self.desc}{', still working' if still else ''}, {seconds:.0f} s"
        of = ""
        if self.total:
            of = f" of {self.total:,} ({100 * self.done / self.total:.0f}%)"
        return (f"... {self.desc}: {self.done:,}{of} {self.unit}s"
                f"{', ' + extra if extra else ''}{', still working' if still else ''}, "
                f"{seconds:.0f} s")

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
        if self.beat is not None:
            self.beat.stop()

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


@contextlib.contextmanager
def busy(desc: str) -> Iterator[Progress]:
    """A line every ~10 s ("... loading X, still working, 20 s") while the block runs: one
    long call with nothing to count (a model loading, a file read whole)."""
    with Progress(desc, None, None) as progress:
        yield progress

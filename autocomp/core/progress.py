"""Progress for long commands: a tqdm bar on a terminal, otherwise a line every ~10 s (a log
file or a batch job's output is never silent for long), logged at INFO on the
"autocomp.progress" logger (core/log.py: the CLI shows it on standard error).
$AUTOCOMP_PROGRESS_EVERY sets the interval in seconds (tests use small ones)."""

from __future__ import annotations

import logging
import os
import sys
import time

EVERY = 10.0
log = logging.getLogger("autocomp.progress")


def every() -> float:
    value = os.environ.get("AUTOCOMP_PROGRESS_EVERY", "").strip()
    try:
        return max(float(value), 0.0) if value else EVERY
    except ValueError:
        return EVERY


class Progress:
    """`update(n, extra)` as work is done. Lines look like "... compass build: 1,234 of
    5,000 images (25%), <extra>, 31 s"."""

    def __init__(self, desc: str, total: int | None = None, unit: str = "item"):
        self.desc, self.total, self.unit, self.done = desc, total, unit, 0
        self.interval = every()
        self.start = self.last = time.monotonic()
        self.bar = None
        if sys.stderr.isatty() and log.isEnabledFor(logging.INFO):
            from tqdm import tqdm

            self.bar = tqdm(total=total, desc=desc, unit=unit, leave=False)

    def update(self, n: int = 1, extra: str = "") -> None:
        self.done += n
        if self.bar is not None:
            self.bar.update(n)
            return
        now = time.monotonic()
        if now - self.last >= self.interval:
            self.last = now
            log.info(self.line(extra))

    def line(self, extra: str = "") -> str:
        of = ""
        if self.total:
            of = f" of {self.total:,} ({100 * self.done / self.total:.0f}%)"
        seconds = time.monotonic() - self.start
        return (f"... {self.desc}: {self.done:,}{of} {self.unit}s"
                f"{', ' + extra if extra else ''}, {seconds:.0f} s")

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

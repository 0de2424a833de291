"""Progress for long commands: a tqdm bar on a terminal, otherwise a line every ~10 s (a log
file or a batch job's output is never silent for long). $AUTOCOMP_PROGRESS_EVERY sets the
interval in seconds (tests use small ones)."""

from __future__ import annotations

import os
import sys
import time

EVERY = 10.0


def every() -> float:
    value = os.environ.get("AUTOCOMP_PROGRESS_EVERY", "").strip()
    try:
        return max(float(value), 0.0) if value else EVERY
    except ValueError:
        return EVERY


class Progress:
    """`update(n)` as work is done; `note(text)` says what is going on in a step that has no
    count (loading a model). Lines look like "... compass build: 1,234 of 5,000 images
    (25%), 31 s"."""

    def __init__(self, desc: str, total: int | None = None, unit: str = "item",
                 echo=None, bar: bool | None = None, interval: float | None = None):
        self.desc, self.total, self.unit, self.done = desc, total, unit, 0
        self.echo = echo or (lambda line: print(line, file=sys.stderr, flush=True))
        self.interval = every() if interval is None else interval
        self.start = self.last = time.monotonic()
        self.bar = None
        if bar if bar is not None else (echo is None and sys.stderr.isatty()):
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
            self.echo(self.line(extra))

    def note(self, text: str) -> None:
        """A step with no count: said at once, on the terminal too."""
        if self.bar is not None:
            self.bar.set_postfix_str(text)
        else:
            self.echo(f"... {self.desc}: {text}")
        self.last = time.monotonic()

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

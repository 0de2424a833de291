"""The progress lines of one cell being scored (eval/cells.py)."""

from __future__ import annotations

import time

from autocomp.core.log import package_logger

log = package_logger(__name__)


class CellProgress:
    """Logs the cell's counts every `every` seconds of a long cell, and (a heartbeat) the
    last counts again when a chunk runs longer than that: "... MODEL BENCH: 256 items
    (31/s), ..., still working, 40 s". What is counted follows the scorer: captions and
    images encoded (a dual encoder), pairs scored (a likelihood scorer) or items alone (a
    test taker, whose answers come a chunk at a time)."""

    def __init__(self, label: str, every: float | None, scorer=None):
        from autocomp.core.progress import Heartbeat

        self.label, self.every = label, every
        self.next = every
        self.start = time.monotonic()
        self.state: dict | None = None
        self.what = ("items" if getattr(scorer, "scores_items", False)
                     else "pairs" if getattr(scorer, "scores_pairs", False) else "embeddings")
        self.beat = Heartbeat(self._beat_line, every)

    def __call__(self, state: dict) -> None:
        self.state = state
        self.beat.touch()
        if self.beat.running or self.every is None or state["seconds"] < self.next:
            return  # the beat logs (or progress is off, or it is not time yet)
        self.next = state["seconds"] + self.every
        log.info(self.line(state))

    def _beat_line(self, still: bool) -> str:
        return self.line(self.state, still)

    def line(self, state: dict | None, still: bool = False) -> str:
        seconds = time.monotonic() - self.start if still or state is None else state["seconds"]
        items = (state or {}).get("items", 0)
        parts = [f"{items:,} items scored"]
        if state is not None and not items:  # the first chunk: encoded, not yet scored
            parts[0] += " (the first batch is under way)"
        if state is not None:
            enc = state["encoded"]
            if items:
                parts[0] += f" ({items / max(state['seconds'], 1e-9):,.0f}/s)"
                parts.append(f"{state['captions']:,} captions of them")
            if self.what == "embeddings":
                parts.append(f"{enc['captions']:,} captions and {enc['images']:,} images "
                             f"encoded, {state['cache_hits']:,} captions from the cache")
            elif self.what == "pairs":
                parts.append(f"{enc.get('pairs', 0):,} image-caption pairs scored on "
                             f"{enc['images']:,} images")
        if still:
            parts.append("still working")
        return f"...    {self.label}: {', '.join(parts)}, {seconds:.0f} s"

    def __enter__(self) -> CellProgress:
        return self

    def __exit__(self, *exc) -> None:
        self.beat.stop()

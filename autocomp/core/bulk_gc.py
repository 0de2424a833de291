"""The cyclic garbage collector around bulk records.

JSON records are acyclic dicts and lists: the collector can never free them, yet every full
collection walks all of them, and collections come more often the more are allocated. At
the paper's sizes that was 75% of the time to read a stage's records and half the time of
the captions stage. Two ways out, each restoring the collector as it was:
- `paused`: no collection while records are read in bulk (nothing cyclic is made);
- `long_lived`: what is in memory already (a stage's items, a run's records) moves out of
  the collector's sight (gc.freeze) while a block works through it.
"""

from __future__ import annotations

import gc
from contextlib import contextmanager


@contextmanager
def paused():
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


@contextmanager
def long_lived():
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()

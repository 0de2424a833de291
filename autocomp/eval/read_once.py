"""A benchmark read once for several light scorers (reference and text-statistics blind
scorers: nothing to load). Reading a benchmark enumerates its negatives again (a colour
Confusion item at N = 3 has 728), which costs these scorers more than scoring; eval runs
them benchmark by benchmark, and the first reading keeps the items for the others."""

from __future__ import annotations

from autocomp.eval.items import caption_count

BUDGET = 100_000  # captions kept (about 1 KB each); a larger benchmark is read each time


class ReadOnce:
    """`bench` with `items()` read from it once and then from memory, as long as it holds
    at most `budget` captions (else read again each time). Items are shared as they are:
    the harness only reads them."""

    def __init__(self, bench, budget: int = BUDGET):
        self.bench, self.budget = bench, budget
        self.kept: list | None = None
        self.too_big = False

    def __getattr__(self, name):
        return getattr(self.bench, name)

    def items(self):
        if self.kept is not None:
            yield from self.kept
            return
        if self.too_big:
            yield from self.bench.items()
            return
        kept, held = [], 0
        for item in self.bench.items():
            if kept is not None:
                kept.append(item)
                held += caption_count(item)
                if held > self.budget:
                    kept, self.too_big = None, True
            yield item
        if kept is not None:  # read to its end: whole
            self.kept = kept


class Digesting:
    """`bench` (a loaded benchmark: its fingerprint is a digest of its items) whose items()
    also take that digest as they go by: `fingerprint` once they were read to the end."""

    def __init__(self, bench):
        from autocomp.formats.suite import ItemDigest

        self.bench, self.digest, self.fingerprint = bench, ItemDigest(), None

    def __getattr__(self, name):
        return getattr(self.bench, name)

    def items(self):
        if self.fingerprint is not None:  # taken: a second reading only reads
            yield from self.bench.items()
            return
        for item in self.bench.items():
            self.digest.add(item)
            yield item
        self.fingerprint = self.digest.hexdigest()

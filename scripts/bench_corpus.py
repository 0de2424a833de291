"""The seen / unseen corpus scan at scale (issue 41), measured in one run:

    python scripts/bench_corpus.py [--rows 2000000] [--concepts 1000] [--work DIR]

Writes a parquet of ROWS web-style captions (Objects365 names, colours, relations mixed
in, most captions holding no target), samples CONCEPTS concepts per N of the paper's
attribute task (color, N = 2, 3) and relation task (position, N = 2), and scans the
corpus for their atoms
and compounds: seconds, captions per second, peak Python memory (tracemalloc) and peak
RSS, and the same scan of a tenth of the corpus (flat memory: the peaks should match).
For scale, the naive scan (every compound's check on every caption) is timed on 2,000
captions and extrapolated.
"""

from __future__ import annotations

import argparse
import random
import resource
import tempfile
import time
import tracemalloc
from pathlib import Path


def captions(rows: int, names: list[str], colors: list[str], seed: int = 0):
    rng = random.Random(seed)
    fillers = ["a photo of", "close-up of", "vintage poster with", "stock image:",
               "people walking near", "interior with", "illustration of"]
    places = ["in the city", "on a table", "at the beach", "in a garden", "on white"]
    rels = ["above", "below", "to the left of", "to the right of", "next to"]
    for i in range(rows):
        r = rng.random()
        if r < 0.5:
            yield f"{rng.choice(fillers)} something {rng.choice(places)} #{i}"
        elif r < 0.85:
            yield (f"{rng.choice(fillers)} a {rng.choice(colors)} {rng.choice(names)} "
                   f"{rng.choice(places)}")
        else:
            yield (f"a {rng.choice(names)} {rng.choice(rels)} the {rng.choice(names)} "
                   f"{rng.choice(places)}")


def write_corpus(path: Path, rows: int, names, colors) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    writer = pq.ParquetWriter(path, pa.schema([("caption", pa.string())]))
    batch = []
    for c in captions(rows, names, colors):
        batch.append(c)
        if len(batch) == 100_000:
            writer.write_table(pa.table({"caption": batch}))
            batch = []
    if batch:
        writer.write_table(pa.table({"caption": batch}))
    writer.close()


def concepts(count: int):
    from autocomp.concepts.load import load_task
    from autocomp.concepts.sampling import sample_concepts

    tasks = {n: load_task(n) for n in ("color", "position")}
    records = []
    for name, ns in (("color", (2, 3)), ("position", (2,))):
        for n in ns:
            records += [c.to_record() for c in sample_concepts(tasks[name], n, count, 0)]
    return records, tasks


def timed_scan(path: Path, records, tasks):
    from autocomp.bench.corpus import scan

    tracemalloc.start()
    start = time.perf_counter()
    got = scan(path, "caption", records, tasks)
    seconds = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return got, seconds, peak


def naive_rate(records, tasks, sample: list[str]) -> float:
    """Captions per second of checking every compound of every concept on every caption."""
    from autocomp.bench.atoms import compounds
    from autocomp.bench.corpus import Targets
    from autocomp.core.scene import SceneGraph
    from autocomp.language.check import check_caption

    targets = Targets([SceneGraph.from_dict(r["graph"]) for r in records], tasks)
    units = sorted(set().union(*(compounds(SceneGraph.from_dict(r["graph"]))
                                 for r in records)))
    graphs = [Targets.graph(u) for u in units]
    start = time.perf_counter()
    for caption in sample:
        for g in graphs:
            check_caption(caption, g, targets.noun, targets.longer, articles=False)
    return len(sample) / (time.perf_counter() - start)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=2_000_000)
    ap.add_argument("--concepts", type=int, default=1000)
    ap.add_argument("--work", type=Path, default=None)
    args = ap.parse_args()
    records, tasks = concepts(args.concepts)
    names = sorted({o["name"] for r in records for o in r["graph"]["objects"]})
    colors = sorted({a for r in records for o in r["graph"]["objects"]
                     for a in o["attributes"]})
    work = args.work or Path(tempfile.mkdtemp(prefix="bench-corpus-"))
    work.mkdir(parents=True, exist_ok=True)
    big, small = work / "big.parquet", work / "small.parquet"
    start = time.perf_counter()
    write_corpus(big, args.rows, names, colors)
    write_corpus(small, args.rows // 10, names, colors)
    print(f"corpus: {args.rows:,} captions, {big.stat().st_size / 2**20:.1f} MiB parquet "
          f"(written in {time.perf_counter() - start:.1f} s)")
    print(f"concepts: {len(records):,} (color N=2,3 and position N=2, {args.concepts:,} each)")
    got_s, sec_s, peak_s = timed_scan(small, records, tasks)
    got, sec, peak = timed_scan(big, records, tasks)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"targets: {got['targets']:,} atoms and compounds; seen: {len(got['atoms']):,} "
          f"atoms, {len(got['compounds']):,} compounds; rows read {got['rows']:,} "
          f"(complete: {got['complete']})")
    print(f"scan {args.rows:,}: {sec:.1f} s ({got['rows'] / sec:,.0f} captions/s); peak "
          f"Python memory {peak / 2**20:.1f} MiB; peak RSS {rss:.0f} MiB")
    print(f"scan {args.rows // 10:,}: {sec_s:.1f} s; peak Python memory "
          f"{peak_s / 2**20:.1f} MiB (ratio big/small {peak / peak_s:.2f}: flat)")
    sample = list(captions(2000, names, colors, seed=1))
    rate = naive_rate(records, tasks, sample)
    print(f"naive scan (every compound's check on every caption): {rate:,.1f} captions/s, "
          f"so {args.rows / rate / 3600:.1f} h for the corpus; indexed scan "
          f"{got['rows'] / sec / rate:,.0f}x faster")


if __name__ == "__main__":
    main()

"""The concepts stage: sample every (task, N) of the run config into concept records.

Cheap and deterministic, so it runs once in the launching process; the other stages read
`concepts/merged.jsonl`.
"""

from __future__ import annotations

import json

from autocomp.concepts.sampling import sample_concepts
from autocomp.concepts.scenes import sample_scenes
from autocomp.records import write_jsonl, write_text
from autocomp.runtime.parts import MERGED, part_path
from autocomp.runtime.run import Run

NAME = "concepts"


def make_concepts(run: Run) -> list[dict]:
    """Write the run's concept records (once); returns them."""
    merged = run.dir / NAME / MERGED
    if merged.exists():
        return run.records(NAME)
    records, seen = [], set()
    for spec in run.config.concepts:
        task = run.task_of_spec[spec.task]
        if task.kind == "scene":  # one draw over the design's cells
            batches = [sample_scenes(task, spec.count, run.config.seed)]
        else:
            batches = [sample_concepts(task, n, spec.count, run.config.seed) for n in spec.n]
        for batch in batches:
            for i, concept in enumerate(batch):
                record = {**concept.to_record(), "index": i}
                if record["id"] not in seen:
                    seen.add(record["id"])
                    records.append(record)
    write_jsonl(part_path(run.dir / NAME, 0), records)
    write_jsonl(merged, records)
    counts: dict[str, int] = {}
    for r in records:
        key = f"{r['task']} N={r['n']}"
        counts[key] = counts.get(key, 0) + 1
    write_text(run.dir / "stats" / f"{NAME}.json", json.dumps(
        {"stage": NAME, "expected": len(records), "done": len(records), "by_task": counts},
        indent=1))
    return records

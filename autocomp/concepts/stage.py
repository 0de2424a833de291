"""The concepts stage: sample every (task, N) of the run config into concept records.

Cheap and deterministic, so it runs once in the launching process; the other stages read
`concepts/merged.jsonl`.
"""

from __future__ import annotations

import json
from pathlib import Path

from autocomp.concepts.draw import concept_batches
from autocomp.concepts.partners import partner_records
from autocomp.concepts.sampling import Concept, sample_concepts
from autocomp.concepts.scene_sampling import sample_scenes
from autocomp.core.records import write_jsonl, write_text
from autocomp.runtime.stage import Stage


class ConceptStage(Stage):
    name = "concepts"

    def run_once(self) -> dict:
        """Write the run's concept records (once); returns the counters."""
        make_concepts(self.run)
        return json.loads(self.paths.stats(self.name).read_text(encoding="utf-8"))


def make_concepts(run) -> list[dict]:
    """Write the run's concept records (once); returns them."""
    paths, name = run.paths, ConceptStage.name
    if paths.merged(name).exists():
        return run.records(name)
    records, seen = [], set()
    partners = "winoground" in run.config.build.benchmarks
    for spec in run.config.concepts:
        task = run.task_of_spec[spec.task]
        if task.kind == "scene":  # one draw over the design's cells
            batches = [sample_scenes(task, spec.count, run.config.seed)]
        else:
            batches = [sample_concepts(task, n, spec.count, run.config.seed) for n in spec.n]
        for batch in batches:
            drawn = {c.id for c in batch}  # a drawn concept is never someone's partner
            for i, concept in enumerate(batch):
                record = concept.to_record(index=i)
                if record["id"] not in seen:
                    seen.add(record["id"])
                    records.append(record)
                partner = partner_records(task, record, Concept) if partners else None
                if partner is not None and partner["id"] not in seen \
                        and partner["id"] not in drawn:
                    seen.add(partner["id"])
                    records.append(partner)  # right after its original
    write_jsonl(paths.part(name, 0), records)
    write_jsonl(paths.merged(name), records)
    counts: dict[str, int] = {}
    for r in records:
        key = f"{r['task']} N={r['n']}"
        counts[key] = counts.get(key, 0) + 1
    stats = {"stage": name, "expected": len(records), "done": len(records), "by_task": counts}
    if partners:
        stats["swap_partners"] = sum("partner_of" in r for r in records)
    write_text(paths.stats(name), json.dumps(stats, indent=1))
    return records


def write_concepts(task, ns, count: int, seed: int, out) -> tuple:
    """Sample `count` concepts per N and write them to OUT/concepts/<task>.jsonl (a scene
    task: `count` concepts over its design, kept where their object count is in `ns`)."""
    per_n = concept_batches(task, ns, count, seed)
    path = Path(out) / "concepts" / f"{task.name}.jsonl"
    write_jsonl(path, (c.to_record() for cs in per_n.values() for c in cs))
    return path, {n: len(cs) for n, cs in per_n.items()}

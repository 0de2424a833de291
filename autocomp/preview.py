"""One concept laid out for reading: its caption, matched bindings, negatives, counts."""

from __future__ import annotations

from autocomp.concepts.draw import one_concept
from autocomp.concepts.task import Task
from autocomp.language.check import check_caption
from autocomp.negatives.chance import percent
from autocomp.negatives.generate import check_count, graph_count, make_negatives


def preview(task: Task, n: int, seed: int = 0, examples: int = 4,
            limit: int | None = None) -> dict:
    """Refuses (one line) before sampling when a benchmark would enumerate more than
    `limit` negatives (default: MAX_NEGATIVES or $AUTOCOMP_MAX_NEGATIVES)."""
    problem = task.capacity_problem(n)
    if problem:
        from autocomp.core.errors import AutocompError

        raise AutocompError(f"task '{task.name}': {problem}")
    if task.counts_follow_n:  # refused before sampling; a scene concept's count varies
        for kind in task.negative_kinds(n):
            check_count(task, n, kind, limit)
    concept = one_concept(task, n, seed)
    caption = task.minimal_caption(concept.graph)
    check = check_caption(caption, concept.graph, task.noun, task.object_forms)
    out = {"task": task.name, "n": n, "seed": seed, "concept": concept.to_record(),
           "minimal": caption,
           "bindings": [caption[m.span[0]:m.span[1]] for m in check.matches],
           "benchmarks": {}}
    for kind in task.negative_kinds(n):
        ns = make_negatives(concept.graph, task, kind, task.minimal_caption,
                            limit)
        out["benchmarks"][kind] = {
            "negatives": len(ns.negatives),
            "formula": graph_count(concept.graph, task, kind),
            "duplicates_removed": ns.duplicates,
            "same_meaning": sum(x.same_meaning for x in ns.negatives),
            "chance": percent(ns.chance),
            "examples": [x.to_dict() for x in _examples(ns.negatives, examples)],
        }
    return out


def _examples(negatives, k: int):
    """Up to k negatives, one per category first, so the preview shows the variety."""
    picked, seen = [], set()
    for neg in negatives:
        if neg.category not in seen:
            seen.add(neg.category)
            picked.append(neg)
    picked += [x for x in negatives if x not in picked]
    return picked[:k]


def format_preview(p: dict) -> str:
    c = p["concept"]
    counts = " ".join(f"{k}={v}" for k, v in c["counts"].items())
    lines = [f"task {p['task']}, N={p['n']}, seed {p['seed']}: concept {c['id']}",
             f"  minimal   {p['minimal']}",
             f"  bindings  {' | '.join(p['bindings'])}",
             f"  counts    {counts}"]
    for kind, b in p["benchmarks"].items():
        lines.append(f"  {kind:<10}{b['negatives']} negatives (formula: {b['formula']}), "
                     f"{b['duplicates_removed']} duplicates removed, {b['same_meaning']} same "
                     f"meaning as the positive, chance {b['chance']}%")
        for ex in b["examples"]:
            tag = f"  [{ex['category']}]" if ex["category"] else ""
            lines.append(f"      - {ex['caption']}{tag}")
    return "\n".join(lines)

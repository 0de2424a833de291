"""Drawing concepts of any task type: per N for binding tasks, over the design's cells for
scene tasks (whose concepts' N is their object count)."""

from __future__ import annotations

from autocomp.concepts.sampling import Concept, sample_concepts
from autocomp.concepts.scene_sampling import sample_scenes
from autocomp.concepts.scenes import SceneTask


def concept_batches(task, ns, count: int, seed: int) -> dict[int, list[Concept]]:
    """`count` concepts per N of `ns` (a scene task: `count` concepts over its design,
    grouped by their object count; those whose count is not in `ns` are left out, and an
    empty `ns` keeps every one)."""
    if isinstance(task, SceneTask):
        per_n: dict[int, list[Concept]] = {n: [] for n in ns}
        for c in sample_scenes(task, count, seed):
            if not ns:
                per_n.setdefault(c.n, []).append(c)
            elif c.n in per_n:
                per_n[c.n].append(c)
        return per_n
    return {n: sample_concepts(task, n, count, seed) for n in ns}


def one_concept(task, n: int, seed: int = 0) -> Concept:
    """A concept with n objects, the same for the same seed."""
    if isinstance(task, SceneTask):  # the first one of the design with n objects
        return next(c for c in sample_scenes(task, 4 * len(task.cells()), seed) if c.n == n)
    return sample_concepts(task, n, 1, seed)[0]

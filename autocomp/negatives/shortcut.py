"""Confusion without its text-only shortcut (our addition, not the paper's; docs/methods.md).

A Confusion positive names each of its objects and values once; many of its negatives
repeat one ("a red cube and a red sphere"), so they have fewer distinct words, and a
text-only rule that prefers the caption with the most distinct words (blind:distinct)
beats chance without the image. The shortcut-matched negatives are those that keep the
positive's count of distinct objects and of distinct values (its own objects and values,
rearranged) and do not say what the positive says ("a blue sphere and a red cube" for "a
red cube and a blue sphere" is true of the image, so never a negative here). Every matched
caption has the positive's bag of words, so a bag-of-words scorer ties all of them by
construction: strict 0, tie-aware exactly chance. "At chance on the matched set" is true
of such a scorer by construction, not evidence; what the matched set controls for is the
word count, and a model above its chance there binds words to objects. Eval scores every
Confusion item on them as well (`accuracy_matched`, with its own chance), so a report shows
how much of a Confusion accuracy the shortcut could explain.
"""

from __future__ import annotations

import numpy as np


def distinct_counts(names, values) -> tuple[int, int]:
    return len(set(names)), len(set(values))


def shortcut_matched(graph, task, negatives: list[dict]) -> np.ndarray | None:
    """Per negative, whether it keeps the positive's distinct-object and distinct-value
    counts and has a meaning of its own (a reordering of the positive is true of the
    image: never counted wrong here); None where that cannot be read off the negatives'
    edits (N = 1 variations, negatives without an edit, items without a task or a scene
    graph)."""
    if graph is None or task is None or not negatives:
        return None
    key = getattr(task, "value_key", None)
    names, values = list(graph.names), task.values_of(graph)
    want = distinct_counts(names, values)
    out = np.zeros(len(negatives), dtype=bool)
    for k, neg in enumerate(negatives):
        edit = neg.get("edit")
        if not edit or "slot" in edit or "objects" not in edit or key not in edit:
            return None
        got = distinct_counts([names[i] for i in edit["objects"]],
                              [values[j] for j in edit[key]])
        out[k] = got == want and not neg.get("same_meaning")
    return out


def matched_negatives(item: dict, tasks: dict | None) -> np.ndarray | None:
    """A benchmark item's shortcut-matched negatives when it is a Confusion item of a run
    (its scene graph and its task known), else None."""
    if item.get("kind") != "confusion" or "graph" not in item or not tasks:
        return None
    from autocomp.core.scene import SceneGraph

    return shortcut_matched(SceneGraph.from_dict(item["graph"]), tasks.get(item.get("task")),
                            item["negatives"])

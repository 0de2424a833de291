"""Reference scorers: they read the item's ground truth instead of looking at pixels.

  oracle           1 for the caption whose scene graph is the image's, 0 for the others:
                   100% by construction (a check of the harness, not of a model)
  bag-of-concepts  knows which objects and which values the image has, not how they bind:
                   a caption scores the number of the image's objects and values it names
                   (distinct). Every swap negative ties with the positive.
  random           a uniform score per (seed, item, caption): sits at chance
"""

from __future__ import annotations

import hashlib

from autocomp.core.errors import AutocompError
from autocomp.core.families import contract_example
from autocomp.eval.scorers.base import ItemScorer


def _needs_graph(scorer, truth) -> None:
    if truth["graph"] is None:
        raise AutocompError(f"{scorer.spec} reads the items' scene graphs, which this "
                            "benchmark's items do not have (SugarCrepe, CREPE, tables): use "
                            "a model, reference:random or a blind scorer")


class Oracle(ItemScorer):
    family = "reference"
    light = True

    def score_item(self, item, candidates, truth):
        _needs_graph(self, truth)
        return [1.0 if g == truth["graph"] else 0.0 for g in candidates]


class BagOfConcepts(ItemScorer):
    family = "reference"
    light = True

    def score_item(self, item, candidates, truth):
        _needs_graph(self, truth)
        task, graph = truth["task"], truth["graph"]

        def values(g):  # without a task (COMPASS graphs): every attribute and predicate
            if task is not None:
                return set(task.values_of(g))
            return {a for o in g.objects for a in o.attributes} | {r.predicate
                                                                   for r in g.relations}

        objects, mine = set(graph.names), values(graph)
        return [float(len(set(g.names) & objects) + len(values(g) & mine)) for g in candidates]


class Random(ItemScorer):
    family = "reference"
    light = True

    def __init__(self, name, pretrained=None, **kw):
        super().__init__(name, pretrained, **kw)
        try:
            self.seed = int(pretrained or 0)
        except ValueError:
            raise AutocompError(f"reference:random@SEED needs an integer seed, got "
                                f"'{pretrained}'") from None

    def score_item(self, item, candidates, truth):
        out = []
        for i in range(len(candidates)):
            h = hashlib.sha256(f"{self.seed}:{item['id']}:{i}".encode()).digest()
            out.append(int.from_bytes(h[:8], "big") / 2**64)
        return out


REFERENCES = {"oracle": Oracle, "bag-of-concepts": BagOfConcepts, "random": Random}


@contract_example("reference:oracle", "reference:bag-of-concepts", "reference:random",
                  "reference:random@3")
def make_reference(name, pretrained=None, **kw):
    if name not in REFERENCES:
        raise AutocompError(f"unknown reference scorer '{name}' (known: "
                            f"{', '.join(REFERENCES)})")
    return REFERENCES[name](name, pretrained, **kw)

"""Train / val / test by concept, and CREPE's seen / unseen labels (docs/train.md).

Atoms and compounds (CREPE section 3.1) are read off the scene graph:
  atoms      ("object", name), ("value", attribute), ("relation", predicate)
  compounds  ("value-object", attribute, name), ("relation", subject, predicate, object)

`assign` gives every concept a split. A concept and its Winoground partner are one group
(one split). With `hold_out`, a share of the distinct compounds (or values, objects,
relations; or those named) is held out: a group holding one goes to test, whatever the
fractions say, so train never holds it. The other groups go to train / val / test by a
hash of (seed, group), so adding concepts moves few, with the shares adjusted so that the
whole comes out at the asked fractions where the forced test concepts fit in test's share
(splits.json records the shares got and how many concepts were forced).

`label` places a test concept as CREPE does: "unseen atoms" if one of its atoms was never
seen, else "unseen compounds" if one of its compounds was never seen, else "seen
compounds". Seen against train (the train concepts' graphs, exact), or against a caption
corpus (bench/corpus.py).

bench/splits.json records the assignment, what was held out, the labels and what they
were measured against; formats/runs.py reads it (eval scores test items by default).
"""

from __future__ import annotations

import hashlib
import json
import random
from collections import Counter
from pathlib import Path

from autocomp.bench.atoms import atoms, compounds, words
from autocomp.core.errors import AutocompError
from autocomp.core.records import write_text
from autocomp.core.scene import SceneGraph

SPLITS = ("train", "val", "test")
SEEN = ("seen compounds", "unseen compounds", "unseen atoms")
SEEN_SHORT = {"seen compounds": "SC", "unseen compounds": "UC", "unseen atoms": "UA"}
FILE = "splits.json"
_HELD_KIND = {"values": "value", "objects": "object", "relations": "relation"}


def label(graph: SceneGraph, seen_atoms, seen_compounds) -> str:
    if not atoms(graph) <= seen_atoms:
        return SEEN[2]
    if not compounds(graph) <= seen_compounds:
        return SEEN[1]
    return SEEN[0]


def _unit(key: str) -> float:
    """A number in [0, 1) from a key, the same on every machine."""
    return int(hashlib.sha256(key.encode()).hexdigest()[:15], 16) / 16 ** 15


def _groups(records: list[dict], tasks: dict | None = None) -> dict[str, list[dict]]:
    """Group id -> its records: a partner joins its original, concepts of one meaning (the
    same graph drawn by two tasks) join each other, and with `tasks`, two drawn concepts
    that are each other's swap join too (they make a Winoground item), so none straddles
    splits."""
    parent = {r["id"]: r["id"] for r in records}

    def root(i: str) -> str:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    first: dict = {}
    for r in records:
        first.setdefault(_meaning(r, tasks), r["id"])
    for r in records:
        links = [first[_meaning(r, tasks)]]
        if r.get("partner_of") in parent:
            links.append(r["partner_of"])
        swap = _swap_meaning(r, tasks)
        if swap in first:
            links.append(first[swap])
        for other in links:
            a, b = sorted((root(r["id"]), root(other)))
            parent[b] = a
    out: dict[str, list[dict]] = {}
    for r in records:
        out.setdefault(root(r["id"]), []).append(r)
    return out


def meaning(graph: SceneGraph, task) -> tuple:
    """What a graph states, a relation read with its inverse ("a chair under a lamp" = "a
    lamp above a chair") where `task` (or None) names one."""
    return graph.meaning_key(task.inverses if task is not None else None)


def _meaning(record: dict, tasks: dict | None) -> tuple:
    return meaning(SceneGraph.from_dict(record["graph"]), (tasks or {}).get(record.get("task")))


def _swap_meaning(record: dict, tasks: dict | None):
    if not tasks or record.get("task") not in tasks:
        return None
    from autocomp.concepts.partners import partner_graph

    task = tasks[record["task"]]
    got = partner_graph(task, SceneGraph.from_dict(record["graph"]))
    return None if got is None else meaning(got, task)


def _inverse(tasks: dict | None) -> dict:
    return {p: q for task in (tasks or {}).values() for p, q in task.inverses.items()}


def _read_back(unit: tuple, inverse: dict) -> tuple | None:
    """A relation triple's inverse reading ("cube above sphere" -> "sphere below cube"),
    or None where it has none."""
    if unit[0] == "relation" and len(unit) == 4 and unit[2] in inverse:
        return ("relation", unit[3], inverse[unit[2]], unit[1])
    return None


def one_reading(unit: tuple, inverse: dict) -> tuple:
    """The compound a unit is, whichever way it is read: a relation triple and its inverse
    reading are one compound (the same scene), named by the smaller of the two."""
    back = _read_back(unit, inverse)
    return unit if back is None else min(unit, back)


def with_inverses(held: set[tuple], tasks: dict | None) -> set[tuple]:
    """Compounds with their inverse readings ("cube above sphere" holds "sphere below
    cube" out, or in, too: the same scene)."""
    inverse = _inverse(tasks)
    return held | {b for u in held if (b := _read_back(u, inverse)) is not None}


def distinct_compounds(records: list[dict], tasks: dict | None = None) -> set[tuple]:
    """The distinct compounds the concepts hold, a relation and its inverse reading one."""
    inverse = _inverse(tasks)
    return {one_reading(c, inverse) for r in records
            for c in compounds(SceneGraph.from_dict(r["graph"]))}


def held_out(records: list[dict], cfg, seed: int, where=None,
             tasks: dict | None = None) -> tuple[set[tuple], int]:
    """(the compounds or atoms train must never hold, how many distinct ones they were
    drawn from); compounds as distinct compounds (one reading each: with_inverses adds the
    other), so hold_out_fraction is their share."""
    if cfg.hold_out == "none":
        return set(), 0
    if cfg.hold_out == "compounds":
        universe = sorted(distinct_compounds(records, tasks))
    else:
        graphs = [SceneGraph.from_dict(r["graph"]) for r in records]
        kind = _HELD_KIND[cfg.hold_out]
        universe = sorted(a for a in set().union(*(atoms(g) for g in graphs)) if a[0] == kind)
        if cfg.held_out:
            named = {(kind, h) for h in cfg.held_out}
            unknown = sorted(h for k, h in named - set(universe))
            if unknown:
                raise AutocompError(f"held out {cfg.hold_out} that no concept holds: "
                                    f"{', '.join(unknown)} (known: "
                                    f"{', '.join(u[1] for u in universe)})", file=where,
                                    field="split.held_out")
            return named, len(universe)
    k = round(cfg.hold_out_fraction * len(universe))
    return set(random.Random(f"{seed}/split/{cfg.hold_out}").sample(universe, k)), len(universe)


def _holds(graph: SceneGraph, held: set[tuple]) -> bool:
    return bool(held & (compounds(graph) | atoms(graph)))


def assign(records: list[dict], cfg, seed: int, where=None, tasks: dict | None = None) -> dict:
    """{"split": {concept id: split}, "held_out": [...], "forced_test": n}: every concept's
    split (`tasks`: the run's, so that concepts that are each other's swap share one).

    The fractions are shares of all the concepts. Concepts holding a held-out unit must go
    to test; the free ones fill what is left of each share, so the shares come out as asked
    wherever the forced ones fit in test's share. Where they do not, test holds every
    forced concept and the free ones split train : val as asked (make_splits records and
    prints the shares got, and why)."""
    chosen, drawn_from = held_out(records, cfg, seed, where, tasks)
    held = with_inverses(chosen, tasks)
    groups = _groups(records, tasks)
    forced = {gid for gid, members in groups.items()
              if any(_holds(SceneGraph.from_dict(r["graph"]), held) for r in members)}
    total = sum(len(m) for m in groups.values())
    n_forced = sum(len(groups[g]) for g in forced)
    to_train, to_val = _free_shares(cfg, total, n_forced)
    split = {}
    for gid, members in groups.items():
        if gid in forced:
            name = "test"
        else:
            u = _unit(f"{seed}/{gid}")
            name = "train" if u < to_train else "val" if u < to_train + to_val else "test"
        for r in members:
            split[r["id"]] = name
    share = None
    if cfg.hold_out == "compounds":  # the share got, beside the asked hold_out_fraction
        share = {"held": len(chosen), "of": drawn_from}
    return {"split": split, "held_out": sorted(list(h) for h in held),
            "hold_out": cfg.hold_out, "forced_test": n_forced, "held_share": share}


def _free_shares(cfg, total: int, forced: int) -> tuple[float, float]:
    """The train and val shares among the free concepts that give the asked shares of all
    `total` concepts when `forced` of them must be test (test's asked share counts them
    first); where test's share cannot hold them, train : val keep their asked ratio."""
    free = total - forced
    if free <= 0:
        return 0.0, 0.0
    want = {"train": cfg.train * total, "val": cfg.val * total,
            "test": max(cfg.test * total - forced, 0.0)}
    scale = sum(want.values())
    if scale <= 0:
        return 1.0, 0.0
    return want["train"] / scale, want["val"] / scale


def seen_in_train(records: list[dict], split: dict,
                  tasks: dict | None = None) -> tuple[set, set]:
    """(atoms, compounds) of the train concepts, each compound in both readings: a
    compound is seen if it or its inverse reading is in train, as the hold-out counts it."""
    train = [SceneGraph.from_dict(r["graph"]) for r in records if split[r["id"]] == "train"]
    return (set().union(*(atoms(g) for g in train)),
            with_inverses(set().union(*(compounds(g) for g in train)), tasks))


def labels(records: list[dict], split: dict, seen_atoms, seen_compounds) -> dict[str, str]:
    """Concept id -> its seen label, for every concept outside train."""
    return {r["id"]: label(SceneGraph.from_dict(r["graph"]), seen_atoms, seen_compounds)
            for r in records if split[r["id"]] != "train"}


def leaks(records: list[dict], split: dict, held, tasks: dict | None = None) -> list[str]:
    """What train holds that it must not: a held-out compound or atom, or a concept (by
    meaning, inverse relations read backwards with `tasks`) that is also outside train.
    Empty when the split is clean."""
    held = {tuple(h) for h in held}
    out, outside = [], set()
    for r in records:
        if split[r["id"]] != "train":
            outside.add(_meaning(r, tasks))
    for r in records:
        if split[r["id"]] != "train":
            continue
        graph = SceneGraph.from_dict(r["graph"])
        for unit in sorted(held & (compounds(graph) | atoms(graph))):
            out.append(f"train concept {r['id']} holds held-out {unit[0]} '{words(unit)}'")
        if _meaning(r, tasks) in outside:
            out.append(f"train concept {r['id']} is also a concept outside train")
    return out


# one way, as docs/train.md gives it: the run keeps its own config.yaml, so a section added
# to the user's file reaches the run through `autocomp run` (nothing is generated again)
NO_SPLITS = ("the run has no splits: add a split section to its config file and run "
             "`autocomp run CONFIG --output RUN` again (nothing is generated again; only "
             "bench/splits.json is written: docs/train.md)")


def make_splits(run, corpus=None, column: str | None = None, progress=None) -> dict:
    """Assign the run's concepts, label those outside train (against train, or against
    `corpus`), check for leaks, write bench/splits.json; returns what it wrote."""
    cfg = run.config.split
    if cfg is None:
        raise AutocompError(NO_SPLITS, file=run.dir / "config.yaml")
    records = run.records("concepts")
    made = assign(records, cfg, run.config.seed, where=run.dir / "config.yaml",
                  tasks=run.tasks)
    problems = leaks(records, made["split"], made["held_out"], run.tasks)
    if problems:  # assign cannot make these; a guard against a future change
        raise AutocompError(f"the split leaks into train: {problems[0]} "
                            f"({len(problems)} in all)", file=run.dir)
    corpus = corpus if corpus is not None else run.config.corpus_path()
    if corpus is not None:
        from autocomp.bench.corpus import scan

        column = column or cfg.corpus_column
        outside = [r for r in records if made["split"][r["id"]] != "train"]  # the labelled
        found = scan(Path(corpus), column, outside, run.tasks, progress=progress)
        seen_atoms, seen_compounds = found["atoms"], with_inverses(found["compounds"],
                                                                   run.tasks)
        against = {"corpus": str(corpus), "column": column, "rows": found["rows"],
                   "empty_rows": found["empty"], "too_long_lines": found["too_long"]}
    else:
        seen_atoms, seen_compounds = seen_in_train(records, made["split"], run.tasks)
        against = {"train": sum(s == "train" for s in made["split"].values())}
    seen = labels(records, made["split"], seen_atoms, seen_compounds)
    counts = Counter(made["split"].values())
    total = sum(counts.values())
    out = {"hold_out": made["hold_out"], "held_out": made["held_out"],
           "held_share": made["held_share"],
           "fractions": {s: getattr(cfg, s) for s in SPLITS}, "seen_against": against,
           "shares": {s: round(counts.get(s, 0) / total, 4) if total else 0.0
                      for s in SPLITS},
           "forced_test": made["forced_test"], "counts": dict(counts),
           "seen_counts": dict(Counter(seen.values())),
           "split": made["split"], "seen": seen}
    write_text(run.paths.bench / FILE, json.dumps(out, indent=1, sort_keys=True))
    return out


def read_splits(bench_dir: Path) -> dict | None:
    path = Path(bench_dir) / FILE
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise AutocompError(f"not readable JSON ({exc})", file=path) from None
    if not isinstance(data, dict) or not isinstance(data.get("split"), dict):
        raise AutocompError("expected the split of every concept (`split`)", file=path)
    return data

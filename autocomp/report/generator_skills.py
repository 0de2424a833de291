"""The generators tables pooled per skill (task and N, over tracks and benchmark kinds),
from the per-item predictions beside each result (docs/generators.md):

  kept       each model's accuracy on each generator's own kept items: a generator that
             keeps items whose captions are easier to guess shows up in a blind scorer's row
  common     each model's accuracy on the items every generator kept, and each compared
             generator minus the run's own, its interval resampling whole concepts (a
             concept's items on both tracks and every kind move together)
  ranks      whether the models rank alike under each generator: the rank agreement of
             report/ranks.py (tau-b and rho, models and items resampled) between the run's
             own skill and each compared generator's, each on its own kept items
"""

from __future__ import annotations

from collections import defaultdict

from autocomp.report.table_format import INTERVAL_NOTE, Table, ci, signed

OWN = "own"


def by_skill(results: list[dict]) -> tuple[dict[tuple, dict], list[str]]:
    """((model, task, N) -> generator label (None: the run's own) -> item id -> (concept,
    outcome), pooled over the skill's tracks and kinds; the results left out and why)."""
    from autocomp.report.paired import outcomes

    out: dict[tuple, dict] = defaultdict(lambda: defaultdict(dict))
    left = []
    for r in results:
        if r.get("kind") == "winoground":  # items of two concepts: not pooled here
            left.append(f"{r['model']} on {r['benchmark']} (Winoground items pair two "
                        "concepts)")
            continue
        got = outcomes(r, by="item")
        if got is None:
            left.append(f"{r['model']} on {r['benchmark']} (no predictions beside it)")
            continue
        out[(r["model"], r["task"], r["n"])][r.get("generator")].update(got)
    return out, left


def _accuracy(items: dict, ids) -> tuple[str, int]:
    """(the accuracy of `ids` with its concept-resampled interval, the items)."""
    from autocomp.eval.intervals import proportion

    units: dict[str, list] = defaultdict(lambda: [0, 0.0])
    for i in ids:
        concept, outcome = items[i]
        units[concept][0] += 1
        units[concept][1] += outcome
    n = sum(u[0] for u in units.values())
    if not n:
        return "-", 0
    return ci(100.0 * sum(u[1] for u in units.values()) / n, proportion(dict(units))), n


def _left_note(left: list[str]) -> list[str]:
    return [f"Left out ({len(left)}): " + "; ".join(left)] if left else []


def _ordered(skills: dict):
    return sorted(skills.items(), key=lambda kv: (str(kv[0][0]), kv[0][1], kv[0][2]))


def kept_table(pooled: tuple[dict, list], labels: dict, order: list) -> Table | None:
    """Each model's accuracy on every item of each generator's own benchmarks (`pooled`:
    by_skill's)."""
    skills, left = pooled

    def cell(items: dict | None) -> str:
        if items is None:
            return "-"
        text, n = _accuracy(items, items)
        return f"{text} (n={n:,})"

    rows = [[labels.get(model, model), f"{task} N={n}", *(cell(by.get(g)) for g in order)]
            for (model, task, n), by in _ordered(skills)]
    if not rows:
        return None
    return Table("Generators: accuracy (%) on each generator's own kept items, per skill; "
                 + INTERVAL_NOTE,
                 ["Model", "Skill", *(OWN if g is None else g for g in order)], rows,
                 ["Each column holds the items its generator's images kept, so the columns "
                  "differ in items as well as images: compare them only with the survival "
                  "table beside. A text-only scorer sees no image: its differences here "
                  "come from which items each generator kept. Intervals resample whole "
                  "concepts (a concept's items on both tracks and every kind).",
                  *_left_note(left)])


def common_table(pooled: tuple[dict, list], labels: dict, order: list) -> Table | None:
    """On the items every generator kept: each compared generator minus the run's own."""
    from autocomp.eval.intervals import paired_clustered

    skills, left = pooled
    rows, left = [], list(left)
    for (model, task, n), by in _ordered(skills):
        missing = [OWN if g is None else g for g in order if g not in by]
        common = [] if missing else sorted(set.intersection(*(set(by[g]) for g in order)))
        if not common:
            left.append(f"{model} {task} N={n} (" + (f"no results on {', '.join(missing)}"
                                                      if missing else "no item kept by "
                                                      "every generator") + ")")
            continue
        own = [by[None][i][1] for i in common]
        concepts = [by[None][i][0] for i in common]
        for g in order[1:]:
            d = paired_clustered([by[g][i][1] for i in common], own, concepts)
            rows.append([labels.get(model, model), f"{task} N={n}", g,
                         f"{len(common):,} ({len(set(concepts)):,})",
                         _accuracy(by[None], common)[0], _accuracy(by[g], common)[0],
                         f"{signed(d['delta'])} [{signed(d['low'])}, {signed(d['high'])}]"])
    if not rows:
        return None
    return Table("Generators: accuracy (%) on the items every generator kept, per skill, and "
                 "compared − own in points; " + INTERVAL_NOTE,
                 ["Model", "Skill", "Generator", "Items (concepts)", "Own", "Compared",
                  "Compared − own"], rows,
                 ["The same items under every generator (one id: the same concept, track, "
                  "kind, captions and negatives), pooled over the skill's tracks and kinds. "
                  "Intervals resample whole concepts (scipy's bootstrap, seeded); where "
                  "every concept is one item, Newcombe's paired interval.",
                  *_left_note(left)])


def rank_table(results: list[dict], labels: dict, order: list) -> Table | None:
    """The models' rank agreement per skill between the run's own generator and each
    compared one (baselines left out, as `autocomp report --agreement` does)."""
    from autocomp.report.categories import baseline_of
    from autocomp.report.ranks import agreement, groups_of, pooled
    from autocomp.report.ranks_table import agreement_table

    kept = [r for r in results if baseline_of(r) is None and r.get("kind") != "winoground"]
    groups, left = groups_of(kept)
    by_bench = {name: g.outcomes for name, g in groups.items()}
    skills: dict[tuple, dict] = defaultdict(lambda: defaultdict(set))
    for r in kept:
        if r["benchmark"] in by_bench:
            skills[(r["task"], r["n"])][r.get("generator")].add(r["benchmark"])
    rows = []
    for (task, n), by in sorted(skills.items()):
        if None not in by:
            continue
        own = pooled(f"{task} N={n}: {OWN}", sorted(by[None]), by_bench)
        for g in order[1:]:
            if by.get(g):
                rows.append(agreement(pooled(f"{task} N={n}: {g}", sorted(by[g]), by_bench),
                                      own))
    if not rows:
        return None
    table = agreement_table(rows, left, labels)
    table.title = ("Generators: do the models rank alike on each generator's images? "
                   "(Kendall tau-b, Spearman rho; each side on its own kept items)")
    return table

"""The generators tables of a report, for a run whose concepts several generators drew
(generate.compare; docs/generators.md):

  survival   per generator, the share of each (task, N)'s concepts whose image on each
             track passed validation (the same cascade for all), with exact intervals
  kept, common  per model and skill (report/generator_skills.py): accuracy on each one's
             kept items, and on the items every generator kept with the differences
  paired     per model and benchmark, each compared generator against the run's own on the
             items both kept (the same ids: the same concept, captions and negatives), the
             difference with Newcombe's paired interval and the exact McNemar p, Holm-
             adjusted over the table's rows

A difference on the paired items is what the images change for the same items; survival
is what each generator can draw at all. Neither says which generator is right.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from autocomp.report.table_format import INTERVAL_NOTE, Table, ci, signed

OWN = "own"  # the run's own generator, in the tables' columns


def generator_tables(own: list[dict], compared: list[dict], labels: dict,
                     skipped: list[str]) -> list[Table]:
    """The survival and paired tables (what cannot be made is added to `skipped`)."""
    from autocomp.report.generator_skills import by_skill, common_table, kept_table, rank_table

    out = []
    survival = survival_table(compared, skipped)
    if survival is not None:
        out.append(survival)
    order = [None, *sorted({r["generator"] for r in compared})]
    pooled = by_skill(own + compared)  # each predictions file read once (report/paired.py)
    for name, made, given in (
            ("accuracy on each one's kept items (no predictions at hand)", kept_table,
             pooled),
            ("accuracy on the items every generator kept (no model has predictions on "
             "every generator's benchmarks of a skill)", common_table, pooled),
            ("rank agreement (no model that is not a baseline scored both)", rank_table,
             own + compared)):
        table = made(given, labels, order)
        if table is None:
            skipped.append(f"Generators: {name}")
        else:
            out.append(table)
    paired = paired_table(own, compared, labels)
    if paired is None:
        skipped.append("Generators: paired accuracy (no result of the run's own generator "
                       "shares a benchmark with a compared generator's, predictions at hand)")
    else:
        out.append(paired)
    return out


def survival_table(compared: list[dict], skipped: list[str]) -> Table | None:
    """Validated / drawn concepts per generator, (task, N) and track, from the run
    folders the results name."""
    from autocomp.core.errors import AutocompError
    from autocomp.eval.intervals import exact
    from autocomp.run import Run

    runs = sorted({r.get("run") for r in compared if r.get("run")})
    counts: dict[tuple, dict] = defaultdict(lambda: defaultdict(lambda: [0, 0]))
    names: dict[str | None, str] = {}
    for folder in runs:
        try:
            run = Run.open(Path(folder))
            checked = list(run.records("validation"))
        except (AutocompError, OSError) as exc:
            skipped.append(f"Generators: survival ({folder}: the run is not at hand: "
                           f"{str(exc)[:120]})")
            return None
        names.setdefault(None, f"{OWN} ({run.config.generate.generator.name})")
        for c in run.config.generate.compare:
            names.setdefault(c.label, f"{c.label} ({c.backend.name})")
        for v in checked:
            cell = counts[(v["task"], v["n"], v["track"])][v.get("generator")]
            cell[0] += bool(v["passed"])
            cell[1] += 1
    if not counts:
        skipped.append("Generators: survival (the runs hold no validation records)")
        return None
    order = [None, *sorted(k for k in names if k is not None)]  # as the other tables
    rows = []
    for (task, n, track), by in sorted(counts.items()):
        row = [f"{task} N={n}", track]
        for label in order:
            kept, drawn = by.get(label, (0, 0))
            row.append(ci(100.0 * kept / drawn, exact(kept, drawn)) + f" ({kept}/{drawn})"
                       if drawn else "-")
        rows.append(row)
    return Table("Generators: concepts whose image passed validation (%), per generator; "
                 + INTERVAL_NOTE, ["Benchmark", "Track", *(names[g] for g in order)], rows,
                 ["Each generator drew every concept from the same seed, and every image met "
                  "the same validation cascade; kept / drawn images (one a concept and "
                  "track). Clopper-Pearson intervals."])


def paired_table(own: list[dict], compared: list[dict], labels: dict) -> Table | None:
    """Each compared generator's result against the run's own on the items both kept."""
    from autocomp.eval.intervals import exact, holm
    from autocomp.report.notes import ties_note
    from autocomp.report.paired import compare, p_text

    mine = {(r["model"], r["benchmark"]): r for r in own}
    rows, ps, left, used = [], [], [], []
    for c in sorted(compared, key=lambda r: (r["model"], r["benchmark"])):
        base = c["benchmark"].rpartition("@")[0]
        o = mine.get((c["model"], base))
        d = compare(c, o) if o is not None else None
        if d is None or not d["n"]:
            left.append(f"{c['model']} {c['benchmark']}")
            continue
        n = d["n"]
        used += [c, o]
        rows.append([labels.get(c["model"], c["model"]), base, c["generator"], str(n),
                     ci(d["b"], exact(d["b"] * n / 100.0, n)),
                     ci(d["a"], exact(d["a"] * n / 100.0, n)),
                     f"{signed(d['delta'])} [{signed(d['low'])}, {signed(d['high'])}]",
                     p_text(d["p"]), None])
        ps.append(d["p"])
    if not rows:
        return None
    for row, adjusted in zip(rows, holm(ps), strict=True):
        row[-1] = p_text(adjusted)
    notes = ["Items matched by id: the same concept, track, captions and negatives on each "
             "generator's image; only the items both generators kept count (Items). Each "
             "item is its own concept here, so the paired interval is over concepts. "
             "Compared − own: Newcombe's paired score interval; p: exact McNemar test; "
             f"p (Holm): adjusted over the {len(rows)} rows, family-wise error 5%.",
             ties_note(used)]
    if left:
        notes.append(f"Not compared ({len(left)}: no result of the run's own generator on "
                     "the benchmark, or its predictions not at hand): " + ", ".join(left))
    return Table("Generators: accuracy (%) on the items both generators kept, and compared − "
                 "own in points; " + INTERVAL_NOTE,
                 ["Model", "Benchmark", "Generator", "Items", "Own", "Compared",
                  "Compared − own", "p", "p (Holm)"], rows, notes)

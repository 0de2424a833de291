"""The survival funnel (Auto-Comp Table 3): the share of a benchmark's concepts still alive
after each stage, per track. Computed from the merged records, so it is right after a
resume and whatever the number of processes.

Columns: Captions (the contextual caption passed the check; a dropped concept loses its
minimal caption too), then per track the cumulative share after the object check, the
background check (minimal only) and the attribute check.
"""

from __future__ import annotations

from collections import defaultdict

from autocomp.core.records import TRACKS
from autocomp.report.table_format import TRACK_SHORT
from autocomp.validators.checks import cascade


def columns() -> list[tuple[str, str]]:
    """(key, label): Captions, then per track each check of the cascade that applies."""
    return [("captions", "Captions"),
            *((f"{track}:{c.name}", f"{TRACK_SHORT[track]} {c.label}")
              for track in TRACKS for c in cascade() if track in c.tracks)]


def funnel(concepts: list[dict], captions: list[dict], validation: list[dict]) -> list[dict]:
    """One row per (task, N): counts and survival percentages."""
    rows: dict[tuple, dict] = {}
    for c in concepts:
        key = (c["task"], c["n"])
        rows.setdefault(key, {"task": c["task"], "n": c["n"], "concepts": 0,
                              "counts": defaultdict(int)})["concepts"] += 1
    key_of = {c["id"]: (c["task"], c["n"]) for c in concepts}
    for cap in captions:
        if cap["passed"]:
            rows[key_of[cap["id"]]]["counts"]["captions"] += 1
    checks = cascade()
    ran = {"captions"} if captions else set()  # columns with records (others: not run yet)
    for v in validation:
        row = rows[key_of[v["concept"]]]
        ran.update(f"{v['track']}:{c.name}" for c in checks if v["track"] in c.tracks)
        results = {ch["name"]: ch["passed"] for ch in v["checks"]}
        for check in checks:
            if v["track"] not in check.tracks:
                continue
            if not results.get(check.name, False):
                break
            row["counts"][f"{v['track']}:{check.name}"] += 1
    out = []
    cols = columns()
    for key in sorted(rows):
        row = rows[key]
        counts = {col: row["counts"].get(col, 0) for col, _ in cols}
        pct = {col: None if col not in ran else
               round(100.0 * n / row["concepts"], 1) if row["concepts"] else 0.0
               for col, n in counts.items()}
        out.append({"task": row["task"], "n": row["n"], "concepts": row["concepts"],
                    "counts": counts, "percent": pct})
    return out


def format_funnel(rows: list[dict]) -> str:
    """Table 3 layout, as plain text ("-": the stage has not run yet)."""
    cols = columns()
    head = ["Benchmark", "Concepts", *[label for _, label in cols]]
    body = [[f"{r['task']} N={r['n']}", str(r["concepts"]),
             *["-" if r["percent"][col] is None else f"{r['percent'][col]:.1f}%"
               for col, _ in cols]] for r in rows]
    widths = [max(len(x[i]) for x in [head, *body]) for i in range(len(head))]
    lines = ["  ".join(h.ljust(w) if i == 0 else h.rjust(w)
                       for i, (h, w) in enumerate(zip(row, widths, strict=True)))
             for row in [head, *body]]
    lines.insert(1, "-" * len(lines[0]))
    return "\n".join(lines)


def validated_values(concepts: list[dict], validation: list[dict], vocab_of=None) -> dict:
    """task -> vocabulary -> track -> value -> validated images (Fig. 3). Every value of a
    validated image counts (a scene's relations and each of its attributes); a value whose
    images all failed is there with 0. `vocab_of(task, value)` names the value's
    vocabulary (default: one vocabulary, "values")."""
    graph_of = {c["id"]: c for c in concepts}
    out: dict = defaultdict(lambda: defaultdict(lambda: {t: defaultdict(int) for t in TRACKS}))
    for v in validation:
        g = graph_of[v["concept"]]["graph"]
        values = [r[1] for r in g["relations"]] + [a for o in g["objects"]
                                                    for a in o["attributes"]]
        for value in values:
            vocab = vocab_of(v["task"], value) if vocab_of else "values"
            out[v["task"]][vocab][v["track"]][value] += int(bool(v["passed"]))
    return {t: {voc: {tr: dict(vals) for tr, vals in d.items()} for voc, d in vocabs.items()}
            for t, vocabs in out.items()}

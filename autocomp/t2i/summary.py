"""What `autocomp t2i` prints: per model its scores with 95% intervals (Auto-Comp Table 16's
layout and more columns), per aspect and N the share of questions answered right, and
where the images carry exact truth (the embedded generator) how well each metric tells
faithful images from unfaithful ones.

Intervals: a model's K images of one prompt are not independent, so every interval is a
percentile bootstrap that resamples whole prompts (eval/intervals.py `clustered`), or
Clopper-Pearson where each prompt has one image. Scores print in percent (TIFA 0.914 is
91.4); CLIPScore as T2I papers print it (100 x cosine).
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from autocomp.report.table_format import INTERVAL_NOTE, Table, ci


def columns() -> dict[str, str]:
    """Each registered metric's key -> its column (t2i/metrics.py), in order."""
    from autocomp.t2i.metrics import metrics

    return {key: m.column for key, m in metrics().items()}


def verdict_keys() -> tuple[str, ...]:
    """The metrics whose score of 1 says faithful and below 1 unfaithful."""
    from autocomp.t2i.metrics import metrics

    return tuple(key for key, m in metrics().items() if m.verdict)


def mean_ci(values_by_prompt: dict, scale: float = 1.0) -> dict | None:
    """Mean of per-image values (grouped by prompt) with its prompt-clustered interval, in
    the printed unit: 100 x value / scale (a share in [0, 1] in percent; CLIPScore, already
    100 x cosine with scale 100, as it is)."""
    from autocomp.eval.intervals import clustered

    groups = [v for v in values_by_prompt.values() if v]
    if not groups:
        return None
    sums = [sum(float(x) / scale for x in g) for g in groups]  # each value in [0, 1]
    counts = [len(g) for g in groups]
    lo, hi = clustered(sums, counts)  # in percent of [0, 1]
    return {"mean": 100.0 * sum(sums) / sum(counts), "n": sum(counts), "prompts": len(groups),
            "interval": [lo, hi]}


def _by_prompt(records, value) -> dict:
    out: dict = defaultdict(list)
    for r in records:
        v = value(r)
        if v is not None:
            out[r["prompt"]].append(float(v))
    return out


def model_scores(records: list[dict]) -> dict:
    """Each metric's mean and interval over a model's images."""
    from autocomp.t2i.metrics import metrics

    return {key: mean_ci(_by_prompt(records, lambda r, k=key: r.get(k)), m.scale)
            for key, m in metrics().items()}


def aspect_scores(records: list[dict], field: str = "right") -> dict:
    """(aspect, N) -> share of that aspect's questions passing `field` (right: TIFA, dsg:
    DSG), prompt-clustered."""
    cells: dict = defaultdict(lambda: defaultdict(list))
    for r in records:
        for p in r["probes"]:
            cells[(p["aspect"], r["n"])][r["prompt"]].append(float(p[field]))
    return {key: mean_ci(groups) for key, groups in cells.items()}


def truth_agreement(records: list[dict]) -> dict:
    """With exact truth: per (aspect, N), the share of questions whose answer agrees with
    the truth (answered right exactly when the expected answer is true); per verdict
    metric, the precision and recall of calling an image unfaithful; per metric, Spearman
    and Kendall correlations with the true share of correct bindings."""
    from autocomp.eval.intervals import rank_correlation

    known = [r for r in records if r.get("true_share") is not None]
    unknown = sum(1 for r in records if r.get("has_truth") and r["true_share"] is None)
    agree: dict = defaultdict(lambda: defaultdict(list))
    soft: dict = defaultdict(lambda: defaultdict(list))  # probability given to the truth
    for r in known:
        for p in r["probes"]:
            agree[(p["aspect"], r["n"])][r["prompt"]].append(float(p["right"] == p["truth"]))
            if p.get("p") is not None:
                soft[(p["aspect"], r["n"])][r["prompt"]].append(
                    p["p"] if p["truth"] else 1.0 - p["p"])
    verdicts = {}
    for key in verdict_keys():
        # (said unfaithful, truly unfaithful, prompt): a prompt's K images are one cluster
        pairs = [(r[key] is not None and r[key] < 1.0, not r["faithful"], r["prompt"])
                 for r in known if r.get(key) is not None]
        tp = sum(1 for said, true, _ in pairs if said and true)
        fp = sum(1 for said, true, _ in pairs if said and not true)
        fn = sum(1 for said, true, _ in pairs if not said and true)
        verdicts[key] = {"n": len(pairs), "tp": tp, "fp": fp, "fn": fn,
                         "tn": len(pairs) - tp - fp - fn,
                         "precision": _share([(p, t) for said, t, p in pairs if said]),
                         "recall": _share([(p, said) for said, t, p in pairs if t])}
    corr = {}
    for key in columns():
        corr[key] = rank_correlation([(r[key], r["true_share"]) for r in known
                                      if r.get(key) is not None])
    return {"images": len(known), "unknown": unknown,
            "unfaithful": sum(1 for r in known if not r["faithful"]),
            "agreement": {key: mean_ci(groups) for key, groups in agree.items()},
            "soft_agreement": {key: mean_ci(groups) for key, groups in soft.items()},
            "verdicts": verdicts, "correlation": corr}


def _share(outcomes: list[tuple[str, bool]]) -> dict | None:
    """The share of (prompt, hit) outcomes that hit, with its interval over prompts: a
    prompt's images are not independent (Clopper-Pearson where each prompt gives one,
    else the prompt-clustered bootstrap; eval/intervals.py proportion)."""
    from autocomp.eval.intervals import proportion

    if not outcomes:
        return None
    units: dict = {}
    for prompt, hit in outcomes:
        u = units.setdefault(prompt, [0, 0.0])
        u[0] += 1
        u[1] += float(hit)
    k, n = sum(hit for _, hit in outcomes), len(outcomes)
    lo, hi = proportion(units)
    return {"value": 100.0 * k / n, "k": int(k), "n": n, "prompts": len(units),
            "interval": [lo, hi]}


def summarize(scored: dict[str, list[dict]], wanted: int | None = None) -> dict:
    """The whole summary of scored images per model (`wanted`: the images asked of each,
    prompts x K, so the ones missing are counted)."""
    out = {}
    for model, records in scored.items():
        out[model] = {"images": len(records), "prompts": len({r["prompt"] for r in records}),
                      "wanted": wanted if wanted is not None else len(records),
                      "scores": model_scores(records),
                      "by_aspect": {f"{a}|{n}": v for (a, n), v in
                                    aspect_scores(records).items()},
                      "by_aspect_dsg": {f"{a}|{n}": v for (a, n), v in
                                        aspect_scores(records, "dsg").items()},
                      "by_n": {str(n): model_scores([r for r in records if r["n"] == n])
                               for n in sorted({r["n"] for r in records})}}
        if any(r.get("true_share") is not None for r in records):
            agreement = truth_agreement(records)
            for field in ("agreement", "soft_agreement"):
                agreement[field] = {f"{a}|{n}": v for (a, n), v in agreement[field].items()}
            out[model]["truth"] = agreement
    return out


def _cell(got: dict | None) -> str:
    return "-" if got is None else ci(got["mean"], got["interval"])


def tables(summary: dict, labels: dict | None = None) -> list[Table]:
    """Table 16's layout (a row per model), questions right per aspect x N, and the
    metrics against the truth where there is truth."""
    labels = labels or {}
    heads = columns()
    present = [k for k in heads if any(s["scores"].get(k) for s in summary.values())]
    rows = [[labels.get(m, m), str(s["images"]), str(s["prompts"]),
             *[_cell(s["scores"].get(k)) for k in present]] for m, s in summary.items()]
    out = [Table(f"Table 16 layout: text-to-image faithfulness per model; {INTERVAL_NOTE} "
                 "(prompts resampled)", ["Model", "Images (n)", "Prompts (n)",
                                         *[heads[k] for k in present]], rows,
                 ["TIFA: share of the scene graph's questions answered right; DSG: the "
                  "same, a binding counting only when its objects were found; Soft-TIFA "
                  "(GenEval 2): the answerer's probability of each expected answer, its "
                  "arithmetic (AM) and geometric (GM) mean per image; GenEval: detector "
                  "counts, mask colors, box-centre positions; Survival: images passing the "
                  "run's validation cascade.",
                  *[f"{labels.get(m, m)}: {s['wanted'] - s['images']:,} of {s['wanted']:,} "
                    "images missing (not in its folder, or not drawn: the log names them)"
                    for m, s in summary.items() if s.get("wanted", s["images"]) > s["images"]],
                  *unscored(summary, labels, present)])]
    ns = sorted({int(k.split("|")[1]) for s in summary.values() for k in s["by_aspect"]})
    rows = []
    for m, s in summary.items():
        for aspect in sorted({k.split("|")[0] for k in s["by_aspect"]}):
            rows.append([labels.get(m, m), aspect,
                         *[_cell(s["by_aspect"].get(f"{aspect}|{n}")) for n in ns],
                         *[_n(s["by_aspect"].get(f"{aspect}|{n}")) for n in ns]])
    out.append(Table(f"Questions answered right (%) per aspect and N (TIFA); {INTERVAL_NOTE}",
                     ["Model", "Aspect", *[f"N={n}" for n in ns],
                      *[f"questions N={n}" for n in ns]], rows))
    truth = [(m, s["truth"]) for m, s in summary.items() if "truth" in s]
    if truth:
        out += truth_tables(truth, labels, ns)
    return out


def unscored(summary: dict, labels: dict, present: list[str]) -> list[str]:
    """Notes for what Table 16 leaves out: a column no image has a value for, and the
    images a shown column could not score, each with the metric's reason."""
    from autocomp.t2i.metrics import metrics

    known = metrics()
    heads = {k: m.column.split(" (")[0] for k, m in known.items()}
    why = {k: m.missing or "the metric gave None" for k, m in known.items()}
    out = []
    absent = [k for k in known if k not in present]
    if absent:
        out.append("Not scored: " + "; ".join(
            f"{', '.join(heads[k] for k in absent if why[k] == reason)} ({reason})"
            for reason in dict.fromkeys(why[k] for k in absent)) + ".")
    for m, s in summary.items():
        for k in present:
            got = s["scores"].get(k)
            n = got["n"] if got else 0
            if n < s["images"]:
                out.append(f"{heads[k]}: {labels.get(m, m)}'s {s['images'] - n:,} of "
                           f"{s['images']:,} images not scored ({why[k]}).")
    return out


def _n(got: dict | None) -> str:
    return "-" if got is None else str(got["n"])


def truth_tables(truth, labels, ns) -> list[Table]:
    rows, heads = [], columns()
    for m, t in truth:
        for key in t["verdicts"]:
            v = t["verdicts"][key]
            rows.append([labels.get(m, m), heads.get(key, key).split(" (")[0], str(v["n"]),
                         f"{v['tp'] + v['fn']}", _pct(v["precision"]), _pct(v["recall"])])
    verdict = Table("Unfaithful images caught, against the exact truth: precision and recall "
                    f"(%) of 'unfaithful' (score below 1); {INTERVAL_NOTE}",
                    ["Model", "Metric", "Images (n)", "Unfaithful (n)", "Precision",
                     "Recall"], rows,
                    ["Intervals resample prompts: a prompt's K images are one cluster "
                     "(Clopper-Pearson where each prompt gives one image)."])
    rows = []
    for m, t in truth:
        for key, c in t["correlation"].items():
            if c["n"]:
                rows.append([labels.get(m, m), heads.get(key, key).split(" (")[0], str(c["n"]),
                             _num(c["spearman"]), _num(c.get("spearman_p"), ".2g"),
                             _num(c["kendall"]), _num(c.get("kendall_p"), ".2g")])
    corr = Table("Each metric against the true share of correct bindings (per image)",
                 ["Model", "Metric", "Images (n)", "Spearman", "p", "Kendall", "p"], rows,
                 ["'-': the metric or the truth is constant over these images."])
    rows = []
    for m, t in truth:
        for aspect in sorted({k.split("|")[0] for k in t["agreement"]}):
            rows.append([labels.get(m, m), aspect,
                         *[_cell(t["agreement"].get(f"{aspect}|{n}")) for n in ns]])
    agree = Table("Answers agreeing with the exact truth (%) per aspect and N (right exactly "
                  f"when the expected answer is true of the image); {INTERVAL_NOTE}",
                  ["Model", "Aspect", *[f"N={n}" for n in ns]], rows,
                  [f"{t['unknown']} image(s) of {m} left out: the drawing cannot say "
                   "(a texture with no room, sizes drawn smaller)" for m, t in truth
                   if t["unknown"]])
    out = [verdict, corr, agree]
    if any(t.get("soft_agreement") for _, t in truth):
        rows = [[labels.get(m, m), aspect,
                 *[_cell(t["soft_agreement"].get(f"{aspect}|{n}")) for n in ns]]
                for m, t in truth if t.get("soft_agreement")
                for aspect in sorted({k.split("|")[0] for k in t["soft_agreement"]})]
        out.append(Table("Soft answers against the exact truth: the probability (%) the "
                         "answerer gives the truth per aspect and N (p where the expected "
                         f"answer is true of the image, 1 - p where not); {INTERVAL_NOTE}",
                         ["Model", "Aspect", *[f"N={n}" for n in ns]], rows))
    return out


def _pct(share: dict | None) -> str:
    return "-" if share is None else ci(share["value"], share["interval"])


def _num(x, fmt: str = ".3f") -> str:
    if x is None or (isinstance(x, float) and np.isnan(x)):
        return "-"
    if fmt == ".2g" and x == 0:  # a p-value below the smallest float
        return "<1e-300"
    return format(x, fmt)


def read_tables(folder) -> tuple[list[Table], object]:
    """The tables of an `autocomp t2i` output folder and its figure (None if not drawn);
    one line naming the file when the folder holds no summary."""
    import json
    from pathlib import Path

    from autocomp.core.errors import AutocompError

    path = Path(folder) / "summary.json"
    try:
        summary = json.loads(path.read_text(encoding="utf-8"))["summary"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise AutocompError(f"not an `autocomp t2i` output folder ({exc})", file=path) from None
    figure = Path(folder) / "by-n.png"
    return tables(summary), figure if figure.is_file() else None

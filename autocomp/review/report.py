"""What the judgments say (Auto-Comp Tables 10 and 17).

validate mode: concordance of the automatic validators with the humans, per task, N and
  track: the human verdict of a unit is the majority of its annotators (a tie is left out
  and counted); agreement (%) and Cohen's kappa (statsmodels) of validator vs humans, each
  annotator's own agreement, and the annotators' agreement with each other.
test mode: human accuracy (%) on Swap and Confusion per task, N and track (the mean over
  annotators), and each annotator's raw score (correct / judged).
"""

from __future__ import annotations

from collections import defaultdict
from itertools import combinations

from autocomp.core.errors import AutocompError
from autocomp.report.tables import TRACK_SHORT, Table, r1
from autocomp.review.sample import is_right, valid_rating


def kappa(pairs: list[tuple[bool, bool]]) -> float | None:
    """Cohen's kappa of two raters' yes/no labels; None when it is undefined (both raters
    gave one label throughout, or no pairs)."""
    if not pairs:
        return None
    try:
        from statsmodels.stats.inter_rater import cohens_kappa
    except ImportError:
        raise AutocompError("the review report needs statsmodels for Cohen's kappa: pip "
                            "install 'autocomp[review]'") from None
    if len({label for pair in pairs for label in pair}) < 2:  # p_e = 1: kappa is 0/0
        return None
    table = [[0, 0], [0, 0]]
    for a, b in pairs:
        table[int(a)][int(b)] += 1
    return float(cohens_kappa(table, return_results=False))


def _pct(k: int, n: int) -> float | None:
    return 100.0 * k / n if n else None


def _cell(u: dict) -> tuple:
    return (u["task"], u["n"], u["track"])


def concordance(sample: dict, latest: dict) -> dict:
    """Per (task, N, track) and overall: units, judged, ties, agreement, kappa, per
    annotator agreement, inter-annotator agreement and kappa."""
    units = {u["key"]: u for u in sample["units"]}
    votes = defaultdict(dict)  # unit -> annotator -> bool
    for (who, key), rec in latest.items():
        if key in units:
            votes[key][who] = rec["answer"] == "yes"
    annotators = sorted({who for v in votes.values() for who in v})
    groups = defaultdict(list)
    for key, u in units.items():
        groups[_cell(u)].append(key)
        groups["all"].append(key)
    out = {}
    for cell, keys in groups.items():
        pairs, ties = [], 0
        for key in keys:
            v = list(votes.get(key, {}).values())
            if not v:
                continue
            yes = sum(v)
            if 2 * yes == len(v):
                ties += 1
                continue
            pairs.append((2 * yes > len(v), units[key]["auto"]))
        own = {}
        for who in annotators:
            mine = [(votes[k][who], units[k]["auto"]) for k in keys if who in votes.get(k, {})]
            own[who] = {"judged": len(mine), "agreement": _pct(sum(a == b for a, b in mine),
                                                               len(mine)),
                        "kappa": kappa(mine)}
        between = {}
        for a, b in combinations(annotators, 2):
            both = [(votes[k][a], votes[k][b]) for k in keys
                    if a in votes.get(k, {}) and b in votes.get(k, {})]
            between[f"{a} / {b}"] = {"judged": len(both),
                                     "agreement": _pct(sum(x == y for x, y in both), len(both)),
                                     "kappa": kappa(both)}
        out[cell] = {"units": len(keys), "judged": len(pairs) + ties, "ties": ties,
                     "agreement": _pct(sum(h == a for h, a in pairs), len(pairs)),
                     "kappa": kappa(pairs), "annotators": own, "between": between}
    return out


def human_accuracy(sample: dict, latest: dict) -> dict:
    """(task, N, track, kind) -> {annotator: (correct, judged)}."""
    units = {u["key"]: u for u in sample["units"]}
    out = defaultdict(lambda: defaultdict(lambda: [0, 0]))
    for (who, key), rec in latest.items():
        u = units.get(key)
        if u is None:
            continue
        score = out[(*_cell(u), u["kind"])][who]
        score[0] += is_right(u, rec["answer"])
        score[1] += 1
    return {cell: {who: tuple(s) for who, s in by.items()} for cell, by in out.items()}


def _k(x) -> str:
    return "-" if x is None else f"{x:.2f}"


def _pair(d: dict) -> str:
    return f"{r1(d['agreement'])} ({_k(d['kappa'])})"


def concordance_tables(data: dict) -> list[Table]:
    cells = sorted(c for c in data if c != "all")
    cols = sorted({(track, n) for _, n, track in cells}, key=lambda c: (c[0] != "minimal",
                                                                         c[1]))
    tasks = sorted({t for t, _, _ in cells})
    header = ["Task", *[f"{TRACK_SHORT.get(tr, tr)} N={n}" for tr, n in cols]]
    rows = [[t, *[r1(data[(t, n, tr)]["agreement"]) if (t, n, tr) in data else "-"
                  for tr, n in cols]] for t in tasks]
    left = Table("Table 10 (left): concordance of the automatic validators with the human "
                 "majority (%)", header, rows)
    detail = []
    annotators = sorted({w for d in data.values() for w in d["annotators"]})
    for cell in [*cells, "all"]:
        d = data[cell]
        name = "all" if cell == "all" else f"{cell[0]} N={cell[1]} {cell[2]}"
        detail.append([name, str(d["units"]), str(d["judged"]), str(d["ties"]),
                       r1(d["agreement"]), _k(d["kappa"]),
                       *[_pair(d["annotators"][w]) for w in annotators],
                       *[_pair(b) for b in d["between"].values()]])
    pairs = list(data["all"]["between"])
    head = ["Cell", "Units", "Judged", "Ties", "Agreement (%)", "Cohen's kappa",
            *[f"{w} agreement (kappa)" for w in annotators],
            *[f"{p} agreement (kappa)" for p in pairs]]
    return [left, Table("Concordance detail: human majority vs validators; each annotator vs "
                        "validators; annotators vs each other", head, detail)]


def accuracy_tables(data: dict) -> list[Table]:
    groups = sorted({(t, n) for t, n, _, _ in data})
    cols = sorted({(tr, k) for _, _, tr, k in data},
                  key=lambda c: (c[0] != "minimal", c[1] != "swap"))
    kinds = {"swap": "Swap", "confusion": "Conf."}
    header = ["Task", "N", *[f"{TRACK_SHORT.get(tr, tr)} {kinds[k]}" for tr, k in cols]]

    def mean(by):
        accs = [100.0 * c / j for c, j in by.values() if j]
        return sum(accs) / len(accs) if accs else None

    rows = [[t, str(n), *[r1(mean(data[(t, n, tr, k)])) if (t, n, tr, k) in data else "-"
                          for tr, k in cols]] for t, n in groups]
    right = Table("Table 10 (right): human accuracy (%), mean over annotators; confusion "
                  "shows 50 options", header, rows)
    annotators = sorted({w for by in data.values() for w in by})
    raw_head = ["Task", "N", "Track", *[f"{kinds[k]} {w}" for k in ("swap", "confusion")
                                        for w in annotators]]
    raw = []
    for t, n in groups:
        for tr in sorted({c[2] for c in data if c[:2] == (t, n)},
                         key=lambda x: x != "minimal"):
            cells = []
            for k in ("swap", "confusion"):
                by = data.get((t, n, tr, k), {})
                cells += [f"{by[w][0]}/{by[w][1]}" if w in by else "-" for w in annotators]
            raw.append([t, str(n), TRACK_SHORT.get(tr, tr), *cells])
    return [right, Table("Table 17: raw scores per annotator (correct / judged)", raw_head,
                         raw)]


RATED_METRICS = {"tifa": "TIFA", "dsg": "DSG", "geneval": "GenEval checks",
                 "vqascore": "VQAScore", "clipscore": "CLIPScore", "true_share": "true share"}


def rating_correlations(sample: dict, latest: dict, scores: dict, root) -> dict:
    """Table 16's human side: per metric, Spearman's and Kendall's correlation (scipy)
    between the mean Likert rating of each rated unit and the metric of its image
    (`scores`: resolved image path -> the image's t2i record, t2i/compare.image_scores)."""
    from pathlib import Path

    from autocomp.eval.intervals import rank_correlation

    units = {u["key"]: u for u in sample["units"]}
    ratings = defaultdict(list)
    rejected = 0
    for (_who, key), rec in latest.items():
        if key in units and rec.get("rating") is not None:
            if not valid_rating(rec["rating"]):  # 0, 9, "5", 4.5: counted, never averaged
                rejected += 1
                continue
            ratings[key].append(rec["rating"])
    rated = {k: sum(v) / len(v) for k, v in ratings.items()}
    found = {k: scores.get(str((Path(root) / units[k]["image"]).resolve())) for k in rated}
    out = {"rated": len(rated), "scored": sum(r is not None for r in found.values()),
           "rejected": rejected, "metrics": {}}
    for metric in RATED_METRICS:
        out["metrics"][metric] = rank_correlation(
            [(rated[k], r[metric]) for k, r in found.items()
             if r is not None and r.get(metric) is not None])
    return out


def rating_table(data: dict) -> Table:
    def num(x, fmt=".3f"):
        return "-" if x is None else format(x, fmt)

    rows = [[RATED_METRICS[m], str(g["n"]), num(g["spearman"]), num(g.get("spearman_p"), ".2g"),
             num(g["kendall"]), num(g.get("kendall_p"), ".2g")]
            for m, g in data["metrics"].items() if g["n"]]
    return Table("Human faithfulness ratings (Likert 1-5, mean over annotators) against each "
                 "t2i metric of the same image", ["Metric", "Units (n)", "Spearman", "p",
                                                  "Kendall", "p"], rows,
                 [f"{data['rated']} unit(s) rated, {data['scored']} of them scored by t2i; "
                  "'-': fewer than 3 pairs, or a constant side."
                  + (f" {data['rejected']} rating(s) outside 1-5 in the judgments file left "
                     "out." if data.get("rejected") else "")])


def human_verdicts(sample: dict, latest: dict, scores: dict, root) -> dict:
    """The annotators as one judge of whole images (report/judges.py): per validate unit
    the majority's verdict (a tie left out), set against the truth of the unit's image in
    `scores` (resolved image path -> its t2i record with `faithful`); units whose image
    has no truth are left out. {"rows": verdict rows, "note": what was left out}."""
    from pathlib import Path

    from autocomp.report.judges import HUMANS, WHOLE

    units = {u["key"]: u for u in sample["units"]}
    votes = defaultdict(list)
    for (_who, key), rec in latest.items():
        if key in units and rec.get("answer") in ("yes", "no"):
            votes[key].append(rec["answer"] == "yes")
    rows, ties, unknown = [], 0, 0
    for key, got in votes.items():
        if 2 * sum(got) == len(got):
            ties += 1
            continue
        record = scores.get(str((Path(root) / units[key]["image"]).resolve()))
        if record is None or record.get("faithful") is None:
            unknown += 1
            continue
        rows.append({"judge": HUMANS, "unit": record["prompt"], "key": f"{record['id']}:all",
                     "aspect": WHOLE, "n": record["n"], "truth": bool(record["faithful"]),
                     "said": 2 * sum(got) > len(got)})
    annotators = len({who for who, _ in latest})
    note = (f"humans: the majority of {annotators} annotator(s) on {len(rows):,} judged "
            f"images; {ties:,} ties and {unknown:,} images without truth left out")
    return {"rows": rows, "note": note}

"""The table of `autocomp report --agreement` (report/ranks.py computes the rows): a row per
comparison, its model and item counts, tau-b and rho with their intervals and
leave-one-model-out ranges; the notes say what is thin, undefined or on a boundary."""

from __future__ import annotations

from autocomp.eval.intervals import RESAMPLES
from autocomp.report.ranks import MIN_MODELS


def _r2(x: float) -> str:
    return f"{x:.2f}".replace("-0.00", "0.00")


def _stat(got: dict | None, models: int) -> tuple[str, str]:
    """(the value with its interval, the leave-one-model-out range) as printed; lists
    with no rank correlation are counted there, not dropped."""
    if got is None:
        return "-", "-"
    iv = got["interval"]
    value = _r2(got["value"]) + (f" [{_r2(iv[0])}, {_r2(iv[1])}]" if iv else "")
    spread, undefined = got["leave_one_out"], got.get("leave_one_out_undefined", 0)
    text = f"{_r2(spread[0])} to {_r2(spread[1])}" if spread else "-"
    if undefined:
        text += f" ({undefined} of {models} lists undefined)"
    return value, text


def _on_boundary(got: dict | None) -> bool:
    iv = (got or {}).get("interval")
    return bool(iv) and (iv[0] <= -1 + 1e-9 or iv[1] >= 1 - 1e-9)


def agreement_table(rows: list[dict], left: list[str], labels: dict | None = None):
    """The rank agreement table: a row per comparison, its model and item counts, tau-b and
    rho with their intervals and leave-one-model-out ranges; the notes say what is thin."""
    from autocomp.report.table_format import Table

    body, notes = [], []
    few = [r for r in rows if 0 < len(r["models"]) < MIN_MODELS]
    thin = {id(r) for r in few}
    for r in rows:
        tau, tau_spread = _stat(r["kendall"], len(r["models"]))
        rho_, rho_spread = _stat(r["spearman"], len(r["models"]))
        models = f"{len(r['models'])}{'*' if id(r) in thin else ''}"
        body.append([r["a"], r["b"], models, f"{r['items'][0]:,} / {r['items'][1]:,}",
                     tau, tau_spread, rho_, rho_spread])
    notes.append(f"95% interval in brackets: a two-way percentile bootstrap ({RESAMPLES:,} "
                 "resamples; the models drawn with replacement, and each benchmark's items "
                 "drawn with replacement, the same draw for every model); LOO: the range "
                 "over the model lists leaving one model out; accuracies on the items every "
                 "compared model scored; baselines (blind and reference scorers) are not "
                 "models and are left out unless --include-baselines")
    boundary = [f"{r['a']} vs {r['b']}" for r in rows
                if _on_boundary(r["kendall"]) or _on_boundary(r["spearman"])]
    if boundary:
        notes.append(f"On its boundary ({len(boundary)}: {', '.join(boundary[:4])}): the "
                     "percentile interval reaches -1 or 1, where a rank correlation cannot "
                     "go further; read it as one-sided (at least, or at most, the other end)")
    if few:
        notes.append(f"* fewer than {MIN_MODELS} models: a rank correlation of so few takes "
                     "few values (3 models: tau is -1, -1/3, 1/3 or 1); score more models "
                     "before reading it")
    if any(len(r["models"]) < 3 or r["kendall"] is None for r in rows):
        notes.append("-: undefined (fewer than 3 models, or every model scored the same on "
                     "one side)")
    undefined = sum((r["kendall"] or {}).get("undefined_resamples", 0) for r in rows)
    if undefined:
        notes.append(f"{undefined:,} resamples left one side's accuracies all equal (no rank "
                     "correlation) and were left out of the intervals")
    partial = [(r["a"], r["b"], r["partial_items"]) for r in rows if any(r["partial_items"])]
    for a, b, (pa, pb) in partial:
        notes.append(f"{a} vs {b}: items scored by some models and not all left out "
                     f"({pa:,} / {pb:,})")
    if left:
        notes.append(f"left out ({len(left)}): " + "; ".join(left))
    return Table("Rank agreement of models between benchmarks (Kendall tau-b, Spearman rho)",
                 ["Benchmark", "Against", "Models", "Items", "Kendall tau-b", "tau LOO range",
                  "Spearman rho", "rho LOO range"], body, notes)

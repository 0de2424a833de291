"""What a run reports at the end and in `autocomp status`: per-stage progress, the funnel,
validator agreement, the validated counts (Table 2) and the figures."""

from __future__ import annotations

import json

from autocomp.core.records import write_text
from autocomp.report.agreement import agreement, format_agreement
from autocomp.report.funnel import format_funnel, funnel, validated_values
from autocomp.run import Run
from autocomp.runtime.parts import done_records


def stage_status(run: Run) -> list[dict]:
    """expected / done / passed of every stage (works on a run that is still going)."""
    from autocomp.core import registry

    out = []
    concepts = [c for c in run.records("concepts") if "partner_of" not in c]  # drawn ones
    out.append({"stage": "concepts", "expected": sum(s.count * (len(s.n) or 1)  # scenes: no n
                                                     for s in run.config.concepts),
                "done": len(concepts), "passed": len(concepts)})
    for name in registry.stage_names():
        stage = registry.make_stage(name, run)
        if not stage.parallel:
            continue
        done = done_records(run.paths.stage_dir(name))
        items = stage.items()
        ids = {it.id for it in items}
        mine = [r for i, r in done.items() if i in ids]
        out.append({"stage": name, "expected": len(items), "done": len(mine),
                    "passed": sum(bool(r.get("passed", True)) for r in mine)})
    build = run.paths.stats("build")
    if build.exists():  # done: benchmark items written
        stats = json.loads(build.read_text(encoding="utf-8"))
        out.append({"stage": "build", "expected": None,
                    "done": sum(stats["benchmarks"].values()), "passed": None,
                    **({"partial": stats["partial"]} if stats.get("partial") else {})})
    return out


def summarize(run: Run, figures: bool = True, write: bool = True) -> dict:
    """The stages, the funnel and the validator agreement; `write` also saves them under
    stats/ (and the figures): `autocomp status` writes nothing, so it works on a read-only
    run."""
    # the funnel follows the drawn concepts; swap partners (synthetic Winoground) are
    # drawn for their originals' items only
    concepts = [c for c in run.records("concepts") if "partner_of" not in c]
    drawn = {c["id"] for c in concepts}
    # the run's own generator's images (a compared generator's: autocomp report's
    # generators section)
    validation = [v for v in run.records("validation")
                  if v.get("concept") in drawn and not v.get("generator")]
    rows = funnel(concepts, run.records("captions"), validation)
    agree = agreement([r for r in run.records("images") if not r.get("generator")],
                      validation)
    summary = {"stages": stage_status(run), "funnel": rows, "agreement": agree}
    build = run.paths.stats("build")
    if build.exists():
        summary["validated"] = json.loads(build.read_text(encoding="utf-8"))["validated"]
        from autocomp.bench.ledger import read_ledger

        summary["left_out"] = read_ledger(run.dir)
    if not write:
        return summary
    write_text(run.paths.stats("funnel"), json.dumps(rows, indent=1))
    write_text(run.paths.stats("agreement"), json.dumps(agree, indent=1))
    if figures and validation:
        from autocomp.report.figures import distribution_figure, funnel_figure

        vocab_of, colors, order = value_vocabularies(run)
        summary["figures"] = [
            str(funnel_figure(rows, run.paths.figure("funnel")).relative_to(run.dir)),
            str(distribution_figure(validated_values(concepts, validation, vocab_of),
                                    run.paths.figure("distribution"), colors, order)
                .relative_to(run.dir))]
    return summary


RECORD_STAGES = ("concepts", "captions", "images", "validation")


def saved_summary(run: Run) -> dict:
    """The funnel, agreement, validated counts and what the build left out, read from the
    stats files `autocomp run` wrote (summarize(write=True)) when each is newer than every
    record it counts; else counted again from the records (at Table 2's size that reads
    150k records: 1.3 GB and 24 s)."""
    from autocomp.bench.ledger import read_ledger

    paths = run.paths
    files = {k: paths.stats(k) for k in ("funnel", "agreement", "build")}
    records = [p for stage in RECORD_STAGES
               for p in (paths.merged(stage), *paths.parts(stage)) if p.exists()]
    newest = max((p.stat().st_mtime for p in records), default=0.0)
    if not all(f.exists() and f.stat().st_mtime >= newest for f in files.values()):
        return summarize(run, figures=False, write=False)
    read = {k: json.loads(f.read_text(encoding="utf-8")) for k, f in files.items()}
    return {"funnel": read["funnel"], "agreement": read["agreement"],
            "validated": read["build"]["validated"], "left_out": read_ledger(run.dir)}


def value_vocabularies(run: Run):
    """(task, value) -> the name of the value's vocabulary, value -> RGB for the values
    that are colors, and value -> its place in its vocabulary; one vocabulary per task
    where the run's task files cannot be read any more (the figures still come)."""
    from autocomp.core.errors import AutocompError

    try:
        tasks = run.tasks
    except AutocompError:
        tasks = {}

    def vocab_of(task: str, value: str) -> str:
        return tasks[task].vocab_of(value).name if task in tasks else "values"

    from autocomp.concepts.drawable import kind_of

    colors = {e.name: kind_of(e).swatch(e.value) for t in tasks.values()
              for _, voc in t.primitive_vocabularies() for e in voc.entries
              if e.drawn_by and kind_of(e).swatch(e.value)}
    order = {}  # value -> its place in its vocabulary (the first vocabulary naming it)
    for t in tasks.values():
        for _, voc in t.primitive_vocabularies():
            for i, e in enumerate(voc.entries):
                order.setdefault(e.name, i)
    return vocab_of, colors, order


def format_summary(summary: dict) -> str:
    from autocomp.bench.ledger import ledger_lines

    lines = ["Stages:", f"  {'stage':<11} {'expected':>8} {'done':>6} {'passed':>6}"]
    for s in summary["stages"]:
        exp = "" if s["expected"] is None else s["expected"]
        passed = "" if s["passed"] is None else s["passed"]
        note = "  (benchmark items)" if s["stage"] == "build" else ""
        if s.get("partial"):
            note = f"  (benchmark items of a partial run: {'; '.join(s['partial'])} done)"
        lines.append(f"  {s['stage']:<11} {exp!s:>8} {s['done']:>6} {passed!s:>6}{note}")
    lines += ["", "Survival funnel (% of concepts, as Auto-Comp's Table 3):",
              format_funnel(summary["funnel"])]
    if summary.get("validated"):
        lines += ["", "Validated samples (as Auto-Comp's Table 2):",
                  f"  {'benchmark':<22} {'minimal':>7} {'contextual':>10} {'paired':>6}"]
        for key, c in summary["validated"].items():
            lines.append(f"  {key:<22} {c['minimal']:>7} {c['contextual']:>10} "
                         f"{c['paired']:>6}")
    left = ledger_lines(summary.get("left_out") or {})
    if left:
        lines += ["", "Left out after concepts were drawn (every table footnotes these):",
                  *left]
    if summary["agreement"]:
        lines += ["", format_agreement(summary["agreement"])]
    if summary.get("figures"):
        lines += ["", "Figures: " + ", ".join(summary["figures"])
                  + " (PDF and SVG beside each)"]
    return "\n".join(lines)

"""The results of one or several folders, in the models' order and with their labels.

Order and labels come from a models file when given, then from each folder's
models.yaml (written by `autocomp eval`), then from the cells themselves; a model in no list
keeps its place of first appearance. A model scored on the same benchmark in two folders
(two runs of one config, two seeds) gets a row per folder, labelled with the folder's name;
a model whose folders hold different benchmarks keeps one row.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from autocomp.eval.modelset import model_entries, stored_entries


def short_label(spec: str) -> str:
    """A model spec as a figure's legend can hold it: "ViT-B-32 (laion2b)" for
    open_clip:ViT-B-32@laion2b_s34b_b79k, "siglip-base-patch16-224" for an hf id, a local
    folder's name; reference and blind scorers as they are."""
    family, _, rest = spec.partition(":")
    if family in ("reference", "blind") or not rest:
        return spec
    if rest.startswith("local-dir:"):
        return f"{Path(rest[len('local-dir:'):]).name} (local)"
    name, _, tag = rest.partition("@")
    name = Path(name).name or name
    return f"{name} ({tag.split('_')[0]})" if tag else name


def folder_names(folders: list[Path]) -> list[str]:
    """Short distinct names: a run's name for RUN/results, else the folder's own; more of
    the path where two would read the same."""
    def name(folder: Path, depth: int) -> str:
        parts = [p for p in Path(folder).resolve().parts if p != "results"] or ["results"]
        return "/".join(parts[-depth:])

    if len({Path(f).resolve() for f in folders}) < len(folders):  # one folder twice
        return [f"{name(f, 1)} #{i + 1}" for i, f in enumerate(folders)]
    depth, names = 1, [name(f, 1) for f in folders]
    while len(set(names)) < len(names):
        depth += 1
        names = [name(f, depth) for f in folders]
    return names


def gather(folders: list[Path], models_file: Path | None = None,
           skipped: list | None = None) -> tuple[list[dict], dict]:
    """(every result, ordered by model, each with the `folder` it was read from; spec ->
    label). The files left out are added to `skipped` as (file, why) if given (else
    warned about)."""
    from autocomp.report.tables import load_results

    per_folder = [load_results(f, skipped) for f in folders]
    order: list[str] = []
    labels: dict[str, str] = {}
    lists = [model_entries(models_file)] if models_file else []
    lists += [stored_entries(f) for f in folders]
    for entries in lists:  # the models file first: its labels win
        for spec, label in entries:
            order.append(spec)
            if label:
                labels.setdefault(spec, label)
    for results in per_folder:
        for r in results:
            if r.get("label"):
                labels.setdefault(r["model"], r["label"])
    clash = _clashing(per_folder)
    names = folder_names(folders)
    out = []
    for k, results in enumerate(per_folder):
        for r in results:
            r = {**r, "folder": str(folders[k])}  # where its predictions lie
            if r["model"] in clash:
                key = f"{r['model']} [{names[k]}]"
                labels[key] = f"{labels.get(r['model'], r['model'])} ({names[k]})"
                r = {**r, "model": key, "spec": r["model"]}
            out.append((k, r))
    rank = {spec: i for i, spec in enumerate(dict.fromkeys(order))}
    out.sort(key=lambda kr: (rank.get(kr[1].get("spec", kr[1]["model"]), len(rank)), kr[0]))
    return [r for _, r in out], labels


def own_generator(results: list[dict]) -> tuple[list[dict], list[dict]]:
    """(the results on a run's own generator's images, those on a compared generator's:
    the same items on other images, generate.compare). A table pooling both would count
    every item once per generator."""
    own = [r for r in results if not r.get("generator")]
    return own, [r for r in results if r.get("generator")]


def compared_note(compared: list[dict], board: bool = False) -> str:
    """What the tables (or the leaderboard) leave out of a run with compared generators,
    and why."""
    labels = sorted({r["generator"] for r in compared})
    where = ("left off the board, which holds the run's own generator's" if board else
             "in the Generators tables only; the others hold the run's own generator's")
    return (f"{len(compared)} results on the images of compared generators "
            f"({', '.join(labels)}; generate.compare): {where}, so no item counts twice")


def _clashing(per_folder: list[list[dict]]) -> set[str]:
    """Models with a result for the same benchmark in two folders."""
    seen: dict[tuple, set[int]] = defaultdict(set)
    for k, results in enumerate(per_folder):
        for r in results:
            seen[(r["model"], r["benchmark"])].add(k)
    return {key[0] for key, where in seen.items() if len(where) > 1}

"""`autocomp export RUN --export-format training`: the train split as fine-tuning data, with
the same negatives (same machinery, same seeds) as the test sets, and nothing of test in it.

  clip.csv          tab-separated, as open_clip's CsvDataset reads it (--csv-img-key
                    filepath --csv-caption-key title): one row per train image (its path
                    relative to this folder, so the folder moves whole: train from
                    inside it), its caption,
                    `neg_caption` (NegCLIP's one hard negative: the first Swap negative, or
                    where the split held out every Swap negative of a row, its first other
                    hard negative: counted as neg_caption_not_swap in training.json),
                    `neg_captions` (every hard negative, JSON), `neg_image` (JSON list of the
                    rows whose image is this one's Winoground partner: an image negative),
                    `group` (rows that must share a batch), concept, task, n, track
  batches.jsonl     batches of row numbers, a positive and its image negatives always in
                    one batch (CounterCurate's grouped batches), shuffled with the seed
  sft_llava.json    chat SFT in the LLaVA layout ({id, image, conversations: [{from: human,
                    value: "<image>\\n..."}, {from: gpt, value}]}): per image one multiple-
                    choice question (the vlm scorer's own prompt) and two yes/no questions
                    (the positive: Yes; its first hard negative: No)
  sft_messages.jsonl the same as {messages: [{role, content}], images: [path]} (Qwen-VL /
                    LLaMA-Factory layout)
  images/           the images (hard links where the file system allows)
  training.json     counts, what was left out and why, the split it came from

A hard negative is dropped (and counted) when its scene graph holds a held-out compound or
atom, or states a concept outside train, or means the same as the positive: training on it
would leak test, or teach a falsehood.
"""

from __future__ import annotations

import csv
import glob
import json
import os
import random
import shutil
from collections import Counter
from pathlib import Path

from autocomp.bench.atoms import atoms, compounds, words
from autocomp.bench.splits import meaning, read_splits
from autocomp.core.errors import AutocompError
from autocomp.core.records import atomic_dir, atomic_open
from autocomp.core.scene import SceneGraph
from autocomp.eval.scorers.likelihood import VQA_QUESTION
from autocomp.eval.scorers.vlm import PROMPT
from autocomp.formats.runs import find_benchmarks, negative_graph

COLUMNS = ("filepath", "title", "neg_caption", "neg_captions", "neg_image", "group",
           "concept", "task", "n", "track")
LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
PAIRED = "winoground"


class _Guard:
    """Which negatives may enter training data."""

    def __init__(self, records: list[dict], splits: dict, split: str, tasks: dict):
        self.held = {tuple(h) for h in splits.get("held_out", [])}
        self.tasks = tasks
        self.outside = {self.meaning(SceneGraph.from_dict(r["graph"]), r["task"])
                        for r in records if splits["split"].get(r["id"]) != split}
        self.dropped: Counter = Counter()
        self.examples: dict[str, str] = {}  # a held-out unit per reason, for the summary

    def meaning(self, graph: SceneGraph, task: str) -> tuple:
        return meaning(graph, self.tasks.get(task))

    def keep(self, graph: SceneGraph | None, positive: SceneGraph, same: bool,
             task: str = "") -> bool:
        if same:
            self.dropped["means the same as the positive"] += 1
            return False
        if graph is None:
            return True
        held = self.held & (compounds(graph) | atoms(graph))
        if held:
            unit = sorted(held)[0]
            what = "compound" if unit in compounds(graph) else "atom"
            self.dropped[f"holds a held-out {what} ({unit[0]})"] += 1
            self.examples.setdefault(f"{what} ({unit[0]})", words(unit))
            return False
        stated = self.meaning(graph, task)
        if stated in self.outside and stated != self.meaning(positive, task):
            self.dropped["states a concept outside the split"] += 1
            return False
        return True


def export_training(run_dir: Path, out: Path, split: str = "train", seed: int = 0,
                    batch_size: int = 256, max_negatives: int | None = None) -> dict:
    from autocomp.bench.export import check_output
    from autocomp.run import Run
    from autocomp.runtime.launch import clean_orphans

    if split == "test":
        raise AutocompError("the test split is never exported as training data")
    out = Path(out)
    check_output(out)
    if out.parent.is_dir():  # the temp folder of an export of this name that was killed
        clean_orphans(out.parent, pattern=f".{glob.escape(out.name)}.*")
    run = Run.open(run_dir)
    splits = read_splits(run.paths.bench)
    if splits is None:
        from autocomp.bench.splits import NO_SPLITS

        raise AutocompError(NO_SPLITS, file=run.dir)
    from autocomp.core.progress import Progress

    guard = _Guard(run.records("concepts"), splits, split, run.tasks)
    rows: dict[str, dict] = {}  # image -> row
    pairs: list[tuple[str, str]] = []
    with Progress(f"training export ({split})", unit="item") as bar:
        for bench in find_benchmarks(run.dir, split=split):
            for item in bench.items():
                bar.update(1, f"{len(rows):,} images, {bench.name}")
                if bench.kind == PAIRED:
                    if splits["split"].get(item.get("partner")) != split:
                        guard.dropped["image pair whose partner is outside the split"] += 1
                        continue
                    for k, concept in enumerate((item["concept"], item["partner"])):
                        _row(rows, item["images"][k], item["captions"][k], item, bench, concept)
                        rows[item["images"][k]]["negatives"][item["captions"][1 - k]] = "swap"
                    pairs.append(tuple(item["images"]))
                    continue
                row = _row(rows, item["image"], item["positive"], item, bench)
                graph, task = SceneGraph.from_dict(item["graph"]), run.tasks[item["task"]]
                for neg in item["negatives"]:
                    caption = neg["caption"]
                    if caption in row["negatives"]:  # judged in another benchmark: kept
                        if bench.kind == "swap":
                            row["negatives"][caption] = "swap"  # swap wins: listed first
                        continue
                    if caption in row["dropped"]:  # judged and left out already: counted once
                        continue
                    ng = negative_graph(graph, task, neg["edit"]) if neg.get("edit") else None
                    if guard.keep(ng, graph, bool(neg.get("same_meaning")), item["task"]):
                        row["negatives"][caption] = bench.kind
                    else:
                        row["dropped"].add(caption)
    if not rows:
        raise AutocompError(f"no {split} items in the run's benchmarks", file=run.dir)
    # into a temp folder that becomes `out` when whole: a killed export leaves no half
    # folder, and the same command again starts clean
    with atomic_dir(out) as tmp:
        return _write(run, tmp, rows, pairs, guard, split, seed, batch_size, max_negatives,
                      splits)


def _row(rows: dict, image: str, caption: str, item: dict, bench, concept=None) -> dict:
    if image not in rows:
        rows[image] = {"image": image, "title": caption,
                       "concept": concept or item["concept"],
                       "task": item["task"], "n": item["n"], "track": bench.track,
                       "negatives": {}, "dropped": set()}
    return rows[image]


def _negatives(row: dict, rng: random.Random, most: int | None) -> list[str]:
    """Swap negatives first (the hardest: the same words), then the others; at most `most`
    (a seeded subset of the others)."""
    negs = list(row["negatives"])
    swaps = [c for c in negs if row["negatives"][c] == "swap"]
    others = [c for c in negs if row["negatives"][c] != "swap"]
    if most is not None and len(swaps) + len(others) > most:
        others = rng.sample(others, max(most - len(swaps), 0))
        swaps = swaps[:most]
    return swaps + others


def _groups(order: list[str], pairs) -> list[list[int]]:
    """Row numbers that must share a batch: a Winoground pair (an image and its image
    negative); every other row alone."""
    index = {img: i for i, img in enumerate(order)}
    group = list(range(len(order)))
    for a, b in pairs:
        group[index[b]] = group[index[a]]
    out: dict[int, list[int]] = {}
    for i, g in enumerate(group):
        out.setdefault(g, []).append(i)
    return list(out.values())


def _batches(groups: list[list[int]], size: int, rng: random.Random) -> list[list[int]]:
    groups = list(groups)
    rng.shuffle(groups)
    batches, current = [], []
    for g in groups:
        if current and len(current) + len(g) > size:
            batches.append(current)
            current = []
        current += g
    return batches + ([current] if current else [])


def _link(src: Path, dst: Path) -> None:
    """The run's image `src` hard-linked (else copied) into the export; only a regular
    file: a link in the run would put whatever it points to into the training data."""
    import stat

    if not stat.S_ISREG(os.lstat(src).st_mode):
        raise AutocompError("not a regular file (a link or something else stands where the "
                            "run's image should be): not exported", file=src)
    dst.parent.mkdir(parents=True, exist_ok=True)
    if dst.exists():
        return
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


def _write(run, out: Path, rows: dict, pairs, guard: _Guard, split: str, seed: int,
           batch_size: int, most: int | None, splits: dict) -> dict:
    rng = random.Random(f"{seed}/training")
    order = sorted(rows, key=lambda img: (rows[img]["concept"], rows[img]["track"], img))
    index = {img: i for i, img in enumerate(order)}
    partner = {}
    for a, b in pairs:
        partner.setdefault(a, []).append(index[b])
        partner.setdefault(b, []).append(index[a])
    groups = _groups(order, pairs)
    group_of = {i: min(g) for g in groups for i in g}
    out.mkdir(parents=True, exist_ok=True)
    for img in order:
        _link(run.dir / img, out / img)
    capped = not_swap = 0
    with atomic_open(out / "clip.csv") as fh:
        writer = csv.writer(fh, delimiter="\t", lineterminator="\n")
        writer.writerow(COLUMNS)
        for i, img in enumerate(order):
            row = rows[img]
            negs = _negatives(row, rng, most)
            capped += len(row["negatives"]) - len(negs)
            not_swap += bool(negs) and row["negatives"][negs[0]] != "swap"
            row["kept"] = negs
            writer.writerow([Path(img).as_posix(), row["title"], negs[0] if negs else "",
                             json.dumps(negs), json.dumps(sorted(partner.get(img, []))),
                             group_of[i], row["concept"], row["task"], row["n"],
                             row["track"]])
    batches = _batches(groups, batch_size, rng)
    with atomic_open(out / "batches.jsonl") as fh:
        for b in batches:
            fh.write(json.dumps(b) + "\n")
    llava, messages = _sft(rows, order, rng)
    with atomic_open(out / "sft_llava.json") as fh:
        json.dump(llava, fh, indent=1)
    with atomic_open(out / "sft_messages.jsonl") as fh:
        for m in messages:
            fh.write(json.dumps(m) + "\n")
    summary = {"split": split, "rows": len(order), "images_with_image_negative": len(partner),
               "negatives": sum(len(rows[i]["kept"]) for i in order),
               "negatives_left_out": dict(sorted(guard.dropped.items())),
               "held_out_examples": guard.examples,
               "negatives_over_max": capped, "max_negatives": most, "batches": len(batches),
               # rows whose every Swap negative was held out: neg_caption is another kind
               "neg_caption_not_swap": not_swap,
               "batch_size": batch_size, "sft_conversations": len(llava), "seed": seed,
               "held_out": splits.get("held_out", []), "hold_out": splits.get("hold_out"),
               "run": str(run.dir)}
    with atomic_open(out / "training.json") as fh:
        json.dump(summary, fh, indent=1)
    return summary


def _sft(rows: dict, order: list[str], rng: random.Random) -> tuple[list, list]:
    """Per image: a multiple-choice question (the positive among up to 3 of its hard
    negatives, places shuffled) and a yes/no question for the positive and for its first
    hard negative, balanced."""
    llava, messages = [], []

    def add(cid: str, img: str, question: str, answer: str) -> None:
        llava.append({"id": cid, "image": img, "conversations": [
            {"from": "human", "value": f"<image>\n{question}"},
            {"from": "gpt", "value": answer}]})
        messages.append({"messages": [{"role": "user", "content": f"<image>{question}"},
                                      {"role": "assistant", "content": answer}],
                         "images": [img]})

    for img in order:
        row = rows[img]
        negs = row["kept"]
        stem = Path(img).stem
        if not negs:
            continue
        options = [row["title"], *negs[:3]]
        rng.shuffle(options)
        labels = LETTERS[:len(options)]
        listing = "\n".join(f"{lab}. {t}" for lab, t in zip(labels, options, strict=True))
        add(f"{stem}-choice", img, PROMPT.format(options=listing),
            labels[options.index(row["title"])])
        add(f"{stem}-yes", img, VQA_QUESTION.format(caption=row["title"]), "Yes")
        add(f"{stem}-no", img, VQA_QUESTION.format(caption=negs[0]), "No")
    return llava, messages

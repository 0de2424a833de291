"""The export's dataset card, README.md: the Hub's YAML header, made with huggingface_hub's
DatasetCardData and the datasets library's own config and info writers (what
`push_to_hub` writes), and a body written from the run.

Header: configs (data_files per config and split), dataset_info (features with Image and
sequence types, split sizes), license, task_categories, tags, pretty_name.
Body: what each config tests (items, negatives, chance), how to load it, the survival
funnel, validated samples and what the build left out, validator agreement, the blind
audit, the tie convention, how to score it with each harness, provenance, citation.
"""

from __future__ import annotations

import datetime
import json
from pathlib import Path

from autocomp.publish.rows import SPLIT, features
from autocomp.report.table_format import md_code, md_fence

LICENSE = "cc-by-4.0"
TASK_CATEGORIES = ["zero-shot-image-classification", "image-text-to-text"]
TAGS = ["compositionality", "vision-language", "image-text-matching", "hard-negatives",
        "synthetic", "autocomp"]
TRACKS = {"minimal": "template captions of the objects alone on a white background",
          "contextual": "captions written by {writer} that place the objects in a scene, "
                        "checked to still state every binding"}


def tracks(writer: str) -> dict:
    """The tracks' descriptions for a run whose captions writer is `writer`."""
    who = ("autocomp's template writer (no language model)" if writer == "template" else
           f"a language model (the {writer} writer)")
    return {k: v.format(writer=who) for k, v in TRACKS.items()}
NEGATIVE_DESCRIPTIONS = {
    "swap": "Swap: each negative exchanges the concept's values (or relation arguments) "
            "among its objects; the same words, bound wrongly",
    "confusion": "Confusion: every other assignment of the concept's objects to its "
                 "object slots and of its values (or relations) to their slots, each with "
                 "repetition (N^N x N^N - 1 = 728 at N = 3 for attributes; N^N (N-1)^(N-1) "
                 "- 1 for relations), so only a model that binds every value to its object "
                 "ranks the positive first",
    "vary_value": "N = 1: each negative replaces the value with another of its vocabulary",
    "vary_object": "N = 1: each negative replaces the object with another of its "
                   "vocabulary",
    "winoground": "synthetic Winoground: a concept and its swap partner, 2 images x 2 "
                  "captions (caption k states image k); text, image and group scores",
}
CITATION = """@misc{autocomp,
  title  = {Auto-Comp: An Automated Pipeline for Scalable Compositional Probing of
            Contrastive Vision-Language Models},
  author = {Anonymous},
  note   = {Under review},
}
@misc{compass,
  title  = {Diagnosing the Sources of Compositional Failure in Vision-Language Models:
            A Controlled Analysis},
  author = {Anonymous},
  note   = {Under review},
}
@software{autocomp_software,
  title  = {autocomp: compositional image-caption benchmarks and their analyses},
  year   = {YEAR},
  url    = {https://pypi.org/project/autocomp/},
}""".replace("YEAR", str(datetime.date.today().year))


def card_data(manifest: dict, pretty_name: str):
    """The YAML header as huggingface_hub's DatasetCardData."""
    from datasets.info import DatasetInfo, DatasetInfosDict
    from datasets.splits import SplitDict, SplitInfo
    from datasets.utils.metadata import MetadataConfigs
    from huggingface_hub import DatasetCardData

    data = DatasetCardData(license=LICENSE, task_categories=TASK_CATEGORIES, tags=TAGS,
                           pretty_name=pretty_name, language=["en"],
                           size_categories=[_size_category(manifest)])
    configs, infos = {}, {}
    for name, c in manifest["configs"].items():
        configs[name] = {"data_files": [{"split": SPLIT, "path": f"data/{name}/{SPLIT}-*"}]}
        splits = SplitDict()
        size = c.get("uncompressed_bytes", c["bytes"])  # data in memory; files: download
        splits.add(SplitInfo(name=SPLIT, num_bytes=size, num_examples=c["rows"]))
        infos[name] = DatasetInfo(features=features(c["kind"]), splits=splits,
                                  download_size=c["bytes"], dataset_size=size)
    MetadataConfigs(configs).to_dataset_card_data(data)
    DatasetInfosDict(infos).to_dataset_card_data(data)
    return data


def _size_category(manifest: dict) -> str:
    rows = sum(c["rows"] for c in manifest["configs"].values())
    for limit, label in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"),
                         (1_000_000, "100K<n<1M")):
        if rows < limit:
            return label
    return "1M<n<10M"


def write_card(run, folder: Path, manifest: dict, blind: list[dict] | None) -> Path:
    from huggingface_hub import DatasetCard

    name = f"autocomp {run.config.name}"
    header = card_data(manifest, name).to_yaml()
    text = f"---\n{header}\n---\n\n" + body(run, manifest, blind)
    DatasetCard(text).save(folder / "README.md")
    return folder / "README.md"


def body(run, manifest: dict, blind: list[dict] | None) -> str:
    """The card's markdown; every name read from the run as inline code (md_code)."""
    parts = [f"# autocomp {md_code(run.config.name)}\n", _intro(run, manifest),
             _configs_table(manifest, run.config.captions.writer.name), _loading(),
             _funnel(run), _audit(blind), _ties(), _harnesses(manifest),
             _provenance(run, manifest), f"## Citation\n\n```bibtex\n{CITATION}\n```\n"]
    return "\n".join(p for p in parts if p)


def _intro(run, manifest: dict) -> str:
    tasks = sorted({c["task"] for c in manifest["configs"].values()})
    rows = sum(c["rows"] for c in manifest["configs"].values())
    k = manifest["max_negatives"]
    subset = ("Every item holds every negative the run built." if k is None else
              f"Items with more than {k} negatives hold a seeded subset of {k} "
              f"(seed {manifest['negatives_seed']}): the {k} whose sha256(\"seed:item "
              "id:caption\") is smallest, in the run's order; `negatives_total` says how "
              "many the item has in full, and chance counts the negatives shown.")
    return (f"A compositional image-caption benchmark generated by "
            f"[autocomp](https://pypi.org/project/autocomp/) {manifest['autocomp_version']}"
            f" from the run {md_code(run.config.name)} (tasks: "
            f"{', '.join(map(md_code, tasks))}): "
            f"{len(manifest['configs'])} configs, {rows:,} items, "
            f"{manifest['images']['count']:,} images. Each item pairs an image with its "
            "true caption and hard negatives that are graph edits of the image's scene "
            "graph, rendered by the same renderer, so a negative differs from the "
            f"positive only in the edited words. {subset}{_split_note(run)}\n")


def _split_note(run) -> str:
    """What a run with splits exports: its test concepts only (docs/train.md)."""
    from autocomp.bench.splits import read_splits

    data = read_splits(run.paths.bench)
    if data is None:
        return ""
    counts = data.get("counts", {})
    return (f" The run splits its concepts by {data.get('hold_out', 'none')} hold-out "
            f"({counts.get('train', 0):,} train, {counts.get('val', 0):,} val, "
            f"{counts.get('test', 0):,} test): only test concepts' items are here.")


def _configs_table(manifest: dict, writer: str = "transformers") -> str:
    lines = ["## Configs\n",
             "One config per (task, N, track, benchmark), split `test`. Chance is the "
             "mean over items of 1 / (1 + negatives shown) (synthetic Winoground: the text "
             "score's 25%; image 25%, group 16.7%).\n",
             "| config | task | N | track | benchmark | items | negatives per item | "
             "chance % |", "|---|---|---|---|---|---|---|---|"]
    for cname, c in manifest["configs"].items():
        per = "2 x 2" if c["kind"] == "winoground" else _per_item(c)
        lines.append(f"| {md_code(cname)} | {md_code(c['task'])} | {c['n']} | {c['track']} | "
                     f"{c['kind']} | {c['rows']:,} | {per} | {_pct(c['chance'])} |")
    kinds = dict.fromkeys(c["kind"] for c in manifest["configs"].values())
    lines.append("\nBenchmarks:\n")
    lines += [f"- **{k}**: {NEGATIVE_DESCRIPTIONS.get(k, k)}" for k in kinds]
    lines.append("\nTracks: " + "; ".join(f"**{k}**: {v}" for k, v in tracks(writer).items())
                 + ".\n")
    lines.append(
        "Columns of the single-image configs: `image`, `positive`, `negatives` (in a "
        "stable order), `negative_edits` (each negative's graph edit, JSON), "
        "`negative_categories` (its Table 6 category), `negative_same_meaning` (the "
        "negative states the positive's facts in another order: true of the image, so "
        "choosing it is no binding error), `negatives_total`, `chance`, "
        "`chance_distinct_meaning`, `id`, `concept`, `task`, `n`, `track`, `kind`, "
        "`paired` (both tracks of the concept validated), `graph` (the scene graph, "
        "JSON). Synthetic Winoground configs: `image_0`, `image_1`, `caption_0`, "
        "`caption_1` (caption k states image k), `graph_0`, `graph_1`, `partner` and the "
        "three chance levels.\n")
    return "\n".join(lines)


def _per_item(c: dict) -> str:
    """Negatives an item shows (and has in full, when a subset was kept): the mean."""
    if not c["rows"]:
        return "-"

    def num(x: float) -> str:
        return f"{x:,.1f}".removesuffix(".0")

    shown, total = c["negatives_shown"] / c["rows"], c["negatives_total"] / c["rows"]
    return num(shown) if shown == total else f"{num(shown)} of {num(total)}"


def _pct(x) -> str:
    from autocomp.eval.metrics import r1

    return r1(x)


def _loading() -> str:
    return ("## Load it\n\n```python\nimport datasets\n"
            "ds = datasets.load_dataset(\"PATH_OR_REPO\", \"CONFIG\", split=\"test\")\n"
            "row = ds[0]  # row['image'] is a PIL image; row['negatives'] a list of str\n"
            "```\n")


def _funnel(run) -> str:
    from autocomp.bench.ledger import ledger_lines
    from autocomp.report.agreement import format_agreement
    from autocomp.report.funnel import format_funnel
    from autocomp.report.summary import saved_summary

    s = saved_summary(run)
    lines = ["## How the images were kept\n",
             "Every concept is drawn, captioned, generated and validated; an image is kept "
             "only if every check passes (objects and counts, background, every binding "
             "asked as a question). Survival funnel (% of concepts drawn):\n",
             "```", format_funnel(s["funnel"]), "```"]
    if s.get("validated"):
        lines += ["\nValidated samples:\n", "| task N | minimal | contextual | paired |",
                  "|---|---|---|---|"]
        lines += [f"| {k} | {c['minimal']:,} | {c['contextual']:,} | {c['paired']:,} |"
                  for k, c in s["validated"].items()]
    left = ledger_lines(s.get("left_out") or {})
    if left:
        lines += ["\nLeft out after concepts were drawn:\n", "```", *left, "```"]
    if s["agreement"]:
        lines += ["\nValidator agreement with the faults injected into the images "
                  "(ground truth where the generator records it):\n", "```",
                  format_agreement(s["agreement"]), "```"]
    return "\n".join(lines) + "\n"


def _audit(blind: list[dict] | None) -> str:
    if blind is None:
        return ("## Blind audit\n\nNot run for this export (`--no-audit`): run "
                "`autocomp audit DIR` on it.\n")
    from autocomp.audit import format_audit

    flagged = [r for r in blind if any(b["flag"] for b in r["blind"].values())]
    if flagged:
        matched = [r["benchmark"] for r in flagged
                   if all("matched_flag" in b and not b["matched_flag"]
                          for b in r["blind"].values())]
        heading = (f"## Blind audit: text-only shortcuts in {len(flagged)} of {len(blind)} "
                   "configs\n\nA text-only scorer beats chance (`!`) on "
                   + ", ".join(md_code(r["benchmark"]) for r in flagged) + ": there, part of a "
                   "model's accuracy can come from the captions alone. Read those configs' "
                   "numbers beside the blind scorer's.")
        if matched:
            heading += (f" On {len(matched)} of them (Confusion), every blind scorer is at "
                        "chance on the shortcut-matched negatives (in parentheses): score "
                        "models there too (`autocomp report` prints both).")
        heading += "\n\n"
    else:
        heading = (f"## Blind audit: no text-only shortcut found in {len(blind)} configs\n\n"
                   "No text-only scorer below beats chance on any config.\n\n")
    return (heading + "Text-only scorers on the exported captions (no image seen). A "
            "benchmark whose negatives read less naturally than its positives would let "
            "them beat chance; `!` marks one more than 3 standard errors and 5 points from "
            "it.\n\n" + format_audit(blind) + "\n")


def _ties() -> str:
    return (
        "## Ties\n\nWhen a model gives the positive and a negative exactly the same score, "
        "harnesses differ:\n\n"
        "| rule | a tie counts | used by | autocomp |\n|---|---|---|---|\n"
        "| strict | wrong: the positive must score above every negative | Auto-Comp, "
        "SugarCrepe, CREPE papers | `autocomp eval --ties strict` (default) |\n"
        "| argmax | as the first of the tied candidates: the positive comes first, so a "
        "tie counts right (Winoground's second image: wrong) | what CLIP_benchmark's "
        "and mteb/MIEB's `argmax` intend (exact ties: below) | `autocomp eval --ties "
        "argmax` |\n"
        "| aware | 1/k of an item for a k-way tie at the top (a random pick) | - | "
        "`autocomp eval --ties aware` |\n\n"
        "Every autocomp result says which rule it used. A model that embeds two captions "
        "alike (captions past its context length, a tokenizer that drops the words that "
        "differ) makes exact ties. CLIP_benchmark and MIEB score a tie through a matrix "
        "product whose float rounding splits it (two identical text embeddings score "
        "differently against one image in most products on a CPU), so on a model that "
        "ties, their accuracy lies anywhere between autocomp's strict accuracy and its "
        "argmax accuracy (strict + the tied items), moved by the BLAS, the batch size and "
        "the threads: not a rule. Compare models there by autocomp's strict and tie-aware "
        "accuracies, side by side; `accuracy_argmax - accuracy_strict` in an autocomp "
        "result is the share of items a tie decided for that model. Where nothing ties, "
        "every harness gives autocomp's number.\n")


def _harnesses(manifest: dict) -> str:
    lines = ["## Evaluate it\n", "With autocomp (reads this folder as it is):\n",
             "```sh\nautocomp eval PATH --model open_clip:ViT-B-32-quickgelu@openai "
             "--ties argmax\n```\n"]
    for entry in manifest.get("adapters", {}).values():
        lines += [f"### {entry['title']}\n", entry["usage"], ""]
    return "\n".join(lines)


def _provenance(run, manifest: dict) -> str:
    cfg = run.config
    models = {k: f"{b.name} {json.dumps(dict(b.options), sort_keys=True)}"
              for k, b in (("captions", cfg.captions.writer),
                           ("images", cfg.generate.generator),
                           ("detector", cfg.validate.detector),
                           ("answerer", cfg.validate.answerer))}
    k = manifest["max_negatives"]
    negatives = "all" if k is None else f"a subset of {k}, seed {manifest['negatives_seed']}"
    shown = {key: manifest[key] for key in ("run", "seed", "max_negatives", "negatives_seed",
                                            "images", "bytes")}
    config_text = run.paths.config.read_text(encoding="utf-8").rstrip()
    return ("## Provenance\n\n"
            f"- autocomp {manifest['autocomp_version']}, run {md_code(cfg.name)}, seed {cfg.seed}"
            " (concepts, captions and image seeds follow from it)\n"
            f"- negatives: {negatives}\n"
            + "".join(f"- {key}: {md_code(value)}\n" for key, value in models.items())
            + f"- exported files: {manifest['bytes']:,} bytes of parquet; the images' own "
            f"bytes: {manifest['images']['bytes']:,}\n\n"
            "The run's config, with the package and model versions it ran with:\n\n"
            f"{md_fence(config_text, 'yaml')}\n\n"
            "The export's manifest is `autocomp_export.json`:\n\n"
            f"```json\n{json.dumps(shown, indent=1)}\n```\n")

"""Score this autocomp export with CLIP_benchmark's image_caption_selection metric.

    pip install clip_benchmark datasets
    python harness/clip_benchmark_autocomp.py --model ViT-B-32-quickgelu --pretrained openai

Every config by default (--config NAME, repeatable, for some); --dataset a hub id or another
copy of the export. Each item is I images x C captions with image i matching caption i:
one image with its positive first and its negatives after (text_acc is the accuracy), or a
synthetic Winoground pair (text_acc, image_acc and acc: the text, image and group scores).
CLIP_benchmark takes the argmax, so a tie counts as the first of the tied captions:
`autocomp eval --ties argmax` gives the same numbers (with --batch_size 1: larger batches
let float rounding split ties, so their numbers move with the batch size). Results are written as
CLIP_benchmark writes them, one JSON per config (--output, with {dataset} and {model}).

From Python, with any model CLIP_benchmark can load (or your own encode_image/encode_text):

    from clip_benchmark_autocomp import evaluate
    metrics = evaluate(model, transform, tokenizer, "shape_color-n2-minimal-swap")
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections import defaultdict

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def configs(path: str = HERE) -> list[str]:
    """The export's config names (from its card's configs)."""
    import datasets

    return sorted(datasets.get_dataset_config_names(path))


def _images_captions(row: dict):
    if "image_0" in row:
        return [row["image_0"], row["image_1"]], [row["caption_0"], row["caption_1"]]
    return [row["image"]], [row["positive"], *row["negatives"]]


def dataset(config: str, transform, path: str = HERE):
    """A torch Dataset of (images: I x C x H x W, captions) per item, as CLIP_benchmark's
    Winoground and SugarCrepe datasets give them."""
    import datasets
    import torch

    rows = datasets.load_dataset(path, config, split="test")

    class AutocompItems(torch.utils.data.Dataset):
        def __len__(self):
            return len(rows)

        def __getitem__(self, i):
            images, captions = _images_captions(rows[i])
            return torch.stack([transform(im.convert("RGB")) for im in images]), captions

    items = AutocompItems()
    items.caption_counts = ([len(n) + 1 for n in rows["negatives"]]
                            if "negatives" in rows.column_names else [2] * len(rows))
    return items


def _batches(counts: list[int], batch_size: int) -> list[list[int]]:
    """Batches of items with the same number of captions (CLIP_benchmark reshapes a batch's
    captions to B x C)."""
    groups = defaultdict(list)
    for i, c in enumerate(counts):
        groups[c].append(i)
    return [idx[j:j + batch_size] for _, idx in sorted(groups.items())
            for j in range(0, len(idx), batch_size)]


def evaluate(model, transform, tokenizer, config: str, path: str = HERE,
             batch_size: int = 1, device: str = "cpu", amp: bool = False) -> dict:
    """CLIP_benchmark's image_caption_selection metrics on one config. `batch_size` items
    are encoded together. Where the model embeds two captions of an item alike (a tie at
    the top: captions cut to its context), CLIP_benchmark's image @ text product splits
    the tie by float rounding, in any batch size: its text_acc then lies between
    autocomp's strict accuracy and its argmax accuracy (strict + the tied items), at a
    place the BLAS, the batch and the threads decide. Where nothing ties, text_acc is
    autocomp's accuracy (either rule)."""
    import torch
    from clip_benchmark.datasets.builder import image_captions_collate_fn
    from clip_benchmark.metrics import image_caption_selection

    items = dataset(config, transform, path)
    loader = torch.utils.data.DataLoader(
        items, batch_sampler=_batches(items.caption_counts, batch_size),
        collate_fn=image_captions_collate_fn)
    return image_caption_selection.evaluate(model, loader, tokenizer, device, amp=amp)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", default="ViT-B-32-quickgelu")
    p.add_argument("--pretrained", default="openai")
    p.add_argument("--model_type", default="open_clip")
    p.add_argument("--model_cache_dir", default=None)
    p.add_argument("--dataset", default=HERE, help="the export folder or its hub id")
    p.add_argument("--config", action="append", help="a config (default: all)")
    p.add_argument("--batch_size", type=int, default=1,
                   help="items encoded together (exact ties: see evaluate)")
    p.add_argument("--amp", action=argparse.BooleanOptionalAction, default=None,
                   help="mixed precision (default: on a GPU only)")
    p.add_argument("--output", default="{dataset}_{pretrained}_{model}.json")
    args = p.parse_args(argv)
    say("importing torch and CLIP_benchmark")
    import torch
    from clip_benchmark.models import load_clip

    device = "cuda" if torch.cuda.is_available() else "cpu"
    amp = (device == "cuda") if args.amp is None else args.amp
    say(f"loading {args.model_type} {args.model} ({args.pretrained or 'no tag'}) on {device}")
    model, transform, tokenizer = load_clip(args.model_type, args.model, args.pretrained,
                                            args.model_cache_dir, device)
    model.eval()
    say(f"reading the configs of {args.dataset}")
    names = args.config or configs(args.dataset)
    for i, config in enumerate(names, 1):
        say(f"[{i}/{len(names)}] {config}: loading and scoring (a bar follows)")
        metrics = evaluate(model, transform, tokenizer, config, args.dataset,
                           args.batch_size, device, amp)
        print(config, json.dumps(metrics))  # first: the numbers are never lost
        # a model named hf-hub:org/name or local-dir:/abs/path holds '/' and ':'
        out = args.output.format(dataset=file_safe(config), model=file_safe(args.model),
                                 pretrained=file_safe(os.path.basename(args.pretrained),
                                                      "notag"))
        if os.path.dirname(out):
            os.makedirs(os.path.dirname(out), exist_ok=True)
        with open(out, "w", encoding="utf-8") as fh:
            json.dump({"dataset": config, "model": args.model,
                       "pretrained": args.pretrained, "task": "image_caption_selection",
                       "metrics": metrics, "language": "en"}, fh)


def say(line: str) -> None:
    """A progress line on standard error, at once (the numbers go to standard output)."""
    print(line, file=sys.stderr, flush=True)


def file_safe(text: str, empty: str = "model") -> str:
    """`text` as one file name: every run of characters other than letters, digits and
    . _ + - becomes one '_' (`empty` where nothing is left)."""
    return re.sub(r"[^A-Za-z0-9._+-]+", "_", str(text)).strip("_") or empty


if __name__ == "__main__":
    main()

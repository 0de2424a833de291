"""Write this autocomp export as VLMEvalKit multiple-choice TSVs (its custom-MCQ loader).

    pip install datasets pandas
    python harness/vlmevalkit_tsv.py --lmudata ~/LMUData [--config NAME] [--circular]
    python run.py --data AutoComp_shape_color-n2-minimal-swap --model Qwen2-VL-7B-Instruct

One TSV per config, $LMUData/AutoComp_<config>.tsv, with VLMEvalKit's columns: index,
image (base64 PNG), question, A, B, ... (the positive and up to 25 negatives, shuffled),
answer (the positive's letter), category (the config) and l2-category (the benchmark
kind), plus item (the export's item id). Options and their order are the lmms-eval
adapter's (lmms_eval/utils.py: the same seeded subset and shuffle), so both harnesses ask
the same questions. A synthetic Winoground pair is two questions, one per image (its two
captions as options); VLMEvalKit scores questions, so its accuracy there is per image.

--circular writes AutoComp_<config>_circular.tsv: every rotation of each question's options,
rotation r at index + r * 1000000 with its image given as the first row's index (VLMEvalKit
reads an image field of 64 characters or fewer as another row's index); a name containing
"circular" makes VLMEvalKit score it with CircularEval (right only if right under every
rotation).
"""

from __future__ import annotations

import argparse
import base64
import importlib.util
import io
import os

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROTATION = 1_000_000


def _options_rule():
    """lmms_eval/utils.py, the shared rule for the options shown and their order."""
    path = os.path.join(HERE, "harness", "lmms_eval", "utils.py")
    spec = importlib.util.spec_from_file_location("autocomp_options", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _b64(image) -> str:
    buf = io.BytesIO()
    image.convert("RGB").save(buf, format="PNG")
    return base64.b64encode(buf.getvalue()).decode("ascii")


def rows(config: str, path: str = HERE, circular: bool = False) -> list[dict]:
    """The TSV's rows for one config."""
    import datasets

    rule = _options_rule()
    out, base = [], -1
    for row in datasets.load_dataset(path, config, split="test"):
        if "image_0" in row:
            caps = [row["caption_0"], row["caption_1"]]
            questions = [(f"{row['id']}#image{i}", row[f"image_{i}"], caps, caps[i])
                         for i in range(2)]
        else:
            caps = rule.shown(row["id"], row["positive"], row["negatives"])
            questions = [(row["id"], row["image"], caps, caps[0])]
        for qid, image, captions, true in questions:
            base += 1
            opts = rule.order(qid, captions)
            for r in range(len(opts) if circular else 1):
                shown = opts[r:] + opts[:r]
                entry = {"index": base + r * ROTATION,
                         "image": _b64(image) if r == 0 else str(base),
                         "question": rule.QUESTION,
                         "answer": rule.LETTERS[shown.index(true)], "category": config,
                         "l2-category": row["kind"], "item": row["id"]}
                entry.update(zip(rule.LETTERS, shown, strict=False))
                out.append(entry)
    return out


def write(config: str, lmudata: str, path: str = HERE, circular: bool = False) -> str:
    import pandas as pd

    table = pd.DataFrame(rows(config, path, circular))
    letters = [c for c in _options_rule().LETTERS if c in table.columns]
    table = table[["index", "image", "question", *letters, "answer", "category",
                   "l2-category", "item"]]
    name = f"AutoComp_{config}{'_circular' if circular else ''}"
    os.makedirs(lmudata, exist_ok=True)
    target = os.path.join(lmudata, f"{name}.tsv")
    table.to_csv(target, sep="\t", index=False)
    return target


def main(argv=None) -> None:
    import datasets

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--lmudata", default=os.environ.get("LMUData",  # noqa: SIM112 (its name)
                                                       os.path.expanduser("~/LMUData")))
    p.add_argument("--dataset", default=HERE, help="the export folder or its hub id")
    p.add_argument("--config", action="append", help="a config (default: all)")
    p.add_argument("--circular", action="store_true")
    args = p.parse_args(argv)
    for config in args.config or datasets.get_dataset_config_names(args.dataset):
        print(write(config, args.lmudata, args.dataset, args.circular))


if __name__ == "__main__":
    main()

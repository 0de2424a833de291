"""lmms-eval tasks over this autocomp export, for generative VLMs (`--include_path` this
folder). Three tasks per config:

  autocomp_<config>_mc        multiple choice: the image, the positive and up to
                              OPTIONS - 1 negatives as lettered options, shuffled with a
                              seed per item; right when the model names the positive's
                              letter
  autocomp_<config>_circular  the same options under every rotation of their order
                              (CircularEval): an item is right only when every rotation is
  autocomp_<config>_yesno     one question per caption ("Does this image show ...?"):
                              an item is right only when the positive gets yes and every
                              negative no

Synthetic Winoground configs ask per image: multiple choice between the two captions (an
item is right when both images pick their own caption: the text score) and yes/no for all
four image-caption pairs. Which negatives are shown when an item has more than
OPTIONS - 1: the ones of smallest sha256("SEED:item id:caption"), as `autocomp export
--max-negatives` draws them; the option order: by sha256("SEED:item id:order:caption").
Metrics: item_accuracy (the item's questions all right; the number to compare with
autocomp) and question_accuracy (each question alone).
"""

from __future__ import annotations

import hashlib
import os
import re
from collections import defaultdict

# the export's folder (harness/lmms_eval/ is two below it): the YAMLs' dataset_path, so a
# moved export still loads
EXPORT_FOLDER = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OPTIONS = int("{{OPTIONS}}")  # at most 26: the letters A..Z
SEED = int("{{SEED}}")
LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
QUESTION = "Which caption describes the image?"
YESNO = 'Does this image show "{caption}"? Answer yes or no.'


def _key(*parts) -> bytes:
    return hashlib.sha256(":".join(str(p) for p in parts).encode()).digest()


def shown(item_id: str, positive: str, negatives: list[str]) -> list[str]:
    """The positive and the negatives shown (at most OPTIONS - 1, the seeded subset)."""
    if len(negatives) > OPTIONS - 1:
        keep = set(sorted(negatives, key=lambda c: _key(SEED, item_id, c))[:OPTIONS - 1])
        negatives = [c for c in negatives if c in keep]
    return [positive, *negatives]


def order(item_id: str, captions: list[str]) -> list[str]:
    return sorted(captions, key=lambda c: _key(SEED, item_id, "order", c))


def _questions(row: dict):
    """(item id, image, captions, the true caption) per image of a row."""
    if "image_0" in row:
        captions = [row["caption_0"], row["caption_1"]]
        for i in range(2):
            yield f"{row['id']}#image{i}", row["id"], row[f"image_{i}"], captions, captions[i]
    else:
        captions = shown(row["id"], row["positive"], row["negatives"])
        yield row["id"], row["id"], row["image"], captions, captions[0]


def _expand(dataset, make):
    rows = []
    for row in dataset:
        for qid, item, image, captions, true in _questions(row):
            rows.extend({"item": item, "question_id": qid, "image": image, **doc}
                        for doc in make(qid, captions, true))
    import datasets

    features = datasets.Features({
        "item": datasets.Value("string"), "question_id": datasets.Value("string"),
        "image": datasets.Image(), "question": datasets.Value("string"),
        "options": datasets.Sequence(datasets.Value("string")),
        "answer": datasets.Value("string"), "rotation": datasets.Value("int32")})
    return datasets.Dataset.from_list(rows, features=features)


def _mc(qid, captions, true, rotation=0):
    opts = order(qid, captions)
    opts = opts[rotation:] + opts[:rotation]
    return {"question": QUESTION, "options": opts, "answer": LETTERS[opts.index(true)],
            "rotation": rotation}


def mc_docs(dataset):
    return _expand(dataset, lambda qid, caps, true: [_mc(qid, caps, true)])


def circular_docs(dataset):
    return _expand(dataset, lambda qid, caps, true: [_mc(qid, caps, true, r)
                                                     for r in range(len(caps))])


def yesno_docs(dataset):
    return _expand(dataset, lambda qid, caps, true: [
        {"question": YESNO.format(caption=c), "options": [], "rotation": j,
         "answer": "yes" if c == true else "no"} for j, c in enumerate(caps)])


def doc_to_visual(doc):
    return [doc["image"].convert("RGB")]


def doc_to_text(doc, lmms_eval_specific_kwargs=None):
    kw = lmms_eval_specific_kwargs or {}
    if not doc["options"]:
        return f"{kw.get('pre_prompt', '')}{doc['question']}"
    lines = [f"{LETTERS[i]}. {c}" for i, c in enumerate(doc["options"])]
    return (f"{kw.get('pre_prompt', '')}{doc['question']}\n" + "\n".join(lines)
            + kw.get("post_prompt", "\nAnswer with the option's letter from the given "
                                    "choices directly."))


def doc_to_target(doc):
    return doc["answer"]


def parse_letter(text: str, k: int) -> str | None:
    """The option a reply names: a lone letter ("B", "(b)", "B."), "answer/option is X",
    or a letter opening the reply ("B. a red cube"); None otherwise."""
    valid = LETTERS[:k]
    text = (text or "").strip()
    for pattern in (r"^\(?([A-Za-z])\)?[.:)]?$", r"(?i:answer|option)(?:\s+is)?\s*:?\s*"
                    r"\(?([A-Z])\)?\b", r"^\(?([A-Z])\)?[.:)]\s"):
        m = re.search(pattern, text)
        if m and m.group(1).upper() in valid:
            return m.group(1).upper()
    return None


def parse_yes_no(text: str) -> str | None:
    words = re.findall(r"[a-z]+", (text or "").lower())
    return words[0] if words and words[0] in ("yes", "no") else None


def process_results(doc, results):
    reply = results[0] if results else ""
    got = (parse_letter(reply, len(doc["options"])) if doc["options"]
           else parse_yes_no(reply))
    entry = {"item": doc["item"], "correct": got == doc["answer"]}
    return {"item_accuracy": entry, "question_accuracy": entry}


def item_accuracy(results) -> float:
    """Share of items whose every question (rotation, image, caption) was answered right."""
    items = defaultdict(list)
    for r in results:
        items[r["item"]].append(r["correct"])
    return sum(all(v) for v in items.values()) / len(items) if items else 0.0


def question_accuracy(results) -> float:
    return sum(r["correct"] for r in results) / len(results) if results else 0.0

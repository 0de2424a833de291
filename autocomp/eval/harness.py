"""The harness: score one (scorer, benchmark) cell, streaming.

Items are read in chunks; for each chunk the images and captions the cache lacks are
encoded in batches and stored (committed per batch), then every item is scored from the
cached vectors. Memory holds one chunk, never the benchmark. A caption is encoded once per
scorer across every benchmark (swap captions are a subset of confusion captions; N = 1
captions repeat across concepts; paired items reuse both tracks), an image once per file
content. Per-item predictions go to a file next to the cell's result.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from autocomp.core.errors import AutocompError
from autocomp.core.own_files import create_new
from autocomp.core.plugins import plugin_code
from autocomp.core.records import dumps, temp_path
from autocomp.core.scene import SceneGraph
from autocomp.core.workers import Workers
from autocomp.eval.cache import EmbeddingCache, file_key, identity_key, keep, text_key
from autocomp.eval.images import Budget, large_blocks, open_image
from autocomp.eval.items import (
    Candidates,
    caption_count,
    captions_of,
    image_ref,
    image_refs,
    image_rows,
    is_text_only,
    split_ref,
)
from autocomp.eval.matrix import (
    every_true,
    is_matrix,
    matrix_chance,
    matrix_outcome,
    truth_of,
)
from autocomp.eval.metrics import TIED, TIES, Tally, error_category, outcome
from autocomp.eval.score_checks import (  # noqa: F401 (NonFiniteScores: callers import it here)
    NonFiniteScores,
    UnusableScores,
    checked_item_scores,
    refuse_non_finite,
)
from autocomp.formats.runs import Benchmark
from autocomp.negatives.shortcut import matched_negatives

CHUNK_CAPTIONS = 8192  # a chunk ends here too: confusion items carry ~700 captions each


def _chunks(items: Iterator[dict], size: int,
            captions: int = CHUNK_CAPTIONS) -> Iterator[list[dict]]:
    """Lists of up to `size` items, or fewer once they hold `captions` captions (memory
    stays bounded and progress moves on items with hundreds of negatives)."""
    chunk, held = [], 0
    for item in items:
        chunk.append(item)
        held += caption_count(item)
        if len(chunk) == size or held >= captions:
            yield chunk
            chunk, held = [], 0
    if chunk:
        yield chunk


class Harness:
    def __init__(self, scorer, run_dir: Path, tasks: dict, cache_dir: Path | None,
                 chunk_items: int = 128, workers: int | None = None, also: tuple = (),
                 ties: str = "strict"):
        """`cache_dir` None keeps the vectors in memory (nothing reused across runs).
        `workers`: threads that hash and decode images while the model encodes the batch
        before (None: one per CPU core, at most 8; 0: in this thread). `also`: other
        folders the items' images may lie in (a suite's `also`). `ties`: the rule accuracy
        follows when the positive ties a negative (eval/metrics.py)."""
        self.scorer, self.run_dir, self.tasks = scorer, Path(run_dir), tasks
        self.ties = ties
        self.roots = [Path(run_dir).resolve(), *(Path(p).resolve() for p in also)]
        self.chunk_items = chunk_items
        self.workers = Workers(min(8, os.cpu_count() or 1) if workers is None else workers,
                               "decode")
        # a light scorer's vectors (blind word counts) cost less to compute than to write:
        # they are kept in memory only
        self.cache = (EmbeddingCache(None if getattr(scorer, "light", False) else cache_dir,
                                     scorer.cache_id)
                      if not scorer.scores_items else None)
        self.encoded = {"images": 0, "captions": 0}
        self.budget = Budget()  # full-size decodes in flight, in bytes
        self.tick = None  # called after each encoded batch (progress inside a long chunk)
        large_blocks()

    def decode_image(self, path: Path, crop, item: str):
        return open_image(path, crop, item, getattr(self.scorer, "image_side", None),
                          self.budget)

    # -- filling the cache -------------------------------------------------------------
    def _image(self, name: str, item: str) -> Path:
        """An item's image file: inside the benchmark's root and a regular file that can be
        read, else one line naming the item and the file."""
        root = self.roots[0]
        path = (self.run_dir / name).resolve()
        if not any(path.is_relative_to(r) for r in self.roots):
            raise AutocompError(f"item {item}: image '{name}' lies outside {root}; items may "
                                "only name images under their benchmark's folder")
        if not path.is_file():
            what = "does not exist" if not path.exists() else "is not a regular file"
            raise AutocompError(f"item {item}: image '{name}' {what}", file=path)
        return path

    def image_keys(self, refs: list[str], owners: dict) -> tuple[dict, dict]:
        """(ref -> content key, ref -> file) for images named by items (`owners`: an item
        per ref, for errors); the key carries the crop box."""
        keys, files = {}, {}
        for ref in dict.fromkeys(refs):
            files[ref] = self._image(split_ref(ref)[0], owners.get(ref, "?"))
        for ref, digest in zip(files, self.workers.map(file_key, files.values()), strict=True):
            crop = split_ref(ref)[1]
            keys[ref] = digest + (f":crop={','.join(map(str, crop))}" if crop else "")
        return keys, files

    def _fill_images(self, refs: list[str], owners: dict, fresh: dict) -> dict[str, str]:
        """Encode the images the cache lacks; `owners` names an item per image (for
        errors), `fresh` receives the vectors encoded here."""
        keys, files = self.image_keys(refs, owners)
        missing = set(self.cache.missing(keys.values()))
        todo = [p for p, k in keys.items() if k in missing]
        todo = list({keys[p]: p for p in todo}.values())  # one file per content
        bs = self.scorer.batch_size
        batches = [todo[i:i + bs] for i in range(0, len(todo), bs)]

        def decode(batch):
            return [self.workers.submit(self.decode_image, files[ref], split_ref(ref)[1],
                                        owners.get(ref, "?"))
                    for ref in batch]

        ahead = decode(batches[0]) if batches else []
        for i, batch in enumerate(batches):
            images = [f.result() for f in ahead]
            ahead = decode(batches[i + 1]) if i + 1 < len(batches) else []  # while encoding
            vecs = self.scorer.encode_images(images)
            self.cache.put_many([keys[p] for p in batch], vecs)
            keep(fresh, [keys[p] for p in batch], vecs)
            self.encoded["images"] += len(batch)
            if self.tick is not None:
                self.tick()
        return keys

    def fill(self, captions: list[str], images: dict[str, str]) -> None:
        """Encode into the cache what it lacks of `captions` and `images` (ref -> an item
        naming it, for errors), holding no vectors (eval --distributed's shares)."""
        self._fill_texts(captions, {})
        if self.scorer.embeds_images and images:
            self._fill_images(list(images), images, {})

    def text_keys(self, texts) -> dict[str, str]:
        """Caption -> its cache key: what the model reads (its cleaned text or token ids,
        cut to the context) where the scorer says (text_identity), else the text. Captions
        the model reads alike share one vector, so their tie is exact whatever batch each
        was in."""
        same = getattr(self.scorer, "text_identity", None)
        keys = {}
        for t in dict.fromkeys(texts):
            read = same(t) if same is not None else None
            keys[t] = text_key(t) if read is None else identity_key(read)
        return keys

    def _fill_texts(self, texts: list[str], fresh: dict) -> dict[str, str]:
        keys = self.text_keys(texts)
        missing = set(self.cache.missing(set(keys.values())))
        # one caption per key; similar lengths batch together: a batch is padded (or cut)
        # to its longest caption; in tokens where the scorer says (text_length), else in
        # characters
        length = getattr(self.scorer, "text_length", len)
        todo = sorted({k: t for t, k in reversed(keys.items()) if k in missing}.values(),
                      key=lambda t: (length(t), len(t), t))
        bs = self.scorer.batch_size
        encode = self.scorer.caption_vectors
        for i in range(0, len(todo), bs):
            batch = todo[i:i + bs]
            vecs = encode(batch)
            self.cache.put_many([keys[t] for t in batch], vecs)
            keep(fresh, [keys[t] for t in batch], vecs)
            self.encoded["captions"] += len(batch)
            if self.tick is not None:
                self.tick()
        return keys

    def text_vectors(self, texts: list[str]) -> np.ndarray:
        """One cached (or freshly encoded) vector per caption, in order."""
        fresh: dict = {}
        keys = self._fill_texts(texts, fresh)
        fresh.update(self.cache.get_many([k for k in keys.values() if k not in fresh]))
        return np.stack([fresh[keys[t]] for t in texts])

    def image_vectors(self, names: list[str]) -> np.ndarray:
        """One vector per image (a path under the run, as items name them), in order."""
        fresh: dict = {}
        keys = self._fill_images(names, {n: n for n in names}, fresh)
        fresh.update(self.cache.get_many([k for k in keys.values() if k not in fresh]))
        return np.stack([fresh[keys[n]] for n in names])

    # -- scoring ---------------------------------------------------------------------------
    def _scores(self, chunk: list[dict]) -> list[np.ndarray]:
        if getattr(self.scorer, "scores_pairs", False):
            from autocomp.eval.pair_scores import pair_scores

            return pair_scores(self, chunk)
        if self.scorer.scores_items:
            rows = [image_rows(item) if is_matrix(item) else [item] for item in chunk]
            scores = iter(self._item_scores([r for item in rows for r in item]))
            return [np.stack([next(scores) for _ in item]) if is_matrix(whole)
                    else next(scores) for whole, item in zip(chunk, rows, strict=True)]
        vecs: dict = {}  # what this chunk encodes is used as is, not read back from the cache
        tkeys = self._fill_texts([c for item in chunk for c in captions_of(item)], vecs)
        refs = {ref: item["id"] for item in chunk for ref in image_refs(item)}
        ikeys = (self._fill_images(list(refs), refs, vecs) if self.scorer.embeds_images
                 else {})
        vecs.update(self.cache.get_many([k for k in (*tkeys.values(), *ikeys.values())
                                         if k not in vecs]))
        out = []
        for item in chunk:
            texts = np.stack([vecs[tkeys[c]] for c in captions_of(item)]).astype(np.float64)
            if is_text_only(item):  # similarities of text pairs, the positive pair first
                out.append(np.array([texts[a] @ texts[b] for a, b in item["text_pairs"]]))
                continue
            if self.scorer.embeds_images:
                images = np.stack([vecs[ikeys[r]] for r in image_refs(item)])
                scores = images.astype(np.float64) @ texts.T  # images x captions
            else:  # a text scorer: one score per caption, whatever the image
                scores = np.tile(texts[:, 0], (len(item.get("images", [0])), 1))
            out.append(scores if is_matrix(item) else scores[0])
        return out

    def _item_scores(self, chunk: list[dict]) -> list[np.ndarray]:
        """Scores of single-image items from a scorer that sees whole items, held to a
        number per candidate on every batch (eval/score_checks.py)."""
        entries = self.item_entries(chunk)
        return checked_item_scores(entries, self.scorer.score_items(entries))

    def item_entries(self, chunk: list[dict]) -> list[tuple]:
        """What a scorer that sees whole items is handed per item: (item, candidate scene
        graphs or Nones, truth {graph, task}, its image when the scorer needs it)."""
        entries = []
        for item in chunk:
            task = self.tasks.get(item["task"])
            if "candidate_graphs" in item:  # a row of a matrix item
                graph = SceneGraph.from_dict(item["graph"])
                cands = [SceneGraph.from_dict(g) for g in item["candidate_graphs"]]
            elif "graph" in item:
                graph = SceneGraph.from_dict(item["graph"])
                cands = Candidates(graph, task, item["negatives"])
            else:  # SugarCrepe, CREPE, tables: captions only, no scene graphs
                graph, cands = None, [None] * (1 + len(item["negatives"]))
            image = None
            if getattr(self.scorer, "needs_image", False):
                ref = image_ref(item)
                path, crop = split_ref(ref)
                image = self.decode_image(self._image(path, item["id"]), crop, item["id"])
            entries.append((item, cands, {"graph": graph, "task": task}, image))
        return entries

    def run(self, bench: Benchmark, predictions: Path, progress=None) -> dict:
        """Score every item of `bench`; `progress(state)` is called after each chunk with
        items, captions (encoded / looked up), cache hits and seconds so far."""
        start = time.perf_counter()
        self.encoded = {"images": 0, "captions": 0}
        looked_up, skipped, identical = 0, {}, 0
        hits0 = self.cache.hits if self.cache else 0
        tally = Tally(self.ties)
        predictions.parent.mkdir(parents=True, exist_ok=True)
        tmp = temp_path(predictions)

        def state() -> dict:
            return {"items": tally.n, "captions": looked_up, "encoded": dict(self.encoded),
                    "cache_hits": (self.cache.hits - hits0) if self.cache else 0,
                    "seconds": time.perf_counter() - start}
        self.tick = None if progress is None else (lambda: progress(state()))
        try:
            with create_new(tmp) as fh:
                for chunk in _chunks(self._scoreable(bench.items(), skipped, self.dual,
                                                     self.texts_only), self.chunk_items):
                    lines = []
                    with plugin_code("scorer", getattr(self.scorer, "family", ""),
                                     f"scoring {bench.name}"):
                        scored = self._scores(chunk)
                    for item, scores in zip(chunk, scored, strict=True):
                        refuse_non_finite(scores, bench.name, item["id"])
                        judged = self._judge(item, scores, tally)
                        # a dual encoder scoring a different caption exactly as the
                        # positive embedded both alike: identical within its context
                        if judged.get("tied_with") and self.scorer.embeds_images:
                            identical += 1
                        lines.append(dumps(judged) + "\n")
                    fh.write("".join(lines))
                    looked_up += sum(len(captions_of(item)) for item in chunk)
                    if progress is not None:
                        progress(state())
            os.replace(tmp, predictions)
        finally:
            self.tick = None
            Path(tmp).unlink(missing_ok=True)
        return {"metrics": tally.metrics(), "n_items": tally.n, "captions": looked_up,
                "seconds": round(time.perf_counter() - start, 3),
                "encoded": dict(self.encoded), "skipped": skipped, "identical": identical}

    @property
    def texts_only(self) -> bool:
        """A sentence-embedding scorer (text:): caption vectors and no image."""
        return bool(getattr(self.scorer, "texts_only", False))

    @property
    def dual(self) -> bool:
        """Whether the scorer gives caption vectors (text-only items compare them:
        SugarCrepe++'s text-only task): a dual encoder's text tower or a text embedding."""
        s = self.scorer
        return self.texts_only or bool(s.embeds_images and not s.scores_items
                                       and not getattr(s, "scores_pairs", False))

    @staticmethod
    def _scoreable(items, skipped: dict, dual: bool = True,
                   texts_only: bool = False) -> Iterator[dict]:
        """Items with at least one negative (a matrix item: an image with a true and a
        false caption); one with none would count as right whatever the model did, so it is
        left out and counted; a text-only item needs caption vectors, and a text embedding
        model takes nothing else."""
        for item in items:
            if is_text_only(item) and not dual:
                why = "text-only task (needs a dual encoder's text tower)"
                skipped[why] = skipped.get(why, 0) + 1
                continue
            if texts_only and not is_text_only(item):
                why = "image-text task (a text embedding model sees no image)"
                skipped[why] = skipped.get(why, 0) + 1
                continue
            if is_matrix(item):
                truth = truth_of(item)
                if (truth.any(axis=1) & ~truth.all(axis=1)).any():
                    yield item
                    continue
            elif item.get("negatives"):
                yield item
                continue
            skipped["no negatives"] = skipped.get("no negatives", 0) + 1

    @staticmethod
    def _judge_matrix(item: dict, scores: np.ndarray, tally: Tally) -> dict:
        truth, every = truth_of(item), every_true(item)
        result = matrix_outcome(scores, truth, every)
        tally.add_matrix(result, matrix_chance(truth, every), item.get("breakdown"),
                         item.get("concept"))
        for name, (row, good, bad) in (item.get("side") or {}).items():
            tally.add_side(name, scores[row][good], scores[row][bad], good < bad,
                           item.get("concept"))
        return {"id": item["id"], "concept": item.get("concept"), "correct": result["text"],
                "correct_argmax": result["text_argmax"],
                "text": result["text"], "image": result["image"], "group": result["group"],
                "tie_credit": round(result["text_tie"], 6),
                "group_tie_credit": round(result["group_tie"], 6),
                "scores": [[round(float(v), 6) for v in row] for row in scores],
                "breakdown": item.get("breakdown")}

    def _judge(self, item: dict, scores: np.ndarray, tally: Tally) -> dict:
        if is_matrix(item):
            return self._judge_matrix(item, scores, tally)
        negs = item["negatives"]
        same = np.array([n.get("same_meaning", False) for n in negs], dtype=bool)
        result = outcome(scores, same)
        # a positive tied at the top with k negatives: no negative was preferred, so none
        # is "chosen" (the first of the tied would be an arbitrary pick)
        tied = 0 if result["strict"] or not result["tie_credit"] else (
            round(1.0 / result["tie_credit"]) - 1)
        chosen = negs[result["chosen"] - 1] if result["chosen"] and not tied else None
        # a scorer may leave candidates out (-inf: blind:choice shows 50 of a confusion
        # item's captions); chance counts the candidates it was shown
        shown = np.isfinite(scores)
        finite_negs = scores[1:][shown[1:]]
        graph = item.get("graph") or {}
        group = None
        if item["n"] == 2 and graph.get("relations"):
            group = graph["relations"][0][1]
        tally.add(result, int(shown.sum()), 1 + int((~same & shown[1:]).sum()),
                  item.get("paired", False), group,
                  TIED if tied else error_category(chosen), concept=item.get("concept"))
        ruled = result[TIES[tally.ties]]
        tally.breakdown(item.get("breakdown"), ruled, None, ruled, item.get("concept"),
                        1.0 / int(shown.sum()))
        matched = matched_negatives(item, getattr(self, "tasks", None))
        if matched is not None and matched.any() and matched.size + 1 == len(scores):
            keep = np.concatenate([[True], matched & shown[1:]])
            tally.add_matched(outcome(scores[keep]), int(keep.sum()), item.get("concept"))
        return {"id": item["id"], "concept": item.get("concept"), "correct": result["strict"],
                "correct_argmax": result["argmax"], "rank": result["rank"],
                "tie_credit": round(result["tie_credit"], 6),
                "correct_distinct_meaning": result["distinct"], "paired": item.get("paired"),
                "positive_score": round(float(scores[0]), 6),
                "best_negative_score": round(float(finite_negs.max()), 6) if len(finite_negs)
                else None,
                "chosen": chosen["caption"] if chosen else item["positive"],
                "tied_with": tied,
                "chosen_edit": chosen.get("edit") if chosen else None,
                "chosen_category": chosen.get("category") if chosen else None,
                "chosen_same_meaning": bool(chosen and chosen.get("same_meaning")),
                "relation": group}

    def close(self) -> None:
        self.workers.shutdown()
        if self.cache is not None:
            self.cache.close()


def write_json(path: Path, data: dict) -> None:
    from autocomp.core.records import write_text

    write_text(path, json.dumps(data, indent=1, sort_keys=True))

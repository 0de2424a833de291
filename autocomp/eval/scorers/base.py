"""The ways a scorer scores, as the harness knows them (`Scorer.scoring`).

  dual   encode_images / encode_texts give L2-normalised vectors; the harness scores a pair
         by their dot product (cosine similarity). Embeddings are cached by content.
  text   score_texts gives one number per caption, image unseen (blind baselines); cached
         per caption like a 1-d embedding.
  pair   score_pairs gives one number per (image, caption): a generative VLM's likelihood
         (vqascore, visualgpt); the harness fills whole image x caption matrices from it,
         cached per (image content, caption).
  item   score_item sees the item and its ground truth (reference scorers), or its image
         and captions (multiple-choice test takers: blind:choice, vlm); not cached.
Heavy models load on first use, never in __init__.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


class Scorer:
    scoring = "dual"
    family = ""
    embeds_images = False  # the harness encodes images and scores pairs by dot product
    scores_items = False  # the harness hands whole items (with truth) to score_items
    scores_pairs = False  # the harness asks one score per (image, caption) (PairScorer)
    light = False  # no weights and nothing to load: eval runs it beside the others (cells.py)

    default_batch_size = 64  # images or captions per forward pass; VLMs and LLMs use less
    image_side: int | None = None  # the model's input side, when it says (eval/images.py)

    def __init__(self, name: str, pretrained: str | None = None, device: str = "cpu",
                 batch_size: int | None = None):
        self.name, self.pretrained = name, pretrained
        self.device, self.batch_size = device, batch_size or self.default_batch_size

    @property
    def device(self) -> str:
        """The torch device; "auto" becomes cuda or cpu when first asked (by a scorer that
        loads a model: torch is imported then, never for one that needs none)."""
        if self._device in (None, "auto"):
            from autocomp.models.devices import resolve_device

            self._device = resolve_device(self._device)
        return self._device

    @device.setter
    def device(self, value: str | None) -> None:
        self._device = value

    def load(self) -> None:
        """Load the weights now (they load on first use otherwise): a model that cannot
        load fails here, before any of its cells runs (a served one: its server asked which
        model it serves, so an unreachable server is one line at once)."""
        self.served()
        loader = getattr(self, "_load", None)
        if loader is not None:
            loader()

    @property
    def spec(self) -> str:
        return f"{self.family}:{self.name}" + (f"@{self.pretrained}" if self.pretrained else "")

    @property
    def model_type(self) -> str:
        """How Table 6 groups the model (its error categories are averaged per type)."""
        return self.family

    @property
    def baseline(self) -> str | None:
        """"blind" (reads no image), "reference" (a check of the harness) or None (a model
        under test): the leaderboard pins baselines under the models and rank agreement
        leaves them out. A plugin scorer sets it (`baseline = "blind"`); a text scorer,
        which never sees the image, is blind."""
        if self.family in ("blind", "reference"):
            return self.family
        return "blind" if self.scoring == "text" else None

    @property
    def cache_id(self) -> str:
        """What the cached vectors depend on (the spec, plus a fingerprint of local weights;
        for a served model, the server and the model it says it serves: a second eval
        against another server, or a dead one, never reads the first one's scores)."""
        served = self.served()
        if served is None:
            return self.spec
        return f"{self.spec}~{served['base_url']}~{served['model']}"

    def served(self) -> dict | None:
        """For a scorer served over an OpenAI-compatible API (`backend` "openai"): the
        server's base URL and the id it reports for the model, asked once (an unreachable
        server is one error here, before any cached score is read); None otherwise."""
        if getattr(self, "backend", None) != "openai":
            return None
        if getattr(self, "_served_record", None) is None:
            from autocomp.models.chat import ChatClient

            self._served_record = ChatClient(self.model).describe()
        return self._served_record


PRECISIONS = {"fp32": None, "bf16": "bfloat16", "fp16": "float16"}


class DualEncoder(Scorer):
    scoring = "dual"
    embeds_images = True
    precision = "fp32"  # or bf16 / fp16: the forward passes under torch.autocast

    @property
    def cache_id(self) -> str:
        """Vectors computed under autocast differ from fp32 ones: cached apart."""
        base = self.weights_id
        return base if self.precision == "fp32" else f"{base}~{self.precision}"

    @property
    def weights_id(self) -> str:
        return self.spec

    def autocast(self):
        """A context for the forward passes: torch.autocast in `precision` (fp32: none)."""
        import contextlib

        dtype = PRECISIONS[self.precision]
        if dtype is None:
            return contextlib.nullcontext()
        import torch

        return torch.autocast(str(self.device).split(":")[0], dtype=getattr(torch, dtype))

    @property
    def model_type(self) -> str:
        """SigLIP (sigmoid loss) or CLIP (contrastive softmax), the two types of Table 6."""
        return "SigLIP" if "siglip" in self.spec.lower() else "CLIP"

    def caption_vectors(self, texts: Sequence[str]) -> np.ndarray:
        """What the harness caches per caption."""
        return self.encode_texts(texts)

    def encode_images(self, images: Sequence) -> np.ndarray:
        raise NotImplementedError

    def encode_texts(self, texts: Sequence[str]) -> np.ndarray:
        raise NotImplementedError


class TextScorer(Scorer):
    scoring = "text"

    def caption_vectors(self, texts: Sequence[str]) -> np.ndarray:
        return self.score_texts(texts)

    def score_texts(self, texts: Sequence[str]) -> np.ndarray:
        raise NotImplementedError


class PairScorer(Scorer):
    scoring = "pair"
    scores_pairs = True
    image_side = None

    def score_pairs(self, jobs: list[tuple]) -> list[np.ndarray]:
        """One score per caption for each (PIL image, captions) job, in order."""
        raise NotImplementedError


class ItemScorer(Scorer):
    scoring = "item"
    scores_items = True
    needs_image = False  # True: the harness opens each item's image (PIL RGB) and passes it

    def score_item(self, item: dict, candidates: list[dict], truth: dict) -> list[float]:
        """Scores for [positive, *negatives]; `candidates` carry each one's scene graph."""
        raise NotImplementedError

    def score_items(self, entries: list[tuple]) -> list[list[float]]:
        """Scores for a chunk of (item, candidates, truth, image or None) entries; a scorer
        that batches (a VLM) answers the chunk at once."""
        return [self.score_item(item, cands, truth) for item, cands, truth, _ in entries]


def normalise(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float32)
    return x / np.maximum(np.linalg.norm(x, axis=-1, keepdims=True), 1e-12)

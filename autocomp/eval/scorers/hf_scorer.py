"""`hf`: transformers dual encoders: CLIP, SigLIP, SigLIP2 (any hub id or local folder).

SigLIP towers were trained on text padded to 64 tokens: captions are padded to
max_length 64 (padding=True silently ruins SigLIP's accuracy). CLIP pools at the EOS token
under a causal mask, so padding to the longest caption of a batch gives the same vectors.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from autocomp.core.families import contract_example
from autocomp.eval.scorers.base import DualEncoder, normalise
from autocomp.models.hub import fingerprint

SIGLIP_TEXT_LENGTH = 64


@contract_example("hf:{tiny:clip}", "hf:{tiny:siglip}")
class HFScorer(DualEncoder):
    family = "hf"

    def __init__(self, name, pretrained=None, **kw):
        super().__init__(name, pretrained, **kw)
        self._parts = None

    @property
    def weights_id(self) -> str:
        return f"{self.spec}#{fingerprint(self.name)}"

    def _load(self):
        if self._parts is None:
            from autocomp.models.hub import load_dual_encoder

            self._parts = load_dual_encoder(self.name, self.device)
        return self._parts

    @property
    def siglip(self) -> bool:
        return self._load()[2].config.model_type.startswith("siglip")

    def encode_texts(self, texts: Sequence[str]) -> np.ndarray:
        import torch

        tok, _, model = self._load()
        if self.siglip:
            kw = {"padding": "max_length", "max_length": SIGLIP_TEXT_LENGTH, "truncation": True}
        else:
            kw = {"padding": True, "truncation": True}
            # a tokenizer saved without model_max_length would not cut at all: cut to the
            # positions the text tower has
            config = getattr(model.config, "text_config", model.config)
            limit = getattr(config, "max_position_embeddings", None)
            if limit and (tok.model_max_length or 10**9) > limit:
                kw["max_length"] = limit
        out = []
        for i in range(0, len(texts), self.batch_size):
            enc = tok(list(texts[i:i + self.batch_size]), return_tensors="pt", **kw)
            enc = {k: v.to(self.device) for k, v in enc.items()
                   if k in ("input_ids", "attention_mask") and not (
                       self.siglip and k == "attention_mask")}
            with torch.inference_mode(), self.autocast():
                feats = _tensor(model.get_text_features(**enc))
            out.append(feats.float().cpu().numpy())
        return normalise(np.concatenate(out))

    @property
    def image_side(self) -> int | None:
        """The vision tower's input side (config.vision_config.image_size)."""
        config = self._load()[2].config
        size = getattr(getattr(config, "vision_config", config), "image_size", None)
        return min(size) if isinstance(size, (tuple, list)) else size

    def encode_images(self, images: Sequence) -> np.ndarray:
        import torch

        _, proc, model = self._load()
        out = []
        for i in range(0, len(images), self.batch_size):
            enc = proc(images=list(images[i:i + self.batch_size]), return_tensors="pt")
            enc = {k: v.to(self.device) for k, v in enc.items()}
            with torch.inference_mode(), self.autocast():
                feats = _tensor(model.get_image_features(**enc))
            out.append(feats.float().cpu().numpy())
        return normalise(np.concatenate(out))


def _tensor(out):
    """transformers v5 returns an output object from get_*_features; v4 a tensor."""
    if hasattr(out, "pooler_output") and not hasattr(out, "shape"):
        return out.pooler_output
    return out

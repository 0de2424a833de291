"""QuickGELU: OpenAI's CLIP weights (and a few others: YFCC15M, LAION-400M quickgelu tags,
MetaCLIP, DFN) were trained with QuickGELU, x * sigmoid(1.702 x). open_clip's plain
architectures (`ViT-B-32`) use GELU, so `ViT-B-32@openai` or OpenAI's `ViT-B-32.pt` loaded
into `ViT-B-32` runs with another activation than the one trained, and SugarCrepe-style
numbers move by points with no error at all. autocomp detects such weights and builds the
architecture with QuickGELU, saying so in one line.

Detected: a pretrained tag that open_clip marks quick_gelu on an architecture that is not;
a local checkpoint file that is one of OpenAI's releases (its SHA-256 is in open_clip's
download URL) or a TorchScript archive (only OpenAI shipped CLIP that way). A `local-dir:`
or `hf-hub:` model carries its own config, which open_clip follows.
"""

from __future__ import annotations

import hashlib
import re
import zipfile
from functools import cache
from pathlib import Path

_SHA = re.compile(r"/([0-9a-f]{64})/")


def arch_has_quickgelu(name: str) -> bool:
    import open_clip

    if name.endswith("-quickgelu"):
        return True
    cfg = open_clip.get_model_config(name) or {}
    return bool(cfg.get("quick_gelu", False))


@cache
def openai_hashes() -> frozenset[str]:
    """SHA-256 of every checkpoint open_clip downloads from OpenAI (it is in the URL)."""
    from open_clip import pretrained

    out = set()
    for tags in pretrained._PRETRAINED.values():
        for cfg in tags.values():
            m = _SHA.search(cfg.get("url", "") or "")
            if m and "openaipublic" in cfg["url"]:
                out.add(m.group(1))
    return frozenset(out)


def file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 22), b""):
            h.update(block)
    return h.hexdigest()


def is_torchscript(path: Path) -> bool:
    try:
        with zipfile.ZipFile(path) as z:
            return any(n.endswith("constants.pkl") or "/code/" in n for n in z.namelist())
    except (OSError, zipfile.BadZipFile):
        return False


def trained_with_quickgelu(name: str, pretrained: str | None) -> str | None:
    """Why the weights need QuickGELU (a short phrase), or None."""
    import open_clip

    if not pretrained:
        return None
    path = Path(pretrained).expanduser()
    if path.is_file():
        if is_torchscript(path):
            return f"{path.name} is a TorchScript archive, OpenAI's CLIP release format"
        if file_sha256(path) in openai_hashes():
            return f"{path.name} is one of OpenAI's CLIP checkpoints (by its SHA-256)"
        return None
    if open_clip.get_pretrained_cfg(name, pretrained).get("quick_gelu", False):
        return f"open_clip's tag '{pretrained}' was trained with QuickGELU"
    return None


def quickgelu_fix(name: str, pretrained: str | None) -> str | None:
    """The one-line notice when `name@pretrained` must be built with QuickGELU; None when
    the architecture already matches the weights (or is not a plain open_clip name)."""
    if name.startswith(("hf-hub:", "local-dir:")) or arch_has_quickgelu(name):
        return None
    why = trained_with_quickgelu(name, pretrained)
    if why is None:
        return None
    return (f"open_clip:{name}@{pretrained}: {why}, but '{name}' uses GELU; building it with "
            f"QuickGELU, as '{name}-quickgelu' (write that name to silence this notice)")

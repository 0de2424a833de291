"""Loading weights through the libraries' own code, with one clear error when they are not
on this machine (offline clusters: download once, then point autocomp at the folder)."""

from __future__ import annotations

import re

from autocomp.core.backend import install_hint, require
from autocomp.core.errors import AutocompError, WeightsMissing


def not_available(spec: str, repo: str, how: str, exc: BaseException) -> AutocompError:
    """One line: what failed, and how to bring the weights to an offline machine (or, for a
    folder path that is not there, just that)."""
    from pathlib import Path

    if repo.startswith(("/", "./", "../", "~")) and not Path(repo).expanduser().exists():
        return WeightsMissing(f"model '{spec}' could not be loaded: no such folder {repo} "
                             f"(point {how} at a folder that exists)")
    text = " ".join(str(exc).split())
    first = text.split(". ")[0][:160] if text else type(exc).__name__
    return WeightsMissing(
        f"model '{spec}' could not be loaded ({type(exc).__name__}: {first}). If it is not on "
        f"this machine: where there is network run `hf download {repo} --local-dir DIR`, copy "
        f"DIR here and use {how}")


def _hf(ref: str, how: str, build):
    """`build(transformers)` with torch and transformers imported; a missing package or
    model is one line (`how` names the spec form that points at a folder)."""
    require("torch", "eval", "hf and blind:lm scorers")
    transformers = require("transformers", "eval", "hf and blind:lm scorers")
    try:
        return build(transformers)
    except ImportError as exc:
        raise missing_package(ref, exc, "eval") from None
    except (OSError, ValueError) as exc:
        raise not_available(ref, ref, how, exc) from None


_NEEDS = re.compile(r"requires the (\w+) library|No module named '([\w.]+)'")
PIP_NAMES = {"sentencepiece": "sentencepiece", "SentencePiece": "sentencepiece",
             "protobuf": "protobuf", "google": "protobuf", "timm": "timm"}


def missing_package(spec: str, exc: ImportError, extra: str) -> AutocompError:
    """A model whose loading code needs a package that is not installed (SigLIP v1's
    tokenizer needs sentencepiece): one line naming the package and the extra."""
    text = " ".join(str(exc).split())
    found = _NEEDS.search(text)
    name = (exc.name or (found and (found.group(1) or found.group(2))) or "").split(".")[0]
    if not name:
        return AutocompError(f"model '{spec}' needs a Python package that is not installed "
                             f"({text[:160]}): {install_hint(extra)}")
    package = PIP_NAMES.get(name, name)
    return AutocompError(f"model '{spec}' needs the Python package {package}, which is not "
                         f"installed: {install_hint(extra)} (or pip install {package})")


def load_dual_encoder(ref: str, device: str = "cpu"):
    """(tokenizer, image_processor, model) of a CLIP/SigLIP-style model, a hub id or folder."""
    def build(T):
        tok = T.AutoTokenizer.from_pretrained(ref)
        proc = T.AutoImageProcessor.from_pretrained(ref)
        return tok, proc, T.AutoModel.from_pretrained(ref).to(device).eval()
    return _hf(ref, "hf:DIR", build)


def load_scoring_lm(ref: str, device: str = "cpu"):
    """(tokenizer, causal LM) for log-likelihoods, a hub id or folder."""
    def build(T):
        tok = T.AutoTokenizer.from_pretrained(ref)
        return tok, T.AutoModelForCausalLM.from_pretrained(ref).to(device).eval()
    return _hf(ref, "blind:lm@DIR", build)


def fingerprint(path) -> str:
    """A cheap fingerprint of a local model folder: file names, sizes and mtimes."""
    import hashlib
    from pathlib import Path

    p = Path(path)
    if not p.exists():
        return ""
    files = [p] if p.is_file() else sorted(f for f in p.rglob("*") if f.is_file())
    h = hashlib.sha256()
    for f in files:
        st = f.stat()
        h.update(f"{f.relative_to(p) if p.is_dir() else f.name}:{st.st_size}:{st.st_mtime_ns}"
                 .encode())
    return h.hexdigest()[:12]

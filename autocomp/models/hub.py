"""Loading weights through the libraries' own code, with one clear error when they are not
on this machine (offline clusters: download once, then point autocomp at the folder)."""

from __future__ import annotations

from autocomp.core.errors import AutocompError


def not_available(spec: str, repo: str, how: str, exc: BaseException) -> AutocompError:
    """One line: what failed, and how to bring the weights to an offline machine."""
    text = " ".join(str(exc).split())
    first = text.split(". ")[0][:160] if text else type(exc).__name__
    return AutocompError(
        f"model '{spec}' could not be loaded ({type(exc).__name__}: {first}). If it is not on "
        f"this machine: where there is network run `hf download {repo} --local-dir DIR`, copy "
        f"DIR here and use {how}")


def hf_load(ref: str, kind: str, device: str = "cpu"):
    """(tokenizer, model) or (tokenizer, image_processor, model) from a hub id or a folder."""
    try:
        import torch  # noqa: F401
        import transformers
    except ImportError:
        raise AutocompError("hf and blind:lm scorers need torch and transformers: pip install "
                            "'autocomp[eval]'") from None
    how = "hf:DIR" if kind != "causal-lm" else "blind:lm@DIR"
    try:
        tok = transformers.AutoTokenizer.from_pretrained(ref)
        if kind == "causal-lm":
            model = transformers.AutoModelForCausalLM.from_pretrained(ref)
            return tok, model.to(device).eval()
        proc = transformers.AutoImageProcessor.from_pretrained(ref)
        model = transformers.AutoModel.from_pretrained(ref)
        return tok, proc, model.to(device).eval()
    except (OSError, ValueError) as exc:
        raise not_available(ref, ref, how, exc) from None


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

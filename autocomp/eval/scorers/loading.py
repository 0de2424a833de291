"""Loading weights through the libraries' own code, with one clear error when they are not
on this machine (offline clusters: download once, then point autocomp at the folder)."""

from __future__ import annotations

from pathlib import Path

from autocomp.errors import AutocompError

OFFLINE_HINT = ("download it where there is network (`hf download {id} --local-dir DIR`, or "
                "let the library fill HF_HOME) and copy it here, then use the folder: {how}")


def not_available(spec: str, how: str, exc: BaseException) -> AutocompError:
    first = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else type(exc).__name__
    return AutocompError(f"model '{spec}' could not be loaded ({type(exc).__name__}: {first}); "
                         "if it is not on this machine, " +
                         OFFLINE_HINT.format(id=spec.split(":", 1)[-1].split("@")[0], how=how))


def hf_load(ref: str, kind: str, device: str = "cpu"):
    """(tokenizer, model) or (tokenizer, image_processor, model) from a hub id or a folder."""
    try:
        import torch  # noqa: F401
        import transformers
    except ImportError:
        raise AutocompError("hf and blind:lm scorers need torch and transformers: pip install "
                            "'autocomp[eval]'") from None
    how = f"hf:{Path('DIR').as_posix()}" if kind != "causal-lm" else "blind:lm@DIR"
    try:
        tok = transformers.AutoTokenizer.from_pretrained(ref)
        if kind == "causal-lm":
            model = transformers.AutoModelForCausalLM.from_pretrained(ref)
            return tok, model.to(device).eval()
        proc = transformers.AutoImageProcessor.from_pretrained(ref)
        model = transformers.AutoModel.from_pretrained(ref)
        return tok, proc, model.to(device).eval()
    except (OSError, ValueError) as exc:
        raise not_available(ref, how, exc) from None

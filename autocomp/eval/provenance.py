"""What a leaderboard needs to trust a result beyond its scores (eval writes it into every
result; `autocomp results check` asks for it):

  weights          {"source": the spec, "revision": the hub commit the weights came from
                   (transformers records it) or None, "digest": sha256 of the loaded
                   parameters (names, dtypes, shapes and bytes, in order), "parameters"}; a
                   scorer with no weights (reference, blind rules): {"source", "kind":
                   "rule"}; one served by an API: {"source", "kind": "served", "base_url",
                   "served_model": the id the server reports} (its weights unknown)
  seed             the scorer's seed (reference:random@SEED), else None
  prompt_template  what the model is asked ({caption} and {options} stand for the item's
                   text): a VLM's prompt, VQAScore's question and answer, "{caption}" for a
                   dual encoder; None for a rule
  hardware         the device, its name (a GPU's), python, torch where loaded, platform
  plugins          every plugin registered when it was scored (core/plugins.recorded:
                   family, name, target, distribution and version, source sha256)

The digest is taken once per scorer, after it scored (its weights are loaded then).
"""

from __future__ import annotations

import contextlib
import platform
import sys


def provenance(scorer) -> dict:
    """The fields above for a scorer that has scored."""
    from autocomp.core.plugins import recorded

    return {"weights": weights_of(scorer), "seed": getattr(scorer, "seed", None),
            "prompt_template": template_of(scorer), "hardware": hardware(scorer),
            "plugins": recorded()}


def _modules(scorer) -> list:
    """The torch modules a scorer holds (one attribute deep, tuples and lists opened)."""
    if "torch" not in sys.modules:
        return []
    import torch

    out, seen = [], set()
    for value in vars(scorer).values():
        for v in value if isinstance(value, (tuple, list)) else (value,):
            if isinstance(v, torch.nn.Module) and id(v) not in seen:
                seen.add(id(v))
                out.append(v)
    return out


def weights_of(scorer) -> dict:
    cached = getattr(scorer, "_weights_record", None)
    if cached is not None:
        return cached
    spec = getattr(scorer, "spec", None) or str(scorer)
    modules = _modules(scorer)
    if modules:
        record = {"source": spec, "revision": _revision(modules), **digest(modules)}
    elif getattr(scorer, "backend", None) in ("openai", "vllm") and not modules:
        served = scorer.served() if hasattr(scorer, "served") else None
        record = {"source": spec, "kind": "served",
                  **({"base_url": served["base_url"], "served_model": served["model"]}
                     if served else {})}
    else:
        record = {"source": spec, "kind": "rule"}
    with contextlib.suppress(AttributeError):  # __slots__: computed again next time
        scorer._weights_record = record
    return record


def digest(modules) -> dict:
    """sha256 of every parameter and buffer of `modules` (names, dtypes, shapes, bytes)."""
    import hashlib

    import torch

    h, count = hashlib.sha256(), 0
    for k, module in enumerate(modules):
        for name, t in module.state_dict().items():
            t = t.detach()
            h.update(f"{k}:{name}:{t.dtype}:{tuple(t.shape)}\n".encode())
            h.update(t.cpu().contiguous().reshape(-1).view(torch.uint8).numpy().tobytes())
            count += t.numel()
    return {"digest": h.hexdigest(), "parameters": count}


def _revision(modules) -> str | None:
    for m in modules:
        commit = getattr(getattr(m, "config", None), "_commit_hash", None)
        if commit:
            return str(commit)
    return None


def template_of(scorer) -> str | None:
    if hasattr(scorer, "row"):  # a likelihood scorer: its (prompt, answer) rows
        prompt, answer = scorer.row("{caption}")
        return f"{prompt} -> {answer}"
    if getattr(scorer, "prompt_template", None):
        return scorer.prompt_template
    if hasattr(scorer, "encode_texts"):
        return "{caption}"
    return None


def hardware(scorer) -> dict:
    device = str(getattr(scorer, "_device", None) or "cpu") if _modules(scorer) else "cpu"
    out = {"device": device, "python": platform.python_version(),
           "platform": platform.platform(terse=True)}
    if "torch" in sys.modules:
        import torch

        out["torch"] = torch.__version__
        if device.startswith("cuda") and torch.cuda.is_available():
            out["device_name"] = torch.cuda.get_device_name(torch.device(device))
    return out

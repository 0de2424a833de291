"""Scorers, resolved lazily from a model spec "family:name[@pretrained]".

  open_clip:ViT-B-32@laion2b_s34b_b79k   open_clip:hf-hub:timm/ViT-B-16-SigLIP
  open_clip:local-dir:/weights/my-clip    hf:google/siglip-base-patch16-224   hf:/weights/clip
  reference:oracle   reference:bag-of-concepts   reference:random[@seed]
  blind:unigram      blind:lm@gpt2            blind:lm@/weights/my-lm
  blind:choice@google/gemma-3-12b-it           blind:choice@openai:MODEL
  vlm:google/gemma-3-12b-it   vlm:/weights/qwen2.5-vl   vlm:openai:MODEL
  vlm:google/gemma-3-12b-it@circular                    (every rotation of the options)
  vqascore:google/gemma-3-12b-it   vqascore:openai:MODEL   visualgpt:/weights/qwen2.5-vl
"""

from __future__ import annotations

from autocomp.core import registry
from autocomp.core.errors import AutocompError


def parse_spec(spec: str) -> tuple[str, str, str | None]:
    """"family:name@pretrained" -> (family, name, pretrained or None)."""
    family, sep, rest = spec.partition(":")
    if not sep or not rest:
        raise AutocompError(f"model '{spec}' is not FAMILY:NAME[@PRETRAINED] (families: "
                            f"{', '.join(registry.names('scorer'))}; "
                            "e.g. open_clip:ViT-B-32@laion2b_s34b_b79k)")
    name, at, pretrained = rest.rpartition("@") if "@" in rest else (rest, "", "")
    return family, name, (pretrained or None) if at else None


def load_scorer(spec: str, device: str = "cpu", batch_size: int | None = None,
                precision: str = "fp32"):
    """The scorer of `spec`; `precision` (fp32, bf16, fp16) applies to dual encoders, whose
    forward passes then run under torch.autocast (other kinds run as they are)."""
    family, name, pretrained = parse_spec(spec)
    if family not in registry.names("scorer"):
        raise AutocompError(f"unknown model family '{family}' in '{spec}' (known: "
                            f"{', '.join(registry.names('scorer'))})")
    from autocomp.eval.scorers.base import PRECISIONS, DualEncoder

    if precision not in PRECISIONS:
        raise AutocompError(f"unknown precision '{precision}' (known: {', '.join(PRECISIONS)})")
    from autocomp.core.plugins import made, plugin_code
    from autocomp.eval.scorers.contract import checked_at_load

    factory = registry.resolve("scorer", family)
    with plugin_code("scorer", family, f"loading '{spec}'"):
        scorer = made("scorer", family, factory(name, pretrained, device=device,
                                                batch_size=batch_size))
    if isinstance(scorer, DualEncoder):
        scorer.precision = precision
    checked_at_load(scorer, family, spec)  # a plugin's scorer: its contract, before scoring
    return scorer

"""Loading chat LLMs and VLMs through transformers, with clear errors."""

from __future__ import annotations

from autocomp.core.backend import require
from autocomp.core.errors import AutocompError


def torch_dtype(name: str, device: str):
    """"auto" -> bfloat16 on a GPU, float32 on CPU; a torch dtype's name -> that dtype."""
    import torch

    if name == "auto":
        return torch.bfloat16 if str(device).startswith("cuda") else torch.float32
    return getattr(torch, name)


def dtype_name(dtype) -> str:
    """torch.bfloat16 -> "bfloat16"."""
    return str(dtype).replace("torch.", "")


def loaded_dtype(model, asked, what: str) -> str:
    """The dtype `model`'s weights actually have (the records carry this one, never the one
    asked for); a one-line warning when the library ignored the request (diffusers before
    0.40 and transformers before 4.56 ignore `dtype=` and load fp32)."""
    import warnings

    got = getattr(model, "dtype", None)
    if got is None:
        got = next(iter(model.parameters())).dtype
    if got != asked:
        warnings.warn(f"{what} loaded in {dtype_name(got)}, not the {dtype_name(asked)} asked "
                      "for (an old diffusers or transformers ignores dtype=: pip install -U "
                      "'autocomp[gen]')", stacklevel=2)
    return dtype_name(got)


def transformers_module():
    """transformers (with torch), or one line naming the extra that installs them."""
    require("torch", "gen")
    return require("transformers", "gen")


def check_config(ref: str, trust_remote_code: bool, how: str = "options.model: DIR") -> None:
    """Read the model's config first: a missing model or one that needs remote code fails
    here, in one line, before any weights are read."""
    from autocomp.models.hub import not_available

    T = transformers_module()
    try:
        T.AutoConfig.from_pretrained(ref, trust_remote_code=bool(trust_remote_code))
    except (OSError, ValueError) as exc:
        raise _remote_code_error(ref, exc) or not_available(
            ref, ref, how, exc) from None


def _remote_code_error(ref: str, exc: BaseException) -> AutocompError | None:
    text = str(exc)
    if "trust_remote_code" in text or "custom code" in text:
        return AutocompError(f"model '{ref}' needs its own remote code, which autocomp does not "
                             "run unless asked: read that code, then set the backend option "
                             "trust_remote_code: true")
    return None


def device_map(device: str) -> str:
    """from_pretrained's device_map for one device: the weights are read from their files
    onto it, never held whole in host memory first (8 ranks of a 12B model would need
    ~200 GB of a node's RAM at once). The device as it is ("cuda": this rank's current
    one)."""
    return str(device)


def _load_pair(ref: str, device: str, dtype: str, trust_remote_code: bool, front: str,
               model_class: str, how: str = "options.model: DIR"):
    """(front, model) through the Auto classes: config checked first, errors in one line."""
    from autocomp.models.hub import missing_package, not_available

    T = transformers_module()
    check_config(ref, trust_remote_code, how)
    asked = torch_dtype(dtype, device)
    try:
        first = getattr(T, front).from_pretrained(ref, trust_remote_code=trust_remote_code)
        model = getattr(T, model_class).from_pretrained(  # straight onto the device: no
            ref, dtype=asked, trust_remote_code=trust_remote_code,  # host copy of the weights
            device_map=device_map(device))
    except ImportError as exc:
        raise missing_package(ref, exc, "gen") from None
    except (OSError, ValueError) as exc:
        raise _remote_code_error(ref, exc) or not_available(
            ref, ref, how, exc) from None
    loaded_dtype(model, asked, f"model '{ref}'")
    return first, model.eval()


def load_causal_lm(ref: str, device: str, dtype: str = "auto", trust_remote_code=False,
                   how: str = "options.model: DIR"):
    """(tokenizer with left padding, model in eval mode on `device`); `how` names the
    option that points at a folder, for the offline hint."""
    tok, model = _load_pair(ref, device, dtype, trust_remote_code, "AutoTokenizer",
                            "AutoModelForCausalLM", how)
    tok.padding_side = "left"
    if tok.pad_token is None:
        tok.pad_token = tok.eos_token
    return tok, model


def load_vlm(ref: str, device: str, dtype: str = "auto", trust_remote_code=False):
    """(processor, image-text-to-text model in eval mode on `device`)."""
    proc, model = _load_pair(ref, device, dtype, trust_remote_code, "AutoProcessor",
                             "AutoModelForImageTextToText")
    tokenizer = getattr(proc, "tokenizer", None)
    if tokenizer is not None:
        tokenizer.padding_side = "left"
    return proc, model


def load_processor(ref: str, trust_remote_code=False):
    """The model's processor alone (its chat template and tokenizer): what a serving engine
    that loads the weights itself needs from transformers."""
    from autocomp.models.hub import not_available

    T = transformers_module()
    check_config(ref, trust_remote_code)
    try:
        return T.AutoProcessor.from_pretrained(ref, trust_remote_code=trust_remote_code)
    except (OSError, ValueError) as exc:
        raise not_available(ref, ref, "options.model: DIR", exc) from None


def chat_padding(proc) -> dict:
    """Batch padding for apply_chat_template: transformers 5 takes the processor's own
    arguments in `processor_kwargs`, 4.x as keywords."""
    import inspect

    if "processor_kwargs" in inspect.signature(proc.apply_chat_template).parameters:
        return {"processor_kwargs": {"padding": True}}
    return {"padding": True}

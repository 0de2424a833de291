"""Weights of every model a run config names, checked before the first stage: on an
offline machine (HF_HUB_OFFLINE or TRANSFORMERS_OFFLINE set, as the SLURM script sets it)
a model that is neither a folder here nor in the Hugging Face cache would stop its stage
hours in, after the stages before it ran (on a CPU, sampling configs/autocomp-cp.yaml's
concepts took 97 s before the missing Gemma weights were found). One line per missing
model, naming the config field and the command that fetches it; exit 81 (weights missing:
the job script does not requeue). With the hub reachable nothing is checked: the libraries
download what is missing."""

from __future__ import annotations

import os
from pathlib import Path

from autocomp.core.errors import WeightsMissing
from autocomp.core.registry import resolve
from autocomp.planning.memory import gpu_cost

MODEL_KEYS = ("model", "detector_model", "segmenter_model")
# (stage, registry family, the config field naming the backend, the field of its options)
_BACKENDS = (("captions", "writer", "captions.writer", "captions.options"),
             ("images", "generator", "generate.generator", "generate.options"),
             ("validation", "detector", "validate.detector", "validate.detector_options"),
             ("validation", "answerer", "validate.answerer", "validate.answerer_options"))


def _at(cfg, where: str):
    section, name = where.split(".")
    return getattr(getattr(cfg, section), name)


def offline() -> bool:
    return any(os.environ.get(k, "").strip().lower() in ("1", "true", "yes", "on")
               for k in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"))


def configured(cfg, stages=None) -> list[tuple[str, str, str | None]]:
    """(config field, model reference, revision) of every model the run's backends load
    in `stages` (default: every stage)."""
    out = []
    for stage, family, where, field in _BACKENDS:
        spec = _at(cfg, where)
        if gpu_cost(family, spec) in ("none", "served") or (stages is not None
                                                            and stage not in stages):
            continue
        options = {**resolve(family, spec.name).defaults(), **spec.options}
        for key in MODEL_KEYS:
            if options.get(key):
                out.append((f"{field}.{key}", str(options[key]), options.get("revision")))
    return out


def missing_packages(cfg, stages=None) -> list[str]:
    """One line per backend of `stages` (default: every stage) whose extra is not
    installed here: "captions.writer 'vllm' needs vllm: pip install 'autocomp[vllm]'"."""
    from autocomp.core.backend import install_hint, missing_extra

    out = []
    for stage, family, where, _ in _BACKENDS:
        backend = _at(cfg, where)
        if gpu_cost(family, backend) == "none" or (stages is not None and stage not in stages):
            continue
        extra = getattr(resolve(family, backend.name), "extra", "")
        missing = missing_extra(extra) if extra else []
        if missing:
            out.append(f"{where} '{backend.name}' needs {', '.join(missing)}: "
                       f"{install_hint(extra)}")
    return out


def cached(ref: str, revision: str | None = None) -> bool:
    """Whether `ref` is a folder here or a repository in the Hugging Face cache (nothing
    is downloaded)."""
    if Path(ref).expanduser().is_dir():
        return True
    if ref.startswith(("/", "./", "../", "~")):
        return False
    try:
        from huggingface_hub import snapshot_download

        snapshot_download(ref, revision=revision, local_files_only=True)
        return True
    except Exception:  # noqa: BLE001 (not cached, a bad id, no huggingface_hub: not here)
        return False


def check(cfg, stages=None, file=None) -> None:
    """Refuse (WeightsMissing) when an offline machine lacks a model of `stages` (default:
    every stage)."""
    if not offline():
        return
    lines, seen = [], set()
    for field, ref, revision in configured(cfg, stages):
        if ref in seen or cached(ref, revision):
            seen.add(ref)
            continue
        seen.add(ref)
        fetch = (f"point {field} at a folder that exists" if ref.startswith(("/", ".", "~"))
                 else f"where there is network run `hf download {ref}` (into the cache this "
                      f"machine reads, $HF_HOME), or copy its folder here and set {field}")
        lines.append(f"{field}: model '{ref}' is not on this machine (offline: "
                     f"HF_HUB_OFFLINE=1): {fetch}")
    if lines:
        raise WeightsMissing(f"{len(lines)} model(s) missing before the first stage:\n"
                             + "\n".join(lines), file=file)

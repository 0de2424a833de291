"""Lazy registries: a backend name -> "module:Class"; the module is imported only when chosen."""

from __future__ import annotations

import importlib

from autocomp.errors import AutocompError

GENERATORS = {"procedural": "autocomp.synth.procedural:ProceduralGenerator",
              "diffusers": "autocomp.synth.diffusers_gen:DiffusersGenerator"}
WRITERS = {"template": "autocomp.captions.template:TemplateWriter",
           "transformers": "autocomp.captions.llm:TransformersWriter",
           "openai": "autocomp.captions.openai_writer:OpenAIWriter"}
DETECTORS = {"color-blobs": "autocomp.validators.blobs:ColorBlobDetector",
             "grounding-dino+sam2": "autocomp.validators.grounded_sam:GroundedSam2Detector"}
ANSWERERS = {"pixels": "autocomp.validators.pixels:PixelAnswerer",
             "transformers": "autocomp.validators.vqa:TransformersAnswerer",
             "openai": "autocomp.validators.vqa:OpenAIAnswerer"}

FAMILIES = {"generator": GENERATORS, "writer": WRITERS, "detector": DETECTORS,
            "answerer": ANSWERERS}


def resolve(family: str, name: str, *, file=None, field: str | None = None) -> type:
    """The class registered as `name` in `family`; a clear error lists the known names."""
    table = FAMILIES[family]
    if name not in table:
        raise AutocompError(f"unknown {family} '{name}' (known: {', '.join(sorted(table))})",
                            file=file, field=field)
    module, attr = table[name].split(":")
    return getattr(importlib.import_module(module), attr)


def check_options(options: dict, allowed: dict[str, type | tuple], *, file=None,
                  field: str = "options") -> dict:
    """Check a backend's options against `allowed` (name -> type); returns a copy."""
    if not isinstance(options, dict):
        raise AutocompError(f"expected a mapping, got {options!r}", file=file, field=field)
    out = {}
    for key, value in options.items():
        if key not in allowed:
            raise AutocompError(f"unknown option '{key}' (known: {', '.join(sorted(allowed))})",
                                file=file, field=f"{field}.{key}")
        kind = allowed[key]
        ok = isinstance(value, kind) and not (isinstance(value, bool) and bool not in (
            kind if isinstance(kind, tuple) else (kind,)))
        if not ok:
            names = "/".join(k.__name__ for k in (kind if isinstance(kind, tuple) else (kind,)))
            raise AutocompError(f"expected {names}, got {value!r}", file=file,
                                field=f"{field}.{key}")
        out[key] = value
    return out


def instantiate(family: str, backend, device: str = "auto"):
    """A backend of the run config (name + options), bound to this rank's device."""
    obj = resolve(family, backend.name)(**backend.options)
    if hasattr(obj, "bind_device"):
        obj.bind_device(device)
    return obj

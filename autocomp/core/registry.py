"""The one registry: for every plugin family, a lazy table name -> "module:attribute"; the
module is imported only when the name is chosen. CLI choices and help lists come from it.

Families: stage (ordered: the pipeline runs them in this order), generator, writer,
detector, answerer, check (ordered: the validation cascade), scorer, format.
A plugin outside the package registers itself with `register(family, name, "mod:Class")`
in a module named in $AUTOCOMP_PLUGINS (comma-separated module names, imported the first
time the registry is read; docs/extending.md has worked examples).
"""

from __future__ import annotations

import importlib
import os

from autocomp.core.errors import AutocompError

PLUGINS_ENV = "AUTOCOMP_PLUGINS"
_plugins_loaded = False

FAMILIES: dict[str, dict[str, str]] = {
    "stage": {
        "concepts": "autocomp.concepts.stage:ConceptStage",
        "captions": "autocomp.captions.stage:CaptionStage",
        "images": "autocomp.synth.stage:ImageStage",
        "validation": "autocomp.validators.stage:ValidateStage",
        "build": "autocomp.bench.build:BuildStage",
    },
    "generator": {
        "procedural": "autocomp.synth.procedural:ProceduralGenerator",
        "diffusers": "autocomp.synth.diffusers_gen:DiffusersGenerator",
    },
    "writer": {
        "template": "autocomp.captions.template:TemplateWriter",
        "transformers": "autocomp.captions.llm:TransformersWriter",
        "openai": "autocomp.captions.openai_writer:OpenAIWriter",
    },
    "detector": {
        "color-blobs": "autocomp.validators.blobs:ColorBlobDetector",
        "grounding-dino+sam2": "autocomp.validators.grounded_sam:GroundedSam2Detector",
    },
    "answerer": {
        "pixels": "autocomp.validators.pixels:PixelAnswerer",
        "transformers": "autocomp.validators.vqa:TransformersAnswerer",
        "openai": "autocomp.validators.vqa:OpenAIAnswerer",
    },
    "check": {  # the validation cascade, in order
        "objects": "autocomp.validators.checks:ObjectsCheck",
        "background": "autocomp.validators.checks:BackgroundCheck",
        "attributes": "autocomp.validators.checks:AttributesCheck",
    },
    "scorer": {
        "open_clip": "autocomp.eval.scorers.openclip_scorer:OpenClipScorer",
        "hf": "autocomp.eval.scorers.hf_scorer:HFScorer",
        "reference": "autocomp.eval.scorers.reference:make_reference",
        "blind": "autocomp.eval.scorers.blind:make_blind",
        "vlm": "autocomp.eval.scorers.vlm:VLMChoice",
    },
    "format": {
        "run": "autocomp.formats.runs:open_run",
        "sugarcrepe": "autocomp.formats.sugarcrepe:open_sugarcrepe",
        "crepe": "autocomp.formats.crepe:open_crepe",
        "columns": "autocomp.formats.columns:open_columns",
        "autocomp-hf": "autocomp.formats.autocomp_hf:open_autocomp_hf",
        "autocomp-export": "autocomp.formats.published:open_published",
        "winoground": "autocomp.formats.pairs:open_winoground",
        "colorswap": "autocomp.formats.pairs:open_colorswap",
        "aro": "autocomp.formats.aro:open_aro",
    },
}


def load_plugins() -> None:
    """Import the modules named in $AUTOCOMP_PLUGINS (once); each registers its plugins."""
    global _plugins_loaded
    if _plugins_loaded:
        return
    _plugins_loaded = True
    for module in filter(None, (m.strip() for m in os.environ.get(PLUGINS_ENV, "").split(","))):
        try:
            importlib.import_module(module)
        except ImportError as exc:
            raise AutocompError(f"${PLUGINS_ENV}: cannot import plugin module '{module}' "
                                f"({exc})") from None


def names(family: str) -> tuple[str, ...]:
    """The registered names of `family`, in registration order."""
    load_plugins()
    return tuple(FAMILIES[family])


def register(family: str, name: str, target: str) -> None:
    """Add (or replace) `name` in `family`; target is "module:attribute"."""
    if family not in FAMILIES:
        raise AutocompError(f"unknown plugin family '{family}' (known: "
                            f"{', '.join(FAMILIES)})")
    if ":" not in target:
        raise AutocompError(f"a plugin target is 'module:attribute', got {target!r}")
    FAMILIES[family][name] = target


def resolve(family: str, name: str, *, file=None, field: str | None = None):
    """What is registered as `name` in `family`; a clear error lists the known names."""
    load_plugins()
    table = FAMILIES[family]
    if name not in table:
        raise AutocompError(f"unknown {family} '{name}' (known: {', '.join(sorted(table))})",
                            file=file, field=field)
    module, attr = table[name].split(":")
    return getattr(importlib.import_module(module), attr)


def stage_names() -> tuple[str, ...]:
    return names("stage")


def make_stage(name: str, run, device: str = "cpu", **options):
    """The stage `name` of `run`, built by its registered class."""
    return resolve("stage", name)(run, device, **options)


def instantiate(family: str, backend, device: str = "auto"):
    """A backend of the run config (name + options), bound to this rank's device."""
    obj = resolve(family, backend.name)(**backend.options)
    if hasattr(obj, "bind_device"):
        obj.bind_device(device)
    return obj

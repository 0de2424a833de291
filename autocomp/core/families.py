"""The registry's built-in tables (core/registry.py has the mechanics): per plugin family,
name -> "module:attribute" of each built-in entry, the families whose order means
something, and what an entry of each family must be (FAMILY_SHAPES)."""

from __future__ import annotations

from dataclasses import dataclass

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
        "vllm": "autocomp.captions.vllm_writer:VLLMWriter",
    },
    "detector": {
        "color-blobs": "autocomp.validators.blobs:ColorBlobDetector",
        "grounding-dino+sam2": "autocomp.validators.grounded_sam:GroundedSam2Detector",
    },
    "answerer": {
        "pixels": "autocomp.validators.pixels:PixelAnswerer",
        "transformers": "autocomp.validators.vqa:TransformersAnswerer",
        "openai": "autocomp.validators.vqa:OpenAIAnswerer",
        "vllm": "autocomp.validators.vqa_vllm:VLLMAnswerer",
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
        "vqascore": "autocomp.eval.scorers.likelihood:VQAScore",
        "visualgpt": "autocomp.eval.scorers.likelihood:VisualGPTScore",
        "text": "autocomp.eval.scorers.text_embed:TextEmbedding",
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
        "vl-checklist": "autocomp.formats.vlchecklist:open_vlchecklist",
        "valse": "autocomp.formats.valse:open_valse",
        "sugarcrepe++": "autocomp.formats.sugarcrepe_pp:open_sugarcrepe_pp",
    },
    "kind": {  # how values are drawn: an entry field (attributes) or a geometry (relations)
        "rgb": "autocomp.kinds.color:Color",
        "scale": "autocomp.kinds.scale:Scale",
        "pattern": "autocomp.kinds.pattern:Pattern",
        "material": "autocomp.kinds.material:Material",
        "count": "autocomp.kinds.count:Count",
        "spatial": "autocomp.kinds.spatial:Spatial",
        "relative_size": "autocomp.kinds.relative_size:RelativeSize",
        "depth": "autocomp.kinds.depth:Depth",
    },
    "metric": {  # what `autocomp t2i` scores each image with: a column of Table 16 each
        "clipscore": "autocomp.t2i.metrics:ClipScore",
        "tifa": "autocomp.t2i.metrics:Tifa",
        "dsg": "autocomp.t2i.metrics:Dsg",
        "soft_tifa_am": "autocomp.t2i.metrics:SoftTifaAm",
        "soft_tifa_gm": "autocomp.t2i.metrics:SoftTifaGm",
        "geneval": "autocomp.t2i.metrics:GenEvalChecks",
        "geneval_all": "autocomp.t2i.metrics:GenEvalAll",
        "vqascore": "autocomp.t2i.metrics:VqaScore",
        "survived": "autocomp.t2i.metrics:Survived",
    },
    "adapter": {  # the harness files an export carries (harness/ in the export)
        "clip_benchmark": "autocomp.publish.adapters.for_clip_benchmark:write",
        "mteb": "autocomp.publish.adapters.for_mteb:write",
        "lmms_eval": "autocomp.publish.adapters.for_lmms_eval:write",
        "vlmevalkit": "autocomp.publish.adapters.for_vlmevalkit:write",
    },
}
ORDERED = ("stage", "check", "metric")  # families whose order means something


@dataclass(frozen=True)
class Shape:
    """What an entry of a family must be: a subclass of `base` with `methods`, or (base
    None) a callable accepting `arguments` positionally."""

    base: str | None = None  # "module:Class"
    methods: tuple[str, ...] = ()
    arguments: tuple[str, ...] = ()
    factory: bool = False  # a class (subclass of base) or a function returning one


FAMILY_SHAPES: dict[str, Shape] = {
    "stage": Shape("autocomp.runtime.stage:Stage"),
    "generator": Shape("autocomp.core.backend:Backend", ("generate",)),
    "writer": Shape("autocomp.core.backend:Backend", ("write",)),
    "detector": Shape("autocomp.core.backend:Backend", ("detect",)),
    "answerer": Shape("autocomp.core.backend:Backend", ("answer",)),
    "check": Shape("autocomp.validators.checks:Check", ("check",)),
    "scorer": Shape("autocomp.eval.scorers.base:Scorer", arguments=("name", "pretrained"),
                    factory=True),
    "format": Shape(arguments=("source", "images", "columns", "skip_missing")),
    "kind": Shape("autocomp.kinds.base:Kind"),
    "metric": Shape("autocomp.t2i.metrics:Metric", ("score",)),
    "adapter": Shape(arguments=("folder", "manifest", "dataset_path")),
}

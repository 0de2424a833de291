"""Each plugin family as one object (`FAMILY`: core/registry.py has the mechanics,
core/plugins.py the first-use entry every call site goes through): its table of built-in
entries (name -> "module:attribute"), whether their order means something, what an entry
must be (its Form: the class or call it must be), where its behaviour contract is and
when it runs, and its caches (which names passed their form and contract checks, and what
else forgets an entry when it is unregistered)."""

from __future__ import annotations

from dataclasses import dataclass, field

_TABLES: dict[str, dict[str, str]] = {
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


def required(method):
    """Marks a base class's method that every entry must define itself (the base's only
    raises NotImplementedError): an entry without its own is refused by its form."""
    method.__required__ = True
    return method


def contract_example(*specs, **options):
    """Declares, beside a built-in entry, what the suite holds it to its family's contract
    on (tests/test_contracts.py, for every registered name; an entry without one fails
    there): the options a backend is built with ("{tiny:NAME}" stands for a tiny random
    model of the suite, "{openai}" for its stand-in chat server), the specs a scorer is
    loaded from, or the suite's fixture that writes a file in a format's layout."""
    def mark(target):
        target.contract_example = specs or options
        return target
    return mark


@dataclass(frozen=True)
class Form:
    """What an entry of a family must be: a subclass of `base` with `methods` (and its own
    of every method the base marks `required`), or (base None) a callable accepting
    `arguments` positionally."""

    base: str | None = None  # "module:Class"
    methods: tuple[str, ...] = ()
    arguments: tuple[str, ...] = ()
    factory: bool = False  # a class (subclass of base) or a function returning one
    makes: str | None = None  # a factory's (or opener's) product: "module:Class"


@dataclass(frozen=True)
class Family:
    """One plugin family."""

    entries: dict[str, str]
    form: Form
    contract: str  # where its behaviour contract is (autocomp/contracts.py gathers them)
    when: str  # when it runs on a plugin's entry (built-ins: the suite, on every name)
    ordered: bool = False  # the order of its entries means something
    forget: tuple[str, ...] = ()  # "module:function(name)"s that drop an entry's caches
    checked: set = field(default_factory=set)  # names whose form passed (this process)
    passed: set = field(default_factory=set)  # (name, key) of plugins that kept it


_BACKEND = "autocomp.core.backend:Backend"
FAMILY: dict[str, Family] = {
    "stage": Family(_TABLES["stage"], Form("autocomp.runtime.stage:Stage"),
                    "none: a stage is the pipeline's own", "-", ordered=True),
    "generator": Family(_TABLES["generator"], Form(_BACKEND, ("generate",)),
                        "tests/test_contracts.py", "the suite (backends)"),
    "writer": Family(_TABLES["writer"], Form(_BACKEND, ("write",)),
                     "tests/test_contracts.py", "the suite (backends)"),
    "detector": Family(_TABLES["detector"], Form(_BACKEND, ("detect",)),
                       "tests/test_contracts.py", "the suite (backends)"),
    "answerer": Family(_TABLES["answerer"], Form(_BACKEND, ("answer",)),
                       "tests/test_contracts.py", "the suite (backends); soft answers on "
                       "every batch (t2i/score.py)"),
    "check": Family(_TABLES["check"], Form("autocomp.validators.checks:Check", ("check",)),
                    "autocomp.validators.contract:check_problems", "on its first samples",
                    ordered=True),
    "scorer": Family(_TABLES["scorer"], Form(
        "autocomp.eval.scorers.base:Scorer", arguments=("name", "pretrained"), factory=True,
        makes="autocomp.eval.scorers.base:Scorer"),
        "autocomp.eval.scorers.contract:scorer_problems",
        "when loaded; its scores on every batch (eval/score_checks.py)"),
    "format": Family(_TABLES["format"], Form(
        arguments=("source", "images", "columns", "skip_missing"),
        makes="autocomp.formats.suite:Suite"),
        "autocomp.eval.suite_contract:suite_problems", "when first opened for scoring"),
    "kind": Family(_TABLES["kind"], Form("autocomp.kinds.base:Kind"),
                   "autocomp.contracts:kind_problems", "by `vocab check` and before "
                   "`autocomp run` draws", forget=("autocomp.concepts.drawable:forget",)),
    "metric": Family(_TABLES["metric"], Form("autocomp.t2i.metrics:Metric", ("score",)),
                     "autocomp.t2i.metrics:metric_problems", "on every batch", ordered=True,
                     forget=("autocomp.t2i.metrics:forget",)),
    "adapter": Family(_TABLES["adapter"], Form(
        arguments=("folder", "manifest", "dataset_path")),
        "autocomp.publish.adapters:adapter_problems", "on every export"),
}
FAMILIES: dict[str, dict[str, str]] = {k: f.entries for k, f in FAMILY.items()}
FAMILY_FORMS: dict[str, Form] = {k: f.form for k, f in FAMILY.items()}
ORDERED = tuple(k for k, f in FAMILY.items() if f.ordered)

"""Run configuration: a YAML file <-> frozen dataclasses, validated once, at load time.

Every problem is one line naming the file and the field ("configs/x.yaml: field
generate.batch_size: expected a positive integer, got 'ten'"). Backend options are checked
by the backend class itself (`check_options`), and the generator is asked whether it can
draw every task's vocabulary before anything runs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from pathlib import Path

from autocomp.core.errors import AutocompError
from autocomp.core.fields import SAFE_NAME, FieldReader

STORES = ("compact", "full")  # how benchmark items are stored (bench/store.py)


@dataclass(frozen=True)
class ConceptSpec:
    task: str  # a built-in task name or a path to a task YAML
    n: tuple[int, ...]
    count: int


@dataclass(frozen=True)
class Backend:
    name: str
    options: dict = field(default_factory=dict)


@dataclass(frozen=True)
class CaptionsConfig:
    writer: Backend = Backend("template")
    retries: int = 3
    batch_size: int = 32


@dataclass(frozen=True)
class GenerateConfig:
    generator: Backend = Backend("procedural")
    batch_size: int = 16


@dataclass(frozen=True)
class ValidateConfig:
    detector: Backend = Backend("color-blobs")
    answerer: Backend = Backend("pixels")
    min_fraction: float = 0.7
    min_gray: int = 190
    region: str = "boxes"  # what is masked out as "object": the boxes (paper) or masks
    batch_size: int = 16


@dataclass(frozen=True)
class BuildConfig:
    benchmarks: tuple[str, ...] = ("swap", "confusion", "vary_value", "vary_object")
    max_negatives: int = 100_000  # per concept and benchmark; negatives.MAX_NEGATIVES
    store: str = "compact"  # compact | full (bench/store.py)


@dataclass(frozen=True)
class LaunchConfig:
    """How the processes of a launch wait for each other (runtime/sync.py)."""
    wait_timeout: int = 24 * 3600  # seconds a finished rank waits for slower peers
    stall_timeout: int = 300  # seconds without a heartbeat before a peer counts as dead


@dataclass(frozen=True)
class RunConfig:
    name: str
    concepts: tuple[ConceptSpec, ...]
    seed: int = 0
    processes: int = 1
    captions: CaptionsConfig = CaptionsConfig()
    generate: GenerateConfig = GenerateConfig()
    validate: ValidateConfig = ValidateConfig()
    build: BuildConfig = BuildConfig()
    launch: LaunchConfig = LaunchConfig()
    path: Path | None = None  # the file it came from (task paths are relative to it)

    def to_dict(self) -> dict:
        """The config in the YAML file's own layout (parse_config reads it back)."""
        c, g, v = self.captions, self.generate, self.validate
        return {
            "name": self.name, "seed": self.seed, "processes": self.processes,
            "concepts": [{"task": s.task, "n": list(s.n), "count": s.count}
                         for s in self.concepts],
            "captions": {"writer": c.writer.name, "options": dict(c.writer.options),
                         "retries": c.retries, "batch_size": c.batch_size},
            "generate": {"generator": g.generator.name, "options": dict(g.generator.options),
                         "batch_size": g.batch_size},
            "validate": {"detector": v.detector.name,
                         "detector_options": dict(v.detector.options),
                         "answerer": v.answerer.name,
                         "answerer_options": dict(v.answerer.options),
                         "background": {"min_fraction": v.min_fraction,
                                        "min_gray": v.min_gray, "region": v.region},
                         "batch_size": v.batch_size},
            "build": {"benchmarks": list(self.build.benchmarks),
                      "max_negatives": self.build.max_negatives, "store": self.build.store},
            "launch": {"wait_timeout": self.launch.wait_timeout,
                       "stall_timeout": self.launch.stall_timeout},
        }

    def task_paths(self) -> dict[str, str]:
        """Task reference -> what `load_task` should be given."""
        base = self.path.parent if self.path else Path.cwd()
        out = {}
        for spec in self.concepts:
            ref = spec.task
            looks_like_path = ref.endswith((".yaml", ".yml")) or "/" in ref
            out[ref] = str((base / ref).resolve()) if looks_like_path else ref
        return out


def load_config(path) -> RunConfig:
    from autocomp.core.yamlio import read_yaml

    path = Path(path)
    return parse_config(read_yaml(path), path)


def parse_config(data, path=None) -> RunConfig:
    p = _Parser(path)
    top = p.mapping(data, "", {"name", "seed", "processes", "concepts", "captions", "generate",
                               "validate", "build", "launch"})
    specs = top.get("concepts")
    if not isinstance(specs, list) or not specs:
        raise p.error("concepts", "expected a non-empty list of {task, n, count}", specs)
    concepts = tuple(p.concept(s, f"concepts[{i}]") for i, s in enumerate(specs))
    first: dict[tuple, int] = {}
    for i, spec in enumerate(concepts):  # the same task and N twice draws the same concepts
        for n in spec.n or (None,):
            j = first.setdefault((spec.task, n), i)
            if j != i:
                at = "" if n is None else f" N={n}"
                raise p.error(f"concepts[{i}]", f"repeats concepts[{j}] (task "
                              f"'{spec.task}'{at}): give one spec a larger count instead")
    cap = p.mapping(top.get("captions", {}), "captions", {"writer", "options", "retries",
                                                          "batch_size"})
    gen = p.mapping(top.get("generate", {}), "generate", {"generator", "options", "batch_size"})
    val = p.mapping(top.get("validate", {}), "validate", {
        "detector", "detector_options", "answerer", "answerer_options", "background",
        "batch_size"})
    bg = p.mapping(val.get("background", {}), "validate.background", {"min_fraction",
                                                                      "min_gray", "region"})
    bld = p.mapping(top.get("build", {}), "build", {"benchmarks", "max_negatives", "store"})
    lau = p.mapping(top.get("launch", {}), "launch", {"wait_timeout", "stall_timeout"})
    cfg = RunConfig(
        name=p.file_name(top["name"], "name") if "name" in top else default_name(path),
        concepts=concepts,
        seed=p.integer(top.get("seed", 0), "seed", minimum=0),
        processes=p.integer(top.get("processes", 1), "processes", minimum=1),
        captions=CaptionsConfig(
            writer=p.backend("writer", cap.get("writer", "template"), cap.get("options", {}),
                             "captions"),
            retries=p.integer(cap.get("retries", 3), "captions.retries", minimum=0),
            batch_size=p.integer(cap.get("batch_size", 32), "captions.batch_size", minimum=1)),
        generate=GenerateConfig(
            generator=p.backend("generator", gen.get("generator", "procedural"),
                                gen.get("options", {}), "generate"),
            batch_size=p.integer(gen.get("batch_size", 16), "generate.batch_size", minimum=1)),
        validate=ValidateConfig(
            detector=p.backend("detector", val.get("detector", "color-blobs"),
                               val.get("detector_options", {}), "validate",
                               options_field="detector_options"),
            answerer=p.backend("answerer", val.get("answerer", "pixels"),
                               val.get("answerer_options", {}), "validate",
                               options_field="answerer_options"),
            min_fraction=p.number(bg.get("min_fraction", 0.7), "validate.background.min_fraction",
                                  0.0, 1.0),
            min_gray=p.integer(bg.get("min_gray", 190), "validate.background.min_gray",
                               minimum=0, maximum=255),
            region=p.one_of(bg.get("region", "boxes"), "validate.background.region",
                            ("boxes", "masks")),
            batch_size=p.integer(val.get("batch_size", 16), "validate.batch_size", minimum=1)),
        build=BuildConfig(benchmarks=p.benchmarks(bld.get("benchmarks")),
                          max_negatives=p.integer(bld.get("max_negatives", 100_000),
                                                  "build.max_negatives", minimum=1),
                          store=p.one_of(bld.get("store", "compact"), "build.store",
                                         STORES)),
        launch=LaunchConfig(
            wait_timeout=p.integer(lau.get("wait_timeout", LaunchConfig.wait_timeout),
                                   "launch.wait_timeout", minimum=1),
            stall_timeout=p.integer(lau.get("stall_timeout", LaunchConfig.stall_timeout),
                                    "launch.stall_timeout", minimum=1)),
        path=path,
    )
    if cfg.validate.region == "masks" and cfg.validate.detector.options.get("masks") is False:
        raise p.error("validate.background.region", "masks needs the detector's masks, but "
                      "validate.detector_options.masks is false (use region: boxes)", "masks")
    return replace(cfg, concepts=p.check_tasks(cfg))


def default_name(path) -> str:
    """The config file's stem, made a safe name ("my run (2)" -> "my-run-2")."""
    stem = re.sub(r"[^A-Za-z0-9._+-]+", "-", Path(path).stem if path else "run")
    stem = stem.strip("-.")[:100]
    return stem if SAFE_NAME.fullmatch(stem) else "run"


class _Parser(FieldReader):
    """The run config's own sections, over the generic field checks (core/fields.py)."""

    def concept(self, spec, fld: str) -> ConceptSpec:
        spec = self.mapping(spec, fld, {"task", "n", "count"})
        task = self.string(spec.get("task"), f"{fld}.task")
        n = spec.get("n", [])
        ns = [n] if isinstance(n, int) and not isinstance(n, bool) else n
        if not isinstance(ns, list):
            raise self.error(f"{fld}.n", "expected an integer or a list of integers", n)
        ns = tuple(self.integer(x, f"{fld}.n", minimum=1) for x in ns)
        count = self.integer(spec.get("count"), f"{fld}.count", minimum=1)
        return ConceptSpec(task, ns, count)

    def backend(self, family: str, name, options, section: str,
                options_field: str = "options") -> Backend:
        from autocomp.core.registry import resolve

        name = self.string(name, f"{section}.{family}")
        cls = resolve(family, name, file=self.path, field=f"{section}.{family}")
        return Backend(name, cls.check_options(options or {}, file=self.path,
                                               field=f"{section}.{options_field}"))

    def benchmarks(self, value) -> tuple[str, ...]:
        from autocomp.negatives.generate import KINDS

        known = (*KINDS, "winoground")  # winoground: each concept and its swap partner
        if value is None:
            return BuildConfig().benchmarks
        if not isinstance(value, list) or not value:
            raise self.error("build.benchmarks", f"expected a list out of {', '.join(known)}",
                             value)
        for v in value:
            if v not in known:
                raise self.error("build.benchmarks",
                                 f"unknown benchmark (known: {', '.join(known)})", v)
        return tuple(value)

    def check_tasks(self, cfg: RunConfig) -> tuple[ConceptSpec, ...]:
        """Load every task, check its complexities and the generator; fill default N."""
        from autocomp.concepts.load import load_task
        from autocomp.concepts.sampling import max_distinct_concepts
        from autocomp.core.registry import resolve
        from autocomp.negatives.generate import count_problem

        judges = [(what, backend, resolve(what, backend.name)) for what, backend in
                  (("generator", cfg.generate.generator), ("detector", cfg.validate.detector),
                   ("answerer", cfg.validate.answerer))]
        refs = cfg.task_paths()
        filled = []
        warned: set[str] = set()
        for i, spec in enumerate(cfg.concepts):
            fld = f"concepts[{i}]"
            try:
                task = load_task(refs[spec.task])
            except AutocompError as exc:
                raise self.error(f"{fld}.task", exc.problem if exc.file is None else str(exc),
                                 None) from None
            if not task.counts_follow_n:
                if spec.n:
                    raise self.error(f"{fld}.n", f"scene task '{task.name}' takes no n: its "
                                     "design gives each concept's counts", list(spec.n))
                filled.append(spec)
            else:
                filled.append(replace(spec, n=spec.n or tuple(task.n)))
            for n in filled[-1].n:
                problem = task.capacity_problem(n)
                if problem:
                    raise self.error(f"{fld}.n", problem, n)
                for kind in cfg.build.benchmarks:
                    if kind not in task.negative_kinds(n):
                        continue
                    problem = count_problem(task, n, kind, cfg.build.max_negatives)
                    if problem:
                        raise self.error(f"{fld}.n", problem, n)
                most = max_distinct_concepts(task, n)
                if spec.count > most:
                    raise self.error(f"{fld}.count", f"task '{task.name}' has at most {most} "
                                     f"distinct concepts of N={n}", spec.count)
            if cfg.generate.generator.name == "procedural":
                _warn_drawn_alike(task, warned)
            for what, backend, cls in judges:
                problem = cls.cannot_handle(task, dict(backend.options))
                if problem:
                    verb = "draw" if what == "generator" else "check"
                    raise self.error(f"{fld}.task", f"{what} '{backend.name}' cannot {verb} "
                                     f"task '{task.name}': {problem}")
        return tuple(filled)


def _warn_drawn_alike(task, warned: set[str]) -> None:
    """One warning per pair of values the embedded generator would draw alike (their
    concepts cannot pass its validation: the benchmark would vanish)."""
    import warnings

    from autocomp.concepts.vocab import drawn_alike_in

    for line in drawn_alike_in(task):
        if line not in warned:
            warned.add(line)
            warnings.warn(line, stacklevel=3)

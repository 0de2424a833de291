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
from autocomp.core.fields import (
    SAFE_NAME,
    FieldReader,
    choice,
    dump_section,
    integer,
    number,
    read_section,
)
from autocomp.negatives.generate import MAX_NEGATIVES

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
    writer: Backend = Backend("template")  # YAML: writer, options
    retries: int = integer(3, minimum=0, doc="more tries for a concept whose caption "
                           "failed the preservation check")
    batch_size: int = integer(32, minimum=1, doc="concepts per writer call")

    def yaml(self) -> dict:
        return {"writer": self.writer.name, "options": dict(self.writer.options),
                **dump_section(self)}


@dataclass(frozen=True)
class Compared:
    """A generator the run's own is compared with (generate.compare, docs/generators.md):
    its label (in image ids, benchmark names and reports) and the generator."""

    label: str
    backend: Backend


@dataclass(frozen=True)
class GenerateConfig:
    generator: Backend = Backend("procedural")  # YAML: generator, options
    batch_size: int = integer(16, minimum=1, doc="images per generator call")
    # YAML: compare, a list of {name, generator, options}: more generators, each drawing
    # every concept from the same seed, validated alike, with benchmarks of the same items
    compare: tuple[Compared, ...] = ()

    def yaml(self) -> dict:
        out = {"generator": self.generator.name, "options": dict(self.generator.options),
               **dump_section(self)}
        if self.compare:
            out["compare"] = [{"name": c.label, "generator": c.backend.name,
                               "options": dict(c.backend.options)} for c in self.compare]
        return out

    def generators(self) -> list[tuple[str | None, Backend]]:
        """(label, generator) of every generator of the run: its own first (label None),
        then those it is compared with."""
        return [(None, self.generator), *((c.label, c.backend) for c in self.compare)]


@dataclass(frozen=True)
class ValidateConfig:
    detector: Backend = Backend("color-blobs")  # YAML: detector, detector_options
    answerer: Backend = Backend("pixels")  # YAML: answerer, answerer_options
    # check name -> its options (YAML: a section named as the check, e.g. `background`;
    # each check declares its own, validators/checks.py); a check not named: its defaults
    checks: dict = field(default_factory=dict, compare=False)
    batch_size: int = integer(16, minimum=1, doc="images per detector and answerer call")

    def options(self, check: str):
        """The options of the registered check `check` (its declared defaults if unset)."""
        if check in self.checks:
            return self.checks[check]
        from autocomp.core.registry import resolve

        made = resolve("check", check).Options
        return made() if made else None

    def yaml(self) -> dict:
        return {"detector": self.detector.name, "detector_options": dict(self.detector.options),
                "answerer": self.answerer.name, "answerer_options": dict(self.answerer.options),
                **{name: dump_section(o) for name, o in self.checks.items()},
                **dump_section(self)}


@dataclass(frozen=True)
class BuildConfig:
    benchmarks: tuple[str, ...] = ("swap", "confusion", "vary_value", "vary_object")
    max_negatives: int = integer(MAX_NEGATIVES, minimum=1, doc="most negatives a concept "
                                 "may enumerate per benchmark")
    store: str = choice("compact", STORES, doc="how benchmark items are stored "
                        "(bench/store.py)")

    def yaml(self) -> dict:
        return {"benchmarks": list(self.benchmarks), **dump_section(self)}


@dataclass(frozen=True)
class LaunchConfig:
    """How the processes of a launch wait for each other (runtime/sync.py)."""
    wait_timeout: int = integer(24 * 3600, minimum=1, doc="seconds a finished rank waits "
                                "for slower peers")
    stall_timeout: int = integer(300, minimum=1, doc="seconds without a heartbeat before a "
                                 "peer counts as dead")
    rendezvous_timeout: int = integer(600, minimum=1, doc="seconds every process of a launch "
                                      "has to join before it stops (exit 75)")

    def yaml(self) -> dict:
        return dump_section(self)


HOLD_OUT = ("none", "compounds", "values", "objects", "relations")


@dataclass(frozen=True)
class SplitConfig:
    """Train / val / test by concept (bench/splits.py). `hold_out` keeps whole compounds (a
    value-object pair or a relation triple), values, objects or relations out of train:
    every concept holding one goes to test, counted in test's share; the other concepts
    fill the shares.
    Test concepts are labelled seen compounds / unseen compounds / unseen atoms (CREPE)
    against train, or against `corpus` (a text, JSONL, CSV or parquet file of training
    captions, column `corpus_column`) when given."""
    train: float = number(0.8, 0.0, 1.0, doc="share of the concepts in train")
    val: float = number(0.1, 0.0, 1.0, doc="share of the concepts in val")
    test: float = number(0.1, 0.0, 1.0, doc="share of the concepts in test (held-out "
                         "concepts count in it first)")
    hold_out: str = choice("none", HOLD_OUT, doc="what train never holds")
    hold_out_fraction: float = number(0.2, 0.0, 1.0, doc="share of the distinct compounds "
                                      "(values, objects, relations) held out, unless named")
    held_out: tuple[str, ...] = ()  # YAML: held_out, the values / objects / relations named
    corpus: str | None = None  # YAML: corpus, a path relative to the config file
    corpus_column: str = "caption"  # YAML: corpus_column

    def yaml(self) -> dict:
        out = {**dump_section(self), "held_out": list(self.held_out)}
        if self.corpus is not None:
            out.update(corpus=self.corpus, corpus_column=self.corpus_column)
        return out


SECTIONS = {"captions": CaptionsConfig, "generate": GenerateConfig,
            "validate": ValidateConfig, "build": BuildConfig, "launch": LaunchConfig}


@dataclass(frozen=True)
class RunConfig:
    name: str
    seed: int = integer(0, minimum=0, doc="the seed every draw follows")
    processes: int = integer(1, minimum=1, doc="processes `autocomp run` launches")
    concepts: tuple[ConceptSpec, ...] = ()
    captions: CaptionsConfig = CaptionsConfig()
    generate: GenerateConfig = GenerateConfig()
    validate: ValidateConfig = ValidateConfig()
    build: BuildConfig = BuildConfig()
    launch: LaunchConfig = LaunchConfig()
    split: SplitConfig | None = None  # no split: every concept is a test concept
    path: Path | None = None  # the file it came from (task paths are relative to it)

    def to_dict(self) -> dict:
        """The config in the YAML file's own layout (parse_config reads it back)."""
        return {"name": self.name, **dump_section(self),
                "concepts": [{"task": s.task, "n": list(s.n), "count": s.count}
                             for s in self.concepts],
                **{key: getattr(self, key).yaml() for key in SECTIONS},
                **({"split": self.split.yaml()} if self.split is not None else {})}

    def corpus_path(self) -> Path | None:
        """The split's training-caption corpus (relative to the config file)."""
        if self.split is None or self.split.corpus is None:
            return None
        base = self.path.parent if self.path else Path.cwd()
        return (base / self.split.corpus).resolve()

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

    def given(top: dict) -> dict:
        return {"name": p.file_name(top["name"], "name") if "name" in top
                else default_name(path), "concepts": p.concepts(top.get("concepts")),
                "path": path, **{key: getattr(p, key)(top.get(key) or {}) for key in SECTIONS},
                "split": p.split(top["split"]) if top.get("split") is not None else None}

    cfg = read_section(p, RunConfig, data, "", ("name", "concepts", "split", *SECTIONS),
                       given)
    bg = cfg.validate.options("background")
    if getattr(bg, "region", None) == "masks" and \
            cfg.validate.detector.options.get("masks") is False:
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

    def concepts(self, specs) -> tuple[ConceptSpec, ...]:
        if not isinstance(specs, list) or not specs:
            raise self.error("concepts", "expected a non-empty list of {task, n, count}",
                             specs)
        concepts = tuple(self.concept(s, f"concepts[{i}]") for i, s in enumerate(specs))
        first: dict[tuple, int] = {}
        for i, spec in enumerate(concepts):  # the same task and N twice: the same concepts
            for n in spec.n or (None,):
                j = first.setdefault((spec.task, n), i)
                if j != i:
                    at = "" if n is None else f" N={n}"
                    raise self.error(f"concepts[{i}]", f"repeats concepts[{j}] (task "
                                     f"'{spec.task}'{at}): give one spec a larger count "
                                     "instead")
        return concepts

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

    def captions(self, data) -> CaptionsConfig:
        return read_section(self, CaptionsConfig, data, "captions", ("writer", "options"),
                            lambda d: {"writer": self.backend(
                                "writer", d.get("writer", "template"), d.get("options", {}),
                                "captions")})

    def generate(self, data) -> GenerateConfig:
        return read_section(self, GenerateConfig, data, "generate",
                            ("generator", "options", "compare"),
                            lambda d: {"generator": self.backend(
                                "generator", d.get("generator", "procedural"),
                                d.get("options", {}), "generate"),
                                "compare": self.compared(d.get("compare"))})

    def compared(self, value) -> tuple[Compared, ...]:
        """generate.compare: each entry a plain, unique name (it becomes part of image and
        benchmark names), a registered generator and its options."""
        if value is None:
            return ()
        if not isinstance(value, list):
            raise self.error("generate.compare",
                             "expected a list of {name, generator, options}", value)
        out: list[Compared] = []
        for i, entry in enumerate(value):
            fld = f"generate.compare[{i}]"
            entry = self.mapping(entry, fld, {"name", "generator", "options"})
            label = self.file_name(entry.get("name"), f"{fld}.name")
            if label in (c.label for c in out):
                raise self.error(f"{fld}.name", "named twice in generate.compare", label)
            out.append(Compared(label, self.backend("generator", entry.get("generator"),
                                                    entry.get("options", {}), fld)))
        return tuple(out)

    def validate(self, data) -> ValidateConfig:
        """Detector, answerer, and a section of options per check that declares some
        (validate.background: the background check's)."""
        from autocomp.core.registry import names, resolve

        optioned = {n: resolve("check", n).Options for n in names("check")}
        optioned = {n: made for n, made in optioned.items() if made is not None}

        def given(d: dict) -> dict:
            return {"checks": {n: read_section(self, made, d.get(n) or {}, f"validate.{n}")
                               for n, made in optioned.items()},
                    "detector": self.backend("detector", d.get("detector", "color-blobs"),
                                             d.get("detector_options", {}), "validate",
                                             options_field="detector_options"),
                    "answerer": self.backend("answerer", d.get("answerer", "pixels"),
                                             d.get("answerer_options", {}), "validate",
                                             options_field="answerer_options")}

        return read_section(self, ValidateConfig, data, "validate", (
            "detector", "detector_options", "answerer", "answerer_options", *optioned), given)

    def build(self, data) -> BuildConfig:
        return read_section(self, BuildConfig, data, "build", ("benchmarks",),
                            lambda d: {"benchmarks": self.benchmarks(d.get("benchmarks"))})

    def launch(self, data) -> LaunchConfig:
        return read_section(self, LaunchConfig, data, "launch")

    def split(self, data) -> SplitConfig:
        def given(d: dict) -> dict:
            held = d.get("held_out", [])
            if not isinstance(held, list) or not all(isinstance(h, str) and h.strip()
                                                      for h in held):
                raise self.error("split.held_out", "expected a list of values, objects or "
                                 "relations", held)
            out = {"held_out": tuple(h.strip() for h in held)}
            if d.get("corpus") is not None:
                out["corpus"] = self.string(d["corpus"], "split.corpus")
            if d.get("corpus_column") is not None:
                out["corpus_column"] = self.string(d["corpus_column"], "split.corpus_column")
            return out

        cfg = read_section(self, SplitConfig, data, "split",
                           ("held_out", "corpus", "corpus_column"), given)
        if abs(cfg.train + cfg.val + cfg.test - 1.0) > 1e-9:
            raise self.error("split", "train + val + test must be 1",
                             [cfg.train, cfg.val, cfg.test])
        if cfg.held_out and cfg.hold_out in ("none", "compounds"):
            raise self.error("split.held_out", "names values, objects or relations: set "
                             "hold_out to values, objects or relations", list(cfg.held_out))
        return cfg

    def backend(self, family: str, name, options, section: str,
                options_field: str = "options") -> Backend:
        from autocomp.core.registry import resolve

        name = self.string(name, f"{section}.{family}")
        cls = resolve(family, name, file=self.path, field=f"{section}.{family}")
        return Backend(name, cls.check_options(options or {}, file=self.path,
                                               field=f"{section}.{options_field}"))

    def benchmarks(self, value) -> tuple[str, ...]:
        from autocomp.negatives.generate import NEGATIVE_KINDS

        known = (*NEGATIVE_KINDS, "winoground")  # winoground: each concept and its swap partner
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
                  (*(("generator", g) for _, g in cfg.generate.generators()),
                   ("detector", cfg.validate.detector), ("answerer", cfg.validate.answerer))]
        refs = cfg.task_paths()
        filled = []
        warned: set[str] = set()
        known: dict[str, set] = {"values": set(), "objects": set(), "relations": set()}
        for i, spec in enumerate(cfg.concepts):
            fld = f"concepts[{i}]"
            try:
                task = load_task(refs[spec.task])
            except AutocompError as exc:
                raise self.error(f"{fld}.task", exc.problem if exc.file is None else str(exc),
                                 None) from None
            known["objects"].update(task.objects.names)
            for primitive, vocab in task.primitive_vocabularies():
                known["relations" if primitive == "R" else "values"].update(vocab.names)
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
                _warn_small(task, int(cfg.generate.generator.options.get("size", 256)),
                            warned)
            for what, backend, cls in judges:
                problem = cls.cannot_handle(task, dict(backend.options))
                if problem:
                    verb = "draw" if what == "generator" else "check"
                    raise self.error(f"{fld}.task", f"{what} '{backend.name}' cannot {verb} "
                                     f"task '{task.name}': {problem}")
        split = cfg.split
        if split is not None and split.held_out:  # a name no task draws holds nothing out
            unknown = [h for h in split.held_out if h not in known[split.hold_out]]
            if unknown:
                raise self.error("split.held_out", f"no task's {split.hold_out} include "
                                 f"{', '.join(map(repr, unknown))} (known: "
                                 f"{', '.join(sorted(known[split.hold_out])[:20])} ...)",
                                 list(split.held_out))
        return tuple(filled)


def _warn_small(task, side: int, warned: set[str]) -> None:
    """One warning per value kind drawn below the size its reader needs (kind.min_side)."""
    import warnings

    from autocomp.concepts import drawable

    for _, vocab in task.primitive_vocabularies():
        for key in {e.drawn_by for e in vocab.entries if e.drawn_by}:
            kind = drawable.kind(key)
            need = getattr(kind, "min_side", 0)
            line = (f"task '{task.name}': {key} values drawn at {side} px are read back "
                    f"unreliably (at least {need} px: generate.options.size); many will "
                    "fail validation")
            if side < need and line not in warned:
                warned.add(line)
                warnings.warn(line, stacklevel=3)


def _warn_drawn_alike(task, warned: set[str]) -> None:
    """One warning per pair of values the embedded generator would draw alike (their
    concepts cannot pass its validation: the benchmark would vanish)."""
    import warnings

    from autocomp.concepts.vocab import drawn_alike_in

    for line in drawn_alike_in(task):
        if line not in warned:
            warned.add(line)
            warnings.warn(line, stacklevel=3)

"""A run directory: its resolved config (with provenance) and what its stages share."""

from __future__ import annotations

import errno
import platform
import sys
from functools import cached_property
from importlib import metadata
from pathlib import Path

import yaml

from autocomp import __version__
from autocomp.config import RunConfig, parse_config
from autocomp.core.bulk_gc import paused
from autocomp.core.errors import AutocompError
from autocomp.core.locks import locked
from autocomp.core.records import read_jsonl, write_text
from autocomp.core.run_paths import RunPaths
from autocomp.core.run_records import RECORDS
from autocomp.core.yamlio import read_yaml

PACKAGES = ("numpy", "pillow", "scipy", "torch", "accelerate", "diffusers", "transformers",
            "open_clip_torch", "inflect")


def provenance() -> dict:
    versions = {}
    for name in PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    from autocomp.core.plugins import recorded

    return {"autocomp": __version__, "python": sys.version.split()[0],
            "platform": platform.platform(), "packages": versions, "plugins": recorded()}


class Run:
    """The run directory and its config; stages read and write under `dir`."""

    def __init__(self, directory: Path, config: RunConfig):
        self.dir = Path(directory)
        self.paths = RunPaths(self.dir)
        self.config = config

    @classmethod
    def create(cls, config: RunConfig, directory: Path) -> Run:
        """Start (or continue) a run in `directory`; refuses one made with another config."""
        directory = Path(directory)
        resolved = _resolved(config)
        paths = RunPaths(directory)
        path = paths.config
        try:
            directory.mkdir(parents=True, exist_ok=True)
            with locked(paths.config_lock):  # two runs started at once: one config
                changes = []
                if path.exists():
                    old = read_yaml(path) or {}
                    changes = _run_only_changes(old, resolved, path)
                text = yaml.safe_dump({**resolved, "provenance": {**provenance(), **(
                    {"changes": changes} if changes else {})}}, sort_keys=False)
                write_text(path, text)
        except OSError as exc:
            if exc.errno not in (errno.EROFS, errno.EACCES, errno.EPERM):
                raise
            raise AutocompError(
                f"cannot write to the run folder ({exc.strerror or exc}): `autocomp status`, "
                "`eval --output DIR` and `report` read a read-only run; to run stages, copy "
                "it somewhere writable", file=directory) from None
        return cls.open(directory)

    @classmethod
    def open(cls, directory: Path) -> Run:
        path = RunPaths(directory).config
        if not path.is_file():
            raise AutocompError("not a run directory (no config.yaml)", file=directory)
        data = read_yaml(path) or {}
        if not isinstance(data, dict):
            raise AutocompError("a run's config.yaml must be a mapping", file=path)
        data.pop("provenance", None)
        return cls(directory, parse_config(data, path))

    @cached_property
    def task_of_spec(self) -> dict:
        """A concept spec's task reference (as written in the config) -> Task."""
        from autocomp.concepts.load import load_task

        return {ref: load_task(resolved) for ref, resolved in self.config.task_paths().items()}

    @cached_property
    def tasks(self) -> dict:
        """Task name -> Task, for every task of the config."""
        return {task.name: task for task in self.task_of_spec.values()}

    def records(self, stage: str) -> list[dict]:
        with paused():  # acyclic JSON: a collection could free nothing (core/bulk_gc.py)
            return self._records(stage)

    def _records(self, stage: str) -> list[dict]:
        """The merged records of a stage (empty when it has not run). The part files are
        the truth: a stage not merged yet (running, stopped, or never started past its
        part files) is read from them quietly; a merged file shorter or longer than them,
        or damaged, is read from them instead (in the stage's input order) with a warning;
        nothing is written, so a read-only run reads the same."""
        path = self.paths.merged(stage)
        parts = self.paths.parts(stage)
        if not parts:
            return list(read_jsonl(path)) if path.exists() else []
        if not path.exists():  # not merged yet: nothing is wrong
            return self._from_parts(stage)
        lines = sum(_complete_lines(p) for p in parts)
        try:
            merged = list(read_jsonl(path)) if _complete_lines(path) == lines else None
        except ValueError:
            merged = None
        if merged is not None and len(merged) == lines:
            return merged
        import warnings

        warnings.warn(f"{path}: damaged or out of step with the part files; read from them "
                      "instead", stacklevel=2)
        return self._from_parts(stage)

    def read(self, stage: str) -> list:
        """The merged records of a stage as their typed records (core/run_records.py)."""
        cls = RECORDS[stage]
        where = self.paths.merged(stage)
        records = self.records(stage)
        with paused():
            return [rec for r in records for rec in cls.expand(r, where)]

    def _from_parts(self, stage: str) -> list[dict]:
        from autocomp.core import registry
        from autocomp.runtime.parts import done_records

        done = done_records(self.paths.stage_dir(stage))
        built = registry.make_stage(stage, self)
        if not built.parallel:  # written by one process, in order
            return list(done.values())
        return [done[it.id] for it in built.items() if it.id in done]

    def path(self, relative: str) -> Path:
        return self.dir / relative


def _complete_lines(path: Path) -> int:
    return path.read_bytes().count(b"\n")


# Fields that only decide how a run runs (processes, batch sizes, timeouts, how items are
# stored), never what it writes: a run may be resumed with other values, which its
# provenance records. Backend options say which of theirs are such (Backend.run_options).
RUN_ONLY = ("processes", "launch", "build.store", "captions.batch_size", "generate.batch_size",
            "validate.batch_size",
            "split")  # decides bench/splits.json alone, written again from it by the build
_BACKENDS = (("captions", "writer", "options"), ("generate", "generator", "options"),
             ("validate", "detector", "detector_options"),
             ("validate", "answerer", "answerer_options"))


def split_run_only(config: dict) -> tuple[dict, dict]:
    """(what defines the outputs, {"field.path": value} of the run-only fields) of a config
    in the YAML paths."""
    import copy

    from autocomp.core.registry import resolve

    out, run_only = copy.deepcopy(config), {}
    for path in RUN_ONLY:
        *parents, leaf = path.split(".")
        node = out
        for key in parents:
            node = node.get(key) if isinstance(node, dict) else None
        if isinstance(node, dict) and leaf in node:
            run_only[path] = node.pop(leaf)
    for section, family, options_key in _BACKENDS:
        block = out.get(section)
        if not isinstance(block, dict) or not isinstance(block.get(options_key), dict):
            continue
        try:
            run_options = resolve(family, block.get(family)).run_options
        except AutocompError:
            continue
        for key in run_options:
            if key in block[options_key]:
                run_only[f"{section}.{options_key}.{key}"] = block[options_key].pop(key)
    return out, run_only


def _run_only_changes(old: dict, new: dict, path: Path) -> list[dict]:
    """The run's history of run-only changes, with this one appended. What defines the
    outputs must match (else one line naming the first field that differs); the run-only
    fields (batch sizes, processes, offload, timeouts ...) may change on resume."""
    from datetime import datetime, timezone

    history = list((old.get("provenance") or {}).get("changes") or [])
    old_core, old_run = split_run_only({k: v for k, v in old.items() if k != "provenance"})
    new_core, new_run = split_run_only(new)
    if old_core != new_core:
        where = _first_difference(old_core, new_core)
        raise AutocompError(
            f"this run directory was made with another config ({where} differs, and it "
            "decides the outputs); use a new --out (or delete the directory). Batch sizes, "
            "processes, offload, tiling, compile, device and timeouts may change on resume",
            file=path)
    changed = {k: {"was": old_run.get(k), "now": new_run.get(k)}
               for k in sorted(set(old_run) | set(new_run)) if old_run.get(k) != new_run.get(k)}
    if changed:
        history.append({"at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                        "fields": changed})
    return history


def _first_difference(a, b, prefix: str = "") -> str:
    if isinstance(a, dict) and isinstance(b, dict):
        for key in list(a) + [k for k in b if k not in a]:
            if a.get(key) != b.get(key):
                return _first_difference(a.get(key), b.get(key), f"{prefix}{key}.")
    return prefix.rstrip(".") or "the config"


def _resolved(config: RunConfig) -> dict:
    d = config.to_dict()
    refs = config.task_paths()
    for c in d["concepts"]:
        c["task"] = refs[c["task"]]
    if config.corpus_path() is not None:  # relative to the config file, as task paths are
        d["split"]["corpus"] = str(config.corpus_path())
    return d

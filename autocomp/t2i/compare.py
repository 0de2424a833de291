"""`autocomp t2i`: text-to-image models compared on a run's prompts.

Models come as specs (`procedural`, `diffusers:<hub id or folder>`, `folder:<images>`,
`run` for the run's own images, any registered generator's name) or a YAML file
(configs/generators.yaml):

    images_per_prompt: 4            # K (default 1)
    answerer: {name: transformers, options: {model: google/gemma-3-12b-it}}  # default:
    detector: {name: grounding-dino+sam2}            # the run's validators
    vqascore: vqascore:google/gemma-3-12b-it       # optional
    clipscore: open_clip:ViT-L-14-quickgelu@openai  # optional
    generators:
      - {name: sd35-large, generator: diffusers,
         options: {model: stabilityai/stable-diffusion-3.5-large}}
      - {name: theirs, folder: /data/their-images}

Everything lands in `<out>`: per model its images, `images.jsonl` and `scores.jsonl` (a
record per image, resumed where a killed command stopped), then `summary.json`,
`tables.md` and `by-n.png` (.pdf, .svg).
"""

from __future__ import annotations

import json
from pathlib import Path

from autocomp.core.errors import AutocompError
from autocomp.core.log import package_logger
from autocomp.core.own_files import open_own
from autocomp.core.records import TRACKS, read_jsonl, write_text
from autocomp.t2i.generate import Model, Prompt, draw, folder_of, prompts

log = package_logger(__name__)
OPTIONS = ("images_per_prompt", "vqascore", "clipscore", "generators", "answerer",
           "detector")
MAX_IMAGES_PER_PROMPT = 100  # GenEval draws 4, T2I-CompBench 10: more is a typo


def model_of(spec: str) -> Model:
    """A model from a command-line spec."""
    from autocomp.config import Backend
    from autocomp.core.registry import names

    if spec == "run":
        return Model("run", own=True)
    prefix, sep, rest = spec.partition(":")
    if sep and prefix == "folder":
        path = Path(rest)
        return Model(path.name or str(path), folder=path)
    if sep and prefix == "diffusers":
        return Model(Path(rest).name or rest, Backend("diffusers", {"model": rest}))
    if not sep and spec in names("generator"):
        return Model(spec, Backend(spec, {}))
    raise AutocompError(f"model '{spec}' is not procedural, diffusers:<hub id or folder>, "
                        f"folder:<images>, run (its own images) or a generator "
                        f"({', '.join(names('generator'))})")


def image_scores(folder: Path) -> dict[str, dict]:
    """Resolved image path -> its scored record, over every model in a t2i output folder
    (what `autocomp review --report --t2i` pairs with human ratings)."""
    out = {}
    for path in sorted(Path(folder).glob("*/scores.jsonl")):
        for r in read_jsonl(path):
            image = Path(r["image"])
            out[str((image if image.is_absolute() else Path(folder) / image).resolve())] = r
    return out


def read_models(path: Path) -> tuple[list[Model], dict]:
    """(models, other settings) of a generators YAML file; errors name the file and field."""
    from autocomp.config import Backend
    from autocomp.core.registry import resolve
    from autocomp.core.yamlio import checked_mapping, read_yaml
    from autocomp.t2i.score import check_judges

    data = checked_mapping(read_yaml(path), path, OPTIONS,
                           f"expected a mapping with the fields {', '.join(OPTIONS)}")
    models = []
    for where, entry, name in named_entries(data, path, "generators", "generator",
                                            ("name", "generator", "options", "folder")):
        if "folder" in entry:
            folder = Path(str(entry["folder"]))
            if not folder.is_absolute():
                folder = path.parent / folder
            models.append(Model(name, folder=folder))
            continue
        gen = entry.get("generator", "procedural")
        cls = resolve("generator", gen, file=path, field=f"{where}.generator")
        options = cls.check_options(entry.get("options") or {}, file=path,
                                    field=f"{where}.options")
        models.append(Model(name, Backend(gen, options)))
    k = data.get("images_per_prompt", 1)
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_IMAGES_PER_PROMPT:
        raise AutocompError(f"expected an integer in [1, {MAX_IMAGES_PER_PROMPT}], got {k!r}",
                            file=path, field="images_per_prompt")
    check_judges(data.get("vqascore"), data.get("clipscore"), file=path)
    judges = {family: judge_backend(data[family], family, path, family)
              for family in ("answerer", "detector") if family in data}
    return models, {"k": k, "vqascore": data.get("vqascore"),
                    "clipscore": data.get("clipscore"), **judges}


def named_entries(data: dict, path: Path, field: str, what: str,
                  keys: tuple[str, ...], most: int = 64) -> list[tuple[str, dict, str]]:
    """(where, entry, name) of each entry of a YAML file's list `field` (a generators or a
    judges file): at most `most`, each a mapping of `keys` with a name, names unique and
    with output folders apart ("p q" and "p_q" would share p_q); anything else is one line
    naming the file and field."""
    from autocomp.core.fields import check_text
    from autocomp.core.yamlio import checked_mapping
    from autocomp.t2i.generate import folder_of

    given = data.get(field)
    if not isinstance(given, list) or not given:
        raise AutocompError(f"expected a list of {what}s", file=path, field=field)
    if len(given) > most:  # each is a full scoring of the run: a list this long is a slip
        raise AutocompError(f"{len(given):,} {what}s: at most {most} (each scores every "
                            "image once more)", file=path, field=field)
    out, folders = [], {}
    for i, entry in enumerate(given):
        where = f"{field}[{i}]"
        entry = checked_mapping(entry, path, keys, f"{where}: expected a mapping with "
                                                   f"{', '.join(keys)}, got {_kind(entry)}")
        name = check_text(entry.get("name"), what, file=path, field=f"{where}.name")
        if name in folders.values():
            raise AutocompError(f"two {what}s share a name ({name!r})", file=path,
                                field=field)
        other = folders.get(folder_of(name))
        if other is not None:
            raise AutocompError(f"{what}s {other!r} and {name!r} would share the output "
                                f"folder {folder_of(name)}: name them apart", file=path,
                                field=f"{where}.name")
        folders[folder_of(name)] = name
        out.append((where, entry, name))
    return out


def _kind(value) -> str:
    return {str: "a string", list: "a list", int: "a number", float: "a number",
            bool: "true/false", type(None): "nothing"}.get(type(value), type(value).__name__)


def judge_backend(entry, family: str, path: Path, where: str):
    """An answerer or detector of a YAML file ({name, options}) as a config Backend, its
    options checked; errors name the file and the field `where`."""
    from autocomp.config import Backend
    from autocomp.core.registry import resolve
    from autocomp.core.yamlio import checked_mapping

    entry = checked_mapping(entry, path, ("name", "options"),
                            f"{where}: expected a mapping with name and options")
    if not isinstance(entry.get("name"), str):
        raise AutocompError("expected a backend name", file=path, field=f"{where}.name")
    cls = resolve(family, entry["name"], file=path, field=f"{where}.name")
    return Backend(entry["name"], cls.check_options(entry.get("options") or {}, file=path,
                                                    field=f"{where}.options"))


def compare(run_dir: Path, models: list[Model], out: Path, k: int = 1, patterns=(),
            tracks=TRACKS, per_group: int | None = None, device: str = "auto",
            vqascore: str | None = None, clipscore: str | None = None,
            batch_size: int = 8, answerer=None, detector=None,
            scored_into: dict | None = None) -> dict:
    """Draw, score and summarize; returns the summary (also written to `out`).
    `answerer`, `detector`: backends (config.Backend) in place of the run's validators';
    `scored_into`: a dict that takes each model's scored records (one per image asked)."""
    from autocomp.core.progress import Progress, busy
    from autocomp.run import Run
    from autocomp.t2i.figure import by_n_figure
    from autocomp.t2i.score import Judge, check_judges
    from autocomp.t2i.summary import summarize, tables

    check_judges(vqascore, clipscore)  # before any image is drawn
    run = Run.open(Path(run_dir))
    todo = prompts(run, patterns, tracks, per_group)
    if not todo:
        raise AutocompError(f"no prompts in {run_dir} match {', '.join(patterns) or '*'}")
    by_prompt = {p.id: p for p in todo}
    out.mkdir(parents=True, exist_ok=True)
    judge = None
    scored = {}
    for model in models:
        log.info(f"model  {model.name}: {model.describe()}, {len(todo):,} prompts x {k}")
        with Progress(f"t2i {model.name}: draw", len(todo) * k, "image") as bar:
            records = draw(model, run, todo, k, out, device, batch_size, bar.update)
        if judge is None:
            with busy("t2i: loading the judges"):
                judge = Judge(run, device, vqascore, clipscore, batch_size, answerer,
                              detector)
        scored[model.name] = _scores(judge, model, records, by_prompt, out, batch_size)
    if scored_into is not None:
        scored_into.update(scored)
    summary = {"run": str(run_dir), "images_per_prompt": k, "tracks": list(tracks),
               "backends": judge.names if judge else {},
               "models": {m.name: m.describe() for m in models},
               "summary": summarize(scored, len(todo) * k)}
    write_text(out / "summary.json", json.dumps(summary, indent=1, sort_keys=True))
    made = tables(summary["summary"])
    write_text(out / "tables.md", "\n\n".join(t.render("markdown") for t in made) + "\n")
    if not by_n_figure(summary["summary"], out / "by-n"):
        log.info("note   no model has a scored image: no by-N figure")
    return summary


def _scores(judge, model: Model, records: list[dict], by_prompt: dict[str, Prompt],
            out: Path, batch_size: int) -> list[dict]:
    """Each image's scores, from `scores.jsonl` where done before (same image, same
    backends), else scored now and appended a batch at a time."""
    from autocomp.core.progress import Progress
    from autocomp.runtime.parts import repair

    path = out / folder_of(model.name) / "scores.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    repair(path, "a records file")  # a line torn by a kill: that image is scored again
    stamp = json.dumps(judge.names, sort_keys=True)
    done = {r["id"]: r for r in read_jsonl(path) if r.get("backends") == stamp} \
        if path.exists() else {}
    todo = [r for r in records if r["id"] not in done]
    with Progress(f"t2i {model.name}: score", len(todo), "image") as bar, \
            open_own(path, "a", "a records file") as fh:
        for i in range(0, len(todo), batch_size):
            batch = todo[i:i + batch_size]
            for got in judge.score(batch, by_prompt, out):
                got["model"], got["backends"] = model.name, stamp
                fh.write(json.dumps(got, sort_keys=True) + "\n")
                done[got["id"]] = got
            fh.flush()
            bar.update(len(batch))
    return [done[r["id"]] for r in records]

"""The harness adapters an export carries, each a plain file a stranger runs without
autocomp (harness/ in the export), copied from publish/templates/ with the export's
dataset path filled in:

  for_clip_benchmark  harness/clip_benchmark_autocomp.py: CLIP_benchmark's
                      image_caption_selection metric (I images x C captions, image i
                      matches caption i) on every config
  for_mteb            harness/mteb_autocomp.py: an mteb/MIEB image-text pair
                      classification task per config
  for_lmms_eval       harness/lmms_eval/: a task folder for generative VLMs (multiple
                      choice, its CircularEval rotations, yes/no per caption), loaded with
                      --include_path
  for_vlmevalkit      harness/vlmevalkit_tsv.py: writes VLMEvalKit's multiple-choice TSVs
                      (the same questions as lmms-eval's) into $LMUData

Each module has `write(folder, manifest, dataset_path) -> {"title", "files", "usage"}`,
registered in the registry's "adapter" family (a plugin adds its own with one line); a
plugin adapter keeps the adapter contract (adapter_problems) or the export stops in one
line.
"""

from __future__ import annotations

from pathlib import Path

TEMPLATES = Path(__file__).resolve().parent.parent / "templates"


def copy_template(name: str, dest: Path, fill: dict[str, str] | None = None) -> Path:
    """A template file copied to `dest`, each "{{KEY}}" replaced by fill[KEY]."""
    text = (TEMPLATES / name).read_text(encoding="utf-8")
    for key, value in (fill or {}).items():
        text = text.replace("{{" + key + "}}", value)
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(text, encoding="utf-8")
    return dest


def write_all(folder: Path, manifest: dict, dataset_path: str) -> dict:
    """Every registered adapter's files written under `folder`, by name."""
    from autocomp.core import registry
    from autocomp.core.errors import AutocompError

    out = {}
    for name in registry.names("adapter"):
        got = registry.resolve("adapter", name)(Path(folder), manifest, dataset_path)
        if registry.plugged("adapter", name):
            problems = adapter_problems(got, Path(folder))
            if problems:
                raise AutocompError(f"adapter '{name}' breaks the adapter contract "
                                    f"(autocomp/contracts.py): {'; '.join(problems)}")
        out[name] = got
    return out


def adapter_problems(got, folder: Path) -> list[str]:
    """The adapter contract on what write() returned: {"title", "files", "usage"} with a
    title and usage (Markdown) as strings and files a list of the paths it wrote, each a
    file inside the export folder (relative, no '..')."""
    if not isinstance(got, dict):
        return [f"write() returned {type(got).__name__}, not a dict of title, files, usage"]
    problems = [f"'{key}' is not a non-empty string" for key in ("title", "usage")
                if not isinstance(got.get(key), str) or not got[key].strip()]
    files = got.get("files")
    if not isinstance(files, list) or not files:
        return [*problems, "'files' is not a list of the files it wrote"]
    root = folder.resolve()
    for name in files:
        path = (folder / str(name)).resolve()
        if not isinstance(name, str) or Path(name).is_absolute() or not \
                path.is_relative_to(root):
            problems.append(f"file {name!r} is not a path inside the export folder")
        elif not path.is_file():
            problems.append(f"file {name!r} was not written")
    return problems

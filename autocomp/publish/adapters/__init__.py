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
    """Every registered adapter's files written under `folder`, by name, each held to the
    adapter contract. A plugin's adapter writes into a folder of its own beside the
    export; only the files it declares are moved in (what else it wrote there is left out
    and counted), so a refused adapter leaves nothing in the export."""
    import shutil

    from autocomp.core import registry
    from autocomp.core.plugins import every_batch, plugin_code

    out = {}
    for name in registry.names("adapter"):
        write = registry.resolve("adapter", name)
        own = registry.plugged("adapter", name)
        where = _own_folder(folder) if own else Path(folder)
        try:
            with plugin_code("adapter", name, "writing its harness files"):
                got = write(where, manifest, dataset_path)
            every_batch("adapter", name, adapter_problems(got, where))
            if own:
                _move_declared(name, where, Path(folder), got["files"])
        finally:
            if own:
                shutil.rmtree(where, ignore_errors=True)
        out[name] = got
    return out


def _own_folder(folder: Path) -> Path:
    """A fresh folder beside the export's own temporary folder (a killed export's is
    cleaned with it)."""
    import tempfile

    folder = Path(folder)
    return Path(tempfile.mkdtemp(dir=folder.parent, prefix=f"{folder.name}.adapter-"))


def _move_declared(name: str, source: Path, folder: Path, files: list[str]) -> None:
    """The declared files moved from the adapter's own folder into the export; a name
    another adapter wrote is refused, undeclared files are left out and counted."""
    import os

    from autocomp.core.log import package_logger
    from autocomp.core.plugins import broken

    log = package_logger(__name__)
    for rel in files:
        dest = folder / rel
        if dest.exists() or dest.is_symlink():
            raise broken("adapter", name, [f"file {rel!r} is in the export already "
                                           "(another adapter wrote it)"])
        dest.parent.mkdir(parents=True, exist_ok=True)
        os.replace(source / rel, dest)
    left = sorted(str(p.relative_to(source)) for p in source.rglob("*") if not p.is_dir())
    if left:
        log.warning(f"adapter '{name}' wrote {len(left)} file(s) it did not declare, left "
                    f"out of the export: {', '.join(left[:5])}")


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
    twice = sorted({str(n) for n in files if files.count(n) > 1})
    if twice:
        problems.append(f"file {twice[0]!r} is listed twice")
    for name in files:
        path = (folder / str(name)).resolve()
        if not isinstance(name, str) or Path(name).is_absolute() or not \
                path.is_relative_to(root):
            problems.append(f"file {name!r} is not a path inside the export folder")
        elif (folder / name).is_symlink() or not path.is_file():
            problems.append(f"file {name!r} was not written (or is not a regular file)")
    return problems

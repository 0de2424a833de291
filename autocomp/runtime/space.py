"""Disk space and inodes for the rest of a stage, checked before it starts, and the line a
full disk ends a stage with (exit 83, core/errors.py): both say how much the items left
need, from the stage's bytes and files per item (ItemStage.disk_per_item: the run's own
written files measured where there are some, else the stage's stated figure)."""

from __future__ import annotations

import os
import shutil

from autocomp.core.errors import DiskFull

MARGIN = 1.10  # over the items' own bytes: part files, merged records, the filesystem's slack


def need(stage, items_left: int) -> tuple[float, int]:
    """(bytes, files) the `items_left` items of `stage` will write."""
    per_bytes, per_files = stage.disk_per_item()
    return items_left * per_bytes * MARGIN, items_left * per_files


def free(folder) -> tuple[float, int | None]:
    """(bytes free to this user, inodes free or None where the filesystem counts none)."""
    usage = shutil.disk_usage(folder)
    try:
        st = os.statvfs(folder)
    except OSError:
        return float(usage.free), None
    return float(usage.free), (int(st.f_favail) if st.f_files else None)


def check(stage, items_left: int) -> None:
    """Refuse (DiskFull) before `stage` starts when the disk under its folder cannot hold
    the `items_left` items' files; nothing to check when nothing is left."""
    if items_left <= 0:
        return
    folder = stage.paths.stage_dir(stage.name)
    folder.mkdir(parents=True, exist_ok=True)
    want_bytes, want_files = need(stage, items_left)
    have_bytes, have_files = free(folder)
    short = []
    if want_bytes > have_bytes:
        short.append(f"{size(want_bytes)} for {items_left:,} item(s), {size(have_bytes)} free")
    if have_files is not None and want_files > have_files:
        short.append(f"{want_files:,} files, {have_files:,} inodes free")
    if short:
        raise full(stage, items_left, "; ".join(short), before=True)


def full(stage, items_left: int, why: str = "", before: bool = False) -> DiskFull:
    """The one line of a stage stopped by a full disk, with what the rest needs."""
    folder = stage.paths.stage_dir(stage.name)
    if not why:
        want, files = need(stage, items_left)
        have, _ = free(folder) if folder.exists() else (0.0, None)
        why = (f"{size(have)} free; the {items_left:,} {stage.name} item(s) left need about "
               f"{size(want)}" + (f" and {files:,} files" if files else ""))
    when = "before stage " if before else "in stage "
    return DiskFull(f"disk full ({when}{stage.name} under {folder}: {why}): free some space "
                    "and run the same command again; what was written before is kept")


def size(n: float) -> str:
    for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n:.0f} B"

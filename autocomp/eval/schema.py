"""The results schema: what a result JSON must hold for others to trust and compare it
(`autocomp results check DIR`; `autocomp leaderboard` shows only results that pass).

Every result (results/<model>/<benchmark>.json, written by `autocomp eval`) holds the
FIELDS below with their types, the provenance of eval/provenance.py, a predictions file
beside it with one line per item (`id`, `correct`, ...), and scores those lines give back:
the accuracy recomputed from the lines under the result's tie rule is the one recorded.
A problem is one line naming the file, the field and the value.
"""

from __future__ import annotations

import functools
import json
import math
from pathlib import Path

from autocomp.core.errors import AutocompError

NUMBER = (int, float)
SCHEMA = Path(__file__).with_name("result.schema.json")  # the published JSON Schema
TIES = ("strict", "aware", "argmax")
TOLERANCE = 0.01  # points: the recorded accuracy is rounded to 4 decimals
JSON_TYPES = {"integer": "an integer", "number": "a number", "string": "a string",
              "object": "an object", "array": "a list", "null": "null", "boolean": "true or false"}


def _bad_type(value, types) -> bool:
    if isinstance(value, bool) and bool not in types:
        return True
    if not isinstance(value, types):
        return True
    return isinstance(value, float) and not math.isfinite(value)


def schema() -> dict:
    return json.loads(SCHEMA.read_text(encoding="utf-8"))


@functools.cache
def _validator():
    from jsonschema import Draft202012Validator

    return Draft202012Validator(schema())


def field_problems(data) -> list[str]:
    """"field 'x': ..." for each way `data` breaks the results schema (result.schema.json,
    validated with jsonschema), then for every number that is NaN or infinite, and weights
    with neither a digest nor a revision (none: [])."""
    if not isinstance(data, dict):
        return [f"expected a JSON object, got {type(data).__name__}"]
    out = [f"field '{where}': expected a finite number, got {value!r:.40}"
           for where, value in _non_finite(data)][:5]
    errors = sorted(_validator().iter_errors(data),
                    key=lambda e: [str(x) for x in e.absolute_path])
    out += [_said(e) for e in errors]
    if out:
        return out
    weights = data["weights"]
    if weights.get("kind") not in ("rule", "served") and not (
            weights.get("digest") or weights.get("revision")):
        out.append("field 'weights': neither a digest nor a revision of the weights")
    return out


def _said(error) -> str:
    """One jsonschema error as one line naming the field and the value."""
    path = ".".join(str(x) for x in error.absolute_path)
    rule, value, sub = error.validator, error.instance, error.schema
    if rule == "required":
        name = error.message.split("'")[1]
        what = sub.get("properties", {}).get(name, {}).get("description")
        field = f"{path}.{name}" if path else name
        return f"field '{field}'{f' ({what})' if what else ''}: missing"
    if rule == "type":
        types = sub["type"] if isinstance(sub["type"], list) else [sub["type"]]
        want = " or ".join(JSON_TYPES.get(t, t) for t in types)
        return f"field '{path}': expected {want}, got {value!r:.60}"
    if rule in ("minimum", "maximum"):
        low, high = sub.get("minimum"), sub.get("maximum")
        want = f"a number in [{low}, {high}]" if high is not None else f"at least {low}"
        return f"field '{path}': expected {want}, got {value!r:.40}"
    if rule == "enum":
        names = ", ".join("null" if v is None else str(v) for v in sub["enum"])
        return f"field '{path}': expected one of {names}, got {value!r:.40}"
    return f"field '{path or '(the result)'}': {error.message[:120]}"


def _non_finite(value, where: str = ""):
    """(path, value) of every NaN or infinite number inside `value` (dicts and lists)."""
    if isinstance(value, float) and not math.isfinite(value):
        yield where, value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _non_finite(v, f"{where}.{k}" if where else str(k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _non_finite(v, f"{where}[{i}]")


CREDITS = ("tie_credit", "group_tie_credit")  # a prediction's share of a tie: [0, 1]
FLAGS = ("correct", "correct_argmax")  # a prediction's outcome: true or false


def line_problem(p: dict) -> str | None:
    """What is wrong with one prediction line's outcome fields (None: nothing)."""
    for key in CREDITS:
        v = p.get(key)
        if v is not None and (_bad_type(v, NUMBER) or not 0 <= v <= 1):
            return f"field '{key}': expected a number in [0, 1], got {v!r:.40}"
    for key in FLAGS:
        if key in p and p[key] is not None and not isinstance(p[key], bool):
            return f"field '{key}': expected true or false, got {p[key]!r:.40}"
    return None


def prediction_problems(path: Path, data: dict) -> list[str]:
    """The predictions file beside a result: there, one whole line per item, and the
    recorded accuracy given back by its lines."""
    from autocomp.eval.result_files import recorded_outcome

    pred = Path(path).with_suffix(".predictions.jsonl")
    if not pred.is_file():
        return [f"predictions: no {pred.name} beside it (per-item predictions let anyone "
                "re-score the result)"]
    from autocomp.core.own_files import PREDICTIONS_LIMIT, bounded_lines, open_regular

    total, n = 0.0, 0
    try:
        with open_regular(pred, PREDICTIONS_LIMIT) as fh:
            for k, line in enumerate(bounded_lines(fh, pred), 1):
                if not line.strip():
                    continue
                try:
                    p = json.loads(line)
                except ValueError:
                    return [f"predictions: line {k} of {pred.name} is not JSON"]
                if not isinstance(p, dict) or not isinstance(p.get("id"), str):
                    return [f"predictions: line {k} of {pred.name} has no item id"]
                bad = line_problem(p)
                if bad:
                    return [f"predictions: line {k} of {pred.name}: {bad}"]
                total += recorded_outcome(p, data["ties"])
                n += 1
    except AutocompError as exc:  # a line too long to read
        return [f"predictions: {pred.name}: {exc.problem}"]
    except (OSError, UnicodeDecodeError) as exc:
        return [f"predictions: cannot read {pred.name} ({exc})"]
    if n != data["n_items"]:
        return [f"predictions: {n:,} lines in {pred.name} for n_items {data['n_items']:,}"]
    again = 100.0 * total / n
    if abs(again - data["metrics"]["accuracy"]) > TOLERANCE:
        return [f"predictions: they give accuracy {again:.4f}, the result records "
                f"{data['metrics']['accuracy']:.4f}"]
    return []


def check_file(path: Path) -> list[str]:
    """Every problem of one result file, each one line (none: [])."""
    from autocomp.core.own_files import read_small_json

    try:
        data = read_small_json(path)
    except (OSError, UnicodeDecodeError) as exc:
        return [f"cannot read it ({exc})"]
    except ValueError as exc:
        return [f"not valid JSON ({exc})"]
    problems = field_problems(data)
    return problems or prediction_problems(path, data)


def result_files(folder: Path) -> list[Path]:
    """The result JSON files of a results folder (models.yaml, summaries and verification
    records are not)."""
    from autocomp.formats.suite import own_files

    return [p for p in own_files(Path(folder), "*.json")
            if p.parent != Path(folder) and not p.name.endswith(".verified.json")]


def check_folder(folder: Path) -> dict[Path, list[str]]:
    """Result file -> its problems, for every result file under `folder`, and every entry
    the readers leave out (a FIFO, a link out of the folder, a directory named .json):
    what `report` and `leaderboard` say they left out, this lists."""
    from autocomp.eval.summary import read_cells

    unread = {Path(p): why for p, why in read_cells(folder)[1]}
    files = result_files(folder)
    out = {p: check_file(p) or ([unread[p]] if p in unread else []) for p in files}
    out.update({p: [why] for p, why in unread.items() if p not in out})
    return dict(sorted(out.items()))

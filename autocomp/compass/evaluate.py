"""`autocomp compass eval`: score a COMPASS set with any scorer through the eval harness
(same batching, de-duplication and embedding cache as `autocomp eval`)."""

from __future__ import annotations

import json
from pathlib import Path

from autocomp.compass.sets import FILES, check_set, image_root
from autocomp.core.records import write_text
from autocomp.eval.cache import folder_name
from autocomp.formats.runs import Benchmark


def predictions_path(compass_dir: Path, model: str, name: str) -> Path:
    return Path(compass_dir) / "results" / folder_name(model) / f"{name}.predictions.jsonl"


def evaluate_compass(compass_dir: Path, models: list[str], cache_dir: Path | None = None,
                     device: str = "cpu", batch_size: int | None = None,
                     skip_existing: bool = False, echo=print) -> None:
    from autocomp.eval.harness import Harness
    from autocomp.eval.scorers import load_scorer

    compass_dir = Path(compass_dir)
    manifest = check_set(compass_dir)
    digests, root = manifest.get("files", {}), image_root(manifest, compass_dir)
    for model in models:
        harness = None
        for name in FILES:
            out = predictions_path(compass_dir, model, name)
            scored = out.with_suffix(".json")  # which file the predictions are of
            if skip_existing and out.exists() and digests.get(name) and _scored(scored) \
                    == digests[name]:
                echo(f"skip   {model} {name} (exists)")
                continue
            if harness is None:
                out.parent.mkdir(parents=True, exist_ok=True)
                (out.parent / "model.txt").write_text(model + "\n", encoding="utf-8")
                scorer = load_scorer(model, device=device, batch_size=batch_size)
                scorer.load()  # a model that cannot load leaves no cache folder behind
                harness = Harness(scorer, root, {}, cache_dir or compass_dir / "cache")
            bench = Benchmark(name, "compass", 0, "", name, compass_dir / f"{name}.jsonl")
            got = harness.run(bench, out)
            write_text(scored, json.dumps({"file": f"{name}.jsonl",
                                           "sha256": digests.get(name)}))
            acc = got["metrics"]["accuracy"]
            echo(f"done   {model} {name}: R@1 {'n/a' if acc is None else f'{acc:.1f}'} "
                 f"n={got['n_items']} {got['seconds']:.1f}s")
        if harness is not None:
            harness.close()


def _scored(path: Path) -> str | None:
    try:
        return json.loads(path.read_text(encoding="utf-8")).get("sha256")
    except (OSError, ValueError, AttributeError):
        return None

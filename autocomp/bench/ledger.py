"""What a run's build left out after concepts were drawn (bench/build.py's Ledger, in
stats/build.json), read back for eval (each result carries its benchmark's entry), for
`autocomp status` and for the report's footnotes.

  dropped   benchmark name -> {kept, drawn, reasons: {reason: items}}
  missing   benchmark name -> why the config's benchmark has no file at all
"""

from __future__ import annotations

import json
from pathlib import Path

from autocomp.core.run_paths import RunPaths


def read_ledger(run_dir: Path | str | None) -> dict:
    """{"dropped": ..., "missing": ...} of a run ({} where it has no build stats)."""
    if not run_dir:
        return {}
    try:
        stats = json.loads(RunPaths(Path(run_dir)).stats("build").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(stats, dict):
        return {}
    return {k: stats[k] for k in ("dropped", "missing") if isinstance(stats.get(k), dict)}


def subset_text(name: str, entry: dict) -> str:
    """"53 of 87 items (34 above build.max_negatives)"."""
    why = "; ".join(f"{n:,} {reason}" for reason, n in entry["reasons"].items())
    return f"{entry['kept']:,} of {entry['drawn']:,} items ({why})"


def ledger_lines(ledger: dict) -> list[str]:
    """The ledger as lines for a run summary (empty when nothing was left out)."""
    lines = []
    for name, entry in (ledger.get("dropped") or {}).items():
        lines.append(f"  {name:<34} {subset_text(name, entry)}")
    for name, why in (ledger.get("missing") or {}).items():
        lines.append(f"  {name:<34} not built: {why}")
    return lines

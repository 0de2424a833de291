"""Model sets: a models file (`models: [{spec: FAMILY:NAME@TAG, label: ...}, ...]`) and the
copy `autocomp eval` keeps beside its results (RESULTS/models.yaml, the same format), so a
report keeps the models' order and labels without being given the file again."""

from __future__ import annotations

from pathlib import Path

from autocomp.core.errors import AutocompError

STORED = "models.yaml"


def load_model_set(path) -> list[str]:
    return [spec for spec, _ in model_entries(path)]


def model_labels(path) -> dict[str, str]:
    return {spec: label for spec, label in model_entries(path) if label}


def model_entries(path) -> list[tuple[str, str | None]]:
    from autocomp.core.yamlio import read_yaml

    path = Path(path)
    data = read_yaml(path)
    models = data.get("models") if isinstance(data, dict) else None
    if not isinstance(models, list) or not models:
        raise AutocompError("expected 'models: [ {spec: FAMILY:NAME@TAG, label: ...}, ...]'",
                            file=path)
    out = []
    for i, m in enumerate(models):
        spec = m.get("spec") if isinstance(m, dict) else m
        if not isinstance(spec, str):
            raise AutocompError(f"expected a model spec string, got {spec!r}", file=path,
                                entry=i)
        label = m.get("label") if isinstance(m, dict) else None
        out.append((spec, None if label is None else str(label)))
    return out


def stored_entries(results: Path) -> list[tuple[str, str | None]]:
    """RESULTS/models.yaml's entries, [] where there is none."""
    path = Path(results) / STORED
    return model_entries(path) if path.is_file() else []


def record_models(results: Path, models: list[str], labels: dict[str, str]) -> Path:
    """Add `models` to RESULTS/models.yaml: the models already there keep their place (an
    eval of one more model appends it), a label given now replaces the stored one."""
    import yaml

    from autocomp.core.records import write_text

    entries = dict(stored_entries(results))
    for spec in models:
        entries[spec] = labels.get(spec) or entries.get(spec)
    rows = [{"spec": spec, **({"label": label} if label else {})}
            for spec, label in entries.items()]
    target = Path(results) / STORED
    write_text(target, "# written by autocomp eval: the models' order and labels, for "
               "`autocomp report`\n" + yaml.safe_dump({"models": rows}, sort_keys=False,
                                                      allow_unicode=True))
    return target

"""How well the validators agree with the ground truth the generator recorded (injected
faults). A check "rejects" an image; a rejection is right when the image carries a fault
that check must catch. Counted only where the check ran (the cascade stops at the first
failure)."""

from __future__ import annotations


def agreement(images: list[dict], validation: list[dict]) -> dict:
    expect = {r["id"]: r.get("truth", {}).get("expect") for r in images}
    table: dict[str, dict[str, int]] = {}
    for v in validation:
        exp = expect.get(v["id"])
        if not exp:
            continue
        for ch in v["checks"]:
            if ch["name"] not in exp:
                continue
            should_pass, passed = exp[ch["name"]], ch["passed"]
            cell = ("tn" if passed else "fp") if should_pass else ("fn" if passed else "tp")
            row = table.setdefault(ch["name"], dict.fromkeys(("tp", "fp", "fn", "tn"), 0))
            row[cell] += 1
    out = {}
    for name, c in table.items():
        total = sum(c.values())
        out[name] = {**c, "total": total,
                     "precision": _ratio(c["tp"], c["tp"] + c["fp"]),
                     "recall": _ratio(c["tp"], c["tp"] + c["fn"]),
                     "agreement": _ratio(c["tp"] + c["tn"], total)}
    if out:
        right = sum(c["tp"] + c["tn"] for c in out.values())
        out["overall"] = {"total": sum(c["total"] for c in out.values()),
                          "agreement": _ratio(right, sum(c["total"] for c in out.values()))}
    return out


def _ratio(a: int, b: int) -> float | None:
    return round(100.0 * a / b, 2) if b else None


def format_agreement(table: dict) -> str:
    if not table:
        return "no ground truth recorded (the generator does not know what it drew)"
    lines = ["Validator vs injected faults (rejections):",
             f"{'check':<11} {'images':>6} {'caught':>6} {'false':>5} {'missed':>6} "
             f"{'precision':>9} {'recall':>7} {'agree':>7}"]
    for name, c in table.items():
        if name == "overall":
            continue
        lines.append(f"{name:<11} {c['total']:>6} {c['tp']:>6} {c['fp']:>5} {c['fn']:>6} "
                     f"{_pct(c['precision']):>9} {_pct(c['recall']):>7} "
                     f"{_pct(c['agreement']):>7}")
    o = table["overall"]
    lines.append(f"{'overall':<11} {o['total']:>6} {'':>6} {'':>5} {'':>6} {'':>9} {'':>7} "
                 f"{_pct(o['agreement']):>7}")
    return "\n".join(lines)


def _pct(x) -> str:
    return "n/a" if x is None else f"{x:.1f}%"

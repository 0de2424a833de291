"""What validators take and give back."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Detection:
    label: str | None  # None: a blob the detector could not name
    box: tuple[int, int, int, int]  # x0, y0, x1, y1 (x1, y1 exclusive)
    score: float
    mask: object = None  # a bool array of the image's size, when the detector gives masks

    def to_dict(self) -> dict:
        out = {"label": self.label, "box": list(self.box), "score": round(self.score, 4)}
        if self.mask is not None:
            out["mask_area"] = int(self.mask.sum())
        return out


@dataclass
class CheckResult:
    name: str
    passed: bool
    reason: str
    evidence: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {"name": self.name, "passed": self.passed, "reason": self.reason,
                "evidence": self.evidence}

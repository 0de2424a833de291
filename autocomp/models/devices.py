"""Which torch device a backend runs on."""

from __future__ import annotations


def resolve_device(device: str | None) -> str:
    """"auto" (or None) -> "cuda" when torch sees a GPU, else "cpu"; anything else as given."""
    if device not in (None, "auto"):
        return device
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


class OnDevice:
    """For backends with a `device` attribute: the stage hands each rank its device."""

    device: str | None = None

    def bind_device(self, device: str) -> None:
        self.device = resolve_device(self.device or device)

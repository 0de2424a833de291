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
    gpu_cost = "model"  # a model on this process's device (core/backend.Backend.gpu_cost)

    def bind_device(self, device: str) -> None:
        self.device = resolve_device(self.device or device)


def checked_device(device: str | None) -> str:
    """The device to run on: "auto" (or None) -> cuda when torch sees a GPU, else cpu
    (cpu without torch); `cuda...` on a machine without one is refused in one line."""
    from importlib.util import find_spec

    from autocomp.core.backend import install_hint
    from autocomp.core.errors import AutocompError

    device = device or "auto"
    has_torch = find_spec("torch") is not None
    if device == "auto":
        return resolve_device("auto") if has_torch else "cpu"
    if device.startswith("cuda"):
        if not has_torch:
            raise AutocompError(f"--device {device} needs torch ({install_hint('eval')})")
        import torch

        if not torch.cuda.is_available():
            raise AutocompError(f"--device {device}: no CUDA device on this machine (use "
                                "--device cpu, or leave --device out)")
    return device

"""`diffusers`: any text-to-image model (hub id or local folder) through its own pipeline
class. Defaults are the paper's: stable-diffusion-3.5-large, 1024 x 1024, 28 steps,
guidance 4.5. bf16 on CUDA, float32 on CPU. One torch.Generator per image, seeded with
the concept's seed, so a concept's minimal and contextual images start from the same
noise and a batch gives the same images as one-by-one calls. PNG (lossless) is written by
the images stage; the model, its revision and the settings go into each record.

Options that cost no fidelity: SDPA attention (diffusers' default on torch 2), `compile`
(torch.compile of the denoiser), `vae_tiling` (large sizes on small GPUs), `cpu_offload`
(model offload for small GPUs). `drop_t5` leaves out SD3's third text encoder (less memory,
slightly different images: not the paper's setting).
"""

from __future__ import annotations

from collections.abc import Sequence

from autocomp.core.backend import Backend
from autocomp.core.errors import AutocompError
from autocomp.models.devices import OnDevice
from autocomp.synth.base import GeneratedImage, ImageRequest

DEFAULT_MODEL = "stabilityai/stable-diffusion-3.5-large"


class DiffusersGenerator(OnDevice, Backend):
    extra = "gen"
    run_options = ("device", "compile", "vae_tiling", "cpu_offload")

    def __init__(self, model: str = DEFAULT_MODEL, revision: str | None = None, size: int = 1024,
                 steps: int = 28, guidance: float = 4.5, dtype: str = "auto",
                 compile: bool = False, vae_tiling: bool = False, cpu_offload: bool = False,
                 drop_t5: bool = False, negative_prompt: str | None = None,
                 device: str | None = None):
        self.model, self.revision = model, revision
        self.size, self.steps, self.guidance = size, steps, float(guidance)
        self.dtype_name, self.compile, self.vae_tiling = dtype, compile, vae_tiling
        self.cpu_offload, self.drop_t5, self.negative_prompt = cpu_offload, drop_t5, negative_prompt
        self.device = device
        self._pipe = None

    @classmethod
    def validate_options(cls, out: dict, *, file=None, field="options") -> None:
        if "size" in out and (out["size"] < 16 or out["size"] % 16):
            raise AutocompError(f"expected a multiple of 16, got {out['size']}", file=file,
                                field=f"{field}.size")
        if "steps" in out and out["steps"] < 1:
            raise AutocompError(f"expected >= 1, got {out['steps']}", file=file,
                                field=f"{field}.steps")
        if out.get("dtype", "auto") not in ("auto", "bfloat16", "float16", "float32"):
            raise AutocompError("expected auto, bfloat16, float16 or float32, got "
                                f"{out['dtype']!r}", file=file, field=f"{field}.dtype")


    # -- loading -----------------------------------------------------------------------
    def _torch_dtype(self, device: str):
        import torch

        if self.dtype_name == "auto":
            return torch.bfloat16 if device.startswith("cuda") else torch.float32
        return getattr(torch, self.dtype_name)

    def pipeline(self):
        if self._pipe is not None:
            return self._pipe
        try:
            import torch  # noqa: F401
            from diffusers import DiffusionPipeline
        except ImportError:
            raise AutocompError("the diffusers generator needs torch and diffusers: pip "
                                "install 'autocomp[gen]'") from None
        from autocomp.models.devices import resolve_device
        from autocomp.models.hub import not_available
        from autocomp.models.loading import loaded_dtype

        device = self.device = resolve_device(self.device)
        try:
            index = DiffusionPipeline.load_config(self.model, revision=self.revision)
            absent = {k: None for k, v in index.items()
                      if isinstance(v, list) and v == [None, None]}
            if self.drop_t5 and "text_encoder_3" in index:
                absent.update(text_encoder_3=None, tokenizer_3=None)
            asked = self._torch_dtype(device)
            pipe = DiffusionPipeline.from_pretrained(
                self.model, revision=self.revision, dtype=asked, **absent)
        except (OSError, ValueError) as exc:
            raise not_available(self.model, self.model, "generate.options.model: DIR",
                                exc) from None
        denoiser = getattr(pipe, "transformer", None) or getattr(pipe, "unet", None) or pipe
        self.loaded_dtype = loaded_dtype(denoiser, asked, f"pipeline '{self.model}'")
        if self.cpu_offload and device.startswith("cuda"):
            pipe.enable_model_cpu_offload(device=device)
        else:
            pipe.to(device)
        if self.vae_tiling and hasattr(pipe, "vae"):
            pipe.vae.enable_tiling()
        if self.compile:
            denoiser = getattr(pipe, "transformer", None) or getattr(pipe, "unet", None)
            denoiser.compile(fullgraph=False)  # in place: the pipeline keeps calling it
        pipe.set_progress_bar_config(disable=True)
        self._pipe = pipe
        return pipe

    def revision_label(self) -> str:
        from autocomp.models.hub import fingerprint

        return self.revision or (f"local:{fingerprint(self.model)}" if fingerprint(self.model)
                                 else "main")

    # -- generating --------------------------------------------------------------------
    def generate(self, requests: Sequence[ImageRequest]) -> list[GeneratedImage]:
        import torch

        pipe = self.pipeline()
        device = self.device or "cpu"
        gen_device = "cpu" if self.cpu_offload else device
        generators = [torch.Generator(gen_device).manual_seed(int(r.seed)) for r in requests]
        kwargs = {}
        if self.negative_prompt:
            kwargs["negative_prompt"] = [self.negative_prompt] * len(requests)
        with torch.inference_mode():
            out = pipe(prompt=[r.prompt for r in requests], height=self.size, width=self.size,
                       num_inference_steps=self.steps, guidance_scale=self.guidance,
                       generator=generators, **kwargs)
        meta = {"model": self.model, "revision": self.revision_label(), "size": self.size,
                "steps": self.steps, "guidance": self.guidance,
                "dtype": self.loaded_dtype}
        return [GeneratedImage(im.convert("RGB"), {}, [], dict(meta, seed=int(r.seed)))
                for im, r in zip(out.images, requests, strict=True)]

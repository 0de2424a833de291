"""`diffusers`: any text-to-image model (hub id or local folder) through its own pipeline
class. Defaults are the paper's: stable-diffusion-3.5-large, 1024 x 1024, 28 steps,
guidance 4.5. bf16 on CUDA, float32 on CPU. One torch.Generator per image, seeded with
the concept's seed, so a concept's minimal and contextual images start from the same
noise and a batch gives the same images as one-by-one calls. PNG (lossless) is written by
the images stage; the model, its revision and the settings go into each record.

Run-only options (they change no setting of the method; see docs/pipeline.md's memory plan):
- `vae_slicing` (default on): the VAE decodes a batch one image at a time. Decoding 16
  images of 1024 px at once needs 25-45 GB of activations; one at a time, under 3 GB, for
  the same images;
- `vae_tiling` + `vae_tile` (px, default 512): the VAE decodes overlapping tiles of
  `vae_tile` px. diffusers only tiles images larger than the VAE's own sample size (1024
  px for SD3.5), so the tile size is set here, or tiling would never apply at 1024 px.
  Tiles are blended at their seams: pixels differ slightly from a whole decode;
- `compile`: torch.compile of the denoiser (the first batch compiles, minutes);
- `fp8`: the denoiser's linear layers in float8 (torchao; GPUs with fp8 tensor cores: H100,
  H200, L40S). Half the denoiser's weight memory, faster matmuls, slightly different images;
- `cpu_offload`: model offload for small GPUs.
`drop_t5` leaves out SD3's third text encoder (less memory, slightly different images: not
the paper's setting). For a draft run, the model stabilityai/stable-diffusion-3.5-large-turbo
at 4 steps and guidance 0 costs ~1/14 of the paper's FLOPs (not the paper's images).
"""

from __future__ import annotations

from collections.abc import Sequence

from autocomp.core.backend import Backend
from autocomp.core.errors import AutocompError
from autocomp.core.families import contract_example
from autocomp.models.devices import OnDevice
from autocomp.synth.base import GeneratedImage, ImageRequest

DEFAULT_MODEL = "stabilityai/stable-diffusion-3.5-large"


@contract_example(model="{tiny:sd3}", size=32, steps=2, device="cpu")
class DiffusersGenerator(OnDevice, Backend):
    extra = "gen"
    # PNG bytes per pixel of a photographic 1024 px image (a stated figure, not measured
    # here: lossless PNG keeps ~60% of a photo's 3 raw bytes a pixel): 1.9 MB an image
    png_bytes_per_pixel = 1.8
    run_options = ("device", "compile", "vae_tiling", "vae_tile", "vae_slicing", "fp8",
                   "cpu_offload")

    def __init__(self, model: str = DEFAULT_MODEL, revision: str | None = None, size: int = 1024,
                 steps: int = 28, guidance: float = 4.5, dtype: str = "auto",
                 compile: bool = False, vae_tiling: bool = False, vae_tile: int = 512,
                 vae_slicing: bool = True, fp8: bool = False, cpu_offload: bool = False,
                 drop_t5: bool = False, negative_prompt: str | None = None,
                 device: str | None = None):
        self.model, self.revision = model, revision
        self.size, self.steps, self.guidance = size, steps, float(guidance)
        self.dtype_name, self.compile, self.vae_tiling = dtype, compile, vae_tiling
        self.vae_tile, self.vae_slicing, self.fp8 = vae_tile, vae_slicing, fp8
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
        if "vae_tile" in out and (out["vae_tile"] < 16 or out["vae_tile"] % 16):
            raise AutocompError(f"expected a multiple of 16 px, got {out['vae_tile']}",
                                file=file, field=f"{field}.vae_tile")
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
            offload = self.cpu_offload and device.startswith("cuda")
            pipe = load_pipeline(DiffusionPipeline, self.model, self.revision, asked,
                                 None if offload else device, absent)
        except (OSError, ValueError) as exc:
            raise not_available(self.model, self.model, "generate.options.model: DIR",
                                exc) from None
        denoiser = getattr(pipe, "transformer", None) or getattr(pipe, "unet", None) or pipe
        self.loaded_dtype = loaded_dtype(denoiser, asked, f"pipeline '{self.model}'")
        if offload:
            pipe.enable_model_cpu_offload(device=device)
        self._vae(getattr(pipe, "vae", None))
        if self.fp8:
            quantize_fp8(denoiser, device)
            self.loaded_dtype += "+float8"
        if self.compile:
            denoiser.compile(fullgraph=False)  # in place: the pipeline keeps calling it
        pipe.set_progress_bar_config(disable=True)
        self._pipe = pipe
        return pipe

    def _vae(self, vae) -> None:
        """Slicing (one image at a time) and tiling that applies at the requested size."""
        if vae is None:
            return
        if self.vae_slicing:
            vae.enable_slicing()
        if self.vae_tiling:
            vae.enable_tiling()
            scale = 2 ** (len(vae.config.block_out_channels) - 1)
            vae.tile_sample_min_size = self.vae_tile  # diffusers' default: the VAE's sample
            vae.tile_latent_min_size = self.vae_tile // scale  # size, never hit at 1024 px

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
        if self.vae_tiling:  # tiles are blended: the pixels depend on the tile size
            meta["vae_tile"] = self.vae_tile
        return [GeneratedImage(im.convert("RGB"), {}, [], dict(meta, seed=int(r.seed)))
                for im, r in zip(out.images, requests, strict=True)]


def load_pipeline(cls, model: str, revision: str | None, dtype, device: str | None,
                  absent: dict):
    """The pipeline's components read from their files straight onto `device`
    (device_map: each tensor goes from the memory-mapped safetensors file, through the page
    cache, to the device in the asked dtype), never a whole host copy first: loaded to the
    host and then moved, a rank held the pipeline's weights in its own memory (SD3.5-large:
    T5-XXL alone 9.5 GB, ~10 GiB a rank with the dtype conversion; 8 ranks past a node's
    --mem). diffusers names a device map by the device type ("cuda", "cpu"): a rank's GPU
    index is made the current device while the pipeline loads. `device` None: to the host
    (model CPU offload moves components itself)."""
    import contextlib

    import torch

    kwargs = {"revision": revision, "dtype": dtype, **absent}
    if device is None:
        return cls.from_pretrained(model, **kwargs)
    dev = torch.device(device)
    scope = contextlib.nullcontext()
    if dev.type == "cuda" and dev.index is not None:
        torch.cuda.set_device(dev.index)  # this rank's GPU for the process's life
        scope = torch.cuda.device(dev.index)
    with scope:
        return cls.from_pretrained(model, device_map=dev.type, **kwargs)


def quantize_fp8(module, device: str) -> None:
    """The module's linear layers in float8 (dynamic activation and weight scales,
    torchao), in place; one line when torchao or an fp8-capable GPU is missing."""
    import torch

    from autocomp.core.backend import require

    if not device.startswith("cuda") or torch.cuda.get_device_capability(device) < (8, 9):
        raise AutocompError("generate.options.fp8 needs a GPU with fp8 tensor cores (H100, "
                            "H200, L40S: compute capability 8.9 or above); leave fp8 out here")
    q = require("torchao.quantization", "fp8", "generate.options.fp8")
    q.quantize_(module, q.Float8DynamicActivationFloat8WeightConfig(granularity=q.PerRow()))

"""vLLM's offline engine (`vllm.LLM`) for the `vllm` caption writer, answerer and likelihood
scorers: the same models and prompts as the transformers backends, at serving speed
(continuous batching, paged KV cache, CUDA graphs).

What each backend hands the engine is built by the transformers path's own code (chat
template, tokenizer, processor), so the prompts are the same tokens; what differs is the
engine: its sampler draws other tokens from the same distribution (each request seeded from
its concept and attempt, so a caption does not depend on its batch), and its kernels give
logits that differ at the bf16 level.

One engine per process, on the process's GPU: the engine's worker is started with
CUDA_VISIBLE_DEVICES naming that GPU alone (a launched rank on cuda:3 gets physical GPU 3).
`gpu_memory_utilization` is the share of the card the engine takes for weights and KV cache;
`max_model_len` bounds a prompt plus its answer.

Reproducibility: a per-request seed fixes the sampler's draws, but not the logits it draws
from: without batch invariance vLLM's kernels reduce in an order that depends on which
requests share a step, so a caption may change with its batch. `batch_invariant` (default
on) sets VLLM_BATCH_INVARIANT=1 (vLLM's batch-invariant kernels: beta, compute capability 9.0
for the full set, some speed lost), under which the same request gives the same tokens
whatever its batch, on the same GPU type and vLLM version; `batch_invariant: false` trades
that for speed, and then only a re-run with the same batches repeats a caption.

Several engines on one node: each rank's engine starts LOCAL_RANK x $AUTOCOMP_ENGINE_STAGGER
seconds (default 10) after the first, so eight engines do not read their weights and compile
at once, and each compiles into its own cache (VLLM_CACHE_ROOT per rank on local disk, set
by the launched worker from $AUTOCOMP_LOCAL_DIR: runtime/local.py).
"""

from __future__ import annotations

import contextlib
import os

from autocomp.core.backend import require
from autocomp.core.errors import AutocompError
from autocomp.models.devices import OnDevice


def _physical(device: str | None) -> str | None:
    """The CUDA_VISIBLE_DEVICES entry of torch device `device` ("cuda:3" -> "3", through an
    existing CUDA_VISIBLE_DEVICES list); None for "cuda" / "auto" (the engine's default)."""
    if not device or ":" not in str(device):
        return None
    index = int(str(device).split(":", 1)[1])
    visible = [v for v in os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",") if v.strip()]
    if visible:
        if index >= len(visible):
            raise AutocompError(f"device {device}: CUDA_VISIBLE_DEVICES lists {len(visible)}")
        return visible[index].strip()
    return str(index)


@contextlib.contextmanager
def _only_gpu(device: str | None):
    """CUDA_VISIBLE_DEVICES set to `device`'s GPU while the engine starts its worker."""
    physical = _physical(device)
    before = os.environ.get("CUDA_VISIBLE_DEVICES")
    if physical is not None:
        os.environ["CUDA_VISIBLE_DEVICES"] = physical
    try:
        yield
    finally:
        if physical is not None:
            if before is None:
                os.environ.pop("CUDA_VISIBLE_DEVICES", None)
            else:
                os.environ["CUDA_VISIBLE_DEVICES"] = before


def engine_args(model: str, dtype: str, gpu_memory_utilization: float, max_model_len: int,
                trust_remote_code: bool, images: bool) -> dict:
    """The keyword arguments of vllm.LLM: bf16 for "auto" (as the transformers path loads on
    a GPU), one image per prompt for a VLM, remote code only when asked."""
    args = {"model": model, "dtype": "bfloat16" if dtype == "auto" else dtype,
            "gpu_memory_utilization": float(gpu_memory_utilization),
            "max_model_len": int(max_model_len),
            "trust_remote_code": bool(trust_remote_code), "seed": 0}
    if images:
        args["limit_mm_per_prompt"] = {"image": 1}
    return args


def stagger() -> float:
    """Seconds this rank waits before it starts its engine (see the module's notes)."""
    from autocomp.core.lockfiles import seconds_env

    if int(os.environ.get("WORLD_SIZE", "1") or 1) <= 1:
        return 0.0
    return int(os.environ.get("LOCAL_RANK", "0") or 0) * seconds_env(
        "AUTOCOMP_ENGINE_STAGGER", 10.0)


def load_engine(device: str | None, batch_invariant: bool = True, **options):
    """A vllm.LLM on `device` (options: engine_args' keywords); `batch_invariant`: vLLM's
    batch-invariant kernels (VLLM_BATCH_INVARIANT=1, unless the environment sets it)."""
    import time

    vllm = require("vllm", "vllm", "a vllm backend")
    if batch_invariant:  # read by the engine's own processes: set for the process's life
        os.environ.setdefault("VLLM_BATCH_INVARIANT", "1")
    time.sleep(stagger())
    with _only_gpu(device):
        try:
            return vllm.LLM(**engine_args(**options))
        except (OSError, ValueError) as exc:
            raise AutocompError(f"vllm could not load '{options.get('model')}': "
                                f"{' '.join(str(exc).split())[:300]}") from None


def shutdown(engine) -> None:
    """Stop the engine's worker and hand its GPU memory back (the stage has ended)."""
    inner = getattr(engine, "llm_engine", None)
    for owner in (inner, getattr(inner, "engine_core", None)):
        stop = getattr(owner, "shutdown", None)
        if callable(stop):
            with contextlib.suppress(Exception):
                stop()
            return


def texts(outputs) -> list[str]:
    """The first completion's text of each request, in order."""
    return [out.outputs[0].text if out.outputs else "" for out in outputs]


def continuation_logprobs(output, count: int) -> list[float]:
    """The log-probabilities of the prompt's last `count` tokens (its scored answer), read
    from vLLM's prompt_logprobs: one {token id: Logprob} per prompt token, the first None."""
    ids = list(output.prompt_token_ids)[-count:]
    listed = list(output.prompt_logprobs or [])[-count:]
    if len(listed) != count or any(entry is None for entry in listed):
        raise AutocompError("vllm returned no prompt log-probabilities (prompt_logprobs)")
    return [float(entry[token].logprob) for token, entry in zip(ids, listed, strict=True)]


def sampling_params(**options):
    """vllm.SamplingParams(**options); vllm missing: one line naming the extra that installs
    it (a bare `from vllm import` crashed every vllm backend with ModuleNotFoundError,
    exit 70, which the sbatch requeues)."""
    return require("vllm", "vllm", "a vllm backend").SamplingParams(**options)


class EngineUser(OnDevice):
    """A backend running one vLLM engine (the vllm writer and answerer): started on first
    use on the backend's device from its model options, stopped by close() when the stage
    ends. `images`: a VLM's engine (one image a prompt)."""

    images = False
    batch_invariant = True
    _engine = None
    model_ref: str
    dtype: str
    gpu_memory_utilization: float
    max_model_len: int
    trust_remote_code: bool

    def engine(self):
        if self._engine is None:
            self.bind_device("auto")
            self._engine = load_engine(
                self.device, model=self.model_ref, dtype=self.dtype,
                gpu_memory_utilization=self.gpu_memory_utilization,
                max_model_len=self.max_model_len, trust_remote_code=self.trust_remote_code,
                images=self.images, batch_invariant=self.batch_invariant)
        return self._engine

    def close(self) -> None:
        if self._engine is not None:
            shutdown(self._engine)
            self._engine = None

    @staticmethod
    def check_share(out: dict, file, field: str) -> None:
        """gpu_memory_utilization, the share of the card the engine takes, in (0, 1]."""
        if not 0 < out.get("gpu_memory_utilization", 0.85) <= 1:
            raise AutocompError(f"expected (0, 1], got {out['gpu_memory_utilization']}",
                                file=file, field=f"{field}.gpu_memory_utilization")


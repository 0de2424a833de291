"""Ask several questions about one image and run the vision tower once for it.

A chat VLM's prompt carries the image, so a batch of an image's questions repeats the
image row by row, and the model encodes it once per row. transformers' VLMs (Gemma 3,
LLaVA, PaliGemma, ...) encode pixels through one method, `get_image_features`, which
`generate` (transformers 5) or the model's forward (4.x) calls on the base model. While
`encode_once` is active that method sees only the first row of each image and its output
is spread back over the rows, so the merged embeddings are the same as before.

It steps aside (the model encodes every row, as without it) where it cannot be sure:
rows said to share an image whose pixels differ, pixel tensors that are not one row per
prompt (Qwen2-VL's flat patches), or an output that is not tensors with a row per image.
"""

from __future__ import annotations

import functools
from contextlib import contextmanager


def groups(keys: list) -> list[int]:
    """The index of each row's first row with the same key: [a, b, a] -> [0, 1, 0]."""
    first: dict = {}
    return [first.setdefault(k, i) for i, k in enumerate(keys)]


@contextmanager
def encode_once(model, firsts: list[int], counter: list | None = None):
    """While active, `model` encodes each distinct image of the batch once. `firsts`: for
    each prompt row, the index of the first row showing the same image (see `groups`).
    `counter`, when given, gets the number of rows each vision call encoded."""
    base = getattr(model, "base_model", model)
    original = getattr(base, "get_image_features", None)
    if original is None or "get_image_features" in vars(base):
        yield
        return

    @functools.wraps(original)  # generate reads its signature to choose what to pass
    def features(*args, **kwargs):
        named = "pixel_values" in kwargs
        pixels = kwargs["pixel_values"] if named else (args[0] if args else None)

        def call(p):
            return original(*args, **{**kwargs, "pixel_values": p}) if named else \
                original(p, *args[1:], **kwargs)

        keep = _distinct(pixels, firsts)
        if keep is not None:
            import torch

            rows, spread = keep
            small = pixels[torch.tensor(rows, device=pixels.device)]
            out = _spread(call(small), torch.tensor(spread), len(rows))
            if out is not None:
                _count(counter, small)
                return out
        _count(counter, pixels)  # every row, as without encode_once
        return call(pixels)

    base.get_image_features = features
    try:
        yield
    finally:
        del base.get_image_features


def _count(counter, pixels) -> None:
    if counter is not None and pixels is not None:
        counter.append(int(pixels.shape[0]))


def _distinct(pixels, firsts: list[int]):
    """(the rows to encode, each row's position among them), or None where the pixels are
    not one row per prompt or rows said to share an image differ."""
    import torch

    if not isinstance(pixels, torch.Tensor) or pixels.shape[0] != len(firsts):
        return None
    rows = sorted(set(firsts))
    if len(rows) == len(firsts):
        return None
    for i, first in enumerate(firsts):
        if first != i and not torch.equal(pixels[i], pixels[first]):
            return None
    where = {row: k for k, row in enumerate(rows)}
    return rows, [where[f] for f in firsts]


class _Unknown(Exception):
    """A part of get_image_features' output that is not one row (or item) per image."""


def _spread(out, index, n: int):
    """`out` with every per-image part expanded to one per prompt row; None when some part
    is neither None, a tensor with n rows, nor a list (or tuple) of n per-image tensors.
    Tensors: Gemma 3's features; a ModelOutput: transformers 5's return; a tuple of
    tensors: hidden states of every layer; a list of n tensors: LLaVA's per-image features."""
    try:
        return _spread_part(out, index, n)
    except _Unknown:
        return None


def _spread_part(out, index, n: int):
    import torch

    if out is None:
        return None
    if isinstance(out, torch.Tensor):
        if not out.ndim or out.shape[0] != n:
            raise _Unknown
        return out[index.to(out.device)]
    if isinstance(out, dict):  # a transformers ModelOutput (an OrderedDict) or a dict
        spread = {key: _spread_part(value, index, n) for key, value in out.items()}
        return spread if type(out) is dict else type(out)(**spread)
    if isinstance(out, tuple):  # hidden states: rows per layer
        try:
            return tuple(_spread_part(v, index, n) for v in out)
        except _Unknown:
            pass
    if isinstance(out, (list, tuple)) and len(out) == n and all(
            isinstance(v, torch.Tensor) for v in out):  # an item per image
        return type(out)(out[i] for i in index.tolist())
    raise _Unknown

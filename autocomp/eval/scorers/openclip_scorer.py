"""`open_clip`: any open_clip model: "ARCH@PRETRAINED" (a tag of open_clip.list_pretrained()),
"hf-hub:org/repo", "local-dir:/path" (open_clip_config.json + weights), or an architecture
with no weights (random init, e.g. a config registered with open_clip.add_model_config).
The model's own preprocessing and tokenizer are used.

Speed lever: a causal text tower (standard CLIP) pools at the EOS token and cannot see
past it, so the token context is cut to the longest caption of the batch instead of 77.
The vectors are the same (tests check it); it is several times faster for short captions.
Bidirectional towers (SigLIP) keep their full padded context.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Sequence
from functools import cached_property

import numpy as np

from autocomp.core.backend import require
from autocomp.core.errors import AutocompError, WeightsMissing
from autocomp.core.families import contract_example
from autocomp.eval.scorers.base import DualEncoder, normalise
from autocomp.models.hub import fingerprint


def _check_folder(folder: str, spec: str) -> None:
    """A local-dir: model is a folder with open_clip_config.json (and its weights)."""
    from pathlib import Path

    path = Path(folder).expanduser()
    if not path.is_dir():
        raise WeightsMissing(f"model '{spec}': no folder {path} (local-dir: names a folder "
                            "holding open_clip_config.json and the weights, e.g. one made by "
                            "`hf download ORG/REPO --local-dir DIR`)")
    if not (path / "open_clip_config.json").is_file():
        raise WeightsMissing(f"model '{spec}': the folder {path} has no open_clip_config.json "
                            "(it should hold an open_clip model: config and weights)")


def _check_tag(open_clip, name: str, pretrained: str | None, spec: str) -> None:
    """A pretrained tag open_clip knows for this architecture (or a weights file)."""
    from pathlib import Path

    if not pretrained or Path(pretrained).expanduser().is_file():
        return
    if name.startswith(("hf-hub:", "local-dir:")) or name not in open_clip.list_models():
        return  # hub and folder models have their own weights; unknown names fail later
    tags = open_clip.list_pretrained_tags_by_model(name)
    if pretrained not in tags and pretrained.lower() not in tags:
        known = ", ".join(tags) if tags else "none: use a weights file"
        raise AutocompError(f"model '{spec}': open_clip has no weights '{pretrained}' for "
                            f"{name} (known tags: {known})")


@contract_example("open_clip:local-dir:{tiny:open_clip}")
class OpenClipScorer(DualEncoder):
    family = "open_clip"

    def __init__(self, name, pretrained=None, **kw):
        super().__init__(name, pretrained, **kw)
        self._parts = None
        self.trim_context = True
        if name.startswith("local-dir:"):
            _check_folder(name[len("local-dir:"):], self.spec)

    @property
    def weights_id(self) -> str:
        local = self.name.split("local-dir:", 1)[1] if self.name.startswith("local-dir:") else ""
        base = f"{self.spec}#{fingerprint(local)}" if local else self.spec
        return base + ("+quickgelu" if self.quickgelu_notice else "")

    @cached_property
    def quickgelu_notice(self) -> str | None:
        """Set when the weights were trained with QuickGELU but the architecture is not
        (ViT-B-32@openai): the model is then built with QuickGELU (see quickgelu.py)."""
        require("open_clip", "eval", "open_clip scorers")
        from autocomp.eval.scorers.quickgelu import quickgelu_fix

        return quickgelu_fix(self.name, self.pretrained)

    def _load(self):
        if self._parts is not None:
            return self._parts
        open_clip = require("open_clip", "eval", "open_clip scorers")
        import logging

        from autocomp.models.hub import missing_package, not_available

        notice = self.quickgelu_notice
        if notice:
            warnings.warn(notice, stacklevel=2)
        _check_tag(open_clip, self.name, self.pretrained, self.spec)
        level = logging.root.manager.disable
        logging.disable(logging.ERROR)  # open_clip logs its own copy of the error
        try:
            model, _, preprocess = open_clip.create_model_and_transforms(
                self.name, pretrained=self.pretrained, device=self.device,
                **({"force_quick_gelu": True} if notice else {}))
            tokenizer = fast_tokenizer(open_clip.get_tokenizer(self.name))
        except RuntimeError as exc:
            if "Unknown model" in str(exc) or "not found" in str(exc).lower():
                raise AutocompError(f"open_clip has no model '{self.name}' (see "
                                    "open_clip.list_models(), or use hf-hub:ORG/REPO or "
                                    "local-dir:/path)") from None
            raise not_available(self.spec, self._repo(), "open_clip:local-dir:DIR",
                                exc) from None
        except ImportError as exc:
            raise missing_package(self.spec, exc, "eval") from None
        except (OSError, ValueError) as exc:
            raise not_available(self.spec, self._repo(), "open_clip:local-dir:DIR",
                                exc) from None
        finally:
            logging.disable(level)
        model.eval()
        self._parts = (model, preprocess, tokenizer)
        return self._parts

    def _repo(self) -> str:
        """The hub repository holding the weights, for the offline hint."""
        import open_clip

        if self.name.startswith("hf-hub:"):
            return self.name[len("hf-hub:"):]
        cfg = open_clip.get_pretrained_cfg(self.name, self.pretrained or "") or {}
        return (cfg.get("hf_hub") or "").strip("/") or f"<the repo of {self.spec}>"

    @property
    def image_side(self) -> int | None:
        """The shorter side of the image tower's input (open_clip's visual.image_size)."""
        size = getattr(self._load()[0].visual, "image_size", None)
        return min(size) if isinstance(size, (tuple, list)) else size

    def encode_images(self, images: Sequence) -> np.ndarray:
        import torch

        model, preprocess, _ = self._load()
        out = []
        for i in range(0, len(images), self.batch_size):
            batch = torch.stack([preprocess(im) for im in images[i:i + self.batch_size]])
            with torch.inference_mode(), self.autocast():
                out.append(model.encode_image(batch.to(self.device)).float().cpu().numpy())
        return normalise(np.concatenate(out))

    def text_length(self, text: str) -> int:
        """Tokens of a caption: the harness batches captions of equal length together, so
        the trimmed context wastes no padding (about 15% of the forward pass on CPU)."""
        _, _, tokenizer = self._load()
        encode = getattr(tokenizer, "encode", None)
        return len(encode(text)) if encode is not None else len(text)

    def text_identity(self, text: str) -> str | None:
        """What the text tower reads of a caption, or None where the tokenizer does not
        say: captions read alike get one vector, so a tie of two captions alike within the
        context is exact whatever batch each fell in. A plain caption with fewer non-space
        characters than the context holds tokens less two (each token is at least one) is
        never cut, and reads as its cleaned text (no tokenizing on a warm run); any other,
        as its token ids cut to the context."""
        _, _, tokenizer = self._load()
        if not isinstance(tokenizer, _Batcher):
            return None
        if PLAIN.fullmatch(text) is not None:
            words = text.split()
            if sum(map(len, words)) < tokenizer.context_length - 2:
                return "text:" + " ".join(words).lower()
        return "ids:" + ",".join(map(str, tokenizer.ids(text)))

    def encode_texts(self, texts: Sequence[str]) -> np.ndarray:
        import torch

        model, _, tokenizer = self._load()
        causal = self.trim_context and _causal_clip(model)
        out = []
        for i in range(0, len(texts), self.batch_size):
            tokens = tokenizer(list(texts[i:i + self.batch_size])).to(self.device)
            with torch.inference_mode(), self.autocast():
                feats = (_encode_trimmed(model, tokens) if causal
                         else model.encode_text(tokens))
            out.append(feats.float().cpu().numpy())
        return normalise(np.concatenate(out))


PLAIN = re.compile(r"[\x20-\x25\x27-\x7e]*")  # printable ASCII without "&"


def fast_tokenizer(tokenizer):
    """open_clip's own tokenizer with an exact fast path for plain captions.

    open_clip's SimpleTokenizer runs ftfy and html.unescape over every caption before BPE;
    on printable ASCII without "&" both leave the text as it is, so for such captions the
    cleaning is whitespace folding and lower-casing alone, and each word's token ids are
    memoised (benchmark captions repeat the same few hundred words). Any other caption, and
    any other tokenizer (SigLIP's, reduction masks, other cleaners), goes through unchanged.
    The ids are identical (tests compare them on every caption of the built-in tasks and on
    random text)."""
    from open_clip import tokenizer as oct

    if (type(tokenizer) is not oct.SimpleTokenizer or tokenizer.reduction_fn is not None
            or tokenizer.clean_fn is not oct._clean_lower):
        return tokenizer
    original = tokenizer.encode
    memo: dict[str, list[int]] = {}

    def word_ids(word: str) -> list[int]:
        ids = memo.get(word)
        if ids is None:
            byte_word = "".join(tokenizer.byte_encoder[b] for b in word.encode("utf-8"))
            ids = memo[word] = [tokenizer.encoder[t] for t in tokenizer.bpe(byte_word).split(" ")]
        return ids

    recent: dict[str, list[int]] = {}  # the harness asks for lengths, then encodes

    def encode(text: str) -> list[int]:
        out = recent.get(text)
        if out is not None:
            return out
        if PLAIN.fullmatch(text) is None:
            return original(text)
        out = []
        for word in tokenizer.pat.findall(" ".join(text.split()).lower()):
            out.extend(word_ids(word))
        if len(recent) >= 200_000:
            recent.clear()
        recent[text] = out
        return out

    tokenizer.encode = encode
    return _Batcher(tokenizer)


class _Batcher:
    """SimpleTokenizer.__call__ (start and end tokens, cut to the context keeping the end
    token, zero padding) filled through numpy instead of one tensor per caption."""

    def __init__(self, tokenizer):
        self.tokenizer = tokenizer

    def __getattr__(self, name):
        return getattr(self.tokenizer, name)

    def __call__(self, texts, context_length: int | None = None):
        import torch

        texts = [texts] if isinstance(texts, str) else texts
        context = context_length or self.tokenizer.context_length
        out = np.zeros((len(texts), context), dtype=np.int64)
        for i, text in enumerate(texts):
            ids = self.ids(text, context)
            out[i, :len(ids)] = ids
        return torch.from_numpy(out)

    def ids(self, text: str, context: int | None = None) -> list[int]:
        """A caption's ids with the start and end tokens, cut to the context."""
        tok = self.tokenizer
        context = context or tok.context_length
        ids = [tok.sot_token_id, *tok.encode(text), tok.eot_token_id]
        if len(ids) > context:
            ids = ids[:context]
            ids[-1] = tok.eot_token_id
        return ids


def _causal_clip(model) -> bool:
    """A standard open_clip CLIP whose text tower is causal and pools at the EOS token."""
    from open_clip.model import CLIP

    return (type(model) is CLIP and getattr(model, "attn_mask", None) is not None
            and getattr(model, "text_pool_type", "argmax") in ("argmax", "eos"))


def _encode_trimmed(model, tokens):
    """CLIP.encode_text on the tokens cut after the longest caption's last token, the last
    block computed at the pooled token only: a causal tower's output there reads every
    position of the block before, but no other position of the last block is used, so its
    attention queries, MLP and layer norms run on one token per caption (the same vectors
    to float rounding; ~20% of a 4-layer tower's time, ~7% of ViT-L/14's 12 layers)."""
    import torch

    used = int((tokens != 0).sum(dim=1).max())  # open_clip pads with 0 after the EOS token
    tokens = tokens[:, :max(used, 1)]
    n = tokens.shape[1]
    cast = model.transformer.get_cast_dtype()
    x = model.token_embedding(tokens).to(cast) + model.positional_embedding[:n].to(cast)
    mask = model.attn_mask[:n, :n]
    blocks = list(model.transformer.resblocks)
    last = blocks[-1]
    if getattr(model, "text_pool_type", "argmax") == "argmax":
        at = tokens.argmax(dim=-1)
    else:  # "eos" (checked by _causal_clip)
        at = (tokens == model.text_eos_id).int().argmax(dim=-1)
    rows = torch.arange(tokens.shape[0], device=tokens.device)
    if not getattr(model.transformer, "batch_first", True) or hasattr(last, "ln_1_kv"):
        x = model.transformer(x, attn_mask=mask)[rows, at]
    else:
        for block in blocks[:-1]:
            x = block(x, attn_mask=mask)
        h = last.ln_1(x)
        heads = last.attn.num_heads
        row_mask = mask[at].unsqueeze(1).repeat_interleave(heads, dim=0)  # (B * heads, 1, n)
        attended = last.attn(h[rows, at].unsqueeze(1), h, h, need_weights=False,
                             attn_mask=row_mask.to(h.dtype))[0]
        x = x[rows, at].unsqueeze(1) + last.ls_1(attended)
        x = (x + last.ls_2(last.mlp(last.ln_2(x))))[:, 0]
    x = model.ln_final(x)
    if model.text_projection is not None:
        x = (model.text_projection(x) if isinstance(model.text_projection, torch.nn.Linear)
             else x @ model.text_projection)
    return x

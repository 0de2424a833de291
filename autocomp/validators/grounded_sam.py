"""`grounding-dino+sam2`: the paper's object check. GroundingDINO (default
IDEA-Research/grounding-dino-tiny) is prompted with every object name in lower case,
"a. b. c.", box threshold 0.4 and text threshold 0.3; its boxes prompt SAM2 (default
facebook/sam2.1-hiera-large) for real masks when a check reads them (background region
"masks"; the paper's region is the boxes, so by default SAM2 is neither loaded nor run).
Both load through transformers, in bf16 on a GPU (`dtype: auto`; float32 on CPU), and the
dtype each one loaded in goes into the evidence beside its boxes, scores, labels and mask
areas. Scores and boxes are post-processed in float32 whatever the model's dtype.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from autocomp.core.backend import Backend
from autocomp.core.errors import AutocompError
from autocomp.core.families import contract_example
from autocomp.models.devices import OnDevice
from autocomp.validators.base import Detection

DINO = "IDEA-Research/grounding-dino-tiny"
SAM2 = "facebook/sam2.1-hiera-large"


def grounding_prompt(names: Sequence[str]) -> str:
    """"chair. lamp. cup." : each distinct object name once, lower case, in order."""
    return " ".join(f"{n}." for n in dict.fromkeys(n.lower().strip() for n in names))


def match_label(label: str, names: Sequence[str]) -> str | None:
    """The concept object a GroundingDINO text label names: the same words, or else the
    longest name all of whose words are in the label; None when nothing fits."""
    words = label.lower().replace(".", " ").split()
    if not words:
        return None
    for n in names:
        if n.lower().split() == words:
            return n
    fits = [n for n in names if set(n.lower().split()) <= set(words)]
    return max(fits, key=lambda n: len(n.split())) if fits else None


@contract_example(detector_model="{tiny:dino}", segmenter_model="{tiny:sam2}",
                  box_threshold=0.0, text_threshold=0.0, device="cpu")
class GroundedSam2Detector(OnDevice, Backend):
    extra = "gen"

    def __init__(self, detector_model: str = DINO, segmenter_model: str = SAM2,
                 box_threshold: float = 0.4, text_threshold: float = 0.3,
                 device: str | None = None, masks: bool | None = None, dtype: str = "auto"):
        self.dino_ref, self.sam_ref = detector_model, segmenter_model
        self.dtype, self.loaded = dtype, {}
        self.box_threshold, self.text_threshold = box_threshold, text_threshold
        self.device, self.masks = device, masks  # None: when a check reads them
        self._dino = self._sam = None

    def want_masks(self, needed: bool) -> None:
        """The validation stage says whether a check reads masks; an explicit `masks`
        option wins."""
        if self.masks is None:
            self.masks = needed

    @classmethod
    def validate_options(cls, out: dict, *, file=None, field="options") -> None:
        for key in ("box_threshold", "text_threshold"):
            if key in out and not 0 <= out[key] <= 1:
                raise AutocompError(f"expected a number in [0, 1], got {out[key]}", file=file,
                                    field=f"{field}.{key}")
        if out.get("dtype", "auto") not in ("auto", "bfloat16", "float16", "float32"):
            raise AutocompError("expected auto, bfloat16, float16 or float32, got "
                                f"{out['dtype']!r}", file=file, field=f"{field}.dtype")

    def evidence(self) -> dict:
        """The models and the dtypes they loaded in (for each record's objects check)."""
        out = {"detector_model": self.dino_ref, "detector_dtype": self.loaded.get("detector")}
        if self._sam is not None:
            out.update(segmenter_model=self.sam_ref, segmenter_dtype=self.loaded.get("segmenter"))
        return out


    def _load(self):
        if self._dino is not None:
            return self._dino, self._sam
        from autocomp.models.hub import not_available
        from autocomp.models.loading import (
            device_map,
            loaded_dtype,
            torch_dtype,
            transformers_module,
        )

        T = transformers_module()
        self.bind_device("auto")
        asked = torch_dtype(self.dtype, self.device)
        try:
            proc = T.AutoProcessor.from_pretrained(self.dino_ref)
            model = T.AutoModelForZeroShotObjectDetection.from_pretrained(
                self.dino_ref, dtype=asked, device_map=device_map(self.device))
            self.loaded["detector"] = loaded_dtype(model, asked, f"model '{self.dino_ref}'")
            self._dino = (proc, model.eval())
        except (OSError, ValueError) as exc:
            raise not_available(self.dino_ref, self.dino_ref,
                                "validate.detector_options.detector_model: DIR", exc) from None
        if self.masks is not False:  # on its own (no stage to ask), it segments
            try:
                sproc = T.Sam2Processor.from_pretrained(self.sam_ref)
                smodel = T.Sam2Model.from_pretrained(self.sam_ref, dtype=asked,
                                                     device_map=device_map(self.device))
                self.loaded["segmenter"] = loaded_dtype(smodel, asked,
                                                        f"model '{self.sam_ref}'")
                self._sam = (sproc, smodel.eval())
            except (OSError, ValueError) as exc:
                raise not_available(self.sam_ref, self.sam_ref,
                                    "validate.detector_options.segmenter_model: DIR",
                                    exc) from None
        return self._dino, self._sam

    def detect(self, image: np.ndarray, labels: Sequence[str] = ()) -> list[Detection]:
        return self.detect_many([image], [labels])[0]

    def detect_many(self, images: Sequence[np.ndarray],
                    labels: Sequence[Sequence[str]]) -> list[list[Detection]]:
        """GroundingDINO on a batch of images in one forward pass (each with its own
        prompt; the processor pads images and prompts, and masks the padding)."""
        import torch
        from PIL import Image

        (proc, model), sam = self._load()
        pils = [Image.fromarray(np.asarray(im)[..., :3].astype(np.uint8), "RGB")
                for im in images]
        enc = proc(images=pils, text=[grounding_prompt(names) for names in labels],
                   padding=True, return_tensors="pt")
        enc = _on(enc, self.device, model.dtype)
        with torch.inference_mode():
            out = model(**enc)
        # scores and boxes in float32: in bf16 a 1024 px coordinate is off by up to 4 px,
        # and a score next to the 0.4 threshold may round across it
        out.logits, out.pred_boxes = out.logits.float(), out.pred_boxes.float()
        results = proc.post_process_grounded_object_detection(
            out, enc["input_ids"], threshold=self.box_threshold,
            text_threshold=self.text_threshold,
            target_sizes=[(p.height, p.width) for p in pils])
        return [self._detections(res, pil, names, sam)
                for res, pil, names in zip(results, pils, labels, strict=True)]

    def _detections(self, res: dict, pil, labels: Sequence[str], sam) -> list[Detection]:
        h, w = pil.height, pil.width
        boxes = res["boxes"].detach().float().cpu().numpy()
        scores = res["scores"].detach().float().cpu().numpy()
        texts = list(res.get("text_labels") or res.get("labels") or [])
        texts = (texts + [""] * len(boxes))[:len(boxes)]  # no boxes still gives [""]
        masks = self._masks(pil, boxes, sam) if len(boxes) and sam else [None] * len(boxes)
        out_dets = []
        for box, score, text, mask in zip(boxes, scores, texts, masks, strict=True):
            x0, y0, x1, y1 = (int(round(float(v))) for v in box)
            out_dets.append(Detection(match_label(str(text), labels),
                                      (max(0, x0), max(0, y0), min(w, x1), min(h, y1)),
                                      float(score), mask))
        return out_dets

    def _masks(self, pil, boxes: np.ndarray, sam) -> list[np.ndarray]:
        import torch

        sproc, smodel = sam
        enc = sproc(images=[pil], input_boxes=[[[float(v) for v in b] for b in boxes]],
                    return_tensors="pt")
        sizes = enc["original_sizes"]
        enc = _on(enc, self.device, smodel.dtype)
        with torch.inference_mode():
            out = smodel(**enc, multimask_output=False)
        masks = sproc.post_process_masks(out.pred_masks.float().cpu(), sizes.cpu())[0]
        return [m[0].numpy().astype(bool) for m in masks]


def _on(enc, device: str, dtype) -> dict:
    """The processor's tensors on `device`; pixel values and boxes in the model's dtype
    (sizes and token ids keep theirs)."""
    return {k: (v.to(device, dtype=dtype) if v.is_floating_point() else v.to(device))
            for k, v in enc.items()}

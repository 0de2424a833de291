"""VQA answerers: `transformers` (any image-text-to-text model, default gemma-3-12b-it) and
`openai` (any OpenAI-compatible server; the image goes as a PNG data URL).

Each binding question names the vocabulary to answer from ("What color is the monitor?
Answer with one of: red, blue, ..."). Decoding is greedy and short; only the generated
tokens are decoded (decoding the prompt too would make every listed choice "match"). The
check then requires the answer to name the expected value, as a whole word, and no other
choice (validators/checks.py).
"""

from __future__ import annotations

import base64
import io
from collections.abc import Sequence

import numpy as np

from autocomp.concepts.questions import Question
from autocomp.core.backend import Backend
from autocomp.core.errors import AutocompError
from autocomp.models.chat import ChatClient
from autocomp.models.devices import OnDevice

DEFAULT_MODEL = "google/gemma-3-12b-it"


def _pil(image: np.ndarray):
    from PIL import Image

    return Image.fromarray(np.asarray(image)[..., :3].astype(np.uint8), "RGB")


def _answers(texts: Sequence[str], model: str, **evidence) -> list[dict]:
    return [{"answer": " ".join(t.split()), "evidence": {"model": model, **evidence}}
            for t in texts]


def _padding(proc) -> dict:
    """Batch padding for apply_chat_template: transformers 5 takes the processor's own
    arguments in `processor_kwargs`, 4.x as keywords."""
    import inspect

    if "processor_kwargs" in inspect.signature(proc.apply_chat_template).parameters:
        return {"processor_kwargs": {"padding": True}}
    return {"padding": True}


class TransformersAnswerer(OnDevice, Backend):
    extra = "gen"

    def __init__(self, model: str = DEFAULT_MODEL, max_new_tokens: int = 12, dtype: str = "auto",
                 device: str | None = None, trust_remote_code: bool = False):
        self.model_ref, self.max_new_tokens = model, max_new_tokens
        self.dtype, self.device, self.trust_remote_code = dtype, device, trust_remote_code
        self._proc = self._model = None

    @classmethod
    def validate_options(cls, out: dict, *, file=None, field="options") -> None:
        if out.get("max_new_tokens", 12) < 1:
            raise AutocompError("expected >= 1", file=file, field=f"{field}.max_new_tokens")

    def _load(self):
        if self._model is None:
            from autocomp.models.loading import load_vlm

            self.bind_device("auto")
            self._proc, self._model = load_vlm(self.model_ref, self.device, self.dtype,
                                               self.trust_remote_code)
        return self._proc, self._model

    def answer(self, image: np.ndarray, questions: Sequence[Question],
               detections=()) -> list[dict]:
        pil = _pil(image)
        from autocomp.models.loading import dtype_name

        answers = self.ask([(pil, q.text) for q in questions])
        return _answers(answers, self.model_ref, dtype=dtype_name(self._model.dtype))

    def ask(self, pairs: Sequence[tuple]) -> list[str]:
        """One greedy answer per (PIL image, question text), in one batch."""
        if not pairs:
            return []
        import torch

        proc, model = self._load()
        convs = [[{"role": "user", "content": [{"type": "image", "image": pil},
                                               {"type": "text", "text": text}]}]
                 for pil, text in pairs]
        enc = proc.apply_chat_template(convs, tokenize=True, return_dict=True,
                                       return_tensors="pt", add_generation_prompt=True,
                                       **_padding(proc))
        enc = {k: (v.to(model.device, dtype=model.dtype) if k == "pixel_values" else
                   v.to(model.device)) for k, v in enc.items()}
        with torch.inference_mode():
            out = model.generate(**enc, do_sample=False, max_new_tokens=self.max_new_tokens)
        return proc.batch_decode(out[:, enc["input_ids"].shape[1]:], skip_special_tokens=True)


class OpenAIAnswerer(Backend):
    extra = "openai"
    forwards_options_to = ChatClient.__init__
    run_options = ("timeout", "max_retries", "concurrency")

    def __init__(self, model: str = DEFAULT_MODEL, max_tokens: int = 12, **client):
        self.chat = ChatClient(model, **client)
        self.max_tokens = max_tokens


    def answer(self, image: np.ndarray, questions: Sequence[Question],
               detections=()) -> list[dict]:
        pil = _pil(image)
        return _answers(self.ask([(pil, q.text) for q in questions]), self.chat.model)

    def ask(self, pairs: Sequence[tuple]) -> list[str]:
        """One answer (temperature 0) per (PIL image, question text); requests concurrent."""
        urls = {}
        convs = []
        for pil, text in pairs:
            if id(pil) not in urls:
                urls[id(pil)] = png_data_url(pil)
            convs.append([{"role": "user", "content": [
                {"type": "image_url", "image_url": {"url": urls[id(pil)]}},
                {"type": "text", "text": text}]}])
        params = [{"temperature": 0.0, "max_tokens": self.max_tokens}] * len(convs)
        return self.chat.complete_many(convs, params)


def png_data_url(pil) -> str:
    buf = io.BytesIO()
    pil.save(buf, format="PNG")
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode()

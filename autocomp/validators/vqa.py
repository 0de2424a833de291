"""VQA answerers: `transformers` (any image-text-to-text model, default gemma-3-12b-it) and
`openai` (any OpenAI-compatible server; the image goes as a PNG data URL).

Each binding question names the vocabulary to answer from ("What color is the monitor?
Answer with one of: red, blue, ..."). Decoding is greedy and short; only the generated
tokens are decoded (decoding the prompt too would make every listed choice "match"). The
check then requires the answer to name the expected value, as a whole word, and no other
choice (validators/checks.py).

Soft scores (`expected_probabilities`, t2i's Soft-TIFA, GenEval 2): the probability the
model gives the expected answer as its reply's start, read from its log-probabilities (the
likelihood scorers' code, models/likelihood.py): the expected value as the vocabulary
writes it plus its capitalised spelling ("red" and "Red", "yes" and "Yes"), summed: two
different first tokens are two different replies. `transformers` and `vllm` give them; a
chat server does not (it returns log-probabilities of its own reply only).
"""

from __future__ import annotations

import base64
import io
from collections.abc import Sequence

import numpy as np

from autocomp.concepts.questions import Question
from autocomp.core.backend import Backend
from autocomp.core.errors import AutocompError
from autocomp.core.families import contract_example
from autocomp.models.chat import ChatClient
from autocomp.models.devices import OnDevice
from autocomp.models.loading import chat_padding

DEFAULT_MODEL = "google/gemma-3-12b-it"


def _pil(image: np.ndarray):
    from PIL import Image

    return Image.fromarray(np.asarray(image)[..., :3].astype(np.uint8), "RGB")


class Asking:
    """An answerer built on `ask` (one answer per (PIL image, question text)): the
    questions of one image (`answer`) or of a whole validation batch (`answer_many`) go
    in batches of at most `batch_size` questions."""

    batch_size = 32

    def ask(self, pairs: Sequence[tuple]) -> list[str]:
        raise NotImplementedError

    def evidence(self) -> dict:
        raise NotImplementedError

    def answer(self, image: np.ndarray, questions: Sequence[Question],
               detections=()) -> list[dict]:
        return self.answer_many([(image, questions, detections)])[0]

    def answer_many(self, jobs: Sequence[tuple]) -> list[list[dict]]:
        """One list of {"answer", "evidence"} per (image, questions, detections)."""
        chunks: list[list[tuple]] = [[]]
        for image, questions, _ in jobs:
            pil = _pil(image)
            pairs = [(pil, q.text) for q in questions]
            if len(chunks[-1]) + len(pairs) > self.batch_size:  # an image's questions
                chunks.append([])  # stay in one call where they fit in one
            while len(pairs) > self.batch_size:
                chunks += [pairs[:self.batch_size], []]
                pairs = pairs[self.batch_size:]
            chunks[-1] += pairs
        texts = [t for chunk in chunks if chunk for t in self.ask(chunk)]
        evidence = self.evidence() if texts else {}
        out, at = [], 0
        for _, questions, _ in jobs:
            out.append([{"answer": " ".join(t.split()), "evidence": dict(evidence)}
                        for t in texts[at:at + len(questions)]])
            at += len(questions)
        return out


def spellings(expected: str) -> list[str]:
    """The replies that give `expected`: as written, and capitalised where that differs."""
    return list(dict.fromkeys([expected, expected[:1].upper() + expected[1:]]))


class Likely:
    """An answerer that scores given replies (`reply_logprobs`: the log-probability of each
    continuation token per (PIL image, question, reply) row) gives soft answers too."""

    def reply_logprobs(self, rows: Sequence[tuple]) -> list[list[float]]:
        raise NotImplementedError

    def expected_probabilities(self, jobs: Sequence[tuple]) -> list[list[float]]:
        """Per (image, questions, detections) job, per question: the probability that the
        reply starts with the expected answer (its spellings summed)."""
        import math

        rows, owners = [], []
        for j, (image, questions, _) in enumerate(jobs):
            pil = _pil(image)
            for i, q in enumerate(questions):
                for said in spellings(q.expected):
                    rows.append((pil, q.text, said))
                    owners.append((j, i))
        out = [[0.0] * len(questions) for _, questions, _ in jobs]
        for (j, i), logprobs in zip(owners, self.reply_logprobs(rows), strict=True):
            out[j][i] += math.exp(sum(logprobs))
        return [[min(p, 1.0) for p in job] for job in out]  # rounding past 1


@contract_example(model="{tiny:gemma_vlm}", max_new_tokens=3, device="cpu")
class TransformersAnswerer(Likely, Asking, OnDevice, Backend):
    """`batch_size`: questions per `generate` call (the validation batch's images share
    it; an image's questions share one encoding of the image, models/encode_once.py)."""

    extra = "gen"

    def __init__(self, model: str = DEFAULT_MODEL, max_new_tokens: int = 12, dtype: str = "auto",
                 device: str | None = None, trust_remote_code: bool = False,
                 batch_size: int = 32):
        self.model_ref, self.max_new_tokens = model, max_new_tokens
        self.dtype, self.device, self.trust_remote_code = dtype, device, trust_remote_code
        self.batch_size = batch_size
        self._proc = self._model = None

    @classmethod
    def validate_options(cls, out: dict, *, file=None, field="options") -> None:
        for key in ("max_new_tokens", "batch_size"):
            if out.get(key, 1) < 1:
                raise AutocompError("expected >= 1", file=file, field=f"{field}.{key}")

    def _load(self):
        if self._model is None:
            from autocomp.models.loading import load_vlm

            self.bind_device("auto")
            self._proc, self._model = load_vlm(self.model_ref, self.device, self.dtype,
                                               self.trust_remote_code)
        return self._proc, self._model

    def evidence(self) -> dict:
        from autocomp.models.loading import dtype_name

        return {"model": self.model_ref, "dtype": dtype_name(self._load()[1].dtype)}

    def ask(self, pairs: Sequence[tuple]) -> list[str]:
        """One greedy answer per (PIL image, question text), in one batch; the vision
        tower runs once per distinct image."""
        if not pairs:
            return []
        import torch

        from autocomp.models.encode_once import encode_once, groups

        proc, model = self._load()
        convs = [[{"role": "user", "content": [{"type": "image", "image": pil},
                                               {"type": "text", "text": text}]}]
                 for pil, text in pairs]
        enc = proc.apply_chat_template(convs, tokenize=True, return_dict=True,
                                       return_tensors="pt", add_generation_prompt=True,
                                       **chat_padding(proc))
        enc = {k: (v.to(model.device, dtype=model.dtype) if k == "pixel_values" else
                   v.to(model.device)) for k, v in enc.items()}
        with torch.inference_mode(), encode_once(model, groups([id(p) for p, _ in pairs])):
            out = model.generate(**enc, do_sample=False, max_new_tokens=self.max_new_tokens)
        return proc.batch_decode(out[:, enc["input_ids"].shape[1]:], skip_special_tokens=True)

    def reply_logprobs(self, rows: Sequence[tuple]) -> list[list[float]]:
        """Each row's reply tokens' log-probabilities, `batch_size` rows a forward pass (an
        image encoded once per pass)."""
        from autocomp.models.encode_once import groups
        from autocomp.models.likelihood import continuation_logprobs

        proc, model = self._load()
        out: list[list[float]] = []
        for at in range(0, len(rows), self.batch_size):
            part = rows[at:at + self.batch_size]
            out += continuation_logprobs(proc, model, part, groups([id(p) for p, _, _ in part]))
        return out


@contract_example(model="m", base_url="{openai}")
class OpenAIAnswerer(Asking, Backend):
    gpu_cost = "served"  # a model in its own server (core/backend.Backend.gpu_cost)
    extra = "openai"
    forwards_options_to = ChatClient.__init__
    run_options = ("timeout", "max_retries", "concurrency")
    batch_size = 256  # requests handed to the client at once (it runs `concurrency` of them)

    def __init__(self, model: str = DEFAULT_MODEL, max_tokens: int = 12, **client):
        self.chat = ChatClient(model, **client)
        self.max_tokens = max_tokens

    def evidence(self) -> dict:
        return {"model": self.chat.model}

    def ask(self, pairs: Sequence[tuple]) -> list[str]:
        """One answer (temperature 0) per (PIL image, question text); requests concurrent."""
        convs = image_chats(pairs)
        params = [{"temperature": 0.0, "max_tokens": self.max_tokens}] * len(convs)
        return self.chat.complete_many(convs, params)


def image_chats(pairs) -> list[list[dict]]:
    """A one-turn chat per (PIL image, text): the image as a PNG data URL (each image
    encoded once however many texts ask about it), then the text."""
    urls: dict = {}
    chats = []
    for pil, text in pairs:
        if id(pil) not in urls:
            urls[id(pil)] = png_data_url(pil)
        chats.append([{"role": "user", "content": [
            {"type": "image_url", "image_url": {"url": urls[id(pil)]}},
            {"type": "text", "text": text}]}])
    return chats


def png_data_url(pil) -> str:
    buf = io.BytesIO()
    pil.save(buf, format="PNG")
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode()
